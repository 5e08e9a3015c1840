"""The meta-evaluation itself: how well does each metric column of a scorecard track human ratings?

For every metric column x rating column of a matching aspect (style metrics against style ratings, content and
compatibility metrics against content ratings, naturalness metrics against naturalness ratings), Pearson,
Spearman and Kendall at the three levels of :mod:`tsteval.metaeval.statistics`, with 95% intervals of its
bootstrap clustered by input (the draws shared by every metric and rating, so differences are paired).  Each
metric is compared with a named baseline of its aspect (:data:`tsteval.metaeval.tables.BASELINES`): the difference
of the correlations with its clustered-bootstrap interval and Williams' t for dependent correlations
(:func:`tsteval.metaeval.agreement.compare_dependent_correlations`; it assumes independent rows, so the clustered
interval is the one to trust).

Directions come from the metric registry: a lower-is-better metric (WMD, perplexity) has its correlations
sign-flipped (column ``direction``) so that a higher r always means better agreement.

Policies, stated in the outputs: rows without a rating are counted per rating column and left out of that
rating's statistics; rows where a compared metric is missing are counted and left out of that rating's
statistics (all metrics of an aspect are judged on the same rows, so the comparisons are paired); identical
outputs of several systems for the same input are kept (each is a rated transfer) and counted, and rank
correlations give tied values their average rank (Kendall's tau-b).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import InputError, TstevalError, quote
from tsteval.metaeval import agreement
from tsteval.metaeval.statistics import (
    CONFIDENCE,
    LEVELS,
    METHODS,
    bootstrap_statistics,
    cluster_resamples,
    level_statistics,
    percentile_interval,
)
from tsteval.metaeval.tables import (
    BASELINE_COLUMNS,
    JUDGED_BY,
    RATING_ASPECTS,
    TABLE_COLUMNS,
    MetaEvaluation,
    MetricColumn,
    Rating,
    default_baseline,
    join_ratings,
    load_card,
    parse_rating,
    registered_columns,
)
from tsteval.scorecard import GROUP, Scorecard


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
                        baselines: Mapping[str, str] | None = None, n_resamples: int = N_RESAMPLES, seed: int = 0,
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


def correlate(frame: pd.DataFrame, columns: Sequence[str], ratings: Sequence[str], *,
              lower_is_better: Sequence[str] = (), methods: Sequence[str] = ("pearson",), group: Sequence[str] = GROUP,
              n_resamples: int = N_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """Every column of ``columns`` against every rating column of ``ratings`` in ``frame``, whatever aspect either
    judges (a joint score against a joint rating, a reproduction's one rating): :func:`meta_evaluate_frame`'s table,
    every level, with its clustered intervals; ``lower_is_better`` columns sign-flipped.

    >>> rows = pd.DataFrame({"input": list("aabbccdd"), "system": ["s", "t"] * 4, "setting": "", "x": range(8),
    ...                      "human": [1, 2, 2, 3, 3, 5, 4, 6]})
    >>> table = correlate(rows, ["x"], ["human"], n_resamples=20)
    >>> round(float(table[table["level"] == "sentence"]["r"].iloc[0]), 3)  # numpy.corrcoef gives .9435
    0.943
    """
    # one aspect for all: it only pairs each column with each rating here
    judged = [MetricColumn(c, "style", c not in lower_is_better) for c in columns]
    return meta_evaluate_frame(frame, judged, [Rating(r, "style") for r in ratings], baselines={"style": columns[0]},
                               n_resamples=n_resamples, seed=seed, methods=methods, group=group).table


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


def meta_evaluate(scorecard: Scorecard | str | Path, rating: Mapping[str, str] | Sequence[Rating | str],
                  ratings: pd.DataFrame | str | Path | None = None, keys: Sequence[str] = ("item", "system"),
                  *, baselines: Mapping[str, str] | None = None,
                  published: Sequence[MetricColumn] = (), n_resamples: int = N_RESAMPLES, seed: int = 0,
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
    card, origin = load_card(scorecard)
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
