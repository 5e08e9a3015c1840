"""The no-style guard of attribution masking, and attribution masking from the command line.

The tiny BERT of ``test_attribution.py`` (randomly initialised, 2 layers, hidden size 64) is fine-tuned here on 300
short Yelp dev sentences per style plus 120 templated neutral restaurant sentences given under *both* labels, so it
learns that such sentences carry no sentiment.  The guard's rule: a text is left unchanged when the classifier's
top-class probability is less than ``min_confidence_margin`` above its highest top-class probability on neutral
reference sentences (held out from training).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import read_slice, tiny_bert, torch_threads

from tsteval.classifiers.transformer import TransformerClassifier
from tsteval.cli.main import main
from tsteval.lexicons.attribution import AttributionMasker
from tsteval.scorecard import Scorecard

NEUTRAL = "we went there at noon and ordered two pizzas ."
STYLED = ["the food was terrible .", "the service was horrible .", "the pizza was delicious ."]


def _templates() -> list[str]:
    subjects = ["we", "i", "my wife and i", "my friends", "they", "the kids"]
    actions = ["went there", "ordered the chicken", "came in", "sat outside", "ordered a salad", "parked in the back",
               "asked for the menu", "paid at the counter"]
    times = ["on friday", "at six", "for dinner", "last week", "in the morning", "after work", "on a sunday",
             "around noon"]
    sentences = [f"{s} {a} {t} ." for s, a, t in itertools.product(subjects, actions, times)]
    random.Random(0).shuffle(sentences)
    return sentences


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def neutral_references() -> list[str]:
    return _templates()[120:140]


@pytest.fixture(scope="module")
def classifier_dir(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("tinybert-neutral")
    tiny_bert(directory / "init")
    short = {label: [t for t in read_slice(data_root / "yelp" / f"sentiment.dev.{label}", 3000)
                     if len(t.split()) <= 15][:300] for label in ("0", "1")}
    neutral = _templates()[:120]
    texts = [t for pair in zip(short["0"], short["1"], strict=True) for t in pair] + neutral + neutral
    labels = ["0", "1"] * 300 + ["0"] * len(neutral) + ["1"] * len(neutral)
    model = TransformerClassifier(str(directory / "init"), epochs=5, lr=1e-3, batch_size=16, max_length=32,
                                  freeze_layers=0, sort_batches=False, verbose=False).fit(texts, labels)
    # random weights, so nothing frozen; shuffled batches, as the guard's margins were measured with
    model.save(directory / "model")
    return directory / "model"


@pytest.fixture(scope="module")
def classifier(classifier_dir: Path) -> TransformerClassifier:
    from tsteval.classifiers.base import load_classifier

    return load_classifier(classifier_dir)


def test_neutral_sentence_is_unchanged_and_styled_ones_are_masked(classifier: TransformerClassifier,
                                                                   neutral_references: list[str]) -> None:
    masker = AttributionMasker(classifier, n_steps=16, neutral_texts=neutral_references)
    results = masker.attributions([NEUTRAL, *STYLED])
    assert results[0].guard == "neutral" and not results[0].masked.any()
    assert masker.apply([NEUTRAL]) == [NEUTRAL]
    assert AttributionMasker(classifier, mode="delete", n_steps=16,
                             neutral_texts=neutral_references).apply([NEUTRAL]) == [NEUTRAL]
    for sentence, result in zip(STYLED, results[1:], strict=True):
        assert result.guard is None and result.masked.any(), sentence
        assert result.ranked[0][0] in {"terrible", "horrible", "delicious"}
    # the rule, recomputed: top probability against the highest top probability on the neutral references
    reference = classifier.predict_proba(neutral_references).max()
    assert masker.neutral_confidence == pytest.approx(reference)
    top = classifier.predict_proba([NEUTRAL, *STYLED]).max(axis=1)
    assert top[0] - reference < masker.min_confidence_margin <= (top[1:] - reference).min()


def test_score_cli_attribution_modifications(tmp_path: Path, classifier_dir: Path, neutral_references: list[str],
                                             capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "in.txt").write_text(f"{NEUTRAL}\nthe food was terrible .\n")
    (tmp_path / "out.txt").write_text(f"{NEUTRAL}\nthe food was great .\n")
    (tmp_path / "neutral.txt").write_text("\n".join(neutral_references) + "\n")
    args = ["score", "--classifier", f"bert={classifier_dir}", "--pairs", str(tmp_path / "in.txt"),
            str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--content", "bleu",
            "--modification", "none,attribution-mask,attribution-delete", "--attribution-neutral",
            str(tmp_path / "neutral.txt"), "--quiet", "--out", str(tmp_path / "run")]
    assert main(args) == 0
    card = Scorecard.load(tmp_path / "run")
    assert {"bleu@none", "bleu@attribution-mask", "bleu@attribution-delete"} <= set(card.metrics)
    assert "mod:attribution-mask" in card.signatures["bleu@attribution-mask"]
    # "terrible" and "great" are masked on both sides, so the masked pair matches better than the plain one
    assert card.frame.loc[1, "bleu@attribution-mask"] > card.frame.loc[1, "bleu@none"]
    assert main([*args[:-2], "--modification", "attr-mask", "--out", str(tmp_path / "old")]) == 2
    assert "attr-mask is now attribution-mask" in capsys.readouterr().err
    assert main([*args[:-2], "--attribution", "nope", "--out", str(tmp_path / "bad")]) == 2
    assert "--attribution 'nope' is not a --classifier NAME" in capsys.readouterr().err
