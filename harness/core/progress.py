"""One quiet switch for every progress bar: tsteval's own (:func:`progress`, on standard error, the GGUF conversion's
too) and the libraries' (transformers' "Loading weights", huggingface_hub's and datasets' download bars).

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
# Read by datasets when it is first imported (importing it to switch its bars would cost seconds).
_DATASETS_SWITCH = "HF_DATASETS_DISABLE_PROGRESS_BARS"
_quiet = False


def is_quiet() -> bool:
    """Whether progress bars are silenced."""
    return _quiet


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterator[T]:
    """``iterable`` with a progress bar on standard error (none when quiet); shown only for steps that last."""
    return iter(tqdm(iterable, desc=desc, total=total, unit=unit, disable=_quiet, file=sys.stderr,
                     mininterval=1.0, delay=2.0, leave=False))


def _library_bars(enabled: bool, datasets_switch_was_ours: bool = False) -> None:
    """Switch the libraries' bars: huggingface_hub's (imported here: cheap, and switched in code, its environment
    variable would outrank the switch for good and make re-enabling warn "Cannot enable progress bars"),
    transformers' and datasets' when imported (the environment covers a later import of datasets)."""
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    (enable_progress_bars if enabled else disable_progress_bars)()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        (hf_logging.enable_progress_bar if enabled else hf_logging.disable_progress_bar)()
    if "datasets" in sys.modules:
        import datasets

        datasets_bars = sys.modules["datasets.utils.tqdm"]
        if enabled and datasets_switch_was_ours and datasets_bars.HF_DATASETS_DISABLE_PROGRESS_BARS is True:
            datasets_bars.HF_DATASETS_DISABLE_PROGRESS_BARS = None  # read from our switch when imported quietly
        (datasets.enable_progress_bars if enabled else datasets.disable_progress_bars)()


@contextmanager
def quieted(quiet: bool = True) -> Iterator[None]:
    """Silence every progress bar inside the block (nothing changes when ``quiet`` is false); leaving it restores
    them without a warning."""
    global _quiet
    if not quiet:
        yield
        return
    saved = os.environ.get(_DATASETS_SWITCH)
    previous, _quiet = _quiet, True
    os.environ[_DATASETS_SWITCH] = "1"
    _library_bars(enabled=False)
    try:
        yield
    finally:
        _quiet = previous
        if saved is None:
            os.environ.pop(_DATASETS_SWITCH, None)
        else:
            os.environ[_DATASETS_SWITCH] = saved
        if not previous:
            _library_bars(enabled=True, datasets_switch_was_ours=saved is None)
