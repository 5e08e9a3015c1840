"""Onboarding a dataset (issue 12, item 6): joined ``--style`` files, ``--exclude`` counts, the swapped-labels
warning and non-numeric item ids, each through the command line as docs/scoring.md documents it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from badinput import NEGATIVE, POSITIVE, expect_error, run_cli, sentences
from conftest import run_cache

from tsteval.classifiers import training

WARNING = "tsteval: warning: "


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Style files, an extra positive file, and a tfidf-lr classifier trained on neg/pos through the CLI."""
    root = tmp_path_factory.mktemp("onboarding")
    (root / "neg.txt").write_text("\n".join(sentences(NEGATIVE, 0)) + "\n")
    (root / "pos.txt").write_text("\n".join(sentences(POSITIVE, 1)) + "\n")
    (root / "extra.txt").write_text("the food was superb .\nthe room was spotless .\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        from tsteval.cli.main import main

        assert main(["train-classifier", "tfidf-lr", "--style", f"neg={root / 'neg.txt'}", "--style",
                     f"pos={root / 'pos.txt'}", "--out", str(root / "clf"), "--quiet"]) == 0
    return root


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_a_repeated_style_joins_its_files_in_order(data: Path, tmp_path: Path, capsys,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = training.train_classifier
    monkeypatch.setattr(training, "train_classifier", lambda backend, corpus, *a, **k: (
        seen.append(corpus), real(backend, corpus, *a, **k))[1])
    outcome = run_cli(["train-classifier", "tfidf-lr", "--style", f"pos={data / 'pos.txt'}", "--style",
                       f"neg={data / 'neg.txt'}", "--style", f"pos={data / 'extra.txt'}", "--out", tmp_path / "m",
                       "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert outcome.out.splitlines()[0] == "--style pos: 2 files joined, 62 texts (60 + 2)"
    pos, neg, extra = lines(data / "pos.txt"), lines(data / "neg.txt"), lines(data / "extra.txt")
    assert seen[0].texts == pos + extra + neg
    assert seen[0].labels == ["pos"] * 62 + ["neg"] * 60


def test_a_repeated_classifier_or_hh_name_is_still_refused(data: Path, tmp_path: Path, capsys) -> None:
    for flag in ("--classifier", "--hh"):
        command = ["score", "--classifier", f"a={data / 'clf'}", "--pairs", data / "neg.txt", data / "pos.txt",
                   "--source-style", "neg", "--target-style", "pos", flag, f"a={data / 'clf'}", flag,
                   f"a={data / 'x'}", "--out", tmp_path / "run", "--quiet"]
        if flag == "--classifier":
            command[1:3] = []
        expect_error(command, capsys, f"{flag} names 'a' twice", f"give each {flag} a different NAME")


@pytest.mark.parametrize("command", ["train-classifier", "build-lexicon"])
def test_exclude_prints_how_many_training_texts_it_removed(command: str, data: Path, tmp_path: Path,
                                                          capsys) -> None:
    neg = lines(data / "neg.txt")
    doubled = tmp_path / "neg2.txt"
    doubled.write_text("\n".join(neg + neg[:3]) + "\n")  # three texts twice in the corpus
    exclude = tmp_path / "inputs.txt"
    exclude.write_text("\n".join([neg[0], neg[1], neg[2], neg[5], "not a training text ."]) + "\n")
    head = ["train-classifier", "tfidf-lr", "--quiet"] if command == "train-classifier" else ["build-lexicon"]
    out = tmp_path / ("m" if command == "train-classifier" else "lex.json")
    outcome = run_cli([*head, "--style", f"neg={doubled}", "--style", f"pos={data / 'pos.txt'}",
                       "--exclude", exclude, "--out", out], capsys)
    assert outcome.code == 0, outcome.err
    assert outcome.out.splitlines()[0] == f"--exclude {exclude}: removed 7 of 123 training texts (4 distinct)"
    assert WARNING not in outcome.err


@pytest.mark.parametrize("command", ["train-classifier", "build-lexicon"])
def test_exclude_that_matches_nothing_warns_only_of_near_matches(command: str, data: Path, tmp_path: Path,
                                                                 capsys) -> None:
    """Issue 56 item 5: an --exclude file of texts that are simply not in the corpus (a disjoint split) is no
    warning; lines that match a training text once case and spaces are ignored are, naming one of them."""
    neg = lines(data / "neg.txt")
    disjoint, mismatched = tmp_path / "disjoint.txt", tmp_path / "mismatched.txt"
    disjoint.write_text("The food was cold.\nThe staff was rude.\n")  # no training text, however tokenised
    retokenised = neg[3].capitalize().replace(" .", ".")  # "The ... was rude." for "the ... was rude ."
    mismatched.write_text(f"{retokenised}\nThe staff was rude.\n")
    head = ["train-classifier", "tfidf-lr", "--quiet"] if command == "train-classifier" else ["build-lexicon"]
    out = tmp_path / ("m" if command == "train-classifier" else "lex.json")
    style = ["--style", f"neg={data / 'neg.txt'}", "--style", f"pos={data / 'pos.txt'}"]
    outcome = run_cli([*head, *style, "--exclude", disjoint, "--out", out], capsys)
    assert outcome.code == 0, outcome.err
    assert WARNING not in outcome.err
    assert outcome.out.splitlines()[0] == f"--exclude {disjoint}: removed 0 of 120 training texts (0 distinct)"
    outcome = run_cli([*head, *style, "--exclude", mismatched, "--out", tmp_path / "again" / out.name], capsys)
    assert outcome.code == 0, outcome.err
    assert outcome.err.splitlines() == [
        f"{WARNING}--exclude {mismatched}: 1 of its 2 distinct lines match a training text only with case and spaces "
        f"ignored, e.g. {retokenised!r} ~ {neg[3]!r}, and are not removed (a tokenisation mismatch: tokenise and case "
        "both files alike)"]


def test_exclude_that_removes_everything_is_an_error(data: Path, tmp_path: Path, capsys) -> None:
    both = tmp_path / "both.txt"
    both.write_text((data / "neg.txt").read_text() + (data / "pos.txt").read_text())
    expect_error(["train-classifier", "tfidf-lr", "--style", f"neg={data / 'neg.txt'}", "--style",
                  f"pos={data / 'pos.txt'}", "--exclude", both, "--out", tmp_path / "m"], capsys,
                 f"--exclude {both} removes all 120 training texts")
    assert not (tmp_path / "m").exists()


SWAPPED = (f"{WARNING}style classifier 'c' assigns {{n}} of {{n}} inputs (100%) to their target style (warned when "
           "more than 50% of at least 20 inputs are): its style labels are probably swapped, or the source and "
           "target styles are given the wrong way round")


@pytest.mark.parametrize(("source", "target", "n", "warned"), [
    ("pos", "neg", 20, False),  # the right way round
    ("neg", "pos", 20, True),  # positive inputs called negative: the classifier sees them as the target style
    ("neg", "pos", 19, False),  # too few inputs for the rule
])
def test_a_classifier_that_calls_most_inputs_the_target_style_is_warned_about(
        source: str, target: str, n: int, warned: bool, data: Path, tmp_path: Path, capsys) -> None:
    inputs, outputs = tmp_path / "in.txt", tmp_path / "out.txt"
    inputs.write_text("\n".join(lines(data / "pos.txt")[:n]) + "\n")
    outputs.write_text("\n".join(lines(data / "neg.txt")[:n]) + "\n")
    outcome = run_cli(["score", "--classifier", f"c={data / 'clf'}", "--pairs", inputs, outputs, "--source-style",
                       source, "--target-style", target, "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    # the classifier was trained on these very files, which the leakage guard rightly reports; not this test's topic
    assert [line for line in outcome.err.splitlines()
            if line.startswith(WARNING) and not line.startswith(f"{WARNING}leakage:")] == \
        ([SWAPPED.format(n=n)] if warned else [])


def _table(path: Path, data: Path, items: list[object], system: str = "A") -> Path:
    neg, pos = lines(data / "neg.txt"), lines(data / "pos.txt")
    pd.DataFrame({"system": system, "item": items, "input": neg[:len(items)], "output": pos[:len(items)],
                  "source_style": "neg", "target_style": "pos"}).to_csv(path, index=False)
    return path


def test_string_item_ids_are_kept_and_everything_keyed_by_item_works(data: Path, tmp_path: Path, capsys) -> None:
    items = [f"negative-{i}" for i in range(6)]
    a = _table(tmp_path / "a.csv", data, items)
    b = _table(tmp_path / "b.csv", data, items[::-1])  # other ids for the same inputs: compare pairs by input
    for table, run in ((a, "ra"), (b, "rb")):
        outcome = run_cli(["score", "--classifier", f"c={data / 'clf'}", "--table", table, "--content", "bleu",
                           "--out", tmp_path / run, "--quiet"], capsys)
        assert outcome.code == 0, outcome.err
    card = pd.read_parquet(tmp_path / "ra" / "scorecard.parquet")
    assert card["item"].tolist() == items
    assert pd.read_csv(tmp_path / "ra" / "summary.csv")["n"].tolist()[0] == 6
    outcome = run_cli(["compare", tmp_path / "ra", tmp_path / "rb"], capsys)
    assert outcome.code == 0, outcome.err
    assert "6 rows matched (A has 6, B has 6)" in outcome.out


@pytest.mark.parametrize(("cells", "expected"), [
    (["007", "1", "2.0"], [7, 1, 2]),  # every id a whole number: integers, as before
    (["1", "x", "2"], ["1", "x", "2"]),  # one id is not: every id is text
    (["1.5", "2"], ["1.5", "2"]),
])
def test_item_ids_are_integers_only_when_every_id_is_one(cells: list[str], expected: list[object], data: Path,
                                                         tmp_path: Path, capsys) -> None:
    table = _table(tmp_path / "t.csv", data, cells)
    outcome = run_cli(["score", "--classifier", f"c={data / 'clf'}", "--table", table, "--out", tmp_path / "run",
                       "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert pd.read_parquet(tmp_path / "run" / "scorecard.parquet")["item"].tolist() == expected


def test_a_repeated_string_item_is_an_error(data: Path, tmp_path: Path, capsys) -> None:
    table = _table(tmp_path / "t.csv", data, ["x", "y", "x"])
    expect_error(["score", "--classifier", f"c={data / 'clf'}", "--table", table, "--out", tmp_path / "run"], capsys,
                 "item x appears twice for system 'A'")
