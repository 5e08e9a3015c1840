"""Atomic output: results are written to a temporary sibling directory and moved into place when complete.

A crash or a user error halfway leaves the target as it was: nothing half-written is ever visible.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_directory(target: str | Path, replace: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside ``target``; on success move its entries into ``target``.

    Entries replace same-named ones in ``target``; with ``replace`` the whole ``target`` is replaced.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield tmp
        if replace:
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
            return
        target.mkdir(exist_ok=True)
        for item in tmp.iterdir():
            if (target / item.name).is_dir():
                shutil.rmtree(target / item.name)
            os.replace(item, target / item.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
