"""Language-model backends: the LM metrics ask a model two things only, through one interface (:class:`LMBackend`).

* :meth:`LMBackend.answer_log_probs`: the next-token distribution over given answers after a question put to the
  model (the ``judge_*`` ratings);
* :meth:`LMBackend.token_log_probs`: the log-probability of each token of given texts after the model's start
  (``ppl``, ``lp_mean``);
* :meth:`LMBackend.continuation_log_probs`: the log-probability of each token of given continuations after given
  prompts, both token ids of the model's tokenizer (``cond_lp``, ``logprop_*``).

The in-process backend is :class:`tsteval.metrics.naturalness.causal_lm.CausalLM` (transformers; GGUF files
de-quantised), whose answers :func:`tsteval.metrics.judges.answers.answer_log_probs` reads (:func:`answer_log_probs`
dispatches to it); the remote one is
:class:`tsteval.backends.remote.RemoteLM` (any OpenAI-compatible server, through the caching, retrying, bounded
client of :mod:`tsteval.backends.client`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
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
    """:meth:`LMBackend.answer_log_probs` of ``lm``: a remote model's own; an in-process
    :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM`'s read by
    :func:`tsteval.metrics.judges.answers.answer_log_probs`."""
    if isinstance(lm, LMBackend):
        return lm.answer_log_probs(questions, answers)
    from tsteval.metrics.judges.answers import answer_log_probs as in_process

    return in_process(lm, questions, answers)


def accounting(lm: object, metric: str) -> AbstractContextManager:
    """Count what ``lm``'s server is sent inside the block under ``metric`` too (a remote model's
    :meth:`~tsteval.backends.client.Client.accounting`); nothing for an in-process model."""
    client = getattr(lm, "client", None)
    return client.accounting(metric) if client is not None else nullcontext()
