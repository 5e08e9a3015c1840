"""The naturalness metrics (columns ``NAME@SCORER``), computed by the scorers of
:mod:`tsteval.metrics.naturalness.registry` (adversarial classifiers, language models)."""

from __future__ import annotations

import math

from tsteval.metrics.base import Metric

NATURALNESS = (
    Metric("naturalness", "naturalness", True, (0.0, 1.0), "cross-fitted adversarial classifier's probability "
           "that the output is human-written", frozenset({"human_corpus"}), {}, ("numpy", "scikit-learn"),
           signature_name="adv_naturalness"),
    Metric("more_natural", "naturalness", True, (0.0, 1.0), "1 when the output looks more human-written than its "
           "input to the adversarial classifier, 0 when less, 0.5 on a tie", frozenset({"human_corpus"}),
           {"tie": "0.5"}, ("numpy", "scikit-learn"), signature_name="adv_more_natural"),
    Metric("ppl", "naturalness", False, (1.0, math.inf), "perplexity of the output under a language model",
           frozenset({"language_model"})),
)
