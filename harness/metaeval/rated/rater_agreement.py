"""How far a rated set's raters agree, printed beside its meta-evaluation tables: per judged question,
Krippendorff's alpha (nominal, interval and ordinal), the split-half reliability of the mean rating and its noise
ceiling (the highest correlation a metric can reach with it), computed by :mod:`tsteval.annotate.reliability`
exactly as ``tsteval annotate agreement`` does for a study.  A choice question (a pairwise judgment such as
InFormal's "which is more formal") has its nominal alpha only: its answers are categories, not points on a scale.
A set that publishes only each output's mean rating has one rating an output, and each statistic is NaN with the
reason in ``note``."""

from __future__ import annotations

import math

import pandas as pd

from tsteval.annotate.reliability import alpha, ceiling, ordinal_domain, split_half, unavailable
from tsteval.core.markdown import escape
from tsteval.core.markdown import table as markdown_table
from tsteval.readers.rated import Ratings

COLUMNS = ["question", "aspect", "raters", "outputs", "rated_twice", "alpha_nominal", "alpha_interval", "alpha_ordinal",
           "split_half", "ceiling", "note"]


def rated_agreement(rated: Ratings, seed: int = 0) -> pd.DataFrame:
    """One row per judged or choice question of ``rated`` (see the module notes)."""
    rows = []
    for question in (q for q in rated.spec.questions if q.is_judged or q.choices is not None):
        sub = rated.raters[rated.raters["question"] == question.name]
        table = sub.pivot_table(index="rater", columns=["system", "setting", "item"], values="value",
                                aggfunc="first")
        matrix = table.to_numpy(dtype=float)
        reason = unavailable(matrix)
        domain = ordinal_domain(rated.spec.scale_of(question), sub["value"].to_numpy(dtype=float))
        reliability, twice = split_half(matrix, seed=seed)
        row = {"question": question.name, "aspect": question.aspect, "raters": matrix.shape[0],
               "outputs": matrix.shape[1], "rated_twice": twice, "alpha_nominal": alpha(matrix, "nominal"),
               "alpha_interval": alpha(matrix, "interval"), "alpha_ordinal": alpha(matrix, "ordinal", domain),
               "split_half": reliability, "ceiling": ceiling(reliability),
               "note": "" if reason is None else _reason(rated, reason)}
        if question.choices is not None:
            nan = float("nan")
            row.update(alpha_interval=nan, alpha_ordinal=nan, split_half=nan, ceiling=nan,
                       note=row["note"] or f"a choice among {list(question.choices)}: nominal alpha only")
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _reason(rated: Ratings, reason: str) -> str:
    if rated.spec.has_raters:
        return reason
    return "the set publishes each output's mean rating only, so agreement between raters cannot be computed"


def agreement_markdown(frame: pd.DataFrame, name: str) -> str:
    """The agreement table of the rated set ``name``, with its notes below."""
    shown = frame.drop(columns=["note"])
    text = markdown_table(shown, lambda v: f"{v:.3f}" if isinstance(v, float) and math.isfinite(v) else
                          ("n/a" if isinstance(v, float) else str(v)))
    notes = [f"- {escape(row.question)}: {escape(row.note)}" for row in frame.itertuples() if row.note]
    return "\n".join([f"## Agreement of the {escape(name)} raters", "", text, "", *notes, ""])


