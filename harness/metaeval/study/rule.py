"""The profile rule, version 2, fixed in a study's declaration before it is applied (README: "Which column is
recommended").

Per aspect, against the declared **reference** column (the fast profile's), on the sets of the aspect (each set's
primary rating; every set weighs the same, never by its rows):

1. a column's **gain** is the mean over sets of its figure minus the reference's (the declared statistic and level,
   default sentence-level Pearson); its interval comes from the sets' own resamples (the mean of the sets' resampled
   gains, :mod:`tsteval.metaeval.study.runner`);
2. a **candidate** gains at least ``min_gain`` (+.02) with the interval's lower end above zero, and is significantly
   worse than the reference on no set;
3. the candidates whose difference from the best candidate (the largest gain) has an interval containing zero are
   **tied** with it, and the cheapest tied column is chosen: CPU seconds per 1,000 pairs on 2 cores from the
   committed speed benchmark the declaration names (``costs``; tsteval carries one, :data:`COSTS`); a page's
   candidate without a measured cost is an error, while the user-study loop (``measured_only=False``,
   :mod:`tsteval.metaeval.rated.loop`) prices it above every measured column: never preferred in a tie over one;
4. no candidate: the reference stays.

Only tsteval's columns are weighed: a set's published scores (``authors: true``) are figures beside ours, no
column a run can compute.

The same is applied to the sets of each task family and each language the declaration asks for (``per``).

>>> import numpy as np
>>> pick = choose(np.array([0.10, 0.12, 0.30]), np.array([0.05, 0.07, 0.20]), np.array([True, True, False]),
...               np.array([-0.01, 0.0, -0.1]), np.array([0.05, 0.0, 0.1]), np.array([1.0, 5.0, 0.1]))
>>> pick  # 2 is worse on a set; 1 is best, 0 tied with it (the difference's interval holds 0) and cheaper
0
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from tsteval.core.errors import InputError, read_json
from tsteval.metaeval.statistics import LEVELS, percentile_interval
from tsteval.metaeval.study.declaration import Rule, Study

COSTS = Path(__file__).resolve().parents[1] / "column_costs.json"  # the committed speed benchmark, package data


def load_costs(path: Path) -> dict[str, float]:
    """Column -> CPU seconds per 1,000 pairs from a speed benchmark's JSON (``{"columns": {COLUMN:
    {"cpu_s_per_1000": S}}}``)."""
    data = read_json(path, "column costs", fix="run python -m benchmarks.speed.column_costs")
    columns = data.get("columns") if isinstance(data, dict) else None
    if not isinstance(columns, dict):
        raise InputError("expected {\"columns\": {COLUMN: {\"cpu_s_per_1000\": S}}}", path=path)
    out = {}
    for column, row in columns.items():
        cost = row.get("cpu_s_per_1000") if isinstance(row, dict) else None
        if isinstance(cost, int | float) and cost >= 0:
            out[column] = float(cost)
    return out


def choose(gain: np.ndarray, low: np.ndarray, not_worse: np.ndarray, tie_low: np.ndarray, tie_high: np.ndarray,
           cost: np.ndarray, min_gain: float = 0.02) -> int | None:
    """The index chosen among columns with mean ``gain`` [``low``, ...] over the reference, significantly worse on no
    set (``not_worse``), whose difference from the best candidate has the interval [``tie_low``, ``tie_high``], and
    ``cost``; None: no candidate (the reference stays)."""
    candidate = (gain >= min_gain) & (low > 0) & not_worse
    if not candidate.any():
        return None
    tied = candidate & (tie_low <= 0) & (tie_high >= 0)
    tied[np.flatnonzero(candidate)[np.argmax(gain[candidate])]] = True  # the best is tied with itself
    order = sorted(np.flatnonzero(tied), key=lambda j: (cost[j], -gain[j]))
    return int(order[0])


def _apply(rule: Rule, aspect: str, reference: str, evidence: Sequence, statistic: int, costs: Mapping[str, float],
           costs_path: str, measured_only: bool) -> dict | None:
    from tsteval.metaeval.study.runner import common_columns, stacked

    evidence = [e for e in evidence if reference in [c.column for c in e.columns]]
    if not evidence:
        return None
    columns = [c for c in common_columns(evidence) if c.source == "tsteval"]
    names = [c.column for c in columns]
    level = LEVELS.index(rule.level)
    point, boot = stacked(evidence, columns)
    point, boot = point[:, level, statistic, :], boot[:, :, level, statistic, :]  # (sets, k), (sets, draws, k)
    r = names.index(reference)
    gains, gains_boot = point - point[:, r:r + 1], boot - boot[..., r:r + 1]
    mean_gain, mean_boot = gains.mean(axis=0), gains_boot.mean(axis=0)
    low, high = percentile_interval(mean_boot)
    set_low, set_high = percentile_interval(np.moveaxis(gains_boot, 1, 0))
    not_worse = ~(set_high < 0).any(axis=0)
    finite = np.isfinite(mean_gain)
    safe_gain = np.where(finite, mean_gain, -np.inf)
    candidate = (safe_gain >= rule.min_gain) & (low > 0) & not_worse
    candidate[r] = False
    best = int(np.argmax(np.where(candidate, safe_gain, -np.inf))) if candidate.any() else r
    tie_low, tie_high = percentile_interval((boot - boot[..., best:best + 1]).mean(axis=0))
    missing = [names[j] for j in np.flatnonzero(candidate) if names[j] not in costs]
    if missing and measured_only:
        raise InputError(f"no cost for the candidate {missing[0]!r}", path=costs_path,
                         fix="measure it: python -m benchmarks.speed.column_costs")
    cost = np.array([costs.get(n, np.inf) for n in names])
    pick = choose(np.where(candidate, safe_gain, -np.inf), np.where(candidate, low, -np.inf), candidate,
                  tie_low, tie_high, cost, rule.min_gain)
    chosen = reference if pick is None else names[pick]
    tied = {names[j] for j in np.flatnonzero(candidate) if tie_low[j] <= 0 <= tie_high[j]} | (
        {names[best]} if candidate.any() else set())
    rows = []
    for j in np.argsort(-safe_gain, kind="stable"):
        if j == r:
            continue
        rows.append({"column": names[j], "gain": _num(mean_gain[j]), "lo": _num(low[j]), "hi": _num(high[j]),
                     "per_set": {e.label: [_num(gains[s, j]), _num(set_low[s, j]), _num(set_high[s, j])]
                                 for s, e in enumerate(evidence)},
                     "worse_on": [e.label for s, e in enumerate(evidence) if set_high[s, j] < 0],
                     "candidate": bool(candidate[j]), "tied": names[j] in tied,
                     "cost": costs.get(names[j])})
    return {"aspect": aspect, "reference": reference, "reference_cost": costs.get(reference), "chosen": chosen,
            "chosen_cost": costs.get(chosen), "sets": [e.label for e in evidence], "columns": rows}


def _num(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def apply_rule(study: Study, evidence: Sequence, sets: Mapping[str, dict], *, measured_only: bool = True) -> dict:
    """The rule of ``study`` on its evidence: every set, then each group of :attr:`Rule.per` (module notes); without
    ``measured_only`` a candidate lacking a measured cost is priced last instead of being an error."""
    rule = study.rule
    assert rule is not None
    if rule.statistic not in study.statistics:
        raise InputError(f"the rule reads {rule.statistic}, which the study does not compute", path=study.path,
                         fix=f"add {rule.statistic} to statistics:")
    costs = load_costs(rule.costs)
    statistic = list(study.statistics).index(rule.statistic)
    groups = [("all sets", list(sets))]
    for key in rule.per:
        for value in sorted({str(info[key]) for info in sets.values()}):
            groups.append((f"{key} {value}", [label for label, info in sets.items() if str(info[key]) == value]))
    out = {"version": rule.version, "reference": dict(rule.reference), "min_gain": rule.min_gain,
           "statistic": rule.statistic, "level": rule.level, "costs": rule.costs.name, "groups": []}
    for name, labels in groups:
        picks = []
        for aspect, reference in rule.reference.items():
            judged = [e for e in evidence if e.primary and e.aspect == aspect and e.label in labels]
            chosen = _apply(rule, aspect, reference, judged, statistic, costs, str(rule.costs), measured_only)
            if chosen is not None:
                picks.append(chosen)
        if picks:
            out["groups"].append({"group": name, "sets": labels, "picks": picks})
    return out
