"""A small causal LM as a zero-shot style scorer, the hook of ``lm_style_probe.yaml`` (not a registered metric).

SmolLM2-135M-Instruct (the packaged ``smollm2``) reads each output after a prompt naming a style, once with the
target style s and once with the source style r, and the score is the mean over the output's tokens of
ln P(y_t | prompt(s), y_<t) - ln P(y_t | prompt(r), y_<t): by Bayes' rule the per-token log-odds of s against r given
the output, with equal priors (a language model as a noisy-channel classifier; it needs the styles' names only).
The prompts are the three style-alone ("marginal") prompts of ``cond_lp`` in ``harness/metrics/judges/templates.yaml``,
written before any correlation was computed.  The hook gives columns only; the engine judges them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def style_log_odds(outputs: Sequence[str], targets: Sequence[str], sources: Sequence[str], lm: object,
                   template: dict[str, object]) -> np.ndarray:
    """The per-token log-odds of the target against the source style of each output under ``template``'s
    style-alone prompt (``marginal``)."""
    from tsteval.metrics.judges.cond_lp import continuations, mean_log_probs
    from tsteval.metrics.judges.prompts import fill, render_many

    chat = bool(template.get("chat", False))
    conts = continuations(lm, outputs, chat)
    target, source = (render_many(lm, [fill(str(template["marginal"]), input="", output="", style=s, source="")
                                       for s in styles], chat) for styles in (targets, sources))
    return mean_log_probs(lm, target, conts) - mean_log_probs(lm, source, conts)


def style_probe(data: object, *, seed: int, templates: Sequence[int]) -> dict[str, np.ndarray]:
    """``{style_lp@smollm2-tK: log-odds}`` of every row of the set ``data`` for each template K of ``templates``:
    the outputs in the form the LM was trained on (:func:`tsteval.metrics.judges.scorer.lm_texts`), the styles by
    the names the set gives them."""
    from tsteval.metrics.judges.prompts import chosen_templates
    from tsteval.metrics.judges.scorer import lm_texts
    from tsteval.metrics.naturalness.causal_lm import CausalLM
    from tsteval.scorecard import Scorecard

    del seed  # deterministic: no sampling
    frame = data.frame.reset_index(drop=True)
    labels = data.transfers.extra.get("style_labels", {})
    targets = [labels.get(str(s), str(s)) for s in frame["target_style"]]
    sources = [labels.get(str(s), str(s)) for s in frame["source_style"]]
    _, outputs, _ = lm_texts(Scorecard(frame), "auto")
    lm = CausalLM("smollm2", threads=2, precision="fp32")
    return {f"style_lp@smollm2-t{k}": style_log_odds(outputs, targets, sources, lm, template)
            for k, template in zip(templates, chosen_templates("cond_lp", list(templates)), strict=True)}
