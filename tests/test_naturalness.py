"""Adversarial naturalness (cross-fitting, ties, agreement) and the perplexity baselines."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tsteval.metrics.naturalness.adversarial as nat
from tsteval.core.errors import InputError
from tsteval.core.records import Transfers
from tsteval.metrics.naturalness.adversarial import (
    UnigramFolds,
    absolute_judgement,
    cross_fit,
    judgement,
    more_natural,
    percent_agreement,
    score_naturalness,
)
from tsteval.metrics.naturalness.language_model import KneserNeyLM
from tsteval.metrics.naturalness.lm_scores import score_language_model
from tsteval.scorecard import Scorecard


def toy_card(n: int = 12) -> Scorecard:
    """Two settings; outputs repeat across items and one output copies another item's input."""
    inputs = [f"the food at place {i} was good" for i in range(n)]
    outputs = [f"the the food {i % 4} bad bad" for i in range(n)]
    outputs[1] = inputs[-1]
    outputs[2] = inputs[2]  # unchanged copy: a tie
    parts = [Transfers.from_pairs(inputs, outputs, source_style="1", target_style="0", system="S", setting=s)
             for s in ("a", "b")]
    return Scorecard.from_transfers(Transfers.concat(parts))


HUMAN_CORPUS = [f"service was quick and staff number {i} smiled" for i in range(40)]


class RecordingClassifier:
    """A stand-in classifier that records what it was trained on and asked to score."""

    log: list[tuple[set[str], list[str]]] = []

    def __init__(self, **params: object) -> None:
        self.classes_ = np.array(["human", "system"], dtype=object)

    def fit(self, texts: list[str], labels: list[str]) -> RecordingClassifier:
        self.train = set(texts)
        return self

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        RecordingClassifier.log.append((self.train, list(texts)))
        p = np.array([(len(t) % 7) / 7 for t in texts])
        return np.column_stack([p, 1 - p])


@pytest.mark.parametrize("human", ["corpus", "inputs"])
def test_no_scored_text_was_in_its_models_training(monkeypatch: pytest.MonkeyPatch, human: str) -> None:
    RecordingClassifier.log = []
    monkeypatch.setattr(nat, "make_classifier", lambda name, **params: RecordingClassifier(**params))
    card = toy_card()
    score_naturalness(card, "textcnn", human=human, corpus=HUMAN_CORPUS, k=4)
    assert len(RecordingClassifier.log) == 2 * 4
    scored = set()
    for train, texts in RecordingClassifier.log:
        assert not train & set(texts)
        scored |= set(texts)
    assert scored == set(card.frame["output"]) | set(card.frame["input"])


def test_unigram_folds_hold_out(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[list[str], list[str]]] = []
    original = UnigramFolds.__call__

    def spy(self: UnigramFolds, train: list[str], labels: list[str], score: list[str]) -> np.ndarray:
        calls.append((train, score))
        return original(self, train, labels, score)

    monkeypatch.setattr(UnigramFolds, "__call__", spy)
    score_naturalness(toy_card(), "unigram", corpus=HUMAN_CORPUS, k=3)
    assert len(calls) == 2 * 3
    assert all(not set(train) & set(score) for train, score in calls)


def test_unigram_matches_per_fold_countvectorizer() -> None:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    from tsteval.core.tokenize import tokenize

    train = ["good food !", "bad bad food", "great staff", "the the bad"]
    labels = ["human", "system", "human", "system"]
    score = ["good staff", "unseen words here"]
    ours = UnigramFolds(train + score)(train, labels, score)
    vec = CountVectorizer(analyzer=tokenize)
    model = LogisticRegression(max_iter=1000, random_state=0).fit(vec.fit_transform(train), [0, 1, 0, 1])
    np.testing.assert_allclose(ours, model.predict_proba(vec.transform(score))[:, 0], atol=1e-6)


@pytest.mark.parametrize("backend", ["unigram", "textcnn"])
def test_deterministic(backend: str) -> None:
    params = {"epochs": 1} if backend == "textcnn" else {}
    first, second = toy_card(), toy_card()
    for card in (first, second):
        score_naturalness(card, backend, corpus=HUMAN_CORPUS, k=3, seed=1, params=params)
    for column in (f"naturalness@{backend}", f"more_natural@{backend}"):
        np.testing.assert_array_equal(first.frame[column], second.frame[column])
        assert "seed:1" in first.signatures[column] and "k:3" in first.signatures[column]


def test_tie_policy() -> None:
    np.testing.assert_array_equal(more_natural([0.7, 0.2, 0.4], [0.3, 0.5, 0.4]), [1.0, 0.0, 0.5])
    card = toy_card()
    score_naturalness(card, "unigram", corpus=HUMAN_CORPUS, k=3)
    copied = card.frame["input"] == card.frame["output"]
    assert (card.frame.loc[copied, "more_natural@unigram"] == 0.5).all()
    assert "tie:0.5" in card.signatures["more_natural@unigram"]


def test_too_few_outputs_names_the_setting() -> None:
    with pytest.raises(InputError, match=r"system 'S', setting 'a' has 4 outputs, fewer than k=5.*lower k"):
        score_naturalness(toy_card(4), "unigram", corpus=HUMAN_CORPUS, k=5)
    with pytest.raises(InputError, match="one of each per item"):
        cross_fit(["h"], ["o", "p"], ["i", "j"], lambda *a: np.zeros(0), k=2)


def test_kneser_ney_against_hand_computation() -> None:
    lm = KneserNeyLM(order=2, min_count=1, discount=0.5).fit(["a b", "a b", "b a"])
    # Continuation counts: a, b, </s> each follow 2 distinct words (6 bigram types in all); V = {a, b, </s>, <unk>}.
    p_uni = {"known": (2 - 0.5 + 0.5 * 3 / 4) / 6, "unk": (0.5 * 3 / 4) / 6}
    assert p_uni["known"] * 3 + p_uni["unk"] == pytest.approx(1.0)
    # "b c": P(b | <s>) from c(<s> a)=2, c(<s> b)=1; c -> <unk>, unseen after b; </s> after unseen <unk>.
    p_b = (1 - 0.5 + 0.5 * 2 * p_uni["known"]) / 3
    p_unk = (0 + 0.5 * 2 * p_uni["unk"]) / 3
    p_end = p_uni["known"]
    expected = math.exp(-(math.log(p_b) + math.log(p_unk) + math.log(p_end)) / 3)
    assert lm.perplexity(["b c"])[0] == pytest.approx(expected, rel=1e-12)
    assert lm.perplexity(["a b"])[0] == pytest.approx(3 / (1.5 + p_uni["known"]), rel=1e-12)
    # Length-normalised scores of "b c": 3 counted tokens (b, <unk>, </s>); the add-one unigram model counts
    # a, b and </s> 3 times each in the training texts (N = 9) over V = 4 types.
    log_lm = math.log(p_b) + math.log(p_unk) + math.log(p_end)
    log_unigram = math.log(4 / 13) + math.log(1 / 13) + math.log(4 / 13)
    scores = lm.sentence_log_probs(["b c"])
    assert scores.lp_mean()[0] == pytest.approx(log_lm / 3, rel=1e-12)
    assert scores.slor()[0] == pytest.approx((log_lm - log_unigram) / 3, rel=1e-12)
    card = toy_card()
    score_language_model(card, lm, "kn2")
    for metric in ("ppl", "lp_mean", "slor"):
        column = f"{metric}@kn2"
        assert np.isfinite(card.frame[column]).all() and "lm:kn2" in card.signatures[column]
        assert card.signatures[column].startswith(f"metric:{metric}|")
    np.testing.assert_allclose(card.frame["lp_mean@kn2"], -np.log(card.frame["ppl@kn2"]), rtol=1e-12)
    assert "unigram:add-one" in card.signatures["slor@kn2"]


def test_kneser_ney_reused_ngrams_give_each_texts_own_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """sentence_log_probs reuses n-gram probabilities across texts, and forgets them past KNOWN_NGRAMS: either way
    each text's sum is that of its own n-grams, computed alone."""
    import tsteval.metrics.naturalness.language_model as language_model

    lm = KneserNeyLM(order=3, min_count=1).fit(["the food was good", "the service was slow", "good food"])
    texts = ["the food was slow", "good food was good", "the food was slow", "service was the food"]
    alone = [math.fsum(lm.log_probs(t)) for t in texts]
    np.testing.assert_array_equal(lm.sentence_log_probs(texts).lm, alone)
    monkeypatch.setattr(language_model, "KNOWN_NGRAMS", 2)
    np.testing.assert_array_equal(lm.sentence_log_probs(texts).lm, alone)


def test_agreement_hand_example() -> None:
    machine = judgement(np.array([1.0, 0.0, 0.5, 0.0, 1.0]))
    human = np.array(["output", "input", "tie", "output", "tie"], dtype=object)
    mir = percent_agreement(machine, human, "mir")
    assert (mir.percent, mir.n, mir.human_ties, mir.machine_ties) == (60.0, 5, 2, 1)
    assert percent_agreement(machine, human, "exclude").percent == pytest.approx(200 / 3)
    machine_with_tie = judgement(np.array([0.5, 0.0]))
    assert percent_agreement(machine_with_tie, np.array(["input", "input"], dtype=object), "exclude").percent == 75.0
    np.testing.assert_array_equal(absolute_judgement([4.0, 2.0, 3.0], [3.0, 2.5, 3.0]), ["input", "output", "tie"])
    np.testing.assert_array_equal(absolute_judgement([4.0, 2.0], [3.0, 2.5], threshold=3), ["tie", "tie"])
    with pytest.raises(InputError, match="NaN"):
        percent_agreement(machine, np.array(["output", np.nan, "tie", "input", "tie"], dtype=object))
