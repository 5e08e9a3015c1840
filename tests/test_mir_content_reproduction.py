"""Mir et al.'s Tables 4.4/4.5 reproduction (``benchmarks.reproductions.mir_content_reproduction``): the page is its
files rendered, a stored-score figure is recomputed from the raw release with scipy and equals the paper's, and the
Average rows are the mean of the three models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
TABLE = pd.read_csv(RESULTS / "mir_content_reproduction.csv")
MODELS = ("CAAE", "ARAE", "DAR")


def test_the_page_is_its_files_rendered() -> None:
    from benchmarks.reproductions.mir_content_reproduction import page

    assert page(RESULTS) == (RESULTS / "mir_content_reproduction.md").read_text(encoding="utf-8")


def test_the_stored_bleu_after_removal_on_caae_from_the_raw_release(data_root: Path) -> None:
    """Mir's stored sentence BLEU with style words removed, CAAE's five settings, against the ratings file by scipy:
    the paper's .458 (Table 4.4), inside the engine's interval."""
    base = data_root / "mir2019" / "evaluations" / "automated" / "content_preservation" / "sentence_level"
    raw = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    bleu, human = [], []
    for path in sorted(base.glob("CAAE_rho_*.npz")):
        rho = float(path.stem.removeprefix("CAAE_rho_").replace("_", "."))
        rows = raw[(raw["model"] == "CAAE") & np.isclose(raw["value"], rho)].sort_values("item")
        bleu += np.asarray(np.load(path, allow_pickle=True)["style_removed"].item()["BLEU"], dtype=float).tolist()
        human += rows["human_content_preservation"].tolist()
    assert len(bleu) == len(human) == 1220
    expected = abs(stats.pearsonr(bleu, human).statistic)
    row = TABLE[(TABLE["modification"] == "remove") & (TABLE["metric"] == "bleu_mir")
                & (TABLE["source"] == "Mir's stored scores")].iloc[0]
    paper = TABLE[(TABLE["modification"] == "remove") & (TABLE["metric"] == "bleu_mir")
                  & (TABLE["source"] == "paper")].iloc[0]
    assert row["CAAE_r"] == pytest.approx(expected, abs=1e-9)
    assert round(expected, 3) == paper["CAAE_r"] == 0.458
    assert row["CAAE_lo"] < expected < row["CAAE_hi"]


def test_every_average_is_the_mean_of_the_three_models() -> None:
    ours = TABLE[TABLE["source"] != "paper"]
    assert np.allclose(ours["Average_r"], ours[[f"{m}_r" for m in MODELS]].mean(axis=1), atol=1e-12)
    assert ((ours["Average_lo"] < ours["Average_r"]) & (ours["Average_r"] < ours["Average_hi"])).all()
