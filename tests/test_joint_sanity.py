"""Sound joint scores: strict thresholds, the warning when the fluency factor's human text is the inputs, and the
sanity check that flags a leaderboard where ``baseline:copy`` outranks a real system (issue 23, item 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.cli.main import main
from tsteval.core.errors import TstevalError
from tsteval.core.records import Transfers
from tsteval.metrics.joint.score import (
    Component,
    JointRecipe,
    fluency_warning,
    leaderboard,
    sanity_notes,
    score_joint,
    strap_recipe,
    write_leaderboard,
)
from tsteval.scorecard import Scorecard

ADVERSARIAL_INPUTS = ("metric:adv_naturalness|clf:unigram|params:x|human:inputs|corpus:none|k:5|seed:0|"
                      "per:system+setting")


def _card(naturalness_signature: str = ADVERSARIAL_INPUTS) -> Scorecard:
    """A system and the copy baseline on four inputs of one direction: the copy's naturalness is exactly 0.5 (the
    adversarial classifier cannot tell an input from itself), its content 1 and its style right on half the rows."""
    inputs = ["a b", "c d", "e f", "g h"]
    rows = pd.concat([
        pd.DataFrame({"system": "mine", "setting": "d", "item": range(4), "input": inputs,
                      "output": ["w x", "y z", "u v", "s t"]}),
        pd.DataFrame({"system": "baseline:copy", "setting": "baseline", "item": range(4), "input": inputs,
                      "output": inputs}),
    ], ignore_index=True).assign(source_style="0", target_style="1")
    card = Scorecard.from_transfers(Transfers(rows))
    card.add("target_acc@ft", [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0], "metric:target_acc|clf:ft")
    card.add("sbert@none", [0.4, 0.2, 0.9, 0.1, 1.0, 1.0, 1.0, 1.0], "metric:sbert|mod:none")
    card.add("naturalness@unigram", [0.6, 0.7, 0.2, 0.9, 0.5, 0.5, 0.5, 0.5], naturalness_signature)
    return card


@pytest.mark.parametrize(("text", "operator"), [("naturalness@unigram>0.5", ">"), ("ppl@kn3<200", "<"),
                                                ("ppl@kn3 <= 200", "<="), ("naturalness@unigram >= 0.5", ">=")])
def test_component_parses_strict_and_inclusive_thresholds(text: str, operator: str) -> None:
    component = Component.parse(text)
    assert component.operator == operator and str(component) == re.sub(r"\s", "", text)


def test_strict_threshold_fails_a_tie_and_inclusive_passes_it() -> None:
    card = _card()
    values = card.frame["naturalness@unigram"].to_numpy()
    assert Component.parse("naturalness@unigram>0.5").values(card).tolist() == (values > 0.5).astype(float).tolist()
    assert Component.parse("naturalness@unigram>=0.5").values(card)[4:].tolist() == [1.0] * 4
    card.add("ppl@kn3", [100.0, 200.0, 300.0, 50.0, 1, 1, 1, 1], "metric:ppl|lm:kn3")
    assert Component.parse("ppl@kn3<200").values(card)[:4].tolist() == [1.0, 0.0, 0.0, 1.0]
    with pytest.raises(TstevalError, match=re.escape("indicator is ppl@kn3<=T or ppl@kn3<T")):
        Component.parse("ppl@kn3>200").values(card)
    with pytest.raises(TstevalError, match=re.escape("indicator is naturalness@unigram>=T or naturalness@unigram>T")):
        Component.parse("naturalness@unigram<0.5").values(card)


def test_copy_never_passes_strap_fluency_by_a_tie() -> None:
    card = _card()
    recipe = strap_recipe(card, ["ft"])
    assert str(recipe.fluency) == "naturalness@unigram>0.5"
    score_joint(card, recipe)
    copy = card.frame[card.frame["system"] == "baseline:copy"]
    assert (copy["naturalness@unigram"] == 0.5).all() and (copy["joint@strap"] == 0.0).all()
    board = leaderboard(card, recipe, n_resamples=50)
    assert board.set_index("system").loc["baseline:copy", "fluency"] == 0.0
    assert board["system"].tolist() == ["mine", "baseline:copy"] and not board["copy_above"].any()
    assert sanity_notes(board) == []


def test_fluency_warning_names_the_inputs_as_human_text() -> None:
    recipe = strap_recipe(_card(), ["ft"])
    warning = fluency_warning(_card(), recipe)
    assert warning.startswith("J's fluency factor treats the inputs as the human text: give --human FILE "
                              "(manifest metrics.human)")
    corpus = ADVERSARIAL_INPUTS.replace("human:inputs|corpus:none", "human:corpus|corpus:abc")
    assert fluency_warning(_card(corpus), recipe) is None


def test_copy_above_a_system_is_said_in_the_leaderboard_files(tmp_path: Path) -> None:
    card = _card()
    recipe = JointRecipe.parse("tie=target_acc@ft,sbert@none,naturalness@unigram>=0.5")  # the old, unsound FL
    score_joint(card, recipe)
    board = leaderboard(card, recipe, n_resamples=50)
    # recomputed by hand: mine = mean(1 x .4 x 1, 1 x .2 x 1, 0, 1 x .1 x 1) = .175; copy = mean(1, 0, 1, 0) = .5
    mine = board.set_index("system").loc["mine"]
    assert mine["J"] == pytest.approx((0.4 + 0.2 + 0.1) / 4) and mine["rank"] == 2 and mine["copy_above"]
    assert board.set_index("system").loc["baseline:copy", "J"] == pytest.approx(0.5)
    notes = sanity_notes(board)
    assert notes == ["sanity: 0 → 1: baseline:copy (the unchanged input) ranks 1 of 2 by J, above 1 system(s) "
                     "(mine): this J rewards not transferring"]
    (tmp_path / "summary.md").write_text("# summary\n")
    write_leaderboard(tmp_path, board, recipe, [fluency_warning(card, recipe)])
    text = (tmp_path / "leaderboard.md").read_text()
    assert "baseline:copy (the unchanged input) ranks 1 of 2 by J" in text
    assert "J's fluency factor treats the inputs as the human text" in text
    assert text.split("**Warning:**")[0].strip() in (tmp_path / "summary.md").read_text()  # its notes carry them
    assert "### 0 → 1" in (tmp_path / "summary.md").read_text()
    csv = pd.read_csv(tmp_path / "leaderboard.csv").set_index("system")
    assert csv["copy_above"].to_dict() == {"baseline:copy": False, "mine": True}


def _write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_score_cli_prints_the_copy_line_and_the_number_recomputes(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    from tsteval.classifiers.base import make_classifier

    negative = [f"the {w} was bad and rude" for w in ("food", "service", "room", "staff", "bread", "wine")]
    positive = [f"the {w} was great and kind" for w in ("food", "service", "room", "staff", "bread", "wine")]
    make_classifier("tfidf-lr").fit(negative + positive, ["0"] * 6 + ["1"] * 6).save(tmp_path / "clf")
    # inputs of style 0, half of which the classifier takes for style 1: the copy gets half its style right
    inputs = ["the soup was bad", "the tea was rude", "the soup was great", "the tea was kind"]
    _write_lines(tmp_path / "in.txt", inputs)
    _write_lines(tmp_path / "out.txt", ["zq one", "zq two", "zq three", "zq four"])
    args = ["score", "--classifier", f"ft={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
            str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--system", "mine",
            "--content", "chrf", "--naturalness", "kn3", "--baselines", "copy",
            "--joint", "target_acc@ft,chrf@none,ppl@kn3<=1e9", "--out", str(tmp_path / "run")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    line = "warning: sanity: 0 → 1: baseline:copy (the unchanged input) ranks 1 of 2 by J, above 1 system(s) (mine)"
    assert line in printed
    assert "baseline:copy (the unchanged input) ranks 1 of 2" in (tmp_path / "run" / "leaderboard.md").read_text()
    notes = (tmp_path / "run" / "summary.md").read_text().split("| system |")[0]  # the Notes above the tables
    assert "baseline:copy (the unchanged input) ranks 1 of 2" in notes
    assert any("ranks 1 of 2 by J" in n for n in json.loads((tmp_path / "run" / "notices.json").read_text()))
    card = pd.read_csv(tmp_path / "run" / "scorecard.csv")
    copy = card[card["system"] == "baseline:copy"]
    expected = np.mean(copy["target_acc@ft"] * copy["chrf@none"] / 100 * (copy["ppl@kn3"] <= 1e9))
    board = pd.read_csv(tmp_path / "run" / "leaderboard.csv").set_index("system")
    assert board.loc["baseline:copy", "J"] == pytest.approx(expected) and expected > 0
    assert board.loc["mine", "copy_above"] and not board.loc["baseline:copy", "copy_above"]


def test_recommended_metrics_with_the_copy_baseline_give_a_leaderboard_where_the_copy_is_last(tmp_path: Path) -> None:
    """``--metrics recommended:formality --baselines copy`` (docs/meta-evaluation.md's ranking command; the formality
    family's naturalness column is Gemma's, where the pooled profile's needs Qwen's 6 GB: tests/test_qwen.py) scores
    J's content and fluency factors with the profile, so the leaderboard exists, and each system's J recomputes from
    the scorecard; the copy, which never reaches the target style, is last."""
    from tsteval.classifiers.base import make_classifier

    words = ("food", "service", "room", "staff", "bread", "wine", "soup", "tea", "beer", "cake")
    negative = [f"the {w} was bad and rude" for w in words]
    positive = [f"the {w} was great and kind" for w in words]
    make_classifier("tfidf-lr").fit(negative + positive, ["0"] * 10 + ["1"] * 10).save(tmp_path / "clf")
    inputs = [f"the {w} was {a} today" for w in words for a in ("bad", "rude")]
    ends = ("today", "again")
    outputs = [f"the {w} was {a} {ends[i % 2]}" for i, w in enumerate(words) for a in ("great", "kind")]
    human = [f"the {w} was {a} {ends[(i + 1) % 2]}" for i, w in enumerate(words) for a in ("great", "kind", "bad")]
    for name, lines in (("in.txt", inputs), ("out.txt", outputs), ("human.txt", human)):
        _write_lines(tmp_path / name, lines)
    assert main(["score", "--classifier", f"ft={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
                 str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--system", "mine",
                 "--style-labels", "0=negative,1=positive", "--metrics", "recommended:formality", "--baselines", "copy",
                 "--human", str(tmp_path / "human.txt"), "--quiet", "--out", str(tmp_path / "run")]) == 0
    card = pd.read_csv(tmp_path / "run" / "scorecard.csv")
    from tsteval.metaeval.recommended import recommended_profile

    assert {*(r.column("ft") for r in recommended_profile("formality")), "naturalness@unigram"} <= set(card.columns)
    assert "slor@gemma3-270m" in card.columns  # the profile's naturalness column sets the run's LM to Gemma
    board = pd.read_csv(tmp_path / "run" / "leaderboard.csv").set_index("system")
    for system, rank in (("mine", 1), ("baseline:copy", 2)):
        rows = card[card["system"] == system]
        expected = np.mean(rows["target_acc@ft"] * rows["sbert@none"].clip(lower=0)
                           * (rows["naturalness@unigram"] > 0.5))
        assert board.loc[system, "J"] == pytest.approx(expected) and board.loc[system, "rank"] == rank
    assert board.loc["mine", "J"] > 0 and board.loc["baseline:copy", "J"] == 0
    assert "negative → positive" in (tmp_path / "run" / "leaderboard.md").read_text()
