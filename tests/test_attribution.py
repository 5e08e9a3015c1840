"""Attribution masking (Reed & Beck 2022) with a tiny transformer fine-tuned on real Yelp sentences.

The classifier is a randomly initialised 2-layer BERT (hidden size 64) with the all-MiniLM-L6-v2
tokenizer, fine-tuned once per module on 1,000 short Yelp dev sentences (about 10 s on one core; held-out
accuracy about 0.85), so the polar words of obvious sentences get most of the attribution.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import read_slice, tiny_bert, torch_threads

from tsteval.classifiers.transformer import TransformerClassifier
from tsteval.core.errors import LabelMismatchError, TstevalError
from tsteval.lexicons.attribution import AttributionMasker

POLAR = {
    "the food was terrible .": "terrible",
    "worst service ever .": "worst",
    "the food is great .": "great",
    "the pizza was delicious .": "delicious",
    "the service was horrible .": "horrible",
}
SENTENCES = [*POLAR, "the staff is so friendly and the pizza is delicious !", "we ordered the chicken and rice .",
             "i love this place , the waiter was very nice and the fries were amazing ."]


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def classifier(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> TransformerClassifier:
    directory = tiny_bert(tmp_path_factory.mktemp("tinybert"))
    short = {label: [t for t in read_slice(data_root / "yelp" / f"sentiment.dev.{label}", 4000)
                     if len(t.split()) <= 15][:500] for label in ("0", "1")}
    texts = [t for pair in zip(short["0"], short["1"], strict=True) for t in pair]
    model = TransformerClassifier(str(directory), epochs=5, lr=1e-3, batch_size=16, max_length=32, freeze_layers=0,
                                  verbose=False)  # random weights: nothing worth freezing
    return model.fit(texts, ["0", "1"] * 500)


@pytest.fixture(scope="module")
def masker(classifier: TransformerClassifier) -> AttributionMasker:
    return AttributionMasker(classifier, n_steps=16)


def test_top_attributed_word_is_the_polar_word(masker: AttributionMasker) -> None:
    results = masker.attributions(list(POLAR))
    for (sentence, polar), result in zip(POLAR.items(), results, strict=True):
        assert result.ranked[0][0] == polar, (sentence, result.ranked)
        assert result.guard is None and result.masked[result.words.index(polar)]
        assert result.shares.sum() == pytest.approx(1.0)
    assert masker.apply(["the food was terrible ."]) == ["the food was <masked> ."]


def test_target_follows_the_prediction_unless_given(masker: AttributionMasker) -> None:
    predicted = masker.attributions(["worst service ever .", "the food is great ."])
    assert [r.target for r in predicted] == ["0", "1"]
    assert predicted[0].scores[0] > 0
    toward_positive = masker.attributions(["worst service ever ."], target_classes=["1"])[0]
    assert toward_positive.target == "1" and toward_positive.scores[0] < 0
    with pytest.raises(LabelMismatchError, match="neutral"):
        masker.attributions(["the food is great ."], target_classes=["neutral"])


def test_higher_threshold_masks_a_superset(classifier: TransformerClassifier) -> None:
    masked_sets = []
    for threshold in (0.1, 0.25, 0.5, 0.75, 1.0):
        results = AttributionMasker(classifier, threshold=threshold, n_steps=16).attributions(SENTENCES)
        masked_sets.append([set(np.flatnonzero(r.masked)) for r in results])
    for looser, stricter in zip(masked_sets, masked_sets[1:], strict=False):
        assert all(a <= b for a, b in zip(looser, stricter, strict=True))
    assert sum(map(len, masked_sets[-1])) > sum(map(len, masked_sets[0]))


def test_crossing_word_is_masked_and_minimal(masker: AttributionMasker) -> None:
    for result in masker.attributions(SENTENCES):
        if result.guard is not None:
            continue
        masked_share = result.shares[result.masked].sum()
        eligible = result.shares >= masker.min_attribution_share
        reached = masked_share >= masker.threshold or result.masked.sum() == eligible.sum()
        assert result.masked.any() and reached
        smallest = result.shares[result.masked].min()
        assert masked_share - smallest < masker.threshold


def test_delete_and_mask_remove_the_same_words(classifier: TransformerClassifier) -> None:
    masked = AttributionMasker(classifier, threshold=0.5, mode="mask", n_steps=16).apply(SENTENCES)
    deleted = AttributionMasker(classifier, threshold=0.5, mode="delete", n_steps=16).apply(SENTENCES)
    for with_mask, with_delete in zip(masked, deleted, strict=True):
        assert "<masked>" in with_mask and "<masked>" not in with_delete
        assert [w for w in with_mask.split() if w != "<masked>"] == with_delete.split()
    assert AttributionMasker(classifier, threshold=1.0, mode="delete", min_attribution_share=0.0,
                             n_steps=16).apply(["great !"]) == [""]


def test_remask_equals_attributing_again(masker: AttributionMasker, classifier: TransformerClassifier) -> None:
    stored = masker.attributions(["", *SENTENCES])
    for threshold, mode in ((0.1, "delete"), (0.5, "mask"), (1.0, "delete")):
        other = AttributionMasker(classifier, threshold=threshold, mode=mode, n_steps=16)
        again = other.remask(stored)
        assert [r.masked.tolist() for r in again] == [r.masked.tolist() for r in other.attributions(["", *SENTENCES])]
        assert other.render(again) == other.apply(["", *SENTENCES])
    guarded = AttributionMasker(classifier, n_steps=16, min_confidence_margin=0.6).remask(stored)
    assert all(r.guard == "neutral" and not r.masked.any() for r in guarded[1:])
    assert [r.scores.tolist() for r in guarded] == [r.scores.tolist() for r in stored]


def test_no_signal_guard_keeps_every_word(classifier: TransformerClassifier) -> None:
    blind = copy.deepcopy(classifier)
    with torch.no_grad():
        blind.model_.classifier.weight.zero_()
        blind.model_.classifier.bias.zero_()
    uniform = AttributionMasker(blind, n_steps=8).attributions(["worst service ever ."])[0]
    assert uniform.guard == "neutral" and not uniform.masked.any() and uniform.confidence == pytest.approx(0.5)
    no_attribution = AttributionMasker(blind, n_steps=8, min_confidence_margin=0.0)
    assert no_attribution.attributions(["worst service ever ."])[0].guard == "no-attribution"
    assert no_attribution.apply(["Worst service ever."]) == ["worst service ever ."]
    thin = AttributionMasker(classifier, n_steps=8, min_attribution_share=0.99).attributions(SENTENCES)
    assert not any(r.masked.any() for r in thin)


def test_batched_equals_one_at_a_time_and_is_deterministic(classifier: TransformerClassifier) -> None:
    batched = AttributionMasker(classifier, batch_size=4, n_steps=16)
    single = AttributionMasker(classifier, batch_size=1, n_steps=16)
    together = batched.attributions(SENTENCES)
    alone = single.attributions(SENTENCES)
    for a, b in zip(together, alone, strict=True):
        assert a.words == b.words and np.allclose(a.scores, b.scores, atol=1e-6)
        assert a.masked.tolist() == b.masked.tolist()
    assert batched.apply(SENTENCES) == single.apply(SENTENCES) == batched.apply(SENTENCES)


def test_empty_text_and_bad_arguments(masker: AttributionMasker, classifier: TransformerClassifier) -> None:
    assert masker.apply(["", "great food !"])[0] == ""
    with pytest.raises(TstevalError, match="threshold"):
        AttributionMasker(classifier, threshold=0)
    with pytest.raises(TstevalError, match="mode"):
        AttributionMasker(classifier, mode="remove")  # type: ignore[arg-type]
    with pytest.raises(TstevalError, match="fitted TransformerClassifier"):
        AttributionMasker(TransformerClassifier())
