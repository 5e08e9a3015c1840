"""A percentile bootstrap that resamples clusters (rows sharing an input are not independent), for the content
benchmarks' intervals: the statistic is recomputed on the rows of ``n`` clusters drawn with replacement (the
resamples of :mod:`tsteval.metaeval.statistics`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tsteval.aggregate import N_RESAMPLES
from tsteval.metaeval.statistics import cluster_resamples, percentile_interval, resample_rows

Statistic = Callable[[np.ndarray], float]


def clustered_bootstrap(clusters: Sequence[object], statistics: dict[str, Statistic], n_resamples: int = N_RESAMPLES,
                        seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """``(value, low, high)`` of each statistic (a function of row indices): the value on all rows and the engine's
    95% percentile interval over resamples of whole clusters; every statistic uses the same resamples."""
    codes = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1]
    draws = [resample_rows(codes, draw) for draw in cluster_resamples(codes, n_resamples, seed)]
    everything = np.arange(len(codes))
    out = {}
    for name, statistic in statistics.items():
        values = np.array([statistic(rows) for rows in draws])
        low, high = percentile_interval(values)
        out[name] = (float(statistic(everything)), float(low), float(high))
    return out


def pearson_of(x: np.ndarray, y: np.ndarray) -> Statistic:
    """Pearson's r of ``x`` and ``y`` on the given rows."""
    def statistic(rows: np.ndarray) -> float:
        return float(np.corrcoef(x[rows], y[rows])[0, 1])

    return statistic


def pearson_difference(a: np.ndarray, b: np.ndarray, y: np.ndarray) -> Statistic:
    """r(a, y) - r(b, y) on the given rows (a paired difference: both on the same resample)."""
    def statistic(rows: np.ndarray) -> float:
        return float(np.corrcoef(a[rows], y[rows])[0, 1] - np.corrcoef(b[rows], y[rows])[0, 1])

    return statistic
