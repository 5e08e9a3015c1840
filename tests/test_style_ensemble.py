"""The ensemble style classifier study (``benchmarks.studies.style_ensemble``): its page is its JSON rendered, the
published bar is recomputed with scipy from Lai et al.'s raw ``style.json``, each verdict from its interval."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
REPORT = json.loads((RESULTS / "style_ensemble.json").read_text(encoding="utf-8"))


def test_the_page_is_its_json_rendered() -> None:
    from benchmarks.studies.style_ensemble import page

    assert page(REPORT) == (RESULTS / "style_ensemble.md").read_text(encoding="utf-8")


def test_lai_s_own_classifier_r_from_the_raw_file(data_root: Path) -> None:
    """The page's bar, Lai et al.'s c-gyafc against the mean of the two annotators, read without tsteval."""
    lines = (data_root / "lai2022" / "style.json").read_text(encoding="utf-8").splitlines()
    outputs = [out for line in lines if line for out in json.loads(line)["sys"].values()]
    human = [(out["human_1"] + out["human_2"]) / 2 for out in outputs]
    published = [out["c-gyafc"] for out in outputs]
    bar = REPORT["lai_classifier"]
    assert (bar["n"], len(outputs)) == (720, 720)
    assert bar["r"] == pytest.approx(pearsonr(published, human).statistic, abs=1e-9)
    assert bar["low"] < bar["r"] < bar["high"]


@pytest.mark.parametrize("part", ["yelp_mir", "gyafc_lai"])
def test_each_verdict_is_its_interval_s(part: str) -> None:
    """A comparison is better (worse) exactly when its paired interval lies above (below) zero."""
    for row in REPORT[part]["comparisons"]:
        assert row["low"] <= row["difference"] <= row["high"]
        assert row["difference"] == pytest.approx(row["r_first"] - row["r_second"], abs=1e-12)
        expected = "yes" if row["low"] > 0 else "no" if row["high"] < 0 else "not significant"
        assert row["verdict"] == expected, row["comparison"]
    for row in REPORT[part]["agreement"]:
        assert row["low"] <= row["r"] <= row["high"]


def test_the_model_mean_is_the_mean_of_mir_s_three_models() -> None:
    for row in REPORT["yelp_mir"]["agreement"]:
        assert row["r_model_mean"] == pytest.approx(np.mean([row["r_CAAE"], row["r_ARAE"], row["r_DAR"]]),
                                                    abs=1e-12)
