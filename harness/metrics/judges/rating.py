"""``judge_style``, ``judge_content``, ``judge_fluency``: a causal LM asked for a 1-5 rating, read without sampling.

Each template of ``templates.yaml`` asks one question about the transfer (the output's target style; whether it
keeps the input's meaning; its fluency).  The score is the expected answer under the model's next-token
distribution restricted to the answers: E = sum_k k p_k with p_k = P(k) / sum_j P(j) over the tokens "1" ... "5"
right after the prompt (for a chat model, the first token of the assistant's turn; a plain model reads
``"\\nAnswer:"`` and the answers " 1" ... " 5" where those are single tokens).  Deterministic, and continuous where
a sampled answer would be an integer.  ``template=0`` averages the templates' expectations; ``template=k`` uses the
k-th only.  Each distinct prompt is scored once.

>>> round(float(expected_rating(np.log([[0.1, 0.1, 0.2, 0.3, 0.3]]))[0]), 6)
3.6
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.metrics.judges.answers import ANSWERS
from tsteval.metrics.judges.prompts import chosen_templates, fill


def expected_rating(log_probs: np.ndarray) -> np.ndarray:
    """sum_k k p_k, p renormalised over the answers (rows: prompts, columns: answers 1-5 as log-probabilities)."""
    top = log_probs.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):  # a row without any answer (a server's top list lacking them all): NaN
        shifted = np.exp(log_probs - top)
        p = shifted / shifted.sum(axis=1, keepdims=True)
    return p @ np.arange(1, log_probs.shape[1] + 1)


def judge_matrix(metric: str, inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                 sources: Sequence[str] | None = None, which: Sequence[int] | None = None) -> np.ndarray:
    """(pairs x templates): the expected rating of every pair under every template of ``metric`` (``which``: those
    numbered, from 1); the answers' log-probabilities as the model's backend gives them
    (:func:`tsteval.backends.interface.answer_log_probs`)."""
    from tsteval.backends.interface import answer_log_probs

    sources = sources if sources is not None else [""] * len(inputs)
    columns = []
    for template in chosen_templates(metric, which):
        questions = [fill(template["prompt"], input=x, output=y, style=s, source=r)
                     for x, y, s, r in zip(inputs, outputs, targets, sources, strict=True)]
        columns.append(expected_rating(answer_log_probs(lm, questions, ANSWERS)))
    return np.column_stack(columns)


def _judge(metric: str, inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
           sources: Sequence[str] | None, template: int) -> np.ndarray:
    return judge_matrix(metric, inputs, outputs, targets, lm, sources, None if template == 0 else [template]).mean(
        axis=1)


def judge_style(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                sources: Sequence[str] | None = None, template: int = 0) -> np.ndarray:
    """How strongly each output has its target style, 1-5, as the LM rates it."""
    return _judge("judge_style", inputs, outputs, targets, lm, sources, template)


def judge_content(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                  sources: Sequence[str] | None = None, template: int = 0) -> np.ndarray:
    """How much of its input's meaning each output keeps, 1-5, as the LM rates it."""
    return _judge("judge_content", inputs, outputs, targets, lm, sources, template)


def judge_fluency(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                  sources: Sequence[str] | None = None, template: int = 0) -> np.ndarray:
    """How fluent each output is, 1-5, as the LM rates it."""
    return _judge("judge_fluency", inputs, outputs, targets, lm, sources, template)
