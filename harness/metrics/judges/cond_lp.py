"""``cond_lp``: how much the input explains the output beyond the requested style, read by a causal LM (after Pauli
et al. 2025, "Mind the Style Gap").

For each template of ``templates.yaml`` the output y (followed by the model's end token, so an empty output is
scored too and a cut-off one pays for ending early) is scored twice: after a prompt holding the input x and the
target style s, and after the same prompt with s alone.  The score is the mean over y's tokens of

    ln P(y_t | conditional(x, s), y_<t) - ln P(y_t | marginal(s), y_<t),

a pointwise mutual information of x and y given s, per token: high when the input makes the output likely,
whatever the style alone would predict.  ``template=0`` averages the templates; ``template=k`` uses the k-th
only.  Each distinct (prompt, output) is scored once (:mod:`tsteval.metrics.judges.prefix_scoring`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.metrics.judges.prefix_scoring import continuation_log_probs
from tsteval.metrics.judges.prompts import chosen_templates, fill, render_many


def continuations(lm: object, outputs: Sequence[str], chat: bool) -> list[list[int]]:
    """The scored tokens of each output: its ids (after a space when the prompt is plain) and the end token."""
    tokenizer = lm.tokenizer
    end = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else lm.start_id
    texts = list(outputs) if chat and getattr(tokenizer, "chat_template", None) else [f" {y}" for y in outputs]
    return [[*ids, end] for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]] if texts else []


def mean_log_probs(lm: object, prompts: list[list[int]], conts: list[list[int]]) -> np.ndarray:
    """The mean token log-probability of each continuation after its prompt, each distinct pair scored once."""
    keys = [(tuple(p), tuple(c)) for p, c in zip(prompts, conts, strict=True)]
    distinct = list(dict.fromkeys(keys))
    values = continuation_log_probs(lm, [list(p) for p, _ in distinct], [list(c) for _, c in distinct])
    means = {key: float(v.mean()) for key, v in zip(distinct, values, strict=True)}
    return np.array([means[key] for key in keys])


def cond_lp_matrix(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                   sources: Sequence[str] | None = None, which: Sequence[int] | None = None) -> np.ndarray:
    """(pairs x templates): the per-token PMI of every pair under every template (``which``: those numbered,
    from 1)."""
    sources = sources if sources is not None else [""] * len(inputs)
    columns = []
    for template in chosen_templates("cond_lp", which):
        chat = bool(template.get("chat", False))
        conts = continuations(lm, outputs, chat)
        given = render_many(lm, [fill(template["conditional"], input=x, output="", style=s, source=r)
                                 for x, s, r in zip(inputs, targets, sources, strict=True)], chat)
        alone = render_many(lm, [fill(template["marginal"], input="", output="", style=s, source=r)
                                 for s, r in zip(targets, sources, strict=True)], chat)
        columns.append(mean_log_probs(lm, given, conts) - mean_log_probs(lm, alone, conts))
    return np.column_stack(columns)


def cond_lp(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
            sources: Sequence[str] | None = None, template: int = 0) -> np.ndarray:
    """The ``cond_lp`` of each pair: the templates' mean (``template=0``) or the ``template``-th one."""
    return cond_lp_matrix(inputs, outputs, targets, lm, sources, None if template == 0 else [template]).mean(axis=1)
