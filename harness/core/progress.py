"""One quiet switch for every progress bar: tsteval's own (:func:`progress`, on standard error) and the libraries'
(transformers' "Loading weights", huggingface_hub's and datasets' download bars).

``with quieted(): ...`` silences them all and restores the previous state afterwards (``tsteval --quiet``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")
# Read by huggingface_hub (and through it transformers and datasets) when they are first imported.
_LIBRARY_SWITCHES = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
_quiet = False


def is_quiet() -> bool:
    """Whether progress bars are silenced."""
    return _quiet


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """``iterable`` with a progress bar on standard error (none when quiet); shown only for steps that last."""
    return iter(tqdm(iterable, desc=desc, total=total, unit=unit, disable=_quiet, file=sys.stderr,
                     mininterval=1.0, delay=2.0, leave=False))


def _library_bars(enabled: bool) -> None:
    """Switch the bars of the libraries already imported (the environment covers those imported later)."""
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

        (enable_progress_bars if enabled else disable_progress_bars)()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
    if "datasets" in sys.modules:
        import datasets

        (datasets.enable_progress_bars if enabled else datasets.disable_progress_bars)()


@contextmanager
def quieted(quiet: bool = True) -> Iterator[None]:
    """Silence every progress bar inside the block (nothing changes when ``quiet`` is false)."""
    global _quiet
    if not quiet:
        yield
        return
    saved = {name: os.environ.get(name) for name in _LIBRARY_SWITCHES}
    previous, _quiet = _quiet, True
    os.environ.update(dict.fromkeys(_LIBRARY_SWITCHES, "1"))
    _library_bars(enabled=False)
    try:
        yield
    finally:
        _quiet = previous
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if not previous:
            _library_bars(enabled=True)
