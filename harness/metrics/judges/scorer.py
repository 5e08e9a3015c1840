"""Scoring the LM metrics of a plan into a scorecard: the texts restored to the form the LM was trained on, the
target and source styles named, the run's causal LM built once, one column ``NAME@MODEL`` per metric."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tsteval.core.text_form import as_written, detect
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard


def lm_texts(card: Scorecard, text_form: str) -> tuple[list[str], list[str], str]:
    """The inputs and outputs as a neural LM reads them, and the text form applied (``auto``: detected on both)."""
    frame = card.frame
    inputs, outputs = frame["input"].astype(str).tolist(), frame["output"].astype(str).tolist()
    form = detect(inputs + outputs) if text_form == "auto" else text_form
    return as_written(inputs, form)[0], as_written(outputs, form)[0], form


def score_judges(card: Scorecard, names: Sequence[str], resources: Resources,
                 params: Mapping[str, Mapping[str, object]], text_form: str, style_name: Callable[[str], str],
                 language_model: str) -> None:
    """Add ``NAME@MODEL`` for each LM metric of ``names`` (see :mod:`tsteval.metrics.judges`)."""
    from tsteval.metrics.judges.prompts import templates_hash
    from tsteval.metrics.naturalness.lm_names import column_name
    from tsteval.metrics.registry import METRICS

    built = resources.get("language_model")
    inputs, outputs, form = lm_texts(card, text_form)
    targets = [style_name(s) for s in card.frame["target_style"].astype(str)]
    sources = [style_name(s) for s in card.frame["source_style"].astype(str)]
    for name in names:
        metric = METRICS[name]
        values = metric.check_params(params.get(name, {}))
        scores = metric.function()(inputs, outputs, targets, built.value, sources=sources, **values)
        signature = metric.signature(param_values=values, lm=built.identity, templates=templates_hash(), text=form)
        card.add(f"{name}@{column_name(language_model)}", metric.clipped(scores), str(signature))
