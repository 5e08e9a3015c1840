"""Meta-evaluation: how well does each metric column of a scorecard track human ratings?

For every metric column x rating column of a matching aspect (style metrics against style ratings, content and
compatibility metrics against content ratings, naturalness metrics against naturalness ratings), Pearson,
Spearman and Kendall at three levels:

* ``sentence``: one point per rated transfer;
* ``within_system``: the mean of the per-group correlations (a group is a system and setting), so that
  differences *between* systems do not count;
* ``system``: one point per group, the group means.

Intervals are 95% percentile intervals of a **bootstrap clustered by input**: each resample draws the inputs with
replacement and takes all their rows (every system's transfer of that input), because rows sharing an input are
not independent.  The resample indices are drawn once (seeded) and shared by every metric and rating, so a
difference between two metrics is a paired difference.  Each metric is compared with a named baseline of its
aspect (:data:`BASELINES`): the difference of the correlations with its clustered-bootstrap interval and
Williams' t for dependent correlations (:func:`tsteval.metaeval.agreement.compare_dependent_correlations`; it
assumes independent rows, so the clustered interval is the one to trust).

Directions come from the metric registry: a lower-is-better metric (WMD, perplexity) has its correlations
sign-flipped (column ``direction``) so that a higher r always means better agreement.

Policies, stated in the outputs: rows without a rating are counted per rating column and left out of that
rating's statistics; rows where a compared metric is missing are counted and left out of that rating's
statistics (all metrics of an aspect are judged on the same rows, so the comparisons are paired); identical
outputs of several systems for the same input are kept (each is a rated transfer) and counted, and rank
correlations give tied values their average rank (Kendall's tau-b).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from tsteval.core.errors import InputError, TstevalError, quote
from tsteval.metaeval import agreement
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import GROUP, Scorecard

LEVELS = ("sentence", "within_system", "system")
METHODS = agreement.METHODS
RATING_ASPECTS = ("style", "content", "naturalness")
# The metric aspects judged against a rating of each aspect (a pair classifier judges content).
JUDGED_BY = {"style": ("style",), "content": ("content", "compatibility"), "naturalness": ("naturalness",)}
# Default baseline per rating aspect: the first match, in this order.  An entry with "@" is a column name, one
# without is a metric name of the registry.  ``ppl`` is exp(-mean token log-probability): the length-normalised
# LM score on a monotone scale (equal Spearman and Kendall; Pearson differs).
BASELINES: Mapping[str, tuple[str, ...]] = {
    "style": ("target_prob",),
    "content": ("bleu@none", "bleu"),
    "naturalness": ("lp_mean", "mean_logprob", "ppl@kn3", "ppl"),
}
CONFIDENCE = 0.95
TABLE_COLUMNS = ["metric", "source", "rating", "aspect", "level", "method", "r", "lo", "hi", "n", "n_inputs",
                 "n_groups", "direction"]
BASELINE_COLUMNS = ["metric", "source", "baseline", "rating", "aspect", "level", "method", "r", "r_baseline", "diff",
                    "lo", "hi", "williams_t", "p", "verdict", "n"]


@dataclass(frozen=True)
class MetricColumn:
    """A column to judge: its aspect and direction (from the registry, or given for published scores)."""

    column: str
    aspect: str
    higher_is_better: bool
    source: str = "tsteval"


@dataclass(frozen=True)
class Rating:
    """A human rating column and the aspect it judges."""

    column: str
    aspect: str


def parse_rating(text: str, origin: str = "--rating") -> Rating:
    """``ASPECT=COLUMN`` (e.g. ``content=human_content_src``) as a :class:`Rating`."""
    aspect, sep, column = text.partition("=")
    if not sep or not column or aspect not in RATING_ASPECTS:
        raise TstevalError(f"{origin} {text!r}: expected ASPECT=COLUMN with ASPECT one of {list(RATING_ASPECTS)}, "
                           "e.g. content=human_content")
    return Rating(column, aspect)


def registered_columns(card: Scorecard) -> list[MetricColumn]:
    """The scorecard's metric columns that the registry knows, with their aspect and direction."""
    out = []
    for column in card.metrics:
        metric = find_metric(column, card.signatures.get(column))
        if metric is not None:
            out.append(MetricColumn(column, metric.aspect, metric.higher_is_better))
    return out


def default_baseline(aspect: str, columns: Sequence[MetricColumn]) -> str | None:
    """The first column matching :data:`BASELINES` of ``aspect`` among tsteval's ``columns``, else None."""
    ours = [c for c in columns if c.source == "tsteval"]
    for wanted in BASELINES.get(aspect, ()):
        for c in ours:
            metric = find_metric(c.column)
            if c.column == wanted or ("@" not in wanted and metric is not None and metric.name == wanted):
                return c.column
    return None


# --- the statistics, batched over metric columns -------------------------------------------------------------------

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


def correlations(x: np.ndarray, y: np.ndarray, method: str) -> np.ndarray:
    """The ``method`` correlation of every column of ``x`` with ``y`` (average ranks for ties); NaN if undefined.

    >>> x = np.array([[1.0, 3.0], [2.0, 2.0], [3.0, 1.0]])
    >>> correlations(x, np.array([1.0, 2.0, 4.0]), "spearman").tolist()
    [1.0, -1.0]
    """
    if len(y) < 3:
        return np.full(x.shape[1], np.nan)
    if method == "pearson":
        return _pearson_columns(x, y)
    if method == "spearman":
        return _pearson_columns(average_ranks(x), average_ranks(y))
    if method == "kendall":
        return _kendall_columns(x, y)
    raise InputError(f"unknown correlation method {method!r}", fix=f"use one of {METHODS}")


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


# --- joining ratings -------------------------------------------------------------------------------------------

def join_ratings(frame: pd.DataFrame, ratings: pd.DataFrame, keys: Sequence[str], origin: str,
                 columns: Sequence[str], first_line: int | None = None) -> tuple[pd.DataFrame, int]:
    """The scorecard rows with the rating ``columns`` of ``ratings`` joined on ``keys`` (compared as text).

    Returns the joined frame (scorecard rows kept; no rating row = no rating) and how many rating rows joined
    no scorecard row.  Keys missing on either side, duplicate keys in ``ratings`` (named by file line when row 0 is
    line ``first_line``) or no row joining at all are errors naming ``origin``.
    """
    keys = list(keys)
    if not keys:
        raise InputError("no join keys", path=origin, fix="give --key, e.g. --key item,system or --key input,output")
    for side, table in (("the ratings table", ratings), ("the scorecard", frame)):
        missing = [k for k in keys if k not in table.columns]
        if missing:
            raise InputError(f"{side} lacks the key columns {missing}; its columns are "
                             f"{quote(list(table.columns), 300)}", path=origin,
                             fix="name key columns both tables have with --key")
    text_keys = {k: ratings[k].astype(str) for k in keys}
    duplicated = pd.DataFrame(text_keys).duplicated()
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise InputError(f"the key {dict(pd.DataFrame(text_keys).iloc[row])} is rated twice", path=origin,
                         line=None if first_line is None else first_line + row,
                         fix="give one rating row per key, or add a key column (e.g. --key ...,system)")
    right = pd.DataFrame({**{f"_key_{k}": v for k, v in text_keys.items()},
                          **{c: ratings[c].to_numpy() for c in columns}})
    left = frame.drop(columns=[c for c in columns if c in frame.columns])
    left = left.assign(**{f"_key_{k}": frame[k].astype(str).to_numpy() for k in keys})
    merged = left.merge(right, on=[f"_key_{k}" for k in keys], how="left", indicator=True)
    joined = merged["_merge"] == "both"
    if not joined.any():
        example = {k: frame[k].iloc[0] for k in keys} if len(frame) else {}
        raise InputError(f"no rating row joins the scorecard on {keys} (e.g. the scorecard's {quote(example, 200)} "
                         "has no rating row)", path=origin,
                         fix="check the --key columns hold the same values in both (same item numbering, same "
                             "system names, same text and tokenisation)")
    matched = merged.loc[joined, [f"_key_{k}" for k in keys]].drop_duplicates()
    orphans = len(right) - len(matched)
    return merged.drop(columns=[*(f"_key_{k}" for k in keys), "_merge"]), orphans


# --- the meta-evaluation ---------------------------------------------------------------------------------------

@dataclass
class MetaEvaluation:
    """The result: ``table`` (metaeval.csv), ``baseline`` (baseline.csv), ``counts`` per rating and ``info``."""

    table: pd.DataFrame
    baseline: pd.DataFrame
    counts: pd.DataFrame
    info: dict = field(default_factory=dict)

    def markdown(self, title: str = "Meta-evaluation") -> str:
        """The Markdown report (every name escaped)."""
        from tsteval.metaeval.pages import markdown

        return markdown(self, title)

    def write(self, directory: str | Path, *, overwrite: bool = False, title: str = "Meta-evaluation",
              notes: dict | None = None) -> Path:
        """Write metaeval.csv, baseline.csv, counts.csv, metaeval.json, metaeval.md, the plot (and ``notes`` as
        notes.json) atomically."""
        from tsteval.metaeval.pages import write

        return write(self, directory, overwrite=overwrite, title=title, notes=notes)


def _judged(aspect: str, columns: Sequence[MetricColumn]) -> list[MetricColumn]:
    return [c for c in columns if c.aspect in JUDGED_BY[aspect]]


def _check_ratings(frame: pd.DataFrame, ratings: Sequence[Rating], origin: str) -> None:
    for rating in ratings:
        if rating.aspect not in RATING_ASPECTS:
            raise InputError(f"rating {rating.column!r}: unknown aspect {rating.aspect!r}", path=origin,
                             fix=f"use one of {list(RATING_ASPECTS)}")
        if rating.column not in frame.columns:
            raise InputError(f"no rating column {rating.column!r}; the columns are {quote(list(frame.columns), 400)}",
                             path=origin, fix="name an existing column in --rating ASPECT=COLUMN")
        if not pd.api.types.is_numeric_dtype(frame[rating.column]):
            raise InputError(f"the rating column {rating.column!r} is not numeric ({frame[rating.column].dtype})",
                             path=origin, fix="rate with numbers; encode categorical judgements first")


def meta_evaluate_frame(frame: pd.DataFrame, columns: Sequence[MetricColumn], ratings: Sequence[Rating], *,
                        baselines: Mapping[str, str] | None = None, n_resamples: int = 1000, seed: int = 0,
                        methods: Sequence[str] = METHODS, group: Sequence[str] = GROUP, cluster: str = "input",
                        origin: str = "<ratings>") -> MetaEvaluation:
    """Meta-evaluate ``columns`` of ``frame`` against the ``ratings`` columns of the same frame.

    ``baselines`` maps a rating column or an aspect to a baseline column (default: :func:`default_baseline`).
    """
    _check_ratings(frame, ratings, origin)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise TstevalError(f"unknown correlation methods {unknown}; use {list(METHODS)}")
    if n_resamples < 1:
        raise TstevalError(f"n_resamples must be at least 1, not {n_resamples}")
    missing = [c for c in (*group, cluster) if c not in frame.columns]
    if missing:
        raise InputError(f"the scorecard lacks the columns {missing}", path=origin)
    baselines = dict(baselines or {})
    cluster_codes, cluster_names = pd.factorize(frame[cluster].astype(str), sort=True)
    group_codes, _ = pd.factorize(pd.MultiIndex.from_frame(frame[list(group)].astype(str)), sort=True)
    draws = cluster_resamples(cluster_codes, n_resamples, seed)
    duplicates = int(frame.duplicated([cluster, "output"]).sum()) if "output" in frame.columns else 0
    table_rows: list[dict] = []
    baseline_rows: list[dict] = []
    count_rows: list[dict] = []
    used_baselines: dict[str, str | None] = {}
    for rating in ratings:
        judged = _judged(rating.aspect, columns)
        rated = frame[rating.column].notna().to_numpy()
        complete = rated & frame[[c.column for c in judged]].notna().all(axis=1).to_numpy() if judged else rated
        count_rows.append({"rating": rating.column, "aspect": rating.aspect, "rows": len(frame),
                           "rated": int(rated.sum()), "unrated": int((~rated).sum()),
                           "missing_metric": int((rated & ~complete).sum()), "used": int(complete.sum()),
                           "inputs": int(len(np.unique(cluster_codes[complete]))),
                           "duplicate_outputs": int(frame[complete].duplicated([cluster, "output"]).sum())
                           if "output" in frame.columns else 0,
                           "metrics": len(judged)})
        if not judged:
            print(f"[tsteval] meta-eval: no metric column of aspect {rating.aspect} to judge against "
                  f"{rating.column}", file=sys.stderr)
            continue
        if complete.sum() < 3:
            raise InputError(f"only {int(complete.sum())} rows have the rating {rating.column!r} and every "
                             f"{rating.aspect} metric", path=origin, fix="rate more transfers")
        sub = frame[complete]
        sign = np.array([1.0 if c.higher_is_better else -1.0 for c in judged])
        x = sub[[c.column for c in judged]].to_numpy(dtype=float) * sign
        y = sub[rating.column].to_numpy(dtype=float)
        groups, group_index = pd.factorize(pd.MultiIndex.from_frame(sub[list(group)].astype(str)), sort=True)
        clusters = cluster_codes[complete]
        point = level_statistics(x, y, groups, len(group_index), methods)
        boot = bootstrap_statistics(x, y, groups, clusters, draws, methods)
        low, high = percentile_interval(boot)
        n_by_level = (len(sub), len(sub), len(group_index))
        for j, col in enumerate(judged):
            for li, level in enumerate(LEVELS):
                for m, method in enumerate(methods):
                    table_rows.append({"metric": col.column, "source": col.source, "rating": rating.column,
                                       "aspect": rating.aspect, "level": level, "method": method,
                                       "r": point[li, m, j], "lo": low[li, m, j], "hi": high[li, m, j],
                                       "n": n_by_level[li], "n_inputs": len(np.unique(clusters)),
                                       "n_groups": len(group_index),
                                       "direction": "higher" if col.higher_is_better else "lower (sign flipped)"})
        base = baselines.get(rating.column, baselines.get(rating.aspect)) or default_baseline(rating.aspect, judged)
        if base is not None and base not in [c.column for c in judged]:
            raise InputError(f"the baseline {base!r} is not a {rating.aspect} metric column of the scorecard; the "
                             f"{rating.aspect} columns are {[c.column for c in judged]}", path=origin,
                             fix="name one of them with --baseline ASPECT=COLUMN")
        used_baselines[rating.column] = base
        if base is None:
            continue
        b = [c.column for c in judged].index(base)
        diffs = boot - boot[..., b:b + 1]
        d_low, d_high = percentile_interval(diffs)
        for j, col in enumerate(judged):
            if j == b:
                continue
            tests = _williams(sub, col, judged[b], rating.column, list(group), methods)
            for li, level in enumerate(LEVELS):
                for m, method in enumerate(methods):
                    diff = point[li, m, j] - point[li, m, b]
                    lo, hi = d_low[li, m, j], d_high[li, m, j]
                    t, p = tests.get((level, method), (np.nan, np.nan))
                    baseline_rows.append({"metric": col.column, "source": col.source, "baseline": base,
                                          "rating": rating.column, "aspect": rating.aspect, "level": level,
                                          "method": method, "r": point[li, m, j], "r_baseline": point[li, m, b],
                                          "diff": diff, "lo": lo, "hi": hi, "williams_t": t, "p": p,
                                          "verdict": verdict(lo, hi), "n": n_by_level[li]})
    info = {"resamples": n_resamples, "seed": seed, "confidence": CONFIDENCE, "cluster": cluster,
            "group": list(group), "methods": list(methods), "levels": list(LEVELS), "baselines": used_baselines,
            "inputs": len(cluster_names), "rows": len(frame), "duplicate_outputs": duplicates,
            "ratings": {r.column: r.aspect for r in ratings}}
    return MetaEvaluation(pd.DataFrame(table_rows, columns=TABLE_COLUMNS),
                          pd.DataFrame(baseline_rows, columns=BASELINE_COLUMNS), pd.DataFrame(count_rows), info)


def verdict(low: float, high: float) -> str:
    """Whether a metric beats the baseline: ``yes`` (interval of the difference above 0), ``no`` (below 0), else
    ``not significant``."""
    if np.isfinite(low) and low > 0:
        return "yes"
    if np.isfinite(high) and high < 0:
        return "no"
    return "not significant"


def _williams(sub: pd.DataFrame, col: MetricColumn, base: MetricColumn, rating: str, group: list[str],
              methods: Sequence[str]) -> dict[tuple[str, str], tuple[float, float]]:
    """Williams' t and two-sided p of ``col`` vs ``base`` at sentence and system level (Pearson, Spearman)."""
    sa = 1.0 if col.higher_is_better else -1.0
    sb = 1.0 if base.higher_is_better else -1.0
    means = sub.groupby(group, sort=True)[[col.column, base.column, rating]].mean()
    out = {}
    for level, data in (("sentence", sub), ("system", means)):
        for method in methods:
            if method == "kendall":
                continue
            try:
                result = agreement.compare_dependent_correlations(sa * data[col.column].to_numpy(dtype=float),
                                                                  sb * data[base.column].to_numpy(dtype=float),
                                                                  data[rating].to_numpy(dtype=float), method)
            except InputError:  # constant, collinear or too few points: no test
                continue
            out[(level, method)] = (result.t, result.p_value)
    return out


def _load_card(scorecard: Scorecard | str | Path) -> tuple[Scorecard, str]:
    if isinstance(scorecard, Scorecard):
        return scorecard, "<scorecard>"
    path = Path(scorecard)
    folder = path.parent if path.is_file() and path.name in ("scorecard.parquet", "scorecard.csv") else path
    if path.is_file() and folder == path:
        raise InputError("not a scorecard folder or its scorecard.parquet", path=path,
                         fix="give the --out folder of tsteval score or tsteval run")
    return Scorecard.load(folder), str(folder)


def meta_evaluate(scorecard: Scorecard | str | Path, rating: Mapping[str, str] | Sequence[Rating | str],
                  ratings: pd.DataFrame | str | Path | None = None, keys: Sequence[str] = ("item", "system"),
                  *, baselines: Mapping[str, str] | None = None,
                  published: Sequence[MetricColumn] = (), n_resamples: int = 1000, seed: int = 0,
                  methods: Sequence[str] = METHODS, group: Sequence[str] = GROUP,
                  cluster: str = "input") -> MetaEvaluation:
    """Do the scorecard's metrics track the human ratings?  See the module notes for the statistics.

    ``scorecard``: a :class:`Scorecard` or a scorecard folder.  ``rating``: ``{COLUMN: ASPECT}`` or
    ``["ASPECT=COLUMN", ...]``.  ``ratings``: a table (frame or CSV/JSONL/Parquet file) joined on ``keys``; without
    it the rating columns are read from the scorecard itself (transfers that carried ``human_*`` columns).
    ``published``: extra columns judged beside the registry's (e.g. the authors' own scores), each with its aspect
    and direction.

    >>> import tsteval, pandas as pd
    >>> card = tsteval.Scorecard(pd.DataFrame({"system": ["a", "a", "b", "b"], "setting": "d", "item": [0, 1, 0, 1],
    ...     "input": ["x", "y", "x", "y"], "output": ["p", "q", "r", "s"], "source_style": "0", "target_style": "1",
    ...     "bleu@none": [10.0, 50.0, 20.0, 90.0], "chrf@none": [5.0, 40.0, 30.0, 80.0],
    ...     "human_content": [1.0, 3.0, 2.0, 5.0]}), {"bleu@none": "metric:bleu", "chrf@none": "metric:chrf"})
    >>> result = tsteval.meta_evaluate(card, {"human_content": "content"}, n_resamples=50)
    >>> result.info["baselines"]
    {'human_content': 'bleu@none'}
    >>> row = result.table.query("metric == 'bleu@none' and level == 'sentence' and method == 'spearman'")
    >>> float(row["r"].iloc[0])
    1.0
    """
    card, origin = _load_card(scorecard)
    specs = ([Rating(col, aspect) for col, aspect in rating.items()] if isinstance(rating, Mapping)
             else [r if isinstance(r, Rating) else parse_rating(r) for r in rating])
    if not specs:
        raise TstevalError("give at least one rating column, e.g. --rating content=human_content")
    frame = card.frame
    if ratings is not None:
        if isinstance(ratings, pd.DataFrame):
            table, where, first_line = ratings.copy(), "<ratings frame>", None
        else:
            from tsteval.readers.tables import read_table

            read = read_table(ratings)
            table, where, first_line = read.frame.copy(), read.path, read.first_line
            for spec in specs:
                if spec.column not in table.columns:
                    raise InputError(f"no rating column {spec.column!r}; the columns are "
                                     f"{quote(list(table.columns), 400)}", path=where,
                                     fix="name an existing column in --rating ASPECT=COLUMN")
                table[spec.column] = read.ratings(spec.column).to_numpy()
        _check_ratings(table, specs, where)
        frame, orphans = join_ratings(frame, table, keys, where, [s.column for s in specs], first_line)
        origin = where
        if orphans:
            print(f"[tsteval] meta-eval: {orphans} rating rows of {where} join no scorecard row and are not used",
                  file=sys.stderr)
    columns = [*registered_columns(card), *published]
    result = meta_evaluate_frame(frame, columns, specs, baselines=baselines, n_resamples=n_resamples, seed=seed,
                                 methods=methods, group=group, cluster=cluster, origin=origin)
    if ratings is not None:
        result.info["orphan_rating_rows"] = orphans
    return result
