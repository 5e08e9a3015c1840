"""Corpus-level aggregation of per-sentence scores: mean with a bootstrap interval, and the Score record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from tsteval.core.errors import InputError

# Bootstrap resamples (and randomisation trials) when none are given: every interval of tsteval by default.
N_RESAMPLES = 1000
# Resample indices are drawn in blocks of at most this many entries, so memory stays bounded for
# large corpora while each block is still one vectorised draw.
_MAX_BLOCK_ENTRIES = 10_000_000


def bootstrap_mean(values: ArrayLike, n_resamples: int = N_RESAMPLES, confidence: float = 0.95,
                   seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``values`` and its percentile-bootstrap confidence interval: ``(mean, low, high)``.

    Deterministic for a given ``seed``.  NaN or infinite values are refused (silently dropping them
    would change ``n``).  With fewer than 2 values there is nothing to resample and the interval is the
    value itself.
    """
    return _bootstrap([_scores(values, None)], n_resamples, confidence, seed)[0]


def bootstrap_means(columns: Mapping[str, ArrayLike], n_resamples: int = N_RESAMPLES, confidence: float = 0.95,
                    seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """:func:`bootstrap_mean` of each column of one group of rows, every column on the same resamples.

    The resampling indices are drawn once (from ``seed``) and reused for every column, so the intervals of
    all metrics of a group come from the same resampled rows; each column's result equals
    ``bootstrap_mean(column, n_resamples, confidence, seed)``.  Columns must have the same length.
    """
    xs = [_scores(values, name) for name, values in columns.items()]
    lengths = {x.size for x in xs}
    if len(lengths) > 1:
        raise InputError(f"bootstrap_means needs columns of one length (one group of rows), got lengths "
                         f"{dict(zip(columns, (x.size for x in xs), strict=True))}")
    return dict(zip(columns, _bootstrap(xs, n_resamples, confidence, seed), strict=True))


def _scores(values: ArrayLike, name: str | None) -> np.ndarray:
    """``values`` as a finite, non-empty 1-D float array; ``name`` (a column) goes into the error."""
    x = np.asarray(values, dtype=float)
    of = "" if name is None else f" of {name!r}"
    if x.ndim != 1 or x.size == 0:
        raise InputError(f"bootstrap_mean needs a non-empty 1-D array of scores{of}, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        raise InputError(f"score {int(np.argmax(bad))}{of} is {x[bad][0]}: NaN or infinite scores cannot be "
                         "averaged", fix="drop or fix the failed items explicitly before aggregating")
    return x


def _bootstrap(xs: list[np.ndarray], n_resamples: int, confidence: float,
               seed: int) -> list[tuple[float, float, float]]:
    """``(mean, low, high)`` of each equally long checked array, all from one draw of resampling indices."""
    if n_resamples < 1:
        raise InputError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence}")
    if not xs:
        return []
    n = xs[0].size
    if n < 2:
        return [(float(x.mean()),) * 3 for x in xs]
    rng = np.random.default_rng(seed)
    block = max(1, _MAX_BLOCK_ENTRIES // n)
    means: list[list[np.ndarray]] = [[] for _ in xs]
    for start in range(0, n_resamples, block):
        idx = rng.integers(0, n, size=(min(block, n_resamples - start), n))
        for column, x in zip(means, xs, strict=True):
            column.append(x[idx].mean(axis=1))
    alpha = (1.0 - confidence) / 2.0
    out = []
    for column, x in zip(means, xs, strict=True):
        low, high = np.percentile(np.concatenate(column), [100.0 * alpha, 100.0 * (1.0 - alpha)])
        out.append((float(x.mean()), float(low), float(high)))
    return out


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
