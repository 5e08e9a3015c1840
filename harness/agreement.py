"""Agreement of automated metrics with human ratings: Pearson's r with Mir et al.'s "±" and a Fisher interval."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from harness.errors import InputError

# Mir et al. (2019) print 1.96 x the Bowley standard error as the "±" of their correlation tables.
MIR_Z = 1.96


@dataclass(frozen=True)
class Correlation:
    """Pearson's r with its p-value, Bowley standard error, Mir's margin and a 95% Fisher-z interval."""

    r: float
    p_value: float
    n: int
    se: float
    margin: float
    fisher_low: float
    fisher_high: float


def bowley_se(r: float, n: int) -> float:
    """Bowley's (1928) large-sample standard error of r, ``(1 - r^2) / sqrt(n)``, as used by Mir et al."""
    return (1.0 - r * r) / float(np.sqrt(n))


def fisher_interval(r: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Confidence interval for r from Fisher's z = atanh(r) with standard error ``1 / sqrt(n - 3)``.

    With n <= 3 the standard error is unbounded and the interval is (-1, 1).
    """
    if n <= 3:
        return -1.0, 1.0
    z = np.arctanh(np.clip(r, -1.0 + 1e-15, 1.0 - 1e-15))
    half = stats.norm.ppf(0.5 + confidence / 2.0) / np.sqrt(n - 3)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def _check_sample(values: ArrayLike, name: str) -> np.ndarray:
    """A finite, non-constant 1-D float array of at least 3 values."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise InputError(f"{name} must be 1-D, got shape {v.shape}")
    bad = ~np.isfinite(v)
    if bad.any():
        raise InputError(f"{name}[{int(np.argmax(bad))}] is not finite", fix="drop unrated or failed items first")
    if v.size < 3:
        raise InputError(f"need at least 3 pairs for a correlation, got {v.size}")
    if np.ptp(v) == 0:
        raise InputError(f"{name} is constant ({v[0]}): the correlation is undefined")
    return v


def pearson(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Pearson correlation of paired scores (``scipy.stats.pearsonr``) with Mir's "±" and a Fisher interval."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise InputError(f"x has shape {x.shape} but y has shape {y.shape}: scores must be paired")
    x = _check_sample(x, "x")
    y = _check_sample(y, "y")
    n = int(x.size)
    result = stats.pearsonr(x, y)
    r = float(result.statistic)
    se = bowley_se(r, n)
    low, high = fisher_interval(r, n)
    return Correlation(r=r, p_value=float(result.pvalue), n=n, se=se, margin=MIR_Z * se,
                       fisher_low=low, fisher_high=high)
