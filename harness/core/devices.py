"""Where neural models run: the torch device (CUDA when present) and the number of CPU threads.

Both import torch only when called, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tsteval.core.errors import TstevalError


def resolve_device(device: str | None) -> str:
    """``device``, or ``cuda`` when a GPU is present and ``cpu`` otherwise; a missing GPU is a clear error."""
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise TstevalError(f"device {device!r} was asked for but torch sees no CUDA GPU; use --device cpu")
    return device


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run with ``threads`` torch CPU threads (unchanged when None), restoring the previous count afterwards."""
    import torch

    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise TstevalError(f"threads must be an integer >= 1, not {threads!r}")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
