"""Train a style classifier on a corpus with a held-out check, cached by data + config + seed.

The cache key covers the backend, its parameters (seed included; a machine-dependent one such as
``precision="auto"`` resolved: ``TextClassifier.cache_params``), the held-out fraction and the
hashes of the texts and labels, so the same request never trains twice and a changed corpus or
parameter always does.  Each cache entry holds the saved model and ``report.json``; ``cached_dir``
verifies both against the hashes recorded when the entry was built (rebuilding a damaged entry) before
either is read here.  The report's ``n_train`` is how many texts the model learnt from (a backend that samples,
such as the transformer's ``max_train``, learns from fewer than the training split's ``n_split``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split

from tsteval.classifiers.base import TextClassifier, backend_class, fitted_identity, load_classifier, saved_identity
from tsteval.classifiers.corpus_checks import check_above_chance, check_styles_separable
from tsteval.core.cache import cached_dir
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import Corpus
from tsteval.core.signature import content_hash, texts_hash

MODEL_DIR = "model"
REPORT_FILE = "report.json"
# Parameters that change what is printed, not what is learned: left out of the cache key.
NON_MODEL_PARAMS = frozenset({"verbose"})


@dataclass
class TrainedClassifier:
    """A fitted classifier, its held-out report, its cache key and directory (None when not cached)."""

    model: TextClassifier
    report: dict
    key: str
    path: Path | None
    cached: bool = False

    @property
    def identity(self) -> str:
        """The model's identity in signatures (:func:`~tsteval.classifiers.base.saved_identity` of its saved files),
        not the cache key: the same files saved by ``train-classifier`` or copied anywhere name it alike."""
        return fitted_identity(self.model) if self.path is None else saved_identity(self.path / MODEL_DIR)


def split_heldout(corpus: Corpus, heldout: float, seed: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """Stratified, seeded split into training and held-out texts and labels."""
    if heldout == 0:
        return corpus.texts, corpus.labels, [], []
    try:
        train_x, test_x, train_y, test_y = train_test_split(
            corpus.texts, corpus.labels, test_size=heldout, random_state=seed, stratify=corpus.labels)
    except ValueError as error:
        raise InputError(f"cannot hold out {heldout:.0%} stratified by style: {error}", path=corpus.origin,
                         fix="give every style more texts, or change heldout") from error
    return train_x, train_y, test_x, test_y


def _make(backend: str, params: dict) -> TextClassifier:
    """An unfitted ``backend`` model; unknown or bad ``params`` are one ``ParameterError``, before any work."""
    return backend_class(backend).from_params(params)


def train_classifier(backend: str, corpus: Corpus, params: dict | None = None, seed: int = 0,
                     heldout: float = 0.1, use_cache: bool = True) -> TrainedClassifier:
    """Fit ``backend`` on ``corpus`` minus a stratified held-out part and report accuracy and macro-F1 on it.

    ``seed`` drives both the split and the backend's own ``seed`` parameter.  With ``heldout=0`` the
    model sees every text and the report's metrics are ``None``.  A cached model is loaded, not refitted.
    Texts under several styles and a held-out accuracy at chance are checked (:mod:`tsteval.classifiers.corpus_checks`).
    """
    check_styles_separable(corpus)
    trained = _fit_or_load(backend, corpus, params, seed, heldout, use_cache)
    check_above_chance(trained.report, corpus)
    return trained


def _fit_or_load(backend: str, corpus: Corpus, params: dict | None, seed: int, heldout: float,
                 use_cache: bool) -> TrainedClassifier:
    """:func:`train_classifier` without the corpus checks."""
    if not 0 <= heldout < 1:
        raise TstevalError(f"heldout must be in [0, 1), not {heldout}")
    params = dict(params or {})
    if params.get("seed", seed) != seed:
        raise TstevalError(f"params give seed={params['seed']} but seed={seed}; pass the seed once")
    params["seed"] = seed
    model = _make(backend, params)
    model_params = {k: v for k, v in model.cache_params().items() if k not in NON_MODEL_PARAMS}
    key = content_hash(backend, model_params, heldout, texts_hash(corpus.texts), texts_hash(corpus.labels),
                       *model.cache_key_extra(corpus.texts))

    def build(directory: Path | None) -> dict:
        train_x, train_y, test_x, test_y = split_heldout(corpus, heldout, seed)
        start = time.perf_counter()
        model.fit(train_x, train_y)
        seconds = time.perf_counter() - start
        accuracy = macro_f1 = None
        if test_x:
            predicted = model.predict(test_x).tolist()
            accuracy = float(accuracy_score(test_y, predicted))
            macro_f1 = float(f1_score(test_y, predicted, average="macro"))
        report = {"backend": backend, "params": model_params, "seed": seed, "heldout": heldout,
                  "n_train": model.n_train_, "n_split": len(train_x), "n_heldout": len(test_x),
                  "classes": corpus.styles,
                  "accuracy": accuracy, "macro_f1": macro_f1, "train_seconds": round(seconds, 3), "key": key,
                  "text_form": model.text_form_}
        text = json.dumps(report, indent=2, default=str)
        if directory is not None:
            model.save(directory / MODEL_DIR)
            (directory / REPORT_FILE).write_text(text)
        return json.loads(text)

    if not use_cache:
        return TrainedClassifier(model, build(None), key, None)
    built: list[dict] = []
    path = cached_dir("classifiers", key, lambda directory: built.append(build(directory)))
    if built:
        return TrainedClassifier(model, built[0], key, path)
    report = json.loads((path / REPORT_FILE).read_text())
    return TrainedClassifier(load_classifier(path / MODEL_DIR, corpus.styles), report, key, path, cached=True)
