"""A content-addressed cache of expensive artefacts (trained classifiers, embeddings).

An entry is a directory named by a content hash of data + config + seed.  It is built in a
temporary sibling directory and renamed into place, so a reader never sees a half-written entry.
An entry without its completion marker, or whose marker names another key, is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

MARKER = "tsteval-cache.json"


def cache_root() -> Path:
    """``$TSTEVAL_CACHE``, else ``~/.cache/tsteval``."""
    return Path(os.environ.get("TSTEVAL_CACHE", Path.home() / ".cache" / "tsteval"))


def cached_dir(kind: str, key: str, build: Callable[[Path], None], root: Path | None = None) -> Path:
    """The directory for ``kind/key``, calling ``build(tmpdir)`` to fill it when absent or invalid."""
    target = (root or cache_root()) / kind / key
    marker = target / MARKER
    if marker.is_file():
        try:
            if json.loads(marker.read_text()).get("key") == key:
                return target
        except (json.JSONDecodeError, OSError):
            pass
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=target.parent))
    try:
        build(tmp)
        (tmp / MARKER).write_text(json.dumps({"key": key, "kind": kind}))
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
