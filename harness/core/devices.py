"""Where neural models run: the torch device and the number of CPU threads.

``device`` is ``cpu`` (the default), ``cuda``/``cuda:N`` or ``auto`` (CUDA when present).  Everything here imports
torch only when called, so importing this module stays cheap.

>>> check_threads(2), check_threads(None)
(2, None)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tsteval.core.errors import TstevalError

DEVICES = ("cpu", "cuda", "auto")


def resolve_device(device: str | None) -> str:
    """``cpu`` (also for None), ``cuda``/``cuda:N`` (a clear error when torch sees no GPU), or for ``auto`` CUDA when
    present and ``cpu`` otherwise."""
    import torch

    device = device or "cpu"
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device != "cpu" and not device.startswith("cuda"):
        raise TstevalError(f"--device must be one of {list(DEVICES)} (or cuda:N), not {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TstevalError(f"--device {device}: torch sees no CUDA device here; use --device cpu or auto")
    return device


def check_threads(threads: int | None) -> int | None:
    """``threads`` when None or a positive int; a one-line error naming ``--threads`` otherwise."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise TstevalError(f"--threads must be a positive integer, not {threads!r}")
    return threads


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``threads`` inside the block (unchanged, torch not imported, when
    None), restored afterwards."""
    if check_threads(threads) is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
