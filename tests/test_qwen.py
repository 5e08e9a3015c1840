"""The packaged Qwen2.5-Coder-1.5B-Instruct end to end: its 22 chunk packages joined and checked, the GGUF file
converted (streamed, tests/test_fluency.py) into the session's empty cache, the float32 copy loaded, and LogProp of
one pair equal to plain forward passes of the authors' prompts through Qwen's chat template.

In a module of its own, so that no other model is held beside its 6.2 GB of float32 weights (the suite's peak
memory: docs/precision.md); in fp32 (the suite's ``auto``), which an AVX2-only CPU computes fast too."""

from __future__ import annotations

import pytest
from test_logprop import INPUTS, OUTPUTS, TARGETS, _by_hand

from tsteval.metrics.judges.logprop import logprop_scores
from tsteval.metrics.naturalness.causal_lm import QWEN_CODER_FILE, QWEN_CODER_SHA256, CausalLM


def test_the_packaged_qwen_gives_the_plain_forward_pass_values() -> None:
    qwen = CausalLM("qwen2.5-coder-1.5b", threads=2)
    assert qwen.model.config.model_type == "qwen2" and qwen.model.config.num_hidden_layers == 28
    assert qwen.precision == "fp32" and qwen.model_id == f"{QWEN_CODER_SHA256[:32]}/{QWEN_CODER_FILE}"
    got = logprop_scores(INPUTS[1:2], OUTPUTS[1:2], TARGETS[1:2], qwen)  # one pair: a 1.5B model on 2 cores
    for i, (x, y, s) in enumerate(zip(INPUTS[1:2], OUTPUTS[1:2], TARGETS[1:2], strict=True)):
        content, style = _by_hand(qwen, x, y, s, "<|im_end|>")
        assert got["logprop_content"][i] == pytest.approx(content, abs=1e-4)
        assert got["logprop_style"][i] == pytest.approx(style, abs=1e-4)
