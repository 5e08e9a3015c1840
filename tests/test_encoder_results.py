"""The committed results of issue 42: the recipe and scoring-speed pages are their JSON rendered, their rates and
projections recomputed from the raw seconds; the case figures of Lai's outputs recomputed from the data with a
regular expression; the rated tables hold every style column of the new classifiers, each difference from the
baseline the difference of the committed correlations."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.speed import speed_style_encoder, transformer_recipe

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
NEW = ("transformer", "fasttext_transformer")
STYLE_METRICS = ("target_prob", "style_strength", "sti", "sti_norm")


def test_the_recipe_page_is_its_json_and_the_projections_follow_from_the_seconds() -> None:
    report = json.loads((RESULTS / "transformer_recipe.json").read_text())
    assert (RESULTS / "transformer_recipe.md").read_text() == transformer_recipe.markdown(report)
    rows = [r for run in report["runs"].values() for r in run.get("speed", [])]
    assert [r["step"] for r in rows][:4] == [s[0] for s in transformer_recipe.STEPS][:4]
    for row in rows:
        assert row["projected_minutes"] == pytest.approx(row["seconds_per_batch"] * 20_000 / 32 / 60, abs=0.01)


def test_the_accuracy_curves_follow_their_checkpoints() -> None:
    report = json.loads((RESULTS / "transformer_recipe.json").read_text())
    runs = [run for run in report["runs"].values() if run.get("curve")]
    assert runs and all(run["machine"]["torch_threads"] == 2 for run in runs)
    for run in runs:
        for curve in run["curve"]:
            points = curve["checkpoints"]
            assert curve["n_train"] == 20_000 and curve["train_seconds"] == points[-1]["train_seconds"]
            assert points[-1]["epochs"] == curve["params"].get("epochs", 1)
            assert all(a["train_seconds"] < b["train_seconds"] for a, b in zip(points, points[1:], strict=False))
        verdict = transformer_recipe.curve_verdict(run)
        assert verdict["best_accuracy"] == max(p["heldout_accuracy"] for c in run["curve"] for p in c["checkpoints"])
        for curve, row in zip(run["curve"], verdict["settings"], strict=True):
            first = next(p for p in curve["checkpoints"]
                         if round(100 * (verdict["best_accuracy"] - p["heldout_accuracy"]), 6) <= 1)
            assert row["first_within"]["minutes"] == round(first["train_seconds"] / 60, 2)


def test_the_scoring_speed_page_is_its_json_and_the_rates_follow_from_the_seconds() -> None:
    report = json.loads((RESULTS / "speed_style_encoder.json").read_text())
    assert (RESULTS / "speed_style_encoder.md").read_text() == speed_style_encoder.markdown(report)
    assert [r["classifier"] for r in report["rows"]] == ["fasttext", "transformer"]
    for row in report["rows"]:
        assert row["pairs"] == 10_000
        assert row["pairs_per_s"] == pytest.approx(row["pairs"] / row["seconds"], rel=1e-3)


@pytest.mark.parametrize("folder", ["meta_eval", "meta_eval_lm"])
@pytest.mark.parametrize("name", ["mir", "lai"])
def test_the_committed_tables_hold_the_encoder_columns_each_difference_recomputed(folder: str, name: str) -> None:
    directory = RESULTS / folder / name
    table, baseline = pd.read_csv(directory / "metaeval.csv"), pd.read_csv(directory / "baseline.csv")
    notes = json.loads((directory / "notes.json").read_text())
    update = notes.get("style_update")  # merged into a committed table (issue 42), or scored with the table itself
    if update is None:
        from tsteval.metaeval.rated.lm_subset import SUBSET_CLASSIFIERS

        assert folder == "meta_eval_lm", "every rated row's table had its encoder columns merged in"
        new, added = [c for c in SUBSET_CLASSIFIERS if c != "fasttext"], notes["metrics"]
    else:
        assert update["largest_difference"] <= 1e-9 and update["checked_columns"]
        new, added = [c for c in update["classifiers"] if c != "fasttext"], update["added"]
    sentence = table[(table["level"] == "sentence") & (table["method"] == "pearson")].set_index(["metric", "rating"])
    style = baseline[(baseline["aspect"] == "style") & (baseline["level"] == "sentence")
                     & (baseline["method"] == "pearson")]
    assert "transformer" in new and set(new) <= set(NEW)
    for classifier in new:
        for metric in STYLE_METRICS:
            column = f"{metric}@{classifier}"
            assert column in added
            row = style[style["metric"] == column].iloc[0]
            assert row["diff"] == pytest.approx(sentence.loc[(column, row["rating"]), "r"]
                                                - sentence.loc[(row["baseline"], row["rating"]), "r"], abs=1e-12)
    counts = pd.read_csv(directory / "counts.csv").set_index("rating")
    rating = style["rating"].iloc[0]
    assert counts.loc[rating, "metrics"] == table[table["rating"] == rating]["metric"].nunique()

