"""A system's failure is scored: the one policy for an empty or whitespace-only *output*.

An empty output is a system's answer (it failed), not a bad line: dropping it would flatter the system.  Every
metric scores it, under this policy:

* **style** (the style classifier's columns ``sti``, ``sti_norm``, ``target_prob``, ``style_strength``,
  ``target_acc``): *as not transferred* -- the classifier reads the input in place of the empty output
  (:func:`answered_outputs`), so ``sti`` is 0 and ``target_acc`` is what the unchanged input gets;
* **content**: 0 similarity, as sacreBLEU scores an empty hypothesis (BLEU, chrF 0; a cosine, BERTScore, METEOR
  0; a distance, WMD, its largest value, :data:`~tsteval.metrics.content.policy.MAX_DISTANCE`) -- the empty/OOV
  policy's "one text empty" case (:mod:`tsteval.metrics.content.policy`), also when masking empties the input;
* **every other metric** (naturalness, compatibility, the LM metrics and judges): its worst value, the worse end of
  its declared range (``naturalness`` 0, a judge's rating 1); where that end is unbounded (``ppl``, ``lp_mean``,
  ``slor``, ``cond_lp``, ``logprop_content``) the worst value the same column takes on the run's answered rows, so
  that a failure is never better than any answer and the means stay finite;
* **J** is then 0 on every failed row (its content factor is 0): a failure counts as one.

Scorers that cannot read an empty text (classifiers, language models) score only the answered rows
(:func:`answers`) and the failed ones are filled in (:func:`fill_failures`).  The count of empty outputs per system
is :func:`failure_counts`; :func:`failure_notice` is the line every file a user reads carries.  An empty *input*
stays an error (:class:`~tsteval.core.records.Transfers`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsteval.core.errors import TstevalError
from tsteval.core.records import failed
from tsteval.metrics.base import Metric
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import Scorecard


def answered_outputs(frame: pd.DataFrame) -> list[str]:
    """The outputs of ``frame``, the input in place of each failed one: what a style classifier reads (a failure
    scores as not transferred)."""
    return [i if not o.strip() else o for i, o in zip(frame["input"], frame["output"], strict=True)]


def answers(card: Scorecard) -> Scorecard:
    """A scorecard over the rows of ``card`` whose output is not a failure (``card`` itself when none is), for the
    scorers that cannot read an empty text; :func:`fill_failures` puts their columns back."""
    mask = failed(card.frame["output"])
    if not mask.any():
        return card
    if mask.all():
        raise TstevalError("every output is empty or only whitespace: there is no answer to score naturalness, "
                           "compatibility or an LM metric on; score content and style only, or give the outputs")
    return Scorecard(card.frame[~mask].reset_index(drop=True).copy())


def worst_value(metric: Metric, answered: np.ndarray) -> float:
    """The value a failed output gets on ``metric`` (see the module's policy; ``answered``: the column's values on
    the answered rows, for an unbounded worst end).

    >>> from tsteval.metrics.registry import METRICS
    >>> [worst_value(METRICS[m], np.array([3.0, 9.0])) for m in ("bleu", "sbert", "wmd", "naturalness", "ppl")]
    [0.0, 0.0, 2.0, 0.0, 9.0]
    >>> worst_value(METRICS["logprop_content"], np.array([-3.0, -9.0])), worst_value(METRICS["judge_style"], [])
    (-9.0, 1.0)
    """
    low, high = metric.range
    if metric.aspect == "content" and math.isfinite(low):
        low = max(low, 0.0)  # no similarity, not a negative one (an unbounded log-probability stays unbounded)
    end = low if metric.higher_is_better else high
    if math.isfinite(end):
        return float(end)
    finite = answered[np.isfinite(answered)]
    if not len(finite):
        return math.nan
    return float(finite.min() if metric.higher_is_better else finite.max())


def fill_failures(card: Scorecard, scored: Scorecard) -> None:
    """Add to ``card`` each column of ``scored`` (a scorecard of :func:`answers`) that ``card`` lacks, the failed
    rows at the metric's :func:`worst_value`; nothing when ``scored`` is ``card``."""
    if scored is card:
        return
    mask = failed(card.frame["output"])
    for column, signature in scored.signatures.items():
        if column in card.signatures:
            continue
        values = np.full(len(card.frame), np.nan)
        values[~mask] = scored.frame[column].to_numpy(float)
        metric = find_metric(column, signature)
        values[mask] = math.nan if metric is None else worst_value(metric, values[~mask])
        card.add(column, values, signature)


def content_failures(card: Scorecard, columns: Sequence[str]) -> None:
    """Set the content ``columns`` of ``card`` to 0 similarity (the largest distance) on the failed rows -- also
    where a modification emptied the input too, which the empty/OOV policy scores as nothing lost."""
    mask = failed(card.frame["output"])
    if not mask.any():
        return
    for column in columns:
        metric = find_metric(column, card.signatures[column])
        values = card.frame[column].to_numpy(float).copy()
        values[mask] = worst_value(metric, values[~mask])
        card.add(column, values, card.signatures[column])


def failure_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Per system of ``frame`` (baselines included), how many of its outputs are empty or only whitespace."""
    mask = failed(frame["output"])
    counts = pd.Series(mask, index=frame.index).groupby(frame["system"].astype(str), sort=True).sum()
    return {str(system): int(n) for system, n in counts.items()}


def failure_notice(frame: pd.DataFrame) -> str | None:
    """One line naming each system with empty outputs and how many of its rows they are; None without any."""
    counts = failure_counts(frame)
    sizes = frame["system"].astype(str).value_counts()
    parts = [f"{system} {n:,} of {sizes[system]:,}" for system, n in counts.items() if n]
    if not parts:
        return None
    return (f"empty outputs (a system's failure, scored: style as not transferred, content 0, every other metric "
            f"its worst, J 0): {'; '.join(parts)}")
