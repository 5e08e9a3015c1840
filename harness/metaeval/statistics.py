"""The statistics of the meta-evaluation, batched over metric columns: Pearson, Spearman and Kendall at three levels
and their intervals from a bootstrap clustered by input.

The levels (:data:`LEVELS`):

* ``sentence``: one point per rated transfer;
* ``within_system``: the mean of the per-group correlations (a group is a system and setting), so that
  differences *between* systems do not count;
* ``system``: one point per group, the group means.

Intervals are 95% percentile intervals of a **bootstrap clustered by input**: each resample draws the inputs with
replacement and takes all their rows (every system's transfer of that input), because rows sharing an input are
not independent.  The resample indices are drawn once (seeded, :func:`cluster_resamples`) and shared by every
metric and rating, so a difference between two metrics is a paired difference.  Rank correlations give tied values
their average rank (Kendall's tau-b).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

from tsteval.core.errors import InputError
from tsteval.metaeval import agreement

LEVELS = ("sentence", "within_system", "system")
METHODS = agreement.METHODS
# Every statistic a study may ask for: the correlations and pairwise accuracy (the share of pairs of rows that the
# humans rank apart which the metric ranks the same way, a metric tie counted half).
STATISTICS = (*METHODS, "pairwise_accuracy")
CONFIDENCE = 0.95


def _pearson_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each column of ``x`` (n, k) with ``y`` (n,); NaN where either side is constant."""
    xc = x - x.mean(axis=0)
    yc = y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc.T @ yc) / np.sqrt((xc * xc).sum(axis=0) * (yc @ yc))
    r[~np.isfinite(r)] = np.nan
    return np.clip(r, -1.0, 1.0)


def average_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks (1-based) down each column of ``a``, ties given their average rank, as ``scipy.stats.rankdata``.

    >>> average_ranks(np.array([[3.0], [1.0], [3.0], [2.0]]))[:, 0].tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    a = np.asarray(a, dtype=float)
    column = a.ndim == 1
    a = a[:, None] if column else a
    n = a.shape[0]
    order = np.argsort(a, axis=0)
    ordered = np.take_along_axis(a, order, axis=0)
    new_run = np.ones_like(ordered, dtype=bool)
    new_run[1:] = ordered[1:] != ordered[:-1]
    position = np.arange(n)[:, None]
    start = np.maximum.accumulate(np.where(new_run, position, 0), axis=0)
    run_end = np.ones_like(new_run)
    run_end[:-1] = new_run[1:]
    end = np.minimum.accumulate(np.where(run_end, position, n - 1)[::-1], axis=0)[::-1]
    ranks = np.empty_like(a)
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=0)
    return ranks[:, 0] if column else ranks


# Up to this many rows Kendall's tau-b is computed from all pairs at once (memory ~ n^2/2 x metrics floats).
PAIRWISE_KENDALL_ROWS = 300


def _kendall_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each column of ``x`` with ``y``; NaN when undefined.

    Small samples use every pair at once, ``S / sqrt((n0 - n1)(n0 - n2))`` with S the concordant minus discordant
    pairs and n1, n2 the pairs tied in x, in y; larger ones call ``scipy.stats.kendalltau`` per column.
    """
    n, k = x.shape
    out = np.full(k, np.nan)
    if np.ptp(y) == 0:
        return out
    if n <= PAIRWISE_KENDALL_ROWS:
        i, j = np.triu_indices(n, 1)
        dx = np.sign(x[i] - x[j])
        dy = np.sign(y[i] - y[j])
        pairs = len(i)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (dy @ dx) / np.sqrt((pairs - (dx == 0).sum(axis=0)) * (pairs - (dy == 0).sum()))
        tau[~np.isfinite(tau)] = np.nan
        return tau
    for column in range(k):
        if np.ptp(x[:, column]) > 0:
            out[column] = stats.kendalltau(x[:, column], y).statistic
    return out


def _tied_pairs(a: np.ndarray) -> np.ndarray:
    """Pairs of rows tied in each column of ``a`` (n, k): the sum over tied values of c(c - 1) / 2."""
    out = np.empty(a.shape[1])
    for column in range(a.shape[1]):
        counts = np.unique(a[:, column], return_counts=True)[1].astype(float)
        out[column] = float((counts * (counts - 1) / 2).sum())
    return out


def _pairwise_accuracy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Of the pairs of rows with different ``y``, the share that each column of ``x`` orders the same way (ties in x
    count half): ``1/2 + S / (2 (n0 - n_y))`` with S concordant minus discordant pairs, n0 all pairs and n_y the
    pairs tied in y, so S comes from Kendall's tau-b (``S = tau_b sqrt((n0 - n_x)(n0 - n_y))``)."""
    n = len(y)
    pairs = n * (n - 1) / 2
    tied_y = _tied_pairs(y[:, None])[0]
    out = np.full(x.shape[1], np.nan)
    if pairs - tied_y <= 0:
        return out
    tied_x = _tied_pairs(x)
    tau = _kendall_columns(x, y)
    s = np.where(tied_x == pairs, 0.0, np.nan_to_num(tau) * np.sqrt((pairs - tied_x) * (pairs - tied_y)))
    return 0.5 + s / (2 * (pairs - tied_y))


def correlations(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """The ``method`` statistic of every column of ``x`` with ``y`` (average ranks for ties); NaN if undefined.

    >>> x = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    >>> correlations(x, np.array([1.0, 2.0, 4.0]), "spearman").tolist()
    [1.0, -1.0]
    >>> x = np.array([[1.0], [1.0], [3.0]])
    >>> round(float(correlations(x, np.array([1.0, 2.0, 4.0]), "pairwise_accuracy")[0]), 4)
    0.8333
    """
    if len(y) < 3:
        return np.full(x.shape[1], np.nan)
    if method == "pearson":
        return _pearson_columns(x, y)
    if method == "spearman":
        return _pearson_columns(average_ranks(x), average_ranks(y))
    if method == "kendall":
        return _kendall_columns(x, y)
    if method == "pairwise_accuracy":
        return _pairwise_accuracy(x, y)
    raise InputError(f"unknown correlation method {method!r}", fix=f"use one of {STATISTICS}")


def correlation(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> float:
    """The ``method`` statistic of one column ``x`` with ``y`` (:func:`correlations`); NaN if undefined.

    >>> correlation([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], "spearman")
    0.5
    """
    return float(correlations(np.asarray(x, dtype=float)[:, None], np.asarray(y, dtype=float), method)[0])


def _group_means(values: np.ndarray, groups: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-group means of the rows of ``values`` (n, k) and which groups have rows.

    Sums are exact (``math.fsum``, then one rounding), so they do not depend on the order of the rows and groups
    whose values sum to the same number get the same mean: tied group means stay tied for the rank correlations.

    >>> values = np.array([[0.1], [0.2], [0.3], [0.3], [0.2], [0.1]])  # 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1
    >>> means, present = _group_means(values, np.array([0, 0, 0, 2, 2, 2]), 3)
    >>> bool(means[0, 0] == means[1, 0]), present.tolist()
    (True, [True, False, True])
    """
    counts = np.bincount(groups, minlength=n_groups)
    present = counts > 0
    order = np.argsort(groups, kind="stable")
    parts = np.split(values[order].T, np.cumsum(counts[present])[:-1], axis=1)
    sums = np.array([[math.fsum(column) for column in part.tolist()] for part in parts])
    return sums / counts[present, None], present


def level_statistics(x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_groups: int,
                     methods: Sequence[str] = METHODS) -> np.ndarray:
    """Correlations of each column of ``x`` with ``y``, shape (levels, methods, k) in the order of :data:`LEVELS`.

    ``groups`` are integer group codes (system and setting); ``within_system`` is the mean over the groups whose
    correlation is defined, system level correlates the group means.
    """
    k = x.shape[1]
    out = np.full((len(LEVELS), len(methods), k), np.nan)
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    parts = np.split(order, bounds)
    means, _ = _group_means(np.column_stack([x, y]), groups, n_groups)
    for m, method in enumerate(methods):
        out[0, m] = correlations(x, y, method)
        per_group = np.vstack([correlations(x[rows], y[rows], method) for rows in parts])
        defined = np.isfinite(per_group).any(axis=0)
        out[1, m, defined] = np.nanmean(per_group[:, defined], axis=0)
        out[2, m] = correlations(means[:, :k], means[:, k], method)
    return out


def cluster_resamples(clusters: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """``n_resamples`` draws of cluster codes, each as many codes as there are clusters, with replacement.

    >>> cluster_resamples(np.array([0, 0, 1, 2]), 2, seed=0).shape
    (2, 3)
    """
    n_clusters = int(clusters.max()) + 1 if len(clusters) else 0
    return np.random.default_rng(seed).integers(0, n_clusters, size=(n_resamples, n_clusters))


def resample_rows(clusters: np.ndarray, draw: np.ndarray) -> np.ndarray:
    """The row indices of one clustered resample: every row of each drawn cluster, in draw order.

    >>> resample_rows(np.array([0, 0, 1, 2]), np.array([1, 0, 0])).tolist()
    [2, 0, 1, 0, 1]
    """
    order = np.argsort(clusters, kind="stable")
    counts = np.bincount(clusters, minlength=int(draw.max(initial=-1)) + 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    sizes = counts[draw]
    offsets = np.repeat(starts[draw] - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
    return order[np.arange(int(sizes.sum())) + offsets]


def bootstrap_statistics(x: np.ndarray, y: np.ndarray, groups: np.ndarray, clusters: np.ndarray,
                         draws: np.ndarray, methods: Sequence[str] = METHODS) -> np.ndarray:
    """:func:`level_statistics` on each clustered resample of ``draws``: shape (resamples, levels, methods, k).

    A drawn cluster with no row here (e.g. an input whose transfers are all unrated) contributes nothing.
    """
    n_groups = int(groups.max()) + 1
    out = np.empty((len(draws), len(LEVELS), len(methods), x.shape[1]))
    for b, draw in enumerate(draws):
        rows = resample_rows(clusters, draw)
        out[b] = level_statistics(x[rows], y[rows], groups[rows], n_groups, methods)
    return out


def percentile_interval(samples: np.ndarray, confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval over axis 0, ignoring resamples where the statistic is undefined (NaN)."""
    tail = 100 * (1 - confidence) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "All-NaN slice": an undefined statistic stays NaN
        low, high = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    return low, high


def clustered_bootstrap(clusters: Sequence[object], statistics: dict[str, Callable[[np.ndarray], float]],
                        n_resamples: int, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """``(value, low, high)`` of each statistic (a function of row indices) beside the tables: its value on all rows
    and its :func:`percentile_interval` over the clustered resamples (:func:`cluster_resamples`, the same draws for
    every statistic), for what is no correlation of a column with a rating (an AUC, a share of wins).

    >>> wins = np.array([1.0, 0.0, 1.0, 1.0])
    >>> clustered_bootstrap(["a", "a", "b", "c"], {"mean": lambda rows: float(wins[rows].mean())}, 50)["mean"][0]
    0.75
    """
    codes = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)[1]
    draws = [resample_rows(codes, draw) for draw in cluster_resamples(codes, n_resamples, seed)]
    out = {}
    for name, statistic in statistics.items():
        low, high = percentile_interval(np.array([statistic(rows) for rows in draws]))
        out[name] = (float(statistic(np.arange(len(codes)))), float(low), float(high))
    return out
