"""Directions named by style: the readers' label meanings checked against the texts, and every file and table a
user reads (summary, leaderboard and its sanity line, tradeoff points, explorer, compare) saying
``negative → positive`` where the classifiers say ``0 → 1``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tsteval.classifiers.base import make_classifier
from tsteval.cli.main import main
from tsteval.core.records import Transfers
from tsteval.core.styles import direction_labels, style_names, with_style_names
from tsteval.experiment.compare.significance import choose_direction
from tsteval.experiment.compare.tradeoff import direction_tradeoffs
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.report.explorer import explorer_data
from tsteval.experiment.run.execute import execute
from tsteval.metrics.joint.score import JointRecipe, leaderboard, leaderboard_tables, sanity_notes, score_joint
from tsteval.readers.dualrl import load_dualrl

NEGATIVE = ["the food was bad", "the staff was rude", "the room was dirty", "the wine was awful"]
POSITIVE = ["the food was great", "the staff was kind", "the room was clean", "the wine was lovely"]


def test_the_readers_label_meanings_match_the_texts() -> None:
    gyafc = load_dualrl("GYAFC", systems=["Human1"])
    assert "style_labels" not in gyafc.extra  # labelled by the styles' names, as a formality corpus is
    assert set(gyafc.frame["source_style"]) == set(gyafc.frame["target_style"]) == {"formal", "informal"}
    frame = gyafc.frame.set_index("input")
    # a formal input (test.0) becomes an informal human rewrite: the files ending in 0 are the formal side
    formal = "let us purchase coffee and converse and proceed from that point !"
    assert frame.loc[formal, "source_style"] == "formal" and "starbucks" in frame.loc[formal, "output"]
    yelp = load_dualrl("yelp", systems=["Human0"])
    assert yelp.extra["style_labels"] == {"0": "negative", "1": "positive"}
    worse = yelp.frame.set_index("input").loc["ever since joes has changed hands it 's just gotten worse and worse ."]
    assert worse["source_style"] == "0" and "better" in worse["output"]


def _card():
    rows = [{"system": system, "setting": "default", "item": k + offset, "input": i, "output": o,
             "source_style": s, "target_style": t}
            for system, swap in (("good", True), ("baseline:copy", False))
            for s, t, offset, ins, outs in (("0", "1", 0, NEGATIVE, POSITIVE), ("1", "0", 4, POSITIVE, NEGATIVE))
            for k, (i, o) in enumerate(zip(ins, outs if swap else ins, strict=True))]
    transfers = Transfers(pd.DataFrame(rows), "<toy>", extra={"style_labels": {"0": "negative", "1": "positive"}})
    clf = make_classifier("tfidf-lr").fit(NEGATIVE + POSITIVE, ["0"] * 4 + ["1"] * 4)
    return execute(Plan(transfers, classifiers={"lr": clf}, content=("chrf",), naturalness=("kn3",))).card


def test_scorecard_summary_leaderboard_tradeoff_and_explorer_name_the_styles() -> None:
    card = _card()
    assert style_names(card.frame) == {"0": "negative", "1": "positive"}
    summary = card.summary(n_resamples=20)
    assert set(zip(summary["source_style"], summary["source_name"], strict=True)) == {("0", "negative"),
                                                                                       ("1", "positive")}
    from tsteval.scorecard import wide_summary

    assert set(wide_summary(summary)["direction"]) == {"negative → positive", "positive → negative"}
    recipe = JointRecipe.parse("j=target_acc@lr,chrf@none,ppl@kn3<=1e9")
    score_joint(card, recipe)
    board = leaderboard(card, recipe, n_resamples=20)
    assert [title for title, _ in leaderboard_tables(board, recipe)] == ["negative → positive",
                                                                         "positive → negative"]
    # recomputed: in each direction "good" gets J = mean(target_acc x chrF/100) over its own rows
    good = card.frame[(card.frame["system"] == "good") & (card.frame["source_style"] == "0")]
    expected = (good["target_acc@lr"] * good["chrf@none"] / 100).mean()
    row = board[(board["system"] == "good") & (board["direction"] == "negative → positive")]
    assert row["J"].item() == pytest.approx(expected)
    copy_first = board.assign(J=board["system"].map({"good": 0.1, "baseline:copy": 0.9}))
    copy_first["rank"] = [2, 1, 2, 1] if board["system"].iloc[0] == "good" else [1, 2, 1, 2]
    assert all(note.startswith(("sanity: negative → positive:", "sanity: positive → negative:"))
               for note in sanity_notes(copy_first)) and len(sanity_notes(copy_first)) == 2
    curves = direction_tradeoffs(card.frame, "target_prob@lr", "chrf@none", "Content preservation", n_resamples=20)
    assert [t.direction for t in curves] == ["negative → positive", "positive → negative"]
    pooled = card.frame.groupby("system")["chrf@none"].mean()
    per_direction = curves[0].points.set_index("system")["y"]
    assert per_direction["good"] == pytest.approx(good["chrf@none"].mean()) != pytest.approx(pooled["good"])
    data = explorer_data(card, title="t")
    assert set(data["rows"]["direction"]) == {"negative → positive", "positive → negative"}
    assert choose_direction(card, "negative->positive") == choose_direction(card, "0->1") == [("0", "1")]


def test_the_cli_names_directions_in_files_and_on_the_terminal(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    make_classifier("tfidf-lr").fit(NEGATIVE + POSITIVE, ["0"] * 4 + ["1"] * 4).save(tmp_path / "clf")
    (tmp_path / "in.txt").write_text("\n".join(NEGATIVE) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(POSITIVE) + "\n")
    run = tmp_path / "run"
    assert main(["score", "--classifier", f"lr={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
                 str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--content", "chrf",
                 "--style-labels", "0=negative,1=positive", "--baselines", "copy", "--out", str(run)]) == 0
    assert "negative → positive" in capsys.readouterr().out
    assert "negative → positive" in (run / "summary.md").read_text(encoding="utf-8")
    summary = pd.read_csv(run / "summary.csv", dtype=str)
    assert set(summary["target_name"]) == {"positive"}
    assert main(["compare", str(run), "--systems", "baseline:copy", "system", "--direction", "negative->positive",
                 "--metrics", "chrf@none", "--format", "json"]) == 0
    parts = json.loads(capsys.readouterr().out)["directions"]
    assert [p["direction"] for p in parts] == ["negative → positive"]


def test_a_frame_without_names_shows_labels() -> None:
    frame = pd.DataFrame({"source_style": ["0"], "target_style": ["1"]})
    assert direction_labels(frame).tolist() == ["0 → 1"]
    assert direction_labels(with_style_names(frame, {"1": "formal"}.get)).tolist() == ["0 → formal"]
