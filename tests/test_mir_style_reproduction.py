"""Mir et al.'s Table 4.3 reproduction (``benchmarks.reproductions.mir_style_reproduction``): the page is its files
rendered, a stored-score figure is recomputed from the raw release with scipy and equals the paper's, and the
Average rows are the mean of the three models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
TABLE = pd.read_csv(RESULTS / "mir_style_reproduction.csv")


def _row(classifier: str, metric: str, model: str) -> pd.Series:
    rows = TABLE[(TABLE["classifier"] == classifier) & (TABLE["metric"] == metric) & (TABLE["model"] == model)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_the_page_is_its_files_rendered() -> None:
    from benchmarks.reproductions.mir_style_reproduction import page

    assert page(RESULTS) == (RESULTS / "mir_style_reproduction.md").read_text(encoding="utf-8")


def test_the_stored_text_cnn_emd_on_caae_from_the_raw_release(data_root: Path) -> None:
    """|stored STI| of Mir's text-CNN over CAAE's five settings against the ratings file, by scipy: the paper's .602."""
    base = data_root / "mir2019" / "evaluations" / "automated" / "style_transfer_intensity" / "sentence_level"
    raw = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    emd, human = [], []
    for path in sorted((base / "scores_based_on_emd").glob("CAAE_rho_*.npz")):
        rho = float(path.stem.removeprefix("CAAE_rho_").replace("_", "."))
        rows = raw[(raw["model"] == "CAAE") & np.isclose(raw["value"], rho)].sort_values("item")
        emd += np.abs(np.load(path)["textcnn"]).tolist()
        human += rows["human_style_intensity"].tolist()
    assert len(emd) == len(human) == 1220
    expected = stats.pearsonr(emd, human).statistic
    row = _row("textcnn", "emd", "CAAE")
    assert row["stored_r"] == pytest.approx(expected, abs=1e-9)
    assert round(expected, 3) == row["paper_r"] == 0.602
    assert row["stored_lo"] < expected < row["stored_hi"]


def test_the_average_is_the_mean_of_the_three_models() -> None:
    for (classifier, metric), rows in TABLE.groupby(["classifier", "metric"]):
        by = rows.set_index("model")
        assert by.loc["Average", "ours_r"] == pytest.approx(by.loc[["CAAE", "ARAE", "DAR"], "ours_r"].mean()), \
            (classifier, metric)
        assert by.loc["Average", "ours_lo"] < by.loc["Average", "ours_r"] < by.loc["Average", "ours_hi"]
