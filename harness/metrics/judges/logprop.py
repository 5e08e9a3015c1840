"""``logprop_content`` and ``logprop_style``: LogProp (Pauli et al. 2025, "Mind the Style Gap", arXiv 2502.15022),
the output's likelihood under three instructions that each hold the input.

After one fixed system prompt, a user turn asks the model to *paraphrase* the input, to *rewrite it to be STYLE*
(the target style's name) or to *repeat* it (the authors' wording, ``templates.yaml``: ``logprop``), in the model's
chat template with the assistant's turn opened; the output y followed by the token that ends the assistant's turn
is the continuation.  Every continuation token t gets three probabilities p_paraphrase(t), p_rewrite(t),
p_repeat(t), and

    logprop_content = mean_t ln max(p_paraphrase, p_rewrite, p_repeat)
    logprop_style   = mean_t [p_rewrite - max(p_paraphrase, p_repeat)]      (probabilities, not logs)

so content is high when *some* instruction that reads the input makes the output likely (no prompt without the
input, nothing subtracted: unlike ``cond_lp``, a large style shift is not read as lost content), and style is high
where asking for the target style explains the output better than copying or paraphrasing it.

Where this differs from the authors' script, on purpose: their ``LogProp.py`` writes Llama 3's chat markup by
hand (without the blank line after each header that the model's own template has) and reads the logits from the
last prompt position on against the tokens one further, so the output's first token is never scored; here the
model's own chat template renders the prompts and every output token is scored, the end-of-turn token included.
A model without a chat template reads BOS, the system prompt, a blank line, the instruction and a new line, then
the output and its end-of-text token.  The three prompts of a pair share the system prompt, and those of one
instruction share it up to the input: shared beginnings run once per batch
(:mod:`tsteval.metrics.judges.prefix_scoring`); both columns come from the same forward passes.

>>> import numpy as np
>>> lp = np.log([[0.5, 0.2], [0.1, 0.6], [0.4, 0.3]])  # paraphrase, rewrite, repeat x two tokens
>>> content, style = logprop_from_log_probs(lp)
>>> round(float(content), 6) == round(float(np.mean(np.log([0.5, 0.6]))), 6), round(float(style), 6)
(True, -0.05)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.metrics.judges.prefix_scoring import continuation_log_probs
from tsteval.metrics.judges.prompts import LOGPROP_ROLES, chosen_templates, end_of_turn, fill, is_chat, render_many

LOGPROP = ("logprop_content", "logprop_style")


def logprop_from_log_probs(log_probs: np.ndarray) -> tuple[float, float]:
    """(content, style) of one output from its tokens' log-probabilities (rows: paraphrase, rewrite, repeat)."""
    paraphrase, rewrite, repeat = np.exp(np.asarray(log_probs, dtype=float))
    content = float(np.mean(np.max(log_probs, axis=0)))
    style = float(np.mean(rewrite - np.maximum(paraphrase, repeat)))
    return content, style


def logprop_prompts(lm: object, inputs: Sequence[str], targets: Sequence[str],
                    sources: Sequence[str]) -> list[list[list[int]]]:
    """For each instruction (paraphrase, rewrite, repeat), the prompt ids of every pair."""
    template = chosen_templates("logprop")[0]
    chat = bool(template.get("chat", False)) and is_chat(lm)
    system = str(template["system"])
    ending = "" if chat else "\n"
    return [render_many(lm, [fill(str(template[role]), input=x, output="", style=s, source=r) + ending
                             for x, s, r in zip(inputs, targets, sources, strict=True)], chat, system)
            for role in LOGPROP_ROLES]


def logprop_scores(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                   sources: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """``{"logprop_content": ..., "logprop_style": ...}`` of every pair, from one set of forward passes."""
    sources = sources if sources is not None else [""] * len(inputs)
    end = end_of_turn(lm)
    conts = [[*ids, end] for ids in lm.tokenizer(list(outputs), add_special_tokens=False)["input_ids"]] \
        if len(outputs) else []
    prompts = logprop_prompts(lm, inputs, targets, sources)
    keys = [(tuple(prompts[k][i]), tuple(conts[i])) for i in range(len(conts)) for k in range(len(LOGPROP_ROLES))]
    distinct = list(dict.fromkeys(keys))
    values = continuation_log_probs(lm, [list(p) for p, _ in distinct], [list(c) for _, c in distinct])
    by_key = dict(zip(distinct, values, strict=True))
    scores = np.array([logprop_from_log_probs(np.stack([by_key[keys[3 * i + k]] for k in range(3)]))
                       for i in range(len(conts))]).reshape(len(conts), 2)
    return {"logprop_content": scores[:, 0], "logprop_style": scores[:, 1]}


def logprop_content(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                    sources: Sequence[str] | None = None) -> np.ndarray:
    """Mean over the output's tokens of ln max(p_paraphrase, p_rewrite, p_repeat)."""
    return logprop_scores(inputs, outputs, targets, lm, sources)["logprop_content"]


def logprop_style(inputs: Sequence[str], outputs: Sequence[str], targets: Sequence[str], lm: object,
                  sources: Sequence[str] | None = None) -> np.ndarray:
    """Mean over the output's tokens of p_rewrite - max(p_paraphrase, p_repeat)."""
    return logprop_scores(inputs, outputs, targets, lm, sources)["logprop_style"]
