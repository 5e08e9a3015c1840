"""Where and how neural models run: the torch device, the number of CPU threads, the floating-point precision and
the batches (:func:`length_batches`).

``device`` is ``cpu`` (the default), ``cuda``/``cuda:N`` or ``auto`` (CUDA when present); ``precision``
(:data:`PRECISIONS`) is ``auto`` (the default: bf16 where the device computes it natively, fp32 elsewhere;
:func:`native_bf16`), ``fp32``, ``bf16`` (on a CPU too: with AVX512-BF16 it pays; without, it runs in software,
tens of times slower, and says so in one line) or, on a CUDA device only, ``fp16``.  :func:`check_precision`
resolves ``auto``, so models, signatures and cache keys only ever see the precision that ran (docs/precision.md).
Everything here imports torch only when called, so importing this module stays cheap.

>>> check_threads(2), check_threads(None)
(2, None)
>>> batch_for("cpu", None, cpu=64, gpu=1024, name="batch_size"), batch_for("cuda", None, cpu=64, gpu=1024, name="b")
(64, 1024)
>>> check_precision("fp32", "cpu"), with_precision("MiniLM", "fp32"), with_precision("MiniLM", "bf16")
('fp32', 'MiniLM', 'MiniLM+bf16')
>>> check_precision("auto", "cpu") == ("bf16" if native_bf16("cpu") else "fp32")
True
>>> check_precision("fp16", "cpu")
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: --precision fp16 runs on a CUDA device only, and the models run on cpu: give ...
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from tsteval.core.errors import TstevalError

if TYPE_CHECKING:
    import torch

DEVICES = ("cpu", "cuda", "auto")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
# torch.backends.cpu.get_cpu_capability() values whose CPUs can carry AVX512-BF16 or AMX (x86-64).
_AVX512_CAPABILITIES = ("AVX512",)
NATIVE_BF16_VARIABLE = "TSTEVAL_NATIVE_BF16"


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


def length_batches(lengths: Sequence[int] | np.ndarray, *, size: int | None = None, budget: int | None = None,
                   equal: bool = False) -> list[np.ndarray]:
    """Indices of texts sorted by length (stable), cut into batches of at most ``size`` texts (with ``equal``, of
    one length only: no padding and no attention mask), or of at most ``budget`` padded tokens (texts times the
    longest; one text at least).  The one length-sorted batching of sentence encoders, causal LMs and the
    transformer classifier's training runs.

    >>> [b.tolist() for b in length_batches([5, 3, 5, 5, 3], size=2)]
    [[1, 4], [0, 2], [3]]
    >>> [b.tolist() for b in length_batches([4, 3, 5], size=2)]
    [[1, 0], [2]]
    >>> [b.tolist() for b in length_batches([4, 3, 5, 4, 4], size=2, equal=True)]
    [[1], [0, 3], [4], [2]]
    >>> [b.tolist() for b in length_batches([5, 1, 3, 2], budget=6)]
    [[1, 3], [2], [0]]
    """
    if (size is None) == (budget is None) or (equal and size is None):
        raise ValueError("length_batches: give size (optionally equal=True) or budget")
    lengths = np.asarray(lengths)
    order = np.argsort(lengths, kind="stable")
    if size is not None:
        groups = np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1) if equal else [order]
        return [group[start:start + size] for group in groups if len(group) for start in range(0, len(group), size)]
    batches: list[np.ndarray] = []
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or (end + 1 - start) * lengths[order[end]] > budget:
            batches.append(order[start:end])
            start = end
    return batches


def cpu_capability() -> str:
    """torch's vector capability of this CPU (``torch.backends.cpu.get_cpu_capability()``: ``DEFAULT``, ``AVX2``,
    ``AVX512``, ...), the one its kernels use; named beside speed figures."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def native_bf16(device: str) -> bool:
    """Whether ``device`` (resolved) multiplies bfloat16 matrices in hardware: on CUDA
    ``torch.cuda.is_bf16_supported(including_emulation=False)`` (Ampere and later); on a CPU torch's AVX512 kernels
    with the AVX512-BF16 or AMX instructions (``torch.cpu._is_avx512_bf16_supported()``,
    ``_is_amx_tile_supported()``). Elsewhere (an AVX2 CPU) bf16 matrix
    products are emulated: 40x slower than fp32 on an AVX2 AMD EPYC (issue 36: 0.7 against 29 GFLOP/s, one thread).

    ``TSTEVAL_NATIVE_BF16=0`` (or ``1``) in the environment overrides the answer on every device: with ``0``, ``auto``
    means fp32 on every machine (the test suite sets it; processes it starts inherit it)."""
    import torch

    if os.environ.get(NATIVE_BF16_VARIABLE) in ("0", "1"):
        return os.environ[NATIVE_BF16_VARIABLE] == "1"
    if device.startswith("cuda"):
        return torch.cuda.is_bf16_supported(including_emulation=False)
    checks = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    return cpu_capability() in _AVX512_CAPABILITIES and any(check() for check in checks if check is not None)


def check_precision(precision: str, device: str) -> str:
    """The precision models on the resolved ``device`` run in: ``auto`` resolved (bf16 where :func:`native_bf16`,
    else fp32), anything else of :data:`PRECISIONS` as given, fp16 only on CUDA (torch's CPU kernels for it are slow
    or missing; a one-line error naming ``--precision`` otherwise); bf16 on a CPU without native support says once,
    on standard error, how much slower it will be."""
    if precision not in PRECISIONS:
        raise TstevalError(f"--precision must be one of {list(PRECISIONS)}, not {precision!r}")
    if precision == "fp16" and not device.startswith("cuda"):
        raise TstevalError(f"--precision {precision} runs on a CUDA device only, and the models run on {device}: "
                           "give --precision auto (the default), fp32 or --device cuda")
    if precision == "auto":
        return "bf16" if native_bf16(device) else "fp32"
    if precision == "bf16" and not device.startswith("cuda") and not native_bf16(device):
        _say_emulated_bf16(cpu_capability())
    return precision


@cache
def _say_emulated_bf16(capability: str) -> None:
    """One line, once per process: bf16 asked for on a CPU that emulates it."""
    print(f"tsteval: --precision bf16 on this CPU (torch capability {capability}, no AVX512-BF16/AMX) is "
          "emulated: its matrix products run tens of times slower than fp32's (40x on an AVX2 AMD EPYC); "
          "--precision auto picks fp32 here", file=sys.stderr)


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


# The attention kernels a forward pass on a GPU may use, in torch's order of preference.  cuDNN's kernel is left out:
# it builds a plan for every new batch shape, and batches sorted by length have a new shape almost every time (on an
# H200 the first pass over 5,000 pairs ran at a third of the speed of the second); the flash and memory-efficient
# kernels build none (benchmarks/results/bench_gpu.md measures both).
GPU_ATTENTION = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH")


@contextmanager
def attention_kernels(device: object) -> Iterator[None]:
    """Inside the block, scaled-dot-product attention on a CUDA ``device`` uses only the kernels of
    :data:`GPU_ATTENTION`; on a CPU nothing changes (torch is not imported).

    >>> with attention_kernels("cpu"):
    ...     pass
    """
    if not str(device).startswith("cuda"):
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([getattr(SDPBackend, name) for name in GPU_ATTENTION]):
        yield
