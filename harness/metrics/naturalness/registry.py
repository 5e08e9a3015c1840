"""Naturalness scorers by name, shared by ``tsteval score --naturalness`` and experiment manifests.

Each adds columns ending in ``@NAME`` to a scorecard: ``naturalness@unigram`` / ``more_natural@unigram``
(cross-fitted adversarial classifiers, one per system and setting), ``naturalness_pooled@unigram`` (scorer
``unigram-pooled``: one classifier for all systems, on normalised text), and ``ppl``, ``lp_mean`` and ``slor``
``@kn3`` (Kneser-Ney trigram trained on the human text) and ``@smollm2`` (the run's causal LM, the
``language_model`` resource of :mod:`tsteval.metrics.resources` on the run's device and threads: SmolLM2-135M
unless ``--language-model`` names another, whose name the columns then carry; SLOR's unigram model from the human
text; outputs and human text restored to the form the LM was trained on, :mod:`tsteval.core.text_form`).
``human`` is the human-written text of the domain; without it the transfers' inputs serve as the human side.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Protocol

from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard


class NaturalnessScorer(Protocol):
    """Adds a scorer's columns to ``card``; returns their counts of texts cut at a model's length limit
    (:mod:`tsteval.metrics.truncation`), or None for a scorer that reads every text whole."""

    def __call__(self, card: Scorecard, human: Sequence[str] | None, seed: int, folds: int, *,
                 resources: Resources) -> dict[str, dict[str, int]] | None: ...


def _human_or_inputs(card: Scorecard, human: Sequence[str] | None) -> list[str]:
    return list(human) if human is not None else sorted(set(card.frame["input"]))


def adversarial_tasks(backend: str, card: Scorecard, human: Sequence[str] | None, seed: int, folds: int
                      ) -> tuple[list, dict[str, object]]:
    """The per-(system, setting) tasks of the adversarial scorer ``backend`` and its signature's fields
    (:func:`tsteval.metrics.naturalness.adversarial.group_tasks`)."""
    from tsteval.metrics.naturalness.adversarial import group_tasks

    return group_tasks(card, backend, human="corpus" if human is not None else "inputs", corpus=human, k=folds,
                       seed=seed)


def _adversarial(backend: str, card: Scorecard, human: Sequence[str] | None, seed: int, folds: int, *,
                 resources: Resources) -> dict[str, dict[str, int]]:
    from tsteval.metrics.naturalness.adversarial import score_naturalness

    return score_naturalness(card, backend, human="corpus" if human is not None else "inputs", corpus=human, k=folds,
                      seed=seed)


def _pooled(backend: str, card: Scorecard, human: Sequence[str] | None, seed: int, folds: int, *,
            resources: Resources) -> None:
    from tsteval.metrics.naturalness.pooled import score_pooled_naturalness

    score_pooled_naturalness(card, backend, corpus=human, k=folds, seed=seed)


def _kneser_ney(card: Scorecard, human: Sequence[str] | None, seed: int, folds: int, *,
                resources: Resources) -> None:
    from tsteval.metrics.naturalness.language_model import KneserNeyLM
    from tsteval.metrics.naturalness.lm_scores import score_language_model

    score_language_model(card, KneserNeyLM().fit(_human_or_inputs(card, human)), "kn3")


def _causal_lm(card: Scorecard, human: Sequence[str] | None, seed: int, folds: int, *,
               resources: Resources) -> dict[str, dict[str, int]]:
    from tsteval.core.text_form import as_written
    from tsteval.metrics.judges.scorer import lm_texts
    from tsteval.metrics.naturalness.lm_names import column_name
    from tsteval.metrics.naturalness.lm_scores import score_language_model

    _, outputs, form = lm_texts(card, resources.options.text_form)
    lm = resources.get("language_model").value
    if hasattr(lm, "served_name"):  # a server's model (tsteval.backends.remote), named as it is served
        if lm.has_tokenizer:  # slor's unigram model counts the served model's tokens
            lm.fit_unigram(as_written(_human_or_inputs(card, human), form)[0])
        families = (*REMOTE_SCORES, "slor") if lm.has_tokenizer else REMOTE_SCORES
        with lm.client.accounting(", ".join(families)):  # counted under these metrics (lm_server.json)
            return score_language_model(card, lm, column_name(lm.served_name), outputs, form, families)
    lm.fit_unigram(as_written(_human_or_inputs(card, human), form)[0])
    return score_language_model(card, lm, column_name(resources.options.language_model or "smollm2"), outputs, form)


# What the causal-LM scorer gives through an LM server without the served model's tokenizer (tsteval.backends.remote:
# slor's unigram model needs it).
REMOTE_SCORES = ("ppl", "lp_mean")
# The scorers that read no neural model: a CUDA run scores them in CPU processes beside the GPU
# (:mod:`tsteval.experiment.run.overlap`).
CPU_SCORERS = ("unigram", "unigram-pooled", "kn3")
# Of those, the ones scored as a task per (system, setting), the tasks spread over the processes.
PER_GROUP_SCORERS = ("unigram",)

NATURALNESS_METRICS: dict[str, NaturalnessScorer] = {
    "unigram": partial(_adversarial, "unigram"),
    "textcnn": partial(_adversarial, "textcnn"),
    "unigram-pooled": partial(_pooled, "unigram"),
    "kn3": _kneser_ney,
    "smollm2": _causal_lm,
}
