"""The packaged Qwen2.5-Coder-1.5B-Instruct end to end: its 22 chunk packages joined and checked, the GGUF file
converted (streamed, tests/test_fluency.py) into the session's empty cache, the float32 copy loaded, LogProp of one
pair equal to plain forward passes of the authors' prompts through Qwen's chat template, and Qwen's fluency judge
(template 2, the first rule's naturalness pick) the expected rating under the answer logits.

In a child process of its own, so that nothing the suite's process holds adds to its 6.2 GB of float32 weights (the
suite's peak memory is this process's: docs/precision.md); in fp32 (the suite's ``auto``), which an AVX2-only CPU
computes fast too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tsteval.core.integrity import sha256_once
from tsteval.metrics.naturalness.causal_lm import QWEN_CODER_FILE, QWEN_CODER_SHA256

CHILD = """
import json, sys, tempfile
sys.path.insert(0, sys.argv[1])
import torch
import tsteval
from test_judges import _chat, _direct, _ids
from test_logprop import INPUTS, OUTPUTS, TARGETS, _by_hand
from tsteval.classifiers.base import make_classifier
from tsteval.metrics.judges.logprop import logprop_scores
from tsteval.metrics.judges.prompts import templates
from tsteval.metrics.naturalness.causal_lm import CausalLM

qwen = CausalLM("qwen2.5-coder-1.5b", threads=2)
got = logprop_scores(INPUTS[1:2], OUTPUTS[1:2], TARGETS[1:2], qwen)  # one pair: a 1.5B model on 2 cores
content, style = _by_hand(qwen, INPUTS[1], OUTPUTS[1], TARGETS[1], "<|im_end|>")
print(json.dumps({"model_type": qwen.model.config.model_type, "layers": qwen.model.config.num_hidden_layers,
                  "precision": qwen.precision, "model_id": qwen.model_id,
                  "got": [float(got["logprop_content"][0]), float(got["logprop_style"][0])],
                  "by_hand": [content, style]}))

# Qwen's fluency judge, template 2, read by the weights loaded above (one load per process)
words = ("food", "service", "room", "staff")
clf = tempfile.mkdtemp()
make_classifier("tfidf-lr").fit([f"the {w} was bad" for w in words] + [f"the {w} was great" for w in words],
                                ["negative"] * 4 + ["positive"] * 4).save(clf)
card = tsteval.evaluate(INPUTS[:2], OUTPUTS[:2], source_style="negative", target_style="positive",
                        metrics=["sti", "judge_fluency@qwen2.5-coder-1.5b:template=2"], classifier=clf,
                        language_model="qwen2.5-coder-1.5b", text_form="as-is", joint="none", threads=2)
column = "judge_fluency@qwen2.5-coder-1.5b"
digits = [_ids(qwen, d)[0] for d in "12345"]
template = templates()["judge_fluency"][1]
by_hand = []
for x, y in zip(INPUTS[:2], OUTPUTS[:2]):
    logits = _direct(qwen, _chat(qwen, template["prompt"].format(input=x, output=y, style="positive", source="")))[-1]
    p = torch.softmax(logits[digits], dim=0).numpy()
    by_hand.append(float(sum((i + 1) * p[i] for i in range(5))))
print(json.dumps({"columns": sorted(card.metrics), "signature": card.signatures[column],
                  "got": card.frame[column].tolist(), "by_hand": by_hand}))
"""


@pytest.mark.solo  # first: the child below then loads the converted copy (converting in the parallel run, its 6.7 GB
# of shards written evicted the page cache the other worker read from: make test took 15:49 against 14:00)
def test_the_packaged_qwen_is_joined_and_converted_to_float32_shards() -> None:
    """The joined GGUF file is the one published; its converted copy (made in a child process: the suite's process
    stays small beside the next child's 6.2 GB) holds the 28 layers' float32 weights in shards the index names:
    Qwen2.5-1.5B's 1,543,714,304 parameters and the output matrix (151,936 tokens x 1,536) that the GGUF file stores
    apart from the tied input embedding, 4 bytes each."""
    code = ("from tsteval.metrics.naturalness.causal_lm import qwen_coder_path\n"
            "from tsteval.metrics.naturalness.gguf_conversion import converted_gguf\n"
            "print(qwen_coder_path()); print(converted_gguf(qwen_coder_path()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    path, folder = (Path(line) for line in done.stdout.strip().splitlines()[-2:])
    assert path.name == QWEN_CODER_FILE and sha256_once(path) == QWEN_CODER_SHA256
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    layers = {int(name.split(".")[2]) for name in index["weight_map"] if name.startswith("model.layers.")}
    assert layers == set(range(28)) and index["metadata"]["total_size"] == 4 * (1_543_714_304 + 151_936 * 1_536)
    assert {folder / file for file in index["weight_map"].values()} == set(folder.glob("model-*.safetensors"))


@pytest.fixture(scope="module")
def child() -> list[dict]:
    """The child's two results: LogProp of one pair, then the fluency judge's run."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.strip().splitlines()[-2:]]


@pytest.mark.solo  # run alone by make test: its 7.2 GB beside a second worker would pass the 8 GB budget
def test_the_packaged_qwen_gives_the_plain_forward_pass_values(child: list[dict]) -> None:
    result = child[0]
    assert result["model_type"] == "qwen2" and result["layers"] == 28
    assert result["precision"] == "fp32" and result["model_id"] == f"{QWEN_CODER_SHA256[:32]}/{QWEN_CODER_FILE}"
    assert result["got"] == pytest.approx(result["by_hand"], abs=1e-4)


@pytest.mark.solo
def test_qwens_fluency_judge_with_template_2_is_the_expected_rating(child: list[dict]) -> None:
    result = child[1]
    assert {"style_strength@clf", "judge_fluency@qwen2.5-coder-1.5b"} <= set(result["columns"])
    assert "template:2" in result["signature"] and QWEN_CODER_SHA256[:32] in result["signature"]
    assert result["got"] == pytest.approx(result["by_hand"], abs=1e-4)
