"""Pair classifiers and the TF-IDF pair builder on small real Bible slices (KJV x BBE).

Floors were measured on these slices and set a few points below: the feature backend reached 0.99 accuracy on
held-out parallel-vs-random verse pairs; the builder's precision above cosine 0.5 was 0.97 on Genesis.
The cross-encoder is trained on a few dozen short pairs only (CPU), so its test checks mechanics, not accuracy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import torch_threads

from tsteval.classifiers.pairs import (
    MATCH,
    NO_MATCH,
    CrossEncoderPairClassifier,
    FeaturePairClassifier,
    check_pairs,
    load_pair_classifier,
)
from tsteval.core.errors import InputError, LabelMismatchError
from tsteval.metrics.compatibility.alignment import LOOSE, STRICT, alignment_quality, build_pairs
from tsteval.readers.bible import chapter_documents, parallel_verses


@pytest.fixture(scope="module")
def verses(data_root: Path) -> pd.DataFrame:
    """KJV and BBE verses of Genesis and Mark."""
    frame = parallel_verses(["KJV", "BBE"])
    return frame[frame.book.isin(["Genesis", "Mark"])].reset_index(drop=True)


def labelled_pairs(verses: pd.DataFrame, rows: np.ndarray, seed: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Parallel (KJV, BBE) verses as matches and shifted pairings as non-matches."""
    shift = np.random.default_rng(seed).integers(1, len(verses), len(rows))
    pairs = [(verses.KJV.iat[i], verses.BBE.iat[i]) for i in rows]
    pairs += [(verses.KJV.iat[i], verses.BBE.iat[(i + s) % len(verses)]) for i, s in zip(rows, shift, strict=True)]
    return pairs, [MATCH] * len(rows) + [NO_MATCH] * len(rows)


def test_feature_backend_accuracy_and_round_trip(verses: pd.DataFrame, tmp_path: Path) -> None:
    rows = np.random.default_rng(0).permutation(len(verses))
    train, test = labelled_pairs(verses, rows[:600], 1), labelled_pairs(verses, rows[600:1000], 2)
    model = FeaturePairClassifier().fit(*train)
    accuracy = (model.predict(test[0]) == np.array(test[1])).mean()
    assert accuracy >= 0.95
    loaded = load_pair_classifier(model.save(tmp_path / "features"), expected_classes=[MATCH, NO_MATCH])
    np.testing.assert_array_equal(loaded.predict_proba(test[0]), model.predict_proba(test[0]))
    with pytest.raises(LabelMismatchError):
        load_pair_classifier(tmp_path / "features", expected_classes=["yes", "no"])


def test_empty_side_is_an_error(verses: pd.DataFrame) -> None:
    with pytest.raises(InputError, match=r"pairs\[1\] has an empty or non-string second text"):
        check_pairs([("a", "b"), ("c", "  ")])
    with pytest.raises(InputError, match="first text"):
        FeaturePairClassifier().fit([("", "b"), ("c", "d")], [MATCH, NO_MATCH])
    with pytest.raises(InputError, match="single label"):
        FeaturePairClassifier().fit([("a", "b"), ("c", "d")], [MATCH, MATCH])


@pytest.fixture(scope="module")
def cross_encoder(verses: pd.DataFrame) -> CrossEncoderPairClassifier:
    """A cross-encoder fitted on 48 short real pairs (one step per 16)."""
    pairs, labels = labelled_pairs(verses, np.arange(0, 480, 20), 3)
    with torch_threads(2):
        return CrossEncoderPairClassifier(max_length=48, stride=8, lr=1e-4).fit(pairs, labels)


def test_cross_encoder_round_trip(cross_encoder: CrossEncoderPairClassifier, verses: pd.DataFrame,
                                  tmp_path: Path) -> None:
    pairs, _ = labelled_pairs(verses, np.arange(1, 200, 25), 4)
    with torch_threads(2):
        proba = cross_encoder.predict_proba(pairs)
        loaded = load_pair_classifier(cross_encoder.save(tmp_path / "ce"), expected_classes=[NO_MATCH, MATCH])
        np.testing.assert_allclose(loaded.predict_proba(pairs), proba, atol=1e-6)
    assert proba.shape == (len(pairs), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(LabelMismatchError):
        load_pair_classifier(tmp_path / "ce", expected_classes=["a", "b", "c"])
    with pytest.raises(InputError, match="empty"):
        cross_encoder.predict_proba([(verses.KJV.iat[0], "")])


def test_long_document_policy(cross_encoder: CrossEncoderPairClassifier, verses: pd.DataFrame) -> None:
    verse, chapter = verses.KJV.iat[30], chapter_documents(verses, "BBE")[30]
    rows, owner = cross_encoder.windows([(verse, chapter), (verse, "And he went.")])
    assert (owner == 0).sum() > 5 and (owner == 1).sum() == 1
    assert all(len(r["input_ids"]) <= cross_encoder.max_length for r in rows)
    with torch_threads(2):
        whole = cross_encoder.predict_proba([(verse, chapter)])[0]
        cross_encoder.long_documents = "truncate"
        try:
            assert len(cross_encoder.windows([(verse, chapter)])[0]) == 1
        finally:
            cross_encoder.long_documents = "windows"
        # The pair's probability is that of its window most in favour of a match.
        windows = [cross_encoder.tokenizer_.decode(r["input_ids"][r["token_type_ids"].index(1):-1])
                   for r in rows[:int((owner == 0).sum())]]
        match = list(cross_encoder.classes_).index(MATCH)
        best = cross_encoder.predict_proba([(verse, w) for w in windows])[:, match].max()
    assert whole[match] == pytest.approx(best, abs=0.05)


def test_builder_against_true_verse_ids(verses: pd.DataFrame) -> None:
    genesis = verses[verses.book == "Genesis"].reset_index(drop=True)
    pairs = build_pairs(genesis.KJV.tolist(), genesis.BBE.tolist(), seed=0)
    quality = alignment_quality(pairs, [(i, i) for i in range(len(genesis))]).set_index("threshold")
    assert quality.loc[0.5, "precision"] >= 0.93
    assert quality.loc[0.185, "recall"] > quality.loc[0.5, "recall"] > quality.loc[0.7, "recall"] > 0
    groups = pairs.group.value_counts()
    assert groups["negative"] == groups["positive"]
    negatives = pairs[pairs.group == "negative"]
    assert (negatives.cosine <= LOOSE).all()
    assert ((pairs.cosine > LOOSE) & (pairs.cosine <= STRICT)).sum() == groups["loose"]
    assert pairs.loc[pairs.group == "loose", "label"].isna().all()


def test_the_cross_encoder_counts_what_it_cuts(cross_encoder: CrossEncoderPairClassifier, verses: pd.DataFrame) -> None:
    """The first text is cut past half the budget (counted); the document's windows read it whole, truncation
    does not (counted); the feature backend reads both whole (no limit)."""
    candidates = list(verses.KJV.iloc[:100])
    sizes = [len(i) for i in cross_encoder.tokenizer_(candidates, add_special_tokens=False)["input_ids"]]
    verse = candidates[int(np.argmin(sizes))]
    chapter, long_first = chapter_documents(verses, "BBE")[30], " ".join(verses.KJV.iloc[:6])
    tokens = cross_encoder.tokenizer_([verse, long_first], add_special_tokens=False)["input_ids"]
    assert cross_encoder.length_limit == (48 - 3) // 2 and len(tokens[0]) <= 22 < len(tokens[1])
    pairs = [(verse, chapter), (long_first, "And he went."), (verse, "And he went.")]
    assert cross_encoder.truncated(pairs).tolist() == [False, True, False]
    cross_encoder.long_documents = "truncate"
    try:
        assert cross_encoder.truncated(pairs).tolist() == [True, True, False]
    finally:
        cross_encoder.long_documents = "windows"
    assert getattr(FeaturePairClassifier(), "length_limit", None) is None
