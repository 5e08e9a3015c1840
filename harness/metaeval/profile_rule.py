"""The profile rule's first version, fixed before the numbers it was applied to (docs/meta-evaluation.md: "The first
version of the rule"); superseded by version 2 (:mod:`tsteval.metaeval.study.rule`), which the evidence pages and the
user-study loop apply.  Kept for the page not yet declared as a study, ``benchmarks/studies/meta_eval_lm.py``, which
imports it.

Input: per dataset, the meta-evaluation's comparison of every column with the aspect's *current recommendation*
(a ``baseline.csv`` whose baseline is the recommendation).  Each dataset's sentence-level Pearson difference d_i
gets the standard error s_i = (hi_i - lo_i) / (2 z) from its 95% interval; the pooled difference is the
inverse-variance mean d = sum(w_i d_i) / sum(w_i), w_i = 1 / s_i^2, with standard error (sum w_i)^(-1/2).  A
column qualifies when d - z s > 0 and no dataset's interval lies wholly below 0; the qualifying column with the
largest d replaces the recommendation, else it stays.

>>> import pandas as pd
>>> row = dict(rating="r", aspect="content", baseline="sbert@none", level="sentence", method="pearson", source="x")
>>> mir = pd.DataFrame([dict(row, metric="new@lm", diff=0.04, lo=0.00, hi=0.08)])
>>> lai = pd.DataFrame([dict(row, metric="new@lm", diff=0.02, lo=-0.02, hi=0.06)])
>>> [(p.metric, round(p.diff, 3), p.qualifies) for p in pooled_differences({"mir": mir, "lai": lai})]
[('new@lm', 0.03, True)]
>>> choose({"mir": mir, "lai": lai}, {"content": "sbert@none"})
{'content': 'new@lm'}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

Z = 1.959963984540054  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True)
class Pooled:
    """A column's difference from its aspect's recommendation, pooled across datasets."""

    metric: str
    aspect: str
    recommendation: str
    diff: float
    se: float
    per_dataset: Mapping[str, tuple[float, float, float]]  # dataset -> (diff, lo, hi)

    @property
    def worse_on(self) -> list[str]:
        """The datasets whose interval lies wholly below 0."""
        return [name for name, (_, _, hi) in self.per_dataset.items() if hi < 0]

    @property
    def qualifies(self) -> bool:
        """Above 0 with 95% confidence when pooled, and significantly worse on no dataset."""
        return self.diff - Z * self.se > 0 and not self.worse_on


def pooled_differences(tables: Mapping[str, pd.DataFrame]) -> list[Pooled]:
    """Every column compared with its recommendation on all of ``tables`` (dataset -> baseline.csv rows), pooled."""
    parts = []
    for name, table in tables.items():
        rows = table[(table["level"] == "sentence") & (table["method"] == "pearson")
                     & (table["metric"] != table["baseline"])]
        parts.append(rows.assign(dataset=name))
    rows = pd.concat(parts, ignore_index=True)
    pooled = []
    for (metric, aspect, baseline), group in rows.groupby(["metric", "aspect", "baseline"], sort=True):
        if set(group["dataset"]) != set(tables):
            continue  # compared on one dataset only: the rule needs both
        se = (group["hi"] - group["lo"]).to_numpy() / (2 * Z)
        weights = 1.0 / np.maximum(se, 1e-12) ** 2
        diff = float(np.sum(weights * group["diff"].to_numpy()) / np.sum(weights))
        pooled.append(Pooled(metric, aspect, baseline, diff, float(np.sum(weights) ** -0.5),
                             {r.dataset: (r.diff, r.lo, r.hi) for r in group.itertuples()}))
    return pooled


def choose(tables: Mapping[str, pd.DataFrame], current: Mapping[str, str]) -> dict[str, str]:
    """The recommended column of each aspect of ``current`` (aspect -> column) after the rule."""
    chosen = dict(current)
    for aspect, column in current.items():
        qualified = [p for p in pooled_differences(tables)
                     if p.aspect == aspect and p.recommendation == column and p.qualifies]
        if qualified:
            chosen[aspect] = max(qualified, key=lambda p: p.diff).metric
    return chosen
