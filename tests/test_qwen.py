"""The packaged Qwen2.5-Coder-1.5B-Instruct end to end: its 22 chunk packages joined and checked, the GGUF file
converted (streamed, tests/test_fluency.py) into the session's empty cache, the float32 copy loaded, and LogProp of
one pair equal to plain forward passes of the authors' prompts through Qwen's chat template.

In a child process of its own, so that nothing the suite's process holds adds to its 6.2 GB of float32 weights (the
suite's peak memory is this process's: docs/precision.md); in fp32 (the suite's ``auto``), which an AVX2-only CPU
computes fast too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tsteval.metrics.naturalness.causal_lm import QWEN_CODER_FILE, QWEN_CODER_SHA256

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_logprop import INPUTS, OUTPUTS, TARGETS, _by_hand
from tsteval.metrics.judges.logprop import logprop_scores
from tsteval.metrics.naturalness.causal_lm import CausalLM

qwen = CausalLM("qwen2.5-coder-1.5b", threads=2)
got = logprop_scores(INPUTS[1:2], OUTPUTS[1:2], TARGETS[1:2], qwen)  # one pair: a 1.5B model on 2 cores
content, style = _by_hand(qwen, INPUTS[1], OUTPUTS[1], TARGETS[1], "<|im_end|>")
print(json.dumps({"model_type": qwen.model.config.model_type, "layers": qwen.model.config.num_hidden_layers,
                  "precision": qwen.precision, "model_id": qwen.model_id,
                  "got": [float(got["logprop_content"][0]), float(got["logprop_style"][0])],
                  "by_hand": [content, style]}))
"""


@pytest.mark.solo  # run alone by make test: its 7.2 GB beside a second worker would pass the 8 GB budget
def test_the_packaged_qwen_gives_the_plain_forward_pass_values() -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["model_type"] == "qwen2" and result["layers"] == 28
    assert result["precision"] == "fp32" and result["model_id"] == f"{QWEN_CODER_SHA256[:32]}/{QWEN_CODER_FILE}"
    assert result["got"] == pytest.approx(result["by_hand"], abs=1e-4)
