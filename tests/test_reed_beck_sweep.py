"""Reed & Beck's sweep (``benchmarks.reproductions.reed_beck_sweep``): its page is its CSV and JSON rendered, the WNC
no-masking CPS is recomputed with sentence-transformers from the raw WNC test pairs, and Mir's margins by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
STATS = pd.read_csv(RESULTS / "reed_beck_sweep.csv")


def test_the_page_is_its_files_rendered() -> None:
    from benchmarks.reproductions.reed_beck_sweep import page

    assert page(RESULTS) == (RESULTS / "reed_beck_sweep.md").read_text(encoding="utf-8")


def test_the_wnc_no_masking_cps_from_the_raw_pairs(data_root: Path) -> None:
    """Mean and median cosine of all-MiniLM-L6-v2 embeddings of each biased sentence and its neutralisation."""
    from sentence_transformers import SentenceTransformer

    from tsteval.metrics.content.sentence_embedding import default_model

    pre, post = ((data_root / "wnc" / f"{side}.test").read_text(encoding="utf-8").splitlines()
                 for side in ("pre", "post"))
    model = SentenceTransformer(default_model(), device="cpu")
    a, b = (model.encode(texts, normalize_embeddings=True) for texts in (pre, post))
    cosine = np.sum(a * b, axis=1)
    row = STATS[(STATS["corpus"] == "wnc") & (STATS["mode"] == "none")].iloc[0]
    assert row["n"] == len(pre) == 100
    assert row["mean"] == pytest.approx(float(cosine.mean()), abs=1e-5)
    assert row["median"] == pytest.approx(float(np.median(cosine)), abs=1e-5)


def test_the_average_is_the_mean_of_mir_s_three_models() -> None:
    mir = STATS[STATS["corpus"] == "mir"]
    models = ("CAAE", "ARAE", "DAR")
    assert np.allclose(mir["r_Average"], mir[[f"r_{m}" for m in models]].mean(axis=1), atol=1e-12)
    assert np.allclose(mir["margin_Average"], mir[[f"margin_{m}" for m in models]].mean(axis=1), atol=1e-12)
    assert (mir["diff_vs_none_low"] <= mir["diff_vs_none_high"]).all()
