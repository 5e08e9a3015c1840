"""The LM metrics (columns ``NAME@MODEL``): a causal LM reads the input, the output and the target style's name
together (:mod:`tsteval.metrics.judges.cond_lp`, :mod:`tsteval.metrics.judges.rating`), on text restored to the
form the model was trained on (:mod:`tsteval.core.text_form`)."""

from __future__ import annotations

import math

from tsteval.metrics.base import Metric

_LM = frozenset({"language_model"})
# What each needs from an LM server (tsteval.metrics.base.SERVER_NEEDS): the ratings a chat answer's top
# log-probabilities; the others prompt log-probabilities, their prompts rendered by the served model's tokenizer.
_CHAT, _RENDERED = frozenset({"chat"}), frozenset({"prompt", "tokenizer"})
_LIBRARIES = ("numpy", "torch", "transformers")
_TEMPLATE = {"template": 0}
_CHOICES = {"template": (0, 1, 2, 3)}
_HERE = "tsteval.metrics.judges"

JUDGES = (
    Metric("cond_lp", "content", True, (-math.inf, math.inf), "mean per-token log-probability of the output given "
           "the input and the target style, minus given the target style alone (PMI; after Pauli et al. 2025)", _LM,
           {"unit": "subword+end"}, _LIBRARIES, f"{_HERE}.cond_lp:cond_lp", params=_TEMPLATE, choices=_CHOICES,
           server=_RENDERED),
    Metric("logprop_content", "content", True, (-math.inf, 0.0), "LogProp content (Pauli et al. 2025): mean over the "
           "output's tokens of ln max(p_paraphrase, p_rewrite, p_repeat), each under an instruction holding the input",
           _LM, {"unit": "subword+end-of-turn", "prompts": "pauli2025"}, _LIBRARIES,
           f"{_HERE}.logprop:logprop_content", server=_RENDERED),
    Metric("logprop_style", "style", True, (-1.0, 1.0), "LogProp style (Pauli et al. 2025): mean over the output's "
           "tokens of p_rewrite - max(p_paraphrase, p_repeat)", _LM,
           {"unit": "subword+end-of-turn", "prompts": "pauli2025"}, _LIBRARIES, f"{_HERE}.logprop:logprop_style",
           server=_RENDERED),
    Metric("judge_style", "style", True, (1.0, 5.0), "a causal LM's expected 1-5 rating of how strongly the output "
           "has the target style", _LM, {"answer": "expected"}, _LIBRARIES, f"{_HERE}.rating:judge_style",
           params=_TEMPLATE, choices=_CHOICES, server=_CHAT),
    Metric("judge_content", "content", True, (1.0, 5.0), "a causal LM's expected 1-5 rating of how much of the "
           "input's meaning the output keeps", _LM, {"answer": "expected"}, _LIBRARIES,
           f"{_HERE}.rating:judge_content", params=_TEMPLATE, choices=_CHOICES, server=_CHAT),
    Metric("judge_fluency", "naturalness", True, (1.0, 5.0), "a causal LM's expected 1-5 rating of the output's "
           "fluency", _LM, {"answer": "expected"}, _LIBRARIES, f"{_HERE}.rating:judge_fluency", params=_TEMPLATE,
           choices=_CHOICES, server=_CHAT),
)
