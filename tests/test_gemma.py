"""Gemma 3 270M, the second packaged causal LM (``--language-model gemma3-270m``): its GGUF chunks joined once into
the cache, scored through the same code as SmolLM2, checked against a plain transformers forward pass."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tsteval
from tsteval.metrics.naturalness.causal_lm import CausalLM, gemma3_path
from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

TEXTS = ["The food was great and the staff were friendly.", "Friendly great food the staff and were was the."]


@pytest.fixture(scope="module")
def gemma() -> CausalLM:
    return CausalLM("gemma3-270m", threads=2)


def test_gemma_token_log_probs_are_a_plain_forward_pass(gemma: CausalLM) -> None:
    from transformers import AutoModelForCausalLM

    path = gemma3_path()
    assert path.stat().st_size == 253_113_024 and gemma.model_id == f"{path.parent.name}/{path.name}"
    model = AutoModelForCausalLM.from_pretrained(converted_gguf(path), dtype=torch.float32).eval()
    ours = gemma.token_log_probs(TEXTS)
    for text, values in zip(TEXTS, ours, strict=True):
        ids = [gemma.start_id, *gemma.tokenizer(text, add_special_tokens=False)["input_ids"]]
        with torch.inference_mode():
            logp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), dim=-1)
        direct = logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].numpy()
        np.testing.assert_allclose(values, direct, atol=1e-4)
    assert ours[0].mean() > ours[1].mean() + 1  # word salad is far less likely


def test_evaluate_names_the_columns_by_gemma(gemma: CausalLM) -> None:
    card = tsteval.evaluate(["The food was cold."], TEXTS[:1], source_style="negative", target_style="positive",
                            metrics=["lp_mean@gemma3-270m"], language_model="gemma3-270m")
    assert "lp_mean@gemma3-270m" in card.metrics and all(m.endswith("@gemma3-270m") for m in card.metrics)
    assert f"lm:{gemma.model_id}" in card.signatures["lp_mean@gemma3-270m"].split("|")
    np.testing.assert_allclose(card.frame["lp_mean@gemma3-270m"], [gemma.token_log_probs(TEXTS[:1])[0].mean()],
                               atol=1e-5)
