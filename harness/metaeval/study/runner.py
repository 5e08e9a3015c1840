"""The one engine: a study declaration in, its evidence out (:class:`StudyResult`: JSON data and one rendered page).

For each set: its columns scored (:mod:`tsteval.metaeval.study.scoring`), then for each of its ratings every column
of a matching aspect judged with the declared statistics at the declared levels, the intervals from
:func:`tsteval.metaeval.statistics.bootstrap_statistics` -- the one resampler: per-row data, the statistic
recomputed on every clustered resample (inputs drawn with replacement, all their rows taken), the draws shared by
every column of a set, so differences between columns are paired.  Each set draws its own resamples (seeded by the
study's seed and the set's position), so the sets are independent, except that sets of one rated set over the same
inputs (its systems as sets of their own, say) share the first one's draws: they are resampled by the same inputs.
An aggregate over sets is resampled by combining the sets' draws: the **mean** over sets of a column's figure (every
set weighs the same) has the mean of the sets' resampled figures as its resamples; **pooled** is every set's rows in
one sample, clustered by set and input (sets that share draws, by the first one's inputs).  Comparisons (with the
aspect's baseline, the incumbent, pairwise) are differences of the same draws.

A set's figures use the rows where the rating and every compared column of its aspect are present (counted).  The
aggregates and the rule read each set's first rating of an aspect (its primary one).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError
from tsteval.metaeval.engine import verdict
from tsteval.metaeval.statistics import (
    CONFIDENCE,
    LEVELS,
    bootstrap_statistics,
    cluster_resamples,
    level_statistics,
    percentile_interval,
)
from tsteval.metaeval.study.declaration import Study
from tsteval.metaeval.study.scoring import SetData, call_hook, load_set, score_group
from tsteval.metaeval.tables import JUDGED_BY, MetricColumn, Rating, default_baseline
from tsteval.scorecard import GROUP

Log = Callable[[str], None]
RESULT_KIND = "tsteval-study-result"


@dataclass
class SetEvidence:
    """One set's figures for one rating: the judged columns, the point figures (levels, statistics, columns), their
    resamples and the row counts."""

    label: str
    rating: str
    aspect: str
    columns: list[MetricColumn]
    point: np.ndarray
    boot: np.ndarray
    counts: dict
    primary: bool


@dataclass
class StudyResult:
    """A study's evidence: ``data`` (what ``study.json`` holds) and the per-set evidence the aggregates and the rule
    were computed from."""

    study: Study
    data: dict
    evidence: list[SetEvidence] = field(default_factory=list)
    scores: pd.DataFrame | None = None  # every set's rows: set, system, setting, item, input and each column

    def markdown(self) -> str:
        """The page (:func:`tsteval.metaeval.study.page.render`)."""
        from tsteval.metaeval.study.page import render

        return render(self.data)

    def write(self, directory: str | Path | None = None) -> Path:
        """``study.json`` and ``study.md`` into ``directory`` (default: the declaration's ``out``), atomically."""
        from tsteval.metaeval.study.page import write

        target = directory or self.study.out
        if target is None:
            raise InputError("the study names no out: folder", path=self.study.path, fix="give --out DIR")
        return write(self.data, Path(target), self.scores)


def _interval(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return percentile_interval(samples, CONFIDENCE)


def judge_ratings(frame: pd.DataFrame, ratings: Sequence[Rating], values: Mapping[str, np.ndarray],
                  judged: Mapping[str, MetricColumn], study: Study, index: int, label: str,
                  origin: str) -> list[SetEvidence]:
    """Every column of ``judged`` (``values`` per row of ``frame``) against each of ``ratings`` of a matching aspect:
    the figures of ``study``'s statistics and their resamples, drawn as for the set at position ``index`` (module
    notes); ``label`` and ``origin`` name the set."""
    cluster_codes, _ = pd.factorize(frame[study.cluster].astype(str), sort=True)
    draws = cluster_resamples(cluster_codes, study.resamples, [study.seed, index])
    out = []
    seen_aspects: set[str] = set()
    for rating in ratings:
        columns = [c for c in judged.values() if c.aspect in JUDGED_BY[rating.aspect]]
        if not columns:
            continue
        y_all = frame[rating.column].to_numpy(dtype=float)
        x_all = np.column_stack([values[c.column] for c in columns])
        complete = np.isfinite(y_all) & np.isfinite(x_all).all(axis=1)
        if complete.sum() < 3:
            raise InputError(f"set {label}: only {int(complete.sum())} rows have the rating "
                             f"{rating.column!r} and every {rating.aspect} column", path=origin)
        sign = np.array([1.0 if c.higher_is_better else -1.0 for c in columns])
        x, y = x_all[complete] * sign, y_all[complete]
        groups, group_index = pd.factorize(pd.MultiIndex.from_frame(frame.loc[complete, list(GROUP)].astype(str)),
                                           sort=True)
        clusters = cluster_codes[complete]
        point = level_statistics(x, y, groups, len(group_index), study.statistics)
        boot = bootstrap_statistics(x, y, groups, clusters, draws, study.statistics)
        counts = {"rows": len(frame), "rated": int(np.isfinite(y_all).sum()), "used": int(complete.sum()),
                  "missing_metric": int((np.isfinite(y_all) & ~complete).sum()),
                  "inputs": int(len(np.unique(clusters))), "groups": len(group_index)}
        out.append(SetEvidence(label, rating.column, rating.aspect, columns, point, boot, counts,
                               rating.aspect not in seen_aspects))
        seen_aspects.add(rating.aspect)
    return out


def _figure_rows(where: str, rating: str, aspect: str, columns: Sequence[MetricColumn], point: np.ndarray,
                 boot: np.ndarray, study: Study, extra: dict | None = None) -> list[dict]:
    low, high = _interval(boot)
    rows = []
    for j, col in enumerate(columns):
        for li, level in enumerate(LEVELS):
            if level not in study.levels:
                continue
            for m, statistic in enumerate(study.statistics):
                rows.append({"set": where, "rating": rating, "aspect": aspect, "column": col.column,
                             "source": col.source, "level": level, "statistic": statistic,
                             "r": _num(point[li, m, j]), "lo": _num(low[li, m, j]), "hi": _num(high[li, m, j]),
                             "direction": "higher" if col.higher_is_better else "lower (sign flipped)",
                             **(extra or {})})
    return rows


def _num(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _diff_rows(where: str, kind: str, rating: str, aspect: str, columns: Sequence[MetricColumn], point: np.ndarray,
               boot: np.ndarray, against: str, study: Study) -> list[dict]:
    names = [c.column for c in columns]
    if against not in names:
        return []
    b = names.index(against)
    low, high = _interval(boot - boot[..., b:b + 1])
    rows = []
    for j, col in enumerate(columns):
        if j == b:
            continue
        for li, level in enumerate(LEVELS):
            if level not in study.levels:
                continue
            for m, statistic in enumerate(study.statistics):
                diff = point[li, m, j] - point[li, m, b]
                rows.append({"set": where, "comparison": kind, "rating": rating, "aspect": aspect,
                             "column": col.column, "against": against, "level": level, "statistic": statistic,
                             "diff": _num(diff), "lo": _num(low[li, m, j]), "hi": _num(high[li, m, j]),
                             "verdict": verdict(low[li, m, j], high[li, m, j])})
    return rows


def _against(study: Study, rating: str, aspect: str, columns: Sequence[MetricColumn]) -> list[tuple[str, str]]:
    """(comparison, column) pairs for ``rating`` of ``aspect``: the baseline (the rating's own where ``baselines``
    names it, else its aspect's), the incumbent."""
    out = []
    if "baseline" in study.comparisons:
        base = study.baselines.get(rating) or study.baselines.get(aspect) or default_baseline(aspect, list(columns))
        if base:
            out.append(("baseline", base))
    if "incumbent" in study.comparisons and aspect in study.incumbent:
        out.append(("incumbent", study.incumbent[aspect]))
    return out


def _comparisons(where: str, rating: str, aspect: str, columns: Sequence[MetricColumn], point: np.ndarray,
                 boot: np.ndarray, study: Study) -> list[dict]:
    rows = []
    for kind, column in _against(study, rating, aspect, columns):
        rows += _diff_rows(where, kind, rating, aspect, columns, point, boot, column, study)
    if "pairwise" in study.comparisons:
        names = [c.column for c in columns]
        pairs = study.pairs or [(names[a], names[b]) for a, b in itertools.combinations(range(len(names)), 2)]
        for first, second in pairs:
            rows += [r for r in _diff_rows(where, "pairwise", rating, aspect, columns, point, boot, second, study)
                     if r["column"] == first]
    return rows


def common_columns(evidence: Sequence[SetEvidence]) -> list[MetricColumn]:
    """The columns judged on every one of ``evidence``, in the first one's order."""
    shared = set.intersection(*({c.column for c in e.columns} for e in evidence))
    return [c for c in evidence[0].columns if c.column in shared]


def stacked(evidence: Sequence[SetEvidence], columns: Sequence[MetricColumn]) -> tuple[np.ndarray, np.ndarray]:
    """Each set's point figures and resamples of ``columns``: shapes (sets, levels, statistics, k) and
    (sets, resamples, levels, statistics, k)."""
    index = [[[c.column for c in e.columns].index(col.column) for col in columns] for e in evidence]
    return (np.stack([e.point[..., i] for e, i in zip(evidence, index, strict=True)]),
            np.stack([e.boot[..., i] for e, i in zip(evidence, index, strict=True)]))


def _mean(evidence: Sequence[SetEvidence], study: Study, aspect: str, where: str) -> tuple[list[dict], list[dict]]:
    columns = common_columns(evidence)
    if not columns:
        return [], []
    point, boot = stacked(evidence, columns)
    with np.errstate(invalid="ignore"):
        mean_point, mean_boot = point.mean(axis=0), boot.mean(axis=0)
    extra = {"sets": [e.label for e in evidence]}
    return (_figure_rows(where, aspect, aspect, columns, mean_point, mean_boot, study, extra),
            _comparisons(where, aspect, aspect, columns, mean_point, mean_boot, study))


def _pooled(sets: Sequence[tuple[SetData, dict, SetEvidence]], study: Study, aspect: str,
            where: str, cluster_of: Mapping[str, str]) -> tuple[list, list]:
    """Every row of ``sets`` in one sample: a set's rows are clustered by input under ``cluster_of[label]``, the
    first set over the same rated inputs, so sets of one rated set are resampled together here too."""
    columns = common_columns([e for _, _, e in sets])
    if not columns:
        return [], []
    xs, ys, groups, clusters = [], [], [], []
    for data, values, e in sets:
        y = data.frame[e.rating].to_numpy(dtype=float)
        x = np.column_stack([values[c.column] for c in columns])
        keep = np.isfinite(y) & np.isfinite(x).all(axis=1)
        sign = np.array([1.0 if c.higher_is_better else -1.0 for c in columns])
        xs.append(x[keep] * sign)
        ys.append(y[keep])
        frame = data.frame[keep]
        groups += [f"{e.label}\x00{s}\x00{t}" for s, t in zip(frame["system"], frame["setting"], strict=True)]
        clusters += [f"{cluster_of[e.label]}\x00{c}" for c in frame[study.cluster].astype(str)]
    x, y = np.vstack(xs), np.concatenate(ys)
    group_codes, group_index = pd.factorize(pd.Index(groups), sort=True)
    cluster_codes, _ = pd.factorize(pd.Index(clusters), sort=True)
    draws = cluster_resamples(cluster_codes, study.resamples, [study.seed, len(study.sets)])
    point = level_statistics(x, y, group_codes, len(group_index), study.statistics)
    boot = bootstrap_statistics(x, y, group_codes, cluster_codes, draws, study.statistics)
    extra = {"sets": [e.label for _, _, e in sets]}
    return (_figure_rows(where, aspect, aspect, columns, point, boot, study, extra),
            _comparisons(where, aspect, aspect, columns, point, boot, study))


def signature(study: Study) -> dict:
    """What every table of the page was computed with (its signature line)."""
    from tsteval.core.signature import package_version

    return {"statistics": list(study.statistics), "levels": list(study.levels), "cluster": study.cluster,
            "resamples": study.resamples, "seed": study.seed, "confidence": CONFIDENCE,
            "tsteval": package_version("tsteval")}


def run_study(study: Study | str | Path, *, log: Log = print, cache: Path | None = None) -> StudyResult:
    """Run the declaration ``study`` (a :class:`Study` or its file): score, judge, aggregate, apply its rule.

    >>> import tsteval  # doctest: +SKIP
    >>> result = tsteval.run_study("benchmarks/evidence/content_sets.yaml")  # doctest: +SKIP
    >>> result.write("runs/content_sets")  # doctest: +SKIP
    """
    from tsteval.metaeval.study.declaration import load_study

    if not isinstance(study, Study):
        study = load_study(study)
    figures: list[dict] = []
    comparisons: list[dict] = []
    sets_info: list[dict] = []
    evidence: list[SetEvidence] = []
    scored_sets: list[tuple[SetData, dict, list[SetEvidence]]] = []
    scores: list[pd.DataFrame] = []
    draws_of: dict[tuple, int] = {}  # (rated set, its inputs) -> the position whose draws every such set shares
    cluster_of: dict[str, str] = {}  # a set's label -> that position's label, its inputs' clusters when pooled
    for index, entry in enumerate(study.sets):
        data = load_set(entry)
        inputs = sorted(data.frame[study.cluster].astype(str).unique())
        draws = draws_of.setdefault((str(entry.table or entry.study or entry.name), *inputs), index)
        cluster_of[entry.label] = study.sets[draws].label
        values: dict[str, np.ndarray] = {}
        judged: dict[str, MetricColumn] = {}
        seconds: dict[str, float] = {}
        signatures: dict[str, str] = {}
        notices: list[str] = []
        for group in study.columns:
            if (group.authors and not data.published) or (group.sets is not None and entry.label not in group.sets):
                continue  # only sets with published scores carry the authors' columns
            scored = score_group(data, group, study.seed, log, cache)
            values.update(scored.values)
            judged.update(scored.judged)
            signatures.update(scored.signatures)
            notices += [n for n in scored.notices if n not in notices]
            for column in scored.values:
                seconds[column] = round(scored.seconds, 2)
        set_evidence = judge_ratings(data.frame, data.ratings, values, judged, study, draws, entry.label,
                                     data.source or entry.name)
        for e in set_evidence:
            figures += _figure_rows(e.label, e.rating, e.aspect, e.columns, e.point, e.boot, study)
            comparisons += _comparisons(e.label, e.rating, e.aspect, e.columns, e.point, e.boot, study)
        evidence += set_evidence
        scored_sets.append((data, values, set_evidence))
        keys = data.frame[[c for c in (*GROUP, "item", "input") if c in data.frame]].assign(set=entry.label)
        scores.append(pd.concat([keys, pd.DataFrame(values, index=keys.index)], axis=1))  # one block: no fragmenting
        sets_info.append({"label": entry.label, "name": entry.name, "source": data.source, "task": data.task,
                          "language": data.language, "rows": len(data.frame),
                          "inputs": int(data.frame["input"].nunique()),
                          "ratings": {r.column: r.aspect for r in data.ratings},
                          "counts": {e.rating: e.counts for e in set_evidence}, "signatures": signatures,
                          "scoring_seconds": seconds, "notes": data.notes, **({"notices": notices} if notices else {})})
    aggregates: list[dict] = []
    for name, members in (study.groups or {"": tuple(s.label for s in study.sets)}).items():
        for aspect in ("style", "content", "naturalness"):
            primary = [(d, v, e) for d, v, es in scored_sets for e in es
                       if e.aspect == aspect and e.primary and e.label in members]
            if len(primary) < 2:
                continue
            for kind in study.aggregates:
                where = f"{kind} over {name}" if name else kind
                rows, diffs = (_mean([e for _, _, e in primary], study, aspect, where) if kind == "mean" else
                               _pooled(primary, study, aspect, where, cluster_of))
                aggregates += rows
                comparisons += diffs
    compared = {(r["column"], r["against"]) for r in comparisons if r["comparison"] == "pairwise"}
    if missing := [f"{a} minus {b}" for a, b in study.pairs if (a, b) not in compared]:
        raise InputError(f"pairs: {', '.join(missing)}: no set has both columns judged against one rating",
                         path=study.path, fix="name columns the page's tables show")
    data = {"kind": RESULT_KIND, "study": study.name, "title": study.title, "text": study.text,
            "declaration": [str(p.name) for p in study.sources], "signature": signature(study), "sets": sets_info,
            "figures": figures, "comparisons": comparisons, "aggregates": aggregates,
            "published": [p.__dict__ for p in study.published]}
    if study.rule is not None:
        from tsteval.metaeval.study.rule import apply_rule

        data["rule"] = apply_rule(study, evidence, {s["label"]: s for s in sets_info})
    frame = pd.concat(scores, ignore_index=True)
    if study.describe is not None:
        data["describe"] = call_hook(study.describe, frame, {d.entry.label: d for d, _, _ in scored_sets})
    return StudyResult(study, data, evidence, frame[["set", *(c for c in frame.columns if c != "set")]])
