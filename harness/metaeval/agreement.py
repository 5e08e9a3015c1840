"""Agreement of automated metrics with human ratings, and of human raters with each other.

Pearson's r carries Mir et al.'s "±" (1.96 x Bowley's standard error), the form a reproduction prints beside
their tables.  Spearman's rho and Kendall's tau carry the delta-method standard error ``(1 - r^2) * se_z`` of the
variance approximations for rank correlations: Bonett & Wright (2000), ``var(atanh rho) = (1 + rho^2 / 2) / (n -
3)``, and Fieller, Hartley & Pearson (1957), ``var(atanh tau) = 0.437 / (n - 4)``.  Williams' t (Williams 1959;
Steiger 1980's T2) compares two metrics' correlations with the same human scores, which are dependent because they
share those scores.  All of these take rows as independent, which rated transfers sharing an input are not: every
interval a tsteval page shows comes from :mod:`tsteval.metaeval.statistics`'s bootstrap clustered by input (the
engine, :mod:`tsteval.metaeval.engine`, which prints Williams' t beside it); p-values are information only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from tsteval.core.errors import InputError

# Mir et al. (2019) print 1.96 x the Bowley standard error as the "±" of their correlation tables.
MIR_Z = 1.96
# Fieller, Hartley & Pearson (1957): variance of atanh(Kendall's tau) is about 0.437 / (n - 4).
FIELLER_KENDALL = 0.437
METHODS = ("pearson", "spearman", "kendall")
Method = Literal["pearson", "spearman", "kendall"]


@dataclass(frozen=True)
class Correlation:
    """A correlation with its p-value, standard error and margin (1.96 x se).

    For Pearson ``se`` is Bowley's, as Mir et al. print it; for Spearman and Kendall see the module notes.
    """

    r: float
    p_value: float
    n: int
    se: float
    margin: float
    method: str = "pearson"


def bowley_se(r: float, n: int) -> float:
    """Bowley's (1928) large-sample standard error of r, ``(1 - r^2) / sqrt(n)``, as used by Mir et al."""
    return (1.0 - r * r) / float(np.sqrt(n))


def fisher_se_z(method: Method, r: float, n: int) -> float:
    """Standard error of atanh(r): Fisher (Pearson), Bonett-Wright (Spearman), Fieller (Kendall); inf if too few."""
    if method == "pearson":
        return 1.0 / np.sqrt(n - 3) if n > 3 else np.inf
    if method == "spearman":
        return float(np.sqrt((1.0 + r * r / 2.0) / (n - 3))) if n > 3 else np.inf
    if method == "kendall":
        return float(np.sqrt(FIELLER_KENDALL / (n - 4))) if n > 4 else np.inf
    raise InputError(f"unknown correlation method {method!r}", fix=f"use one of {METHODS}")


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


def _check_pair(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two paired samples, each checked by :func:`_check_sample`."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise InputError(f"x has shape {x.shape} but y has shape {y.shape}: scores must be paired")
    return _check_sample(x, "x"), _check_sample(y, "y")


def pearson(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Pearson correlation of paired scores (``scipy.stats.pearsonr``) with Mir's "±"."""
    x, y = _check_pair(x, y)
    n = int(x.size)
    result = stats.pearsonr(x, y)
    r = float(result.statistic)
    se = bowley_se(r, n)
    return Correlation(r=r, p_value=float(result.pvalue), n=n, se=se, margin=MIR_Z * se)


def _rank_correlation(method: Method, statistic: float, p_value: float, n: int) -> Correlation:
    """Wrap a rank correlation with its delta-method se and margin."""
    se = (1.0 - statistic * statistic) * fisher_se_z(method, statistic, n)
    return Correlation(r=statistic, p_value=p_value, n=n, se=float(se), margin=float(MIR_Z * se), method=method)


def spearman(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Spearman's rho (``scipy.stats.spearmanr``) with Bonett and Wright's standard error."""
    x, y = _check_pair(x, y)
    result = stats.spearmanr(x, y)
    return _rank_correlation("spearman", float(result.statistic), float(result.pvalue), int(x.size))


def kendall(x: ArrayLike, y: ArrayLike) -> Correlation:
    """Kendall's tau-b (``scipy.stats.kendalltau``, ties handled) with Fieller's standard error."""
    x, y = _check_pair(x, y)
    result = stats.kendalltau(x, y)
    return _rank_correlation("kendall", float(result.statistic), float(result.pvalue), int(x.size))


CORRELATIONS = {"pearson": pearson, "spearman": spearman, "kendall": kendall}


def correlate(x: ArrayLike, y: ArrayLike, method: Method = "pearson") -> Correlation:
    """The correlation named by ``method`` ("pearson", "spearman" or "kendall")."""
    if method not in CORRELATIONS:
        raise InputError(f"unknown correlation method {method!r}", fix=f"use one of {METHODS}")
    return CORRELATIONS[method](x, y)


# --- dependent correlations --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DependentComparison:
    """Williams' t for r1 = corr(metric_a, human) vs r2 = corr(metric_b, human); r12 = corr(metric_a, metric_b)."""

    r1: float
    r2: float
    r12: float
    t: float
    df: int
    p_value: float
    n: int
    method: str = "pearson"


def williams_t(r1: float, r2: float, r12: float, n: int) -> float:
    """Williams' (1959) t for ``r1 - r2``, two correlations with a shared variable (Steiger 1980's T2).

    ``t = (r1 - r2) sqrt((n - 1)(1 + r12)) / sqrt(2 (n - 1)/(n - 3) |R| + rbar^2 (1 - r12)^3)`` with
    ``|R| = 1 - r1^2 - r2^2 - r12^2 + 2 r1 r2 r12`` and ``rbar = (r1 + r2) / 2``; df = n - 3.
    """
    if n <= 3:
        raise InputError(f"Williams' t needs more than 3 items, got {n}")
    det = 1.0 - r1 * r1 - r2 * r2 - r12 * r12 + 2.0 * r1 * r2 * r12
    rbar = (r1 + r2) / 2.0
    denominator = 2.0 * (n - 1) / (n - 3) * det + rbar * rbar * (1.0 - r12) ** 3
    if denominator <= 0:
        raise InputError("the two metrics are perfectly collinear: Williams' t is undefined")
    return float((r1 - r2) * np.sqrt((n - 1) * (1.0 + r12)) / np.sqrt(denominator))


def compare_dependent_correlations(metric_a: ArrayLike, metric_b: ArrayLike, human: ArrayLike,
                                   method: Method = "pearson",
                                   alternative: Literal["two-sided", "greater", "less"] = "two-sided",
                                   ) -> DependentComparison:
    """Does metric A agree with the human scores more than metric B?  Williams' t on the same items.

    ``alternative="greater"`` tests r1 > r2 (the one-sided test of the WMT metrics tasks).  With
    ``method="spearman"`` the correlations are Spearman's (the usual approximation); Kendall is refused
    because Williams' formula assumes product-moment correlations.
    """
    if method not in ("pearson", "spearman"):
        raise InputError(f"Williams' t compares Pearson or Spearman correlations, not {method!r}")
    a, h = _check_pair(metric_a, human)
    b, _ = _check_pair(metric_b, human)
    n = int(h.size)
    r1 = correlate(a, h, method).r
    r2 = correlate(b, h, method).r
    r12 = correlate(a, b, method).r
    t = williams_t(r1, r2, r12, n)
    df = n - 3
    if alternative == "two-sided":
        p = 2.0 * stats.t.sf(abs(t), df)
    elif alternative == "greater":
        p = stats.t.sf(t, df)
    elif alternative == "less":
        p = stats.t.cdf(t, df)
    else:
        raise InputError(f"unknown alternative {alternative!r}", fix="use 'two-sided', 'greater' or 'less'")
    return DependentComparison(r1=r1, r2=r2, r12=r12, t=t, df=df, p_value=float(p), n=n, method=method)


# --- per system --------------------------------------------------------------------------------------------------

# The key of :func:`by_system`'s correlation over every system's rows.
POOLED = "all"


def by_system(frame: pd.DataFrame, metric: str, human: str, method: Method = "pearson") -> dict[str, Correlation]:
    """Sentence-level correlation of ``metric`` with ``human`` over all rows (key "all") and per ``system``.

    Mir et al.'s per-model tables (with their "±"); rows missing either value are left out.  Human agreement of a
    run or a scorecard is :mod:`tsteval.metaeval.engine`'s (sentence, within_system and system level).
    """
    for column in (metric, human, "system"):
        if column not in frame.columns:
            raise InputError(f"column {column!r} not in the frame", fix=f"choose from {list(frame.columns)}")
    for column in (metric, human):
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise InputError(f"column {column!r} is not numeric ({frame[column].dtype})",
                             fix="correlate numeric scores only; encode categorical ratings first")
    paired = frame.dropna(subset=[metric, human])
    parts = [(POOLED, paired), *((str(system), rows) for system, rows in paired.groupby("system", sort=False))]
    return {name: correlate(rows[metric].to_numpy(), rows[human].to_numpy(), method)
            for name, rows in parts}


# --- inter-rater agreement ---------------------------------------------------------------------------------------

def fleiss_kappa(ratings: ArrayLike, *, counts: bool = False, method: Literal["fleiss", "randolph"] = "fleiss",
                 ) -> float:
    """Fleiss' kappa (``statsmodels.stats.inter_rater.fleiss_kappa``), as Mir et al. section 4.2.1.

    ``ratings`` is items x raters of category codes, or with ``counts=True`` an items x categories table
    of how many raters chose each category (every item rated by the same number of raters).
    """
    from statsmodels.stats import inter_rater

    table = np.asarray(ratings)
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 2:
        raise InputError(f"ratings must be a 2-D table with at least 2 rows and 2 columns, got shape {table.shape}")
    if not counts:
        if table.dtype.kind in "fc" and not np.isfinite(table).all():
            raise InputError("ratings contain missing values", fix="Fleiss' kappa needs every item fully rated")
        table, _ = inter_rater.aggregate_raters(table)
    else:
        table = table.astype(float)
        if not np.isfinite(table).all() or (table < 0).any() or (table != np.round(table)).any():
            raise InputError("a count table must hold non-negative whole numbers")
        per_item = table.sum(axis=1)
        if np.ptp(per_item) != 0:
            raise InputError(f"items have {int(per_item.min())} to {int(per_item.max())} ratings",
                             fix="Fleiss' kappa needs the same number of raters for every item")
        if per_item[0] < 2:
            raise InputError("Fleiss' kappa needs at least 2 raters per item")
    if np.count_nonzero(np.asarray(table).sum(axis=0)) < 2:
        raise InputError("every rating falls in one category: kappa is undefined")
    return float(inter_rater.fleiss_kappa(table, method=method))
