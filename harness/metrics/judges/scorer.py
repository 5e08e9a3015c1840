"""Scoring the LM metrics of a plan into a scorecard: the texts restored to the form the LM was trained on, the
target and source styles named, the run's causal LM built once, one column ``NAME@MODEL`` per metric."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tsteval.core.text_form import as_written, detect
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard


def lm_texts(card: Scorecard, text_form: str) -> tuple[list[str], list[str], str]:
    """The inputs and outputs as a neural LM reads them, and the text form applied (``auto``: detected on both)."""
    frame = card.frame
    inputs, outputs = frame["input"].astype(str).tolist(), frame["output"].astype(str).tolist()
    form = detect(inputs + outputs) if text_form == "auto" else text_form
    return as_written(inputs, form)[0], as_written(outputs, form)[0], form


def template_scores(name: str, inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                    sources: Sequence[str], which: Sequence[int] | None = None) -> np.ndarray:
    """(pairs x templates): the LM metric ``name`` under each of its templates (``which``: those numbered)."""
    from tsteval.metrics.judges.cond_lp import cond_lp_matrix
    from tsteval.metrics.judges.rating import judge_matrix

    if name == "cond_lp":
        return cond_lp_matrix(inputs, outputs, targets, lm, sources, which)
    return judge_matrix(name, inputs, outputs, targets, lm, sources, which)


def score_judges(card: Scorecard, names: Sequence[str], resources: Resources,
                 params: Mapping[str, Mapping[str, object]], text_form: str, style_name: Callable[[str], str],
                 language_model: str, each_template: bool = False, only: Mapping[str, int] | None = None) -> None:
    """Add ``NAME@MODEL`` for each LM metric of ``names`` (see :mod:`tsteval.metrics.judges`); with
    ``each_template`` also ``NAME@MODEL-tK``, the K-th template alone (what ``NAME:template=K`` scores), from the
    same forward passes; with ``only`` (name -> K) just the ``NAME@MODEL-tK`` column of that template.  The LogProp
    metrics have no templates: one column each, both from the same forward passes.  What an LM server is sent is
    counted per metric (:func:`tsteval.backends.interface.accounting`)."""
    from tsteval.backends.interface import accounting
    from tsteval.metrics.naturalness.lm_names import column_name

    built = resources.get("language_model")
    inputs, outputs, form = lm_texts(card, text_form)
    targets = [style_name(s) for s in card.frame["target_style"].astype(str)]
    sources = [style_name(s) for s in card.frame["source_style"].astype(str)]
    model = column_name(getattr(built.value, "served_name", language_model))  # a server's model: the name it serves
    logprop: dict[str, np.ndarray] = {}  # both LogProp columns come from one set of forward passes
    for name in names:
        with accounting(built.value, name):
            logprop = _score_judge(card, name, built.value, (inputs, outputs, targets, sources), form, model,
                                   params.get(name, {}), logprop, each_template, only)


def _score_judge(card: Scorecard, name: str, lm: object, texts: tuple[list[str], ...], form: str, model: str,
                 given: Mapping[str, object], logprop: dict[str, np.ndarray], each_template: bool,
                 only: Mapping[str, int] | None) -> dict[str, np.ndarray]:
    """:func:`score_judges` of one metric (``texts``: inputs, outputs, targets, sources); the LogProp columns, once
    scored (both come from one set of forward passes)."""
    from tsteval.metrics.judges.logprop import LOGPROP, logprop_scores
    from tsteval.metrics.judges.prompts import templates_hash
    from tsteval.metrics.registry import METRICS

    inputs, outputs, targets, sources = texts
    metric = METRICS[name]
    values = metric.check_params(given)
    if name in LOGPROP:
        logprop = logprop or logprop_scores(inputs, outputs, targets, lm, sources)
        signature = metric.signature(param_values=values, lm=lm.model_id, templates=templates_hash(), text=form)
        card.add(f"{name}@{model}", metric.clipped(logprop[name]), str(signature))
        return logprop
    chosen = values["template"]
    which = [only[name]] if only is not None else [chosen] if chosen and not each_template else None
    matrix = template_scores(name, inputs, outputs, targets, lm, sources, which)
    each = dict(zip(which or range(1, matrix.shape[1] + 1), matrix.T, strict=True))  # template K -> scores
    columns = {} if only is not None else {
        f"{name}@{model}": (chosen, matrix.mean(axis=1) if chosen == 0 else each[chosen])}
    if each_template or only is not None:
        columns |= {f"{name}@{model}-t{k}": (k, scores) for k, scores in each.items()}
    for column, (template, scores) in columns.items():
        signature = metric.signature(param_values={**values, "template": template}, lm=lm.model_id,
                                     templates=templates_hash(), text=form)
        card.add(column, metric.clipped(scores), str(signature))
    return logprop
