"""Mir et al.'s Table 4.6 reproduction (``benchmarks.reproductions.mir_naturalness``): a correlation of its page
recomputed by scipy from the committed per-row scores and the raw ratings file (the page is its JSON rendered:
``tests/test_benchmark_results.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_the_kneser_ney_correlations_from_the_per_row_scores_and_the_raw_ratings(data_root: Path) -> None:
    """The trigram's log perplexity against the absolute output rating over every rated row: Pearson and Spearman
    by scipy equal the page's, each inside its clustered interval."""
    scores = pd.read_csv(RESULTS / "mir_naturalness_scores.csv")
    raw = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    raw["setting"] = raw["param"] + "=" + raw["value"].map("{:g}".format)
    rows = scores.merge(raw.rename(columns={"model": "system"}), on=["system", "setting", "item"], validate="1:1")
    assert len(rows) == len(scores) == 2196
    correlations = pd.DataFrame(json.loads((RESULTS / "mir_naturalness.json").read_text())["correlations"])
    for statistic, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        figure = correlations[(correlations["score"] == "log ppl@kn3 (output)") & (correlations["model"] == "all")
                              & (correlations["target"] == "absolute output rating")
                              & (correlations["statistic"] == statistic)].iloc[0]
        expected = function(rows["log ppl@kn3 (output)"], rows["human_naturalness_output"]).statistic
        assert figure["r"] == pytest.approx(expected, abs=1e-9)
        assert figure["lo"] < expected < figure["hi"] < 0
