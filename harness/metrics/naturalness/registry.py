"""Naturalness scorers by name, shared by ``tsteval score --naturalness`` and experiment manifests.

Each adds columns ending in ``@NAME`` to a scorecard: ``naturalness@unigram`` / ``more_natural@unigram``
(cross-fitted adversarial classifiers), ``ppl@kn3`` (Kneser-Ney trigram trained on the human text) and
``ppl@smollm2`` (SmolLM2-135M).  ``human`` is the human-written text of the domain; without it the
transfers' inputs serve as the human side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from tsteval.scorecard import Scorecard


def _adversarial(backend: str, card: Scorecard, human: Sequence[str] | None, seed: int, folds: int) -> None:
    from tsteval.metrics.naturalness.adversarial import score_naturalness

    score_naturalness(card, backend, human="corpus" if human is not None else "inputs", corpus=human, k=folds,
                      seed=seed)


def _kneser_ney(card: Scorecard, human: Sequence[str] | None, seed: int, folds: int) -> None:
    from tsteval.metrics.naturalness.language_model import KneserNeyLM, score_perplexity

    texts = list(human) if human is not None else sorted(set(card.frame["input"]))
    score_perplexity(card, KneserNeyLM().fit(texts), "kn3")


def _smollm2(card: Scorecard, human: Sequence[str] | None, seed: int, folds: int) -> None:
    from tsteval.metrics.naturalness.language_model import CausalLM, score_perplexity

    score_perplexity(card, CausalLM(), "smollm2")


NATURALNESS_METRICS: dict[str, Callable[[Scorecard, Sequence[str] | None, int, int], None]] = {
    "unigram": partial(_adversarial, "unigram"),
    "textcnn": partial(_adversarial, "textcnn"),
    "kn3": _kneser_ney,
    "smollm2": _smollm2,
}
