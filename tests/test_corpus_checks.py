"""Corpora whose styles cannot be told apart (GitHub issue 8, item 5): refused, warned about, flagged at chance.

The catalogue cases run ``tsteval train-classifier`` and ``tsteval build-lexicon`` as docs/scoring.md documents them.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from badinput import expect_error, run_cli

from tsteval.classifiers import corpus_checks
from tsteval.classifiers.corpus_checks import chance_warning, check_above_chance, check_styles_separable
from tsteval.classifiers.training import train_classifier
from tsteval.core.errors import InputError
from tsteval.core.records import Corpus

SYNTHETIC = ["the soup was cold .", "our waiter never came back .", "the rice was dry .", "we waited an hour ."]
REFUSAL = ("4 of 4 texts appear under several styles, e.g. 'the soup was cold .' (neg, pos); a classifier cannot "
           "learn these styles (fix: give every text one style; check that no style file is a copy of another)")


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def argv(command: str, neg: Path, pos: Path, out: Path) -> list[object]:
    """``tsteval COMMAND`` on the two style files, as docs/scoring.md writes it."""
    head = ["train-classifier", "tfidf-lr"] if command == "train-classifier" else ["build-lexicon"]
    tail = ["--out", out] if command == "train-classifier" else ["--out", out.with_suffix(".json")]
    return [*head, "--style", f"neg={neg}", "--style", f"pos={pos}", *tail]


def test_docstring_examples_hold() -> None:
    assert doctest.testmod(corpus_checks).failed == 0


@pytest.mark.parametrize("command", ["train-classifier", "build-lexicon"])
def test_identical_texts_under_two_styles_are_refused(command: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    neg = write(tmp_path / "neg.txt", SYNTHETIC[:2])
    pos = write(tmp_path / "pos.txt", SYNTHETIC[:2])
    outcome = expect_error(argv(command, neg, pos, tmp_path / "out"), capsys)
    assert outcome.error == f"{tmp_path.resolve()}: {REFUSAL}"
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.json").exists()


def test_a_majority_of_shared_texts_is_refused() -> None:
    corpus = Corpus([*SYNTHETIC[:2], *SYNTHETIC[:2], "the staff was lovely ."], ["neg"] * 2 + ["pos"] * 3, "x.csv")
    with pytest.raises(InputError, match=r"^x\.csv: 4 of 5 texts appear under several styles, e\.g\. 'the soup"):
        check_styles_separable(corpus)


def test_half_shared_is_a_warning(capsys: pytest.CaptureFixture) -> None:
    corpus = Corpus([SYNTHETIC[0], SYNTHETIC[0], "great pho .", "rude staff ."], ["pos", "neg", "pos", "neg"], "c")
    check_styles_separable(corpus)
    assert capsys.readouterr().err.startswith("tsteval: warning: c: 2 of 4 texts appear under several styles")


@pytest.fixture
def yelp_files(tmp_path: Path, yelp_slice: tuple[list[str], list[str]]) -> tuple[Path, Path, list[str]]:
    """400 real Yelp sentences per sentiment plus the same 3 sentences in both files."""
    texts, labels = yelp_slice
    neg = [t for t, label in zip(texts, labels, strict=True) if label == "0"][:400]
    pos = [t for t, label in zip(texts, labels, strict=True) if label == "1"][:400]
    shared = ["the place is ok .", "we will see .", "it was lunch time ."]
    return write(tmp_path / "neg.txt", neg + shared), write(tmp_path / "pos.txt", pos + shared), shared


@pytest.mark.parametrize("command", ["train-classifier", "build-lexicon"])
def test_a_minority_of_shared_texts_is_kept_with_a_warning(command: str, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                           yelp_files: tuple[Path, Path, list[str]]) -> None:
    neg, pos, shared = yelp_files
    outcome = run_cli(argv(command, neg, pos, tmp_path / "out"), capsys)
    assert outcome.code == 0, outcome.err
    warnings = [line for line in outcome.err.splitlines() if line.startswith("tsteval: warning: ")]
    assert warnings == [f"tsteval: warning: {tmp_path.resolve()}: 6 of 806 texts appear under several styles, "
                        f"e.g. '{shared[0]}' (neg, pos); they are kept, and no classifier can be right on all of them"]


def test_near_chance_heldout_accuracy_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                   yelp_slice: tuple[list[str], list[str]]) -> None:
    # Both "styles" hold negative and positive sentences alike, so nothing tells them apart.
    texts, _ = yelp_slice
    a, b = write(tmp_path / "a.txt", texts[:300]), write(tmp_path / "b.txt", texts[300:600])
    command = ["train-classifier", "tfidf-lr", "--style", f"a={a}", "--style", f"b={b}", "--heldout", "0.3"]
    for out in ("first", "cached"):  # a cache hit warns too
        outcome = run_cli([*command, "--out", tmp_path / out], capsys)
        assert outcome.code == 0, outcome.err
        warnings = [line for line in outcome.err.splitlines() if "held-out accuracy" in line]
        assert len(warnings) == 1, outcome.err
        assert warnings[0].startswith(f"tsteval: warning: {tmp_path.resolve()}: held-out accuracy 0.")
        assert "(n=180) is not significantly above chance 0.500 (the largest style's share" in warnings[0]


def test_learned_styles_give_no_warning(capsys: pytest.CaptureFixture, yelp_slice: tuple[list[str], list[str]]) -> None:
    texts, labels = yelp_slice
    trained = train_classifier("tfidf-lr", Corpus(texts[:800], labels[:800], "yelp"), heldout=0.2)
    assert trained.report["accuracy"] > 0.7
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(("accuracy", "n_heldout", "labels", "chance"), [
    (0.9, 10, ["a", "b"], "0.500"),  # 9 of 10: p = 0.011, too few held-out texts to tell
    (0.9, 1000, ["a"] * 9 + ["b"], "0.900"),  # always answering "a" does as well
])
def test_chance_is_the_largest_share_and_needs_significance(accuracy: float, n_heldout: int, labels: list[str],
                                                             chance: str) -> None:
    message = chance_warning(accuracy, n_heldout, labels)
    assert message is not None and f"not significantly above chance {chance}" in message
    assert chance_warning(0.95, 1000, labels) is None


def test_no_heldout_part_no_chance_check(capsys: pytest.CaptureFixture) -> None:
    check_above_chance({"accuracy": None, "n_heldout": 0}, Corpus(["x", "y"], ["a", "b"]))
    assert capsys.readouterr().err == ""
