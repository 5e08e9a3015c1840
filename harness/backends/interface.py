"""Language-model backends: the LM metrics ask a model two things only, through one interface (:class:`LMBackend`).

* :meth:`LMBackend.answer_log_probs`: the next-token distribution over given answers after a question put to the
  model (the ``judge_*`` ratings);
* :meth:`LMBackend.token_log_probs`: the log-probability of each token of given texts after the model's start
  (``ppl``, ``lp_mean``);
* :meth:`LMBackend.continuation_log_probs`: the log-probability of each token of given continuations after given
  prompts, both token ids of the model's tokenizer (``cond_lp``, ``logprop_*``).

The in-process backend is :class:`tsteval.metrics.naturalness.causal_lm.CausalLM` (transformers; GGUF files
de-quantised), whose answers :func:`answer_log_probs` reads; the remote one is
:class:`tsteval.backends.remote.RemoteLM` (any OpenAI-compatible server, through the caching, retrying, bounded
client of :mod:`tsteval.backends.client`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class LMBackend(Protocol):
    """A language model as the LM metrics see it."""

    model_id: str

    def answer_log_probs(self, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
        """(questions x answers): each answer's log-probability as the first token of the model's reply."""

    def token_log_probs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text's token log-probabilities after the model's start."""

    def continuation_log_probs(self, prompts: Sequence[Sequence[int]],
                               continuations: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Each continuation's token log-probabilities after its prompt."""


def answer_log_probs(lm: object, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """:meth:`LMBackend.answer_log_probs` of ``lm``: a remote model's own; for an in-process
    :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM`, the user turn in its chat template (a model without
    one reads the question plainly, then ``"\\nAnswer:"``), each answer's token (with a space before it where the
    plain model has that token) read from one forward pass per distinct prompt."""
    if isinstance(lm, LMBackend):
        return lm.answer_log_probs(questions, answers)
    from tsteval.metrics.judges.prefix_scoring import next_token_log_probs
    from tsteval.metrics.judges.prompts import render_many
    from tsteval.metrics.judges.rating import answer_tokens

    tokens, ending = answer_tokens(lm, answers)
    prompts = [tuple(p) for p in render_many(lm, [q + ending for q in questions], True)]
    distinct = list(dict.fromkeys(prompts))
    values = dict(zip(distinct, next_token_log_probs(lm, [list(p) for p in distinct], tokens), strict=True))
    return np.array([values[p] for p in prompts]).reshape(len(questions), len(answers))
