"""The four classifier backends and ``train_classifier`` on small real slices (Yelp sentiment, 3 CDS styles).

Accuracy floors were measured on these exact slices and set a few points below what each backend
reached, so a real regression fails while seeds and library versions have room.  The neural
backends are kept tiny (a few hundred sentences, small dimensions) so the file runs in about a minute.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import cds_corpus, torch_threads

from tsteval.classifiers.base import TextClassifier, load_classifier, make_classifier
from tsteval.classifiers.training import TrainedClassifier, train_classifier
from tsteval.core.errors import InputError, LabelMismatchError, TstevalError
from tsteval.core.records import Corpus

# backend -> (test parameters, number of Yelp sentences, held-out fraction, accuracy floor); measured
# held-out accuracy: tfidf-lr 0.90, fastText 0.92, text-CNN 0.79, transformer 0.93 (490 training sentences).
CONFIGS: dict[str, tuple[dict, int, float, float]] = {
    "tfidf-lr": ({}, 3600, 0.25, 0.85),
    "fasttext": ({"epoch": 25}, 3600, 0.25, 0.85),
    "textcnn": ({"epochs": 2, "embed_dim": 64, "num_filters": 32, "verbose": False}, 3600, 0.25, 0.72),
    "transformer": ({"batch_size": 16, "lr": 1e-4, "max_length": 48, "verbose": False}, 700, 0.3, 0.85),
}
# Tiny settings for the determinism checks, where each backend is trained twice.
TINY: dict[str, dict] = {
    "tfidf-lr": {},
    "fasttext": {},
    "textcnn": {"epochs": 1, "embed_dim": 16, "num_filters": 8, "verbose": False},
    "transformer": {"batch_size": 16, "max_length": 24, "verbose": False},
}
CDS_STYLES = ("bible", "shakespeare", "switchboard")
# backend -> accuracy floor on 3 CDS styles, 300 sentences each, 30 % held out (chance 0.33); measured:
# tfidf-lr 0.81, fastText 0.83, text-CNN 0.61, transformer 0.83.
CDS_FLOORS = {"tfidf-lr": 0.75, "fasttext": 0.75, "textcnn": 0.5, "transformer": 0.7}
CDS_PARAMS = {"textcnn": {"epochs": 5}, "transformer": {"max_length": 32}}
BACKENDS = list(CONFIGS)


@pytest.fixture(scope="module", autouse=True)
def _few_threads() -> Iterator[None]:
    with torch_threads(2):
        yield


@pytest.fixture(scope="module")
def yelp_corpus(yelp_slice: tuple[list[str], list[str]]) -> Corpus:
    texts, labels = yelp_slice
    return Corpus(texts, labels, "yelp/sentiment.dev")


@pytest.fixture(scope="module")
def cds_3(data_root: Path) -> Corpus:
    return cds_corpus(data_root, CDS_STYLES, 300)


@pytest.fixture(scope="module", params=BACKENDS)
def trained(request: pytest.FixtureRequest, yelp_corpus: Corpus) -> TrainedClassifier:
    """Each backend trained once on its Yelp slice with a stratified held-out part."""
    params, n, heldout, _ = CONFIGS[request.param]
    corpus = Corpus(yelp_corpus.texts[:n], yelp_corpus.labels[:n], yelp_corpus.origin)
    return train_classifier(request.param, corpus, params, seed=0, heldout=heldout, use_cache=False)


def heldout_texts(yelp_corpus: Corpus) -> list[str]:
    """The last 200 Yelp sentences of the slice: no backend trains on them."""
    return yelp_corpus.texts[-200:]


def test_heldout_accuracy_above_floor(trained: TrainedClassifier) -> None:
    backend = trained.report["backend"]
    _, n, heldout, floor = CONFIGS[backend]
    report = trained.report
    assert report["n_train"] + report["n_heldout"] == n
    assert report["n_heldout"] == round(n * heldout)
    assert report["classes"] == ["0", "1"]
    assert report["accuracy"] >= floor, report
    assert report["macro_f1"] >= floor - 0.05, report


def test_probabilities_sum_to_one_in_classes_order(trained: TrainedClassifier, yelp_corpus: Corpus) -> None:
    model = trained.model
    assert list(model.classes_) == ["0", "1"]
    texts = heldout_texts(yelp_corpus)
    proba = model.predict_proba(texts)
    assert proba.shape == (len(texts), 2)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    truth = np.array(yelp_corpus.labels[-200:])
    # Column 1 is "1" (positive): it must be higher on the positive sentences than on the negative ones.
    assert proba[truth == "1", 1].mean() > proba[truth == "0", 1].mean() + 0.2
    assert list(model.predict(texts)) == list(model.classes_[proba.argmax(axis=1)])


def test_save_load_round_trip(trained: TrainedClassifier, yelp_corpus: Corpus, tmp_path: Path) -> None:
    texts = heldout_texts(yelp_corpus)
    directory = trained.model.save(tmp_path / "model")
    loaded = load_classifier(directory, expected_classes=["1", "0"])
    assert type(loaded) is type(trained.model)
    np.testing.assert_array_equal(loaded.predict_proba(texts), trained.model.predict_proba(texts))
    assert not list(directory.rglob("*.pkl")) and not list(directory.rglob("*.pickle"))
    with pytest.raises(LabelMismatchError, match="trained on the styles"):
        TextClassifier.load(directory, expected_classes=["neg", "pos"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_seed_gives_identical_probabilities(backend: str, yelp_corpus: Corpus) -> None:
    texts, labels = yelp_corpus.texts[:160], yelp_corpus.labels[:160]
    probe = heldout_texts(yelp_corpus)[:50]
    first = make_classifier(backend, seed=3, **TINY[backend]).fit(texts, labels).predict_proba(probe)
    second = make_classifier(backend, seed=3, **TINY[backend]).fit(texts, labels).predict_proba(probe)
    np.testing.assert_array_equal(first, second)
    if backend != "tfidf-lr":  # lbfgs logistic regression has no randomness to seed
        other = make_classifier(backend, seed=4, **TINY[backend]).fit(texts, labels).predict_proba(probe)
        assert not np.array_equal(first, other)


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_styles(backend: str, cds_3: Corpus) -> None:
    params = {**CONFIGS[backend][0], **CDS_PARAMS.get(backend, {})}
    result = train_classifier(backend, cds_3, params, heldout=0.3, use_cache=False)
    assert list(result.model.classes_) == sorted(CDS_STYLES)
    assert result.report["accuracy"] >= CDS_FLOORS[backend], result.report
    proba = result.model.predict_proba(cds_3.texts[:5])
    assert proba.shape == (5, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_training_input_is_a_user_error(backend: str) -> None:
    model = make_classifier(backend, **TINY[backend])
    with pytest.raises(InputError, match="single class"):
        model.fit(["good food", "great staff"], ["1", "1"])
    with pytest.raises(InputError, match="empty"):
        model.fit(["good food", "   "], ["1", "0"])
    with pytest.raises(TstevalError, match="not fitted"):
        model.predict_proba(["good food"])


def test_empty_text_at_prediction_is_a_user_error(yelp_corpus: Corpus) -> None:
    model = make_classifier("tfidf-lr").fit(yelp_corpus.texts[:100], yelp_corpus.labels[:100])
    with pytest.raises(InputError, match=r"texts\[1\] is empty"):
        model.predict_proba(["fine", ""])
    with pytest.raises(InputError, match="empty"):
        model.predict_proba([])


def test_fasttext_handles_line_breaks_and_label_like_words(yelp_corpus: Corpus) -> None:
    texts = [*yelp_corpus.texts[:200], "__label__0 great\nplace", "__tsteval_label__1 awful"]
    model = make_classifier("fasttext", **TINY["fasttext"]).fit(texts, [*yelp_corpus.labels[:200], "1", "0"])
    assert list(model.classes_) == ["0", "1"]
    assert model.predict_proba(["great\nplace\rto eat"]).shape == (1, 2)


def test_unreachable_transformer_is_a_clear_error() -> None:
    model = make_classifier("transformer", model_name_or_path="no-such-org/no-such-model-xyz", verbose=False)
    with pytest.raises(TstevalError, match="cannot load the transformer 'no-such-org/no-such-model-xyz'"):
        model.fit(["good food", "bad food"], ["1", "0"])


def test_train_classifier_cache_hit_does_not_refit(yelp_corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from tsteval.classifiers.tfidf_lr import TfidfLogisticRegression

    corpus = Corpus(yelp_corpus.texts[:1000], yelp_corpus.labels[:1000], yelp_corpus.origin)
    first = train_classifier("tfidf-lr", corpus, {"C": 2.0}, seed=1)
    assert not first.cached and first.path is not None and (first.path / "report.json").is_file()
    assert first.report["classes"] == ["0", "1"]

    def refit(*args: object) -> None:
        raise AssertionError("a cache hit must not refit")

    monkeypatch.setattr(TfidfLogisticRegression, "_fit", refit)
    start = time.perf_counter()
    second = train_classifier("tfidf-lr", corpus, {"C": 2.0}, seed=1)
    assert time.perf_counter() - start < 5
    assert second.cached and second.key == first.key and second.report == first.report
    probe = heldout_texts(yelp_corpus)
    np.testing.assert_array_equal(second.model.predict_proba(probe), first.model.predict_proba(probe))
    with pytest.raises(AssertionError, match="must not refit"):
        train_classifier("tfidf-lr", corpus, {"C": 2.0}, seed=2)


def test_train_classifier_rejects_bad_requests(yelp_corpus: Corpus) -> None:
    corpus = Corpus(yelp_corpus.texts[:100], yelp_corpus.labels[:100], yelp_corpus.origin)
    with pytest.raises(TstevalError, match="unknown classifier backend"):
        train_classifier("svm", corpus)
    with pytest.raises(TstevalError, match="bad parameter for backend 'tfidf-lr'"):
        train_classifier("tfidf-lr", corpus, {"epochs": 3})
    with pytest.raises(TstevalError, match="pass the seed once"):
        train_classifier("tfidf-lr", corpus, {"seed": 5}, seed=0)
    with pytest.raises(TstevalError, match="heldout"):
        train_classifier("tfidf-lr", corpus, heldout=1.0)
    lopsided = Corpus(["a b", "c d", "e f", "g h"], ["x", "x", "x", "y"])
    with pytest.raises(InputError, match="stratified"):
        train_classifier("tfidf-lr", lopsided, heldout=0.5)


def test_tfidf_reads_whole_words_of_scripts_with_vowel_signs(tmp_path: Path) -> None:
    """tf-idf words keep their combining marks (Hindi, Bengali: scikit-learn's default pattern cut them at each vowel
    sign), read ASCII exactly as scikit-learn's default does, and a model saved before the change loads reading as
    it was trained."""
    import json

    from sklearn.feature_extraction.text import TfidfVectorizer

    from tsteval.classifiers.tfidf_lr import TfidfLogisticRegression

    formal = ["कृपया यह किताब पढ़िए", "आप कैसे हैं श्रीमान", "कृपया बैठिए", "আপনি কেমন আছেন"]
    casual = ["यार किताब पढ़ो", "क्या हाल है भाई", "बैठ जा यार", "কি খবর রে"]
    model = TfidfLogisticRegression().fit(formal + casual, ["formal"] * 4 + ["casual"] * 4)
    vocabulary = set(model.vectorizer_.vocabulary_)
    assert {"किताब", "पढ़िए", "कृपया", "আপনি", "কেমন"} <= vocabulary
    assert "ताब" not in vocabulary and "पढ" not in vocabulary  # the pieces the default pattern made
    english = ["The food was great, wasn't it?", "i'd say 10/10 -- best_ever!!"] * 3
    assert set(TfidfLogisticRegression().fit(english, ["a", "b"] * 3).vectorizer_.vocabulary_) == set(
        TfidfVectorizer(ngram_range=(1, 2)).fit(english).vocabulary_)
    assert model.cache_key_extra(formal) == ("words:marks-1",) and model.cache_key_extra(english) == ()
    model.save(tmp_path / "new")
    again = load_classifier(tmp_path / "new")
    assert np.array_equal(again.predict_proba(formal), model.predict_proba(formal))
    state = tmp_path / "new" / "tfidf.json"  # a model saved before: no "words" in its state
    saved = json.loads(state.read_text())
    del saved["words"]
    state.write_text(json.dumps(saved, ensure_ascii=False))
    old = TfidfLogisticRegression()
    old._load_state(tmp_path / "new")  # the state alone (the saved manifest's checksums now refuse the file)
    assert old.vectorizer_.token_pattern == TfidfVectorizer().token_pattern and old.vectorizer_.tokenizer is None
