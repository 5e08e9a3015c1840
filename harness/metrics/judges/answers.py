"""The answers of a rating read from an in-process causal LM: each answer's log-probability as the first token of
the model's reply (:func:`answer_log_probs`, to which :func:`tsteval.backends.interface.answer_log_probs` dispatches
an in-process model; a model behind a server answers itself, :class:`tsteval.backends.remote.RemoteLM`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.core.errors import TstevalError
from tsteval.metrics.judges.prompts import PLAIN_ANSWER, is_chat

ANSWERS = ("1", "2", "3", "4", "5")


def answer_tokens(lm: object, answers: Sequence[str] = ANSWERS) -> tuple[list[int], str]:
    """The token id of each of ``answers`` and the text that ends a prompt before it."""
    tokenizer = lm.tokenizer

    def single(texts: Sequence[str]) -> list[int] | None:
        ids = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        return [i[0] for i in ids] if all(len(i) == 1 for i in ids) else None

    if is_chat(lm):
        found, ending = single(answers), ""
    else:
        found, ending = single([f" {a}" for a in answers]), PLAIN_ANSWER
        if found is None:
            found, ending = single(answers), PLAIN_ANSWER + " "
    if found is None:
        raise TstevalError(f"the tokenizer of {lm.model_id} has no single token for each answer 1-5; the judge_* "
                           "metrics need one")
    return found, ending


def answer_log_probs(lm: object, questions: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """(questions x answers) of an in-process
    :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM`: the user turn in its chat template (a model without
    one reads the question plainly, then ``"\\nAnswer:"``), each answer's token (with a space before it where the
    plain model has that token) read from one forward pass per distinct prompt."""
    from tsteval.metrics.judges.prefix_scoring import next_token_log_probs
    from tsteval.metrics.judges.prompts import render_many

    tokens, ending = answer_tokens(lm, answers)
    prompts = [tuple(p) for p in render_many(lm, [q + ending for q in questions], True)]
    distinct = list(dict.fromkeys(prompts))
    values = dict(zip(distinct, next_token_log_probs(lm, [list(p) for p in distinct], tokens), strict=True))
    return np.array([values[p] for p in prompts]).reshape(len(questions), len(answers))
