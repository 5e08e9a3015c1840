"""Corpus-level aggregation of per-sentence scores: mean with a bootstrap interval, and the Score record."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from tsteval.core.errors import InputError

# Resample indices are drawn in blocks of at most this many entries, so memory stays bounded for
# large corpora while each block is still one vectorised draw.
_MAX_BLOCK_ENTRIES = 10_000_000


def bootstrap_mean(values: ArrayLike, n_resamples: int = 1000, confidence: float = 0.95,
                   seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``values`` and its percentile-bootstrap confidence interval: ``(mean, low, high)``.

    Deterministic for a given ``seed``.  NaN or infinite values are refused (silently dropping them
    would change ``n``).  With fewer than 2 values there is nothing to resample and the interval is the
    value itself.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise InputError(f"bootstrap_mean needs a non-empty 1-D array of scores, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(f"score {int(np.argmax(bad))} is {x[bad][0]}: NaN or infinite scores cannot be averaged",
                         fix="drop or fix the failed items explicitly before aggregating")
    if n_resamples < 1:
        raise InputError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    mean = float(x.mean())
    n = x.size
    if n < 2:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    block = max(1, _MAX_BLOCK_ENTRIES // n)
    means = np.concatenate([x[rng.integers(0, n, size=(min(block, n_resamples - start), n))].mean(axis=1)
                            for start in range(0, n_resamples, block)])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return mean, float(low), float(high)


@dataclass(frozen=True)
class Score:
    """One corpus-level score with its interval, sample size and the signature of how it was computed."""

    name: str
    value: float
    low: float
    high: float
    n: int
    signature: str

    def as_dict(self) -> dict[str, object]:
        """Plain dict for JSON or table output."""
        return asdict(self)
