"""The naturalness metrics (columns ``NAME@SCORER``), computed by the scorers of
:mod:`tsteval.metrics.naturalness.registry` (adversarial classifiers, language models)."""

from __future__ import annotations

import math

from tsteval.metrics.base import Metric

_LM = frozenset({"language_model"})
# What each needs from an LM server (tsteval.metrics.base.SERVER_NEEDS): SLOR's unigram model counts the served
# model's tokens.
_PROMPT = frozenset({"prompt"})

NATURALNESS = (
    Metric("naturalness", "naturalness", True, (0.0, 1.0), "cross-fitted adversarial classifier's probability "
           "that the output is human-written", frozenset({"human_corpus"}), {}, ("numpy", "scikit-learn"),
           signature_name="adv_naturalness"),
    Metric("more_natural", "naturalness", True, (0.0, 1.0), "1 when the output looks more human-written than its "
           "input to the adversarial classifier, 0 when less, 0.5 on a tie", frozenset({"human_corpus"}),
           {"tie": "0.5"}, ("numpy", "scikit-learn"), signature_name="adv_more_natural"),
    Metric("naturalness_pooled", "naturalness", True, (0.0, 1.0), "probability that the output is human-written "
           "from one adversarial classifier trained on all systems' outputs together (cross-fitted by input), "
           "on case-folded, re-tokenised text so tokenisation is not a cue", frozenset({"human_corpus"}),
           {"per": "all", "norm": "lower+retok"}, ("numpy", "scikit-learn"), signature_name="adv_naturalness_pooled"),
    Metric("ppl", "naturalness", False, (1.0, math.inf), "perplexity of the output under a language model", _LM,
           server=_PROMPT),
    Metric("lp_mean", "naturalness", True, (-math.inf, 0.0), "mean natural-log probability per token of the output "
           "under a language model (the perplexity's logarithm, negated)", _LM, server=_PROMPT),
    Metric("slor", "naturalness", True, (-math.inf, math.inf), "SLOR (Kann et al. 2018): (ln P_LM(s) - "
           "ln P_unigram(s)) / |s|, the unigram model estimated on human text", _LM | {"human_corpus"},
           server=_PROMPT | {"tokenizer"}),
)
