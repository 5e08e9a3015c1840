"""Where and how neural models run: the torch device, the number of CPU threads and the floating-point precision.

``device`` is ``cpu`` (the default), ``cuda``/``cuda:N`` or ``auto`` (CUDA when present); ``precision`` is ``fp32``
(the default), ``bf16`` (on a CPU too: with AVX512-BF16 it pays, README "Speed") or, on a CUDA device only, ``fp16``
(:data:`PRECISIONS`).  Everything here imports torch
only when called, so importing this module stays cheap.

>>> check_threads(2), check_threads(None)
(2, None)
>>> batch_for("cpu", None, cpu=64, gpu=1024, name="batch_size"), batch_for("cuda", None, cpu=64, gpu=1024, name="b")
(64, 1024)
>>> check_precision("bf16", "cpu"), with_precision("MiniLM", "fp32"), with_precision("MiniLM", "bf16")
('bf16', 'MiniLM', 'MiniLM+bf16')
>>> check_precision("fp16", "cpu")
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: --precision fp16 runs on a CUDA device only, and the models run on cpu: give ...
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError

if TYPE_CHECKING:
    import torch

DEVICES = ("cpu", "cuda", "auto")
PRECISIONS = ("fp32", "bf16", "fp16")


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


def batch_for(device: str, value: int | None, *, cpu: int, gpu: int, name: str) -> int:
    """A batch size: ``value`` when given (a one-line error naming ``name`` when below 1), else ``cpu`` on the
    CPU and ``gpu`` on any other device."""
    if value is not None and value < 1:
        raise TstevalError(f"{name} must be >= 1, not {value}")
    return value or (cpu if device == "cpu" else gpu)


def check_precision(precision: str, device: str) -> str:
    """``precision`` (:data:`PRECISIONS`) for models on the resolved ``device``: fp16 only on CUDA (torch's CPU
    kernels for it are slow or missing); a one-line error naming ``--precision`` otherwise."""
    if precision not in PRECISIONS:
        raise TstevalError(f"--precision must be one of {list(PRECISIONS)}, not {precision!r}")
    if precision == "fp16" and not device.startswith("cuda"):
        raise TstevalError(f"--precision {precision} runs on a CUDA device only, and the models run on {device}: "
                           "give --precision fp32 (the default) or --device cuda")
    return precision


def torch_dtype(precision: str) -> torch.dtype:
    """The torch dtype of ``precision``."""
    import torch

    return {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def with_precision(identity: str, precision: str) -> str:
    """A model's identity in signatures and cache keys: as it is in fp32, with ``+PRECISION`` otherwise (its values
    differ)."""
    return identity if precision == "fp32" else f"{identity}+{precision}"


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
