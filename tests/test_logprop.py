"""LogProp (Pauli et al. 2025): the content and style scores checked against the authors' prompts written out by
hand and scored by one plain transformers forward pass each, the formula against probabilities worked by hand, the
plain reading of a model without a chat template (the packaged Qwen2.5-Coder-1.5B-Instruct: test_qwen.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tsteval
from tsteval.core.devices import native_bf16
from tsteval.metrics.judges.logprop import logprop_from_log_probs, logprop_scores
from tsteval.metrics.naturalness.causal_lm import CausalLM

# The authors' LogProp.py, verbatim.
SYSTEM = ("You can repeat sentences, paraphrase sentences or rewrite sentences to change the style or certain "
          "attribute of the text while preserving non-related content and context. Your answers contain just the "
          "rewrite.")
INSTRUCTIONS = ("Paraphrase the following sentence: {}", "Rewrite the following sentence to be {}: {}",
                "Repeat the following sentence: {}")
INPUTS = ["The food was cold and the staff were rude.", "i did n't like it at all .",
          "The food was cold and the staff were rude."]
OUTPUTS = ["The food was warm and the staff were friendly.", "I loved it.",
           "The food was cold and the staff were rude."]
TARGETS = ["positive", "positive", "positive"]


def _instructions(x: str, style: str) -> list[str]:
    return [INSTRUCTIONS[0].format(x), INSTRUCTIONS[1].format(style, x), INSTRUCTIONS[2].format(x)]


def _by_hand(lm: CausalLM, x: str, y: str, style: str, end_text: str) -> tuple[float, float]:
    """LogProp of one pair from three whole conversations (system, user, assistant answer y + end) as text,
    tokenised at once and scored by one plain forward pass each; the formula written out on probabilities."""
    probs = []
    for instruction in _instructions(x, style):
        turns = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": instruction}]
        prompt = lm.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
        prompt_ids = lm.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        ids = lm.tokenizer(prompt + y + end_text, add_special_tokens=False)["input_ids"]
        assert ids[:len(prompt_ids)] == prompt_ids
        with torch.inference_mode():
            logits = lm.model(torch.tensor([ids])).logits[0].double()
        p = torch.softmax(logits, dim=-1)
        probs.append([p[t - 1, ids[t]].item() for t in range(len(prompt_ids), len(ids))])
    paraphrase, rewrite, repeat = (np.array(v) for v in probs)
    content = np.mean([math.log(max(a, b, c)) for a, b, c in zip(paraphrase, rewrite, repeat, strict=True)])
    style_score = np.mean([b - max(a, c) for a, b, c in zip(paraphrase, rewrite, repeat, strict=True)])
    return float(content), float(style_score)


@pytest.fixture(scope="module")
def smollm2() -> CausalLM:
    return CausalLM("smollm2", threads=2)


def test_logprop_is_the_authors_formula_on_probabilities_worked_by_hand() -> None:
    # two tokens; rows paraphrase, rewrite, repeat
    probs = np.array([[0.5, 0.1], [0.2, 0.6], [0.4, 0.3]])
    content, style = logprop_from_log_probs(np.log(probs))
    assert content == pytest.approx((math.log(0.5) + math.log(0.6)) / 2, abs=1e-12)
    assert style == pytest.approx(((0.2 - 0.5) + (0.6 - 0.3)) / 2, abs=1e-12)
    # the rewrite instruction is the only one whose gain counts as style
    assert logprop_from_log_probs(np.log(probs[[1, 0, 2]]))[1] == pytest.approx(((0.5 - 0.4) + (0.1 - 0.6)) / 2)


def test_logprop_equals_a_plain_forward_pass_of_the_authors_prompts(smollm2: CausalLM) -> None:
    got = logprop_scores(INPUTS, OUTPUTS, TARGETS, smollm2)
    for i, (x, y, s) in enumerate(zip(INPUTS, OUTPUTS, TARGETS, strict=True)):
        content, style = _by_hand(smollm2, x, y, s, "<|im_end|>")
        assert got["logprop_content"][i] == pytest.approx(content, abs=1e-4)
        assert got["logprop_style"][i] == pytest.approx(style, abs=1e-4)
    # the copy is the likeliest output under "repeat": its content beats the rewrites'
    assert got["logprop_content"][2] > got["logprop_content"][0]


def test_a_model_without_a_chat_template_reads_the_prompts_plainly(smollm2: CausalLM) -> None:
    template, smollm2.tokenizer.chat_template = smollm2.tokenizer.chat_template, None
    try:
        got = logprop_scores(INPUTS[:2], OUTPUTS[:2], TARGETS[:2], smollm2)
        for i, (x, y, s) in enumerate(zip(INPUTS[:2], OUTPUTS[:2], TARGETS[:2], strict=True)):
            rows = []
            for instruction in _instructions(x, s):
                prompt = [smollm2.start_id, *smollm2.tokenizer(f"{SYSTEM}\n\n{instruction}\n",
                                                               add_special_tokens=False)["input_ids"]]
                cont = [*smollm2.tokenizer(y, add_special_tokens=False)["input_ids"], smollm2.tokenizer.eos_token_id]
                with torch.inference_mode():
                    logp = torch.log_softmax(smollm2.model(torch.tensor([prompt + cont])).logits[0].double(), -1)
                rows.append([logp[len(prompt) - 1 + j, t].item() for j, t in enumerate(cont)])
            expected = logprop_from_log_probs(np.array(rows))
            assert (got["logprop_content"][i], got["logprop_style"][i]) == pytest.approx(expected, abs=1e-4)
    finally:
        smollm2.tokenizer.chat_template = template


def test_evaluate_scores_both_columns_signed_and_in_range() -> None:
    card = tsteval.evaluate(INPUTS[:2], OUTPUTS[:2], source_style="negative", target_style="positive",
                            metrics=["logprop_content", "logprop_style"])
    content, style = card.frame["logprop_content@smollm2"], card.frame["logprop_style@smollm2"]
    assert (content <= 0).all() and style.between(-1, 1).all()
    assert "prompts:pauli2025" in card.signatures["logprop_content@smollm2"]
    assert {"logprop_content", "logprop_style"} <= set(tsteval.METRICS)


@pytest.mark.skipif(not native_bf16("cpu"), reason="this CPU emulates bf16 (tens of times slower than fp32): "
                    "checked where it is native (docs/precision.md)")
def test_bf16_on_the_cpu_is_named_and_stays_near_fp32(smollm2: CausalLM) -> None:
    half = CausalLM("smollm2", threads=2, precision="bf16")
    assert half.model_id == f"{smollm2.model_id}+bf16" and next(half.model.parameters()).dtype == torch.bfloat16
    full, rounded = (logprop_scores(INPUTS, OUTPUTS, TARGETS, lm)["logprop_content"] for lm in (smollm2, half))
    assert np.abs(full - rounded).max() < 0.2 and not np.array_equal(full, rounded)
