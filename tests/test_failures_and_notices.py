"""A system's failure is scored and every warning reaches what users read (issue 56, items 3 and 4): an empty or
whitespace-only output is scored under one policy (style as not transferred, content 0, naturalness at its worst,
J 0) and counted per system; a multi-line text in a table is one text; the leakage, swapped-style, copy-rank and
empty-output lines are in summary.md, leaderboard.md, report.md/.html, the explorer and notices.json."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

import tsteval
from tsteval.classifiers.base import make_classifier
from tsteval.cli.main import main
from tsteval.core.errors import InputError
from tsteval.experiment.report.explorer import read_explorer_data
from tsteval.experiment.run.runner import run_experiment

NEGATIVE = [f"the {w} was bad and rude" for w in ("food", "service", "room", "staff", "bread", "wine")]
POSITIVE = [f"the {w} was great and kind" for w in ("food", "service", "room", "staff", "bread", "wine")]
INPUTS = ["the soup was bad", "the tea was rude", "the cake was bad", "the fish was rude"]
OUTPUTS = ["the soup was great", "", "   ", "the fish was kind"]


@pytest.fixture()
def saved(tmp_path: Path) -> Path:
    return make_classifier("tfidf-lr").fit(NEGATIVE + POSITIVE, ["0"] * 6 + ["1"] * 6).save(tmp_path / "clf")


def _lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _check_failures_scored(frame: pd.DataFrame, classifier: object) -> None:
    """The policy, recomputed: content 0 on the failed rows, style as the classifier reads the input, ppl the worst
    (largest) of the answered rows, J 0."""
    bad = frame["output"].str.strip() == ""
    assert bad.sum() == 2
    assert (frame.loc[bad, ["bleu@none", "chrf@none"]] == 0).all().all()
    assert (frame.loc[~bad, "chrf@none"] > 0).all()
    p_input = classifier.predict_proba(frame.loc[bad, "input"].tolist())[:, list(classifier.classes_).index("1")]
    assert frame.loc[bad, "target_prob@ft"].to_numpy() == pytest.approx(p_input)
    assert (frame.loc[bad, "sti@ft"] == 0).all()
    assert (frame.loc[bad, "ppl@kn3"] == frame.loc[~bad, "ppl@kn3"].max()).all()
    assert (frame.loc[bad, "lp_mean@kn3"] == frame.loc[~bad, "lp_mean@kn3"].min()).all()
    if "joint@custom" in frame:
        assert (frame.loc[bad, "joint@custom"] == 0).all()


def test_score_cli_scores_empty_outputs_counts_them_and_says_so(saved: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    from tsteval.classifiers.base import load_classifier

    args = ["score", "--classifier", f"ft={saved}", "--pairs", str(_lines(tmp_path / "in.txt", INPUTS)),
            str(_lines(tmp_path / "out.txt", OUTPUTS)), "--source-style", "0", "--target-style", "1",
            "--system", "mine", "--content", "bleu,chrf", "--naturalness", "kn3",
            "--joint", "target_acc@ft,chrf@none,ppl@kn3<=1e9", "--out", str(tmp_path / "run"), "--quiet"]
    assert main(args) == 0
    line = ("empty outputs (a system's failure, scored: style as not transferred, content 0, every other metric its "
            "worst, J 0): mine 2 of 4")
    assert line in capsys.readouterr().err
    run = tmp_path / "run"
    _check_failures_scored(pd.read_csv(run / "scorecard.csv", keep_default_na=False, na_values=[]),
                           load_classifier(saved))
    assert json.loads((run / "notices.json").read_text()) == [line]
    summary = pd.read_csv(run / "summary.csv")
    assert set(summary["n_empty"]) == {2} and set(summary["n"]) == {4}
    for name in ("summary.md", "leaderboard.md"):
        text = (run / name).read_text()
        assert "n\\_empty" in text and line.split(":")[0] in text
    board = pd.read_csv(run / "leaderboard.csv")
    assert board["n_empty"].tolist() == [2]


def test_evaluate_scores_empty_outputs_and_an_empty_input_is_one_error(saved: Path) -> None:
    from tsteval.classifiers.base import load_classifier

    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="0", target_style="1",
                            metrics=["sti", "bleu", "chrf", "ppl"],
                            classifier={"ft": str(saved)}, joint="target_acc@ft,chrf@none,ppl@kn3<=1e9")
    _check_failures_scored(card.frame, load_classifier(saved))
    empty = int(card.frame["output"].str.strip().eq("").sum())
    assert [n for n in card.notices if n.startswith("empty outputs")] == [
        f"empty outputs (a system's failure, scored: style as not transferred, content 0, every other metric its "
        f"worst, J 0): system {empty:,} of {len(card.frame):,}"]  # the API's card carries what the files say
    with pytest.raises(InputError, match="input 2 is empty"):
        tsteval.evaluate(["a b", " "], ["c d", "e f"], source_style="0", target_style="1", metrics=["bleu"])


def test_csv_with_a_multi_line_answer_is_one_text_scored(tmp_path: Path) -> None:
    answer = "Here is the detoxified text:\n\nThere are better ways to say it."
    with open(tmp_path / "transfers.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["input", "output", "source_style", "target_style"])
        writer.writerows([["you are an idiot", answer, "toxic", "neutral"],
                          ["shut up already", "please stop", "toxic", "neutral"],
                          ["what a stupid idea", "", "toxic", "neutral"]])
    assert main(["score", "--table", str(tmp_path / "transfers.csv"), "--content", "chrf", "--out",
                 str(tmp_path / "run"), "--quiet"]) == 0
    frame = pd.read_parquet(tmp_path / "run" / "scorecard.parquet")
    assert frame["output"].tolist() == [answer, "please stop", ""]
    assert frame["chrf@none"].iloc[0] > 0 and frame["chrf@none"].iloc[2] == 0


def _leaky_manifest(tmp_path: Path, outputs: list[str]) -> Path:
    """A manifest run whose references are in the classifier's training texts: 3 of the 4 references are corpus
    texts (and none of the outputs is)."""
    _lines(tmp_path / "neg.txt", NEGATIVE)
    _lines(tmp_path / "pos.txt", POSITIVE)
    pd.DataFrame({"input": INPUTS, "output": outputs, "source_style": "0", "target_style": "1",
                  "system": "mine"}).to_csv(tmp_path / "t.csv", index=False)
    _lines(tmp_path / "refs.txt", [POSITIVE[0], POSITIVE[1], "the cake was nice", POSITIVE[4]])
    (tmp_path / "m.yaml").write_text(
        "name: leaky\ntransfers: {table: t.csv}\n"
        "corpus: {style: {\"0\": neg.txt, \"1\": pos.txt}, exclude_inputs: false}\n"
        "classifiers: {lr: {backend: tfidf-lr, heldout: 0}}\n"
        "metrics: {style: {classifiers: [lr]}, content: {metrics: [chrf], references: [refs.txt]}, "
        "naturalness: [kn3]}\n"
        "joint: {style: target_acc@lr, content: chrf@none, fluency: ppl@kn3<=1e9}\n"
        "report: {worst_examples: 1, bootstrap_resamples: 20}\n", encoding="utf-8")
    return tmp_path / "m.yaml"


@pytest.mark.parametrize("outputs", [OUTPUTS, ["the soup was fine", "the tea was nice", "the cake was ok",
                                                "the fish was kind"]], ids=["two-empty", "none-empty"])
def test_manifest_leakage_and_empty_outputs_reach_every_page(tmp_path: Path, outputs: list[str]) -> None:
    import html

    out = tmp_path / "run"
    run_experiment(_leaky_manifest(tmp_path, outputs), out=out, quiet=True)
    references = (tmp_path / "refs.txt").read_text().splitlines()
    found = sum(r in set(NEGATIVE + POSITIVE) for r in set(references))  # recomputed: distinct references trained on
    assert found == 3
    leak = f"leakage: {found} of {len(set(references))} references are in the training texts of classifier lr"
    n_empty = sum(not o.strip() for o in outputs)
    empty = f"empty outputs (a system's failure, scored: style as not transferred, content 0, every other metric " \
            f"its worst, J 0): mine {n_empty} of 4"
    pages = {name: (out / name).read_text(encoding="utf-8")
             for name in ("summary.md", "leaderboard.md", "report.md", "report.html")}
    for name, text in pages.items():
        shown = html.unescape(text) if name.endswith(".html") else text.replace("\\", "")
        assert leak in shown and (empty in shown) == bool(n_empty), name
    data = read_explorer_data(out / "explorer.html")
    assert leak in data["notices"] and data["empty_outputs"] == {"mine": n_empty}
    run = json.loads((out / "run.json").read_text())
    assert run["empty_outputs"] == {"mine": n_empty} and leak in run["notices"]
    assert json.loads((out / "notices.json").read_text()) == run["notices"]
    assert (f"mine {n_empty}" if n_empty else "J 0): none") in pages["report.md"].replace("\\", "")
    card = pd.read_parquet(out / "scorecard.parquet")
    assert (card.loc[card["output"].str.strip() == "", "chrf@ref"] == 0).all()


def test_jsonl_and_parquet_keep_line_breaks_and_empty_outputs_and_name_a_missing_one(tmp_path: Path) -> None:
    from tsteval.readers.tables import load_table_transfers

    rows = [{"input": "you are an idiot", "output": "Here is the text:\n\nThere are better words.",
             "source_style": "toxic", "target_style": "neutral"},
            {"input": "shut up", "output": "", "source_style": "toxic", "target_style": "neutral"}]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    frame = load_table_transfers(tmp_path / "t.jsonl").frame
    assert frame["output"].tolist() == [rows[0]["output"], ""]
    pd.DataFrame(rows).to_parquet(tmp_path / "t.parquet")
    assert load_table_transfers(tmp_path / "t.parquet").frame["output"].tolist() == [rows[0]["output"], ""]
    (tmp_path / "null.jsonl").write_text(json.dumps({**rows[1], "output": None}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"null.jsonl:1: row 1: the output \('output'\) is missing .*empty output"):
        load_table_transfers(tmp_path / "null.jsonl")


def test_swapped_styles_line_reaches_the_summary(saved: Path, tmp_path: Path) -> None:
    inputs = [f"the {w} {n} was bad and rude" for w in ("food", "room", "staff", "wine", "tea") for n in range(5)]
    args = ["score", "--classifier", f"ft={saved}", "--pairs", str(_lines(tmp_path / "in.txt", inputs)),
            str(_lines(tmp_path / "out.txt", [t.replace("bad and rude", "fine") for t in inputs])),
            "--source-style", "1", "--target-style", "0", "--out", str(tmp_path / "run"), "--quiet"]
    assert main(args) == 0
    notices = json.loads((tmp_path / "run" / "notices.json").read_text())
    swapped = next(line for line in notices if "its style labels are probably swapped" in line)
    assert swapped.startswith("style classifier 'ft' assigns 25 of 25 inputs (100%) to their target style")
    assert "probably swapped" in (tmp_path / "run" / "summary.md").read_text()


def test_score_json_carries_the_notices_and_the_empty_counts(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["score", "--pairs", str(_lines(tmp_path / "in.txt", INPUTS)), str(_lines(tmp_path / "out.txt", OUTPUTS)),
            "--source-style", "0", "--target-style", "1", "--content", "chrf", "--out", str(tmp_path / "run"),
            "--format", "json"]
    assert main(args) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["notices"] == json.loads((tmp_path / "run" / "notices.json").read_text())
    assert printed["notices"][0].endswith("system 2 of 4")
    assert [row["n_empty"] for row in printed["summary"]] == [2]


def test_run_json_carries_the_cards_notices(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``tsteval run --format json`` prints the notices the run wrote (the card's, as ``notices.json`` keeps them)."""
    manifest = _leaky_manifest(tmp_path, OUTPUTS)
    assert main(["run", str(manifest), "--out", str(tmp_path / "run"), "--format", "json", "--quiet"]) == 0
    printed = json.loads(capsys.readouterr().out)
    kept = json.loads((tmp_path / "run" / "notices.json").read_text())
    assert printed["notices"] == kept and any(line.startswith("leakage: 3 of") for line in kept)
    assert any(line.startswith("empty outputs") and line.endswith("mine 2 of 4") for line in kept)
