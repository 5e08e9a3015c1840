"""The classifier protocol: scikit-learn conventions plus safe ``save``/``load``.

Every backend subclasses :class:`TextClassifier`.  Parameters are ``__init__`` arguments (so
``get_params``/``set_params``/``clone`` work), learned state ends in ``_``, ``classes_`` holds the
style labels as sorted strings, and ``predict_proba`` returns an ``(n, k)`` array whose rows sum to 1
in the order of ``classes_``.

A saved model is a directory with ``tsteval-classifier.json`` (backend name, parameters, classes,
library versions) beside the backend's weights in a safe format (safetensors, JSON or fastText's
own binary).  Nothing is unpickled.
"""

from __future__ import annotations

import importlib
import json
from abc import abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from harness.errors import InputError, LabelMismatchError, TstevalError
from harness.signature import package_version

MANIFEST = "tsteval-classifier.json"
# Backends by name, imported only when asked for (torch and fastText are slow to import).
BACKENDS: dict[str, str] = {
    "tfidf-lr": "classifiers.tfidf_lr:TfidfLogisticRegression",
    "fasttext": "classifiers.fasttext_backend:FastTextClassifier",
    "textcnn": "classifiers.textcnn:TextCNNClassifier",
    "transformer": "classifiers.transformer:TransformerClassifier",
}


def backend_class(name: str) -> type[TextClassifier]:
    """The classifier class registered under ``name``."""
    if name not in BACKENDS:
        raise TstevalError(f"unknown classifier backend {name!r}; choose one of {sorted(BACKENDS)}")
    module, attr = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), attr)


def make_classifier(name: str, **params: object) -> TextClassifier:
    """A new, unfitted classifier of backend ``name`` with the given parameters."""
    return backend_class(name)(**params)


def check_texts(texts: Sequence[str], what: str = "texts") -> list[str]:
    """Texts as a list of non-empty strings, or an :class:`InputError` naming the first bad one."""
    if isinstance(texts, str):
        raise InputError(f"{what} must be a sequence of strings, not one string")
    texts = list(texts)
    if not texts:
        raise InputError(f"{what} are empty")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{what}[{i}] is empty or not a string: {text!r}",
                             fix="drop or fill empty lines before classifying")
    return texts


def check_training_data(texts: Sequence[str], labels: Sequence[object]) -> tuple[list[str], list[str]]:
    """Validated training texts and string labels; at least two classes are required."""
    texts = check_texts(texts, "training texts")
    labels = [str(label) for label in labels]
    if len(texts) != len(labels):
        raise InputError(f"{len(texts)} training texts but {len(labels)} labels")
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise InputError(f"training data has a single class ({classes[0]!r}); a style classifier needs "
                         "at least two", fix="add texts of another style")
    return texts, labels


class SavedClassifier(ClassifierMixin, BaseEstimator):
    """What every tsteval classifier shares: ``classes_`` as strings, normalised ``predict_proba``, ``predict``
    and safe ``save``; subclasses validate their inputs and implement the four ``_`` hooks."""

    backend: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()
    manifest_name: ClassVar[str] = MANIFEST

    def _encode_labels(self, labels: Sequence[str]) -> np.ndarray:
        """Set ``classes_`` (sorted) and return the labels as indices into it."""
        self.classes_ = np.array(sorted(set(labels)), dtype=object)
        index = {c: i for i, c in enumerate(self.classes_)}
        return np.array([index[label] for label in labels], dtype=np.int64)

    def _normalised(self, items: list) -> np.ndarray:
        """``_predict_proba`` of validated items, clipped at 0 and scaled so each row sums to 1."""
        self._check_fitted()
        proba = np.clip(np.asarray(self._predict_proba(items), dtype=np.float64), 0.0, None)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, items: Sequence) -> np.ndarray:
        """The most probable class of each item."""
        return self.classes_[self.predict_proba(items).argmax(axis=1)]

    def save(self, directory: str | Path) -> Path:
        """Write the model to ``directory`` (created) in safe formats."""
        self._check_fitted()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._save_state(directory)
        manifest = {
            "backend": self.backend,
            "params": self.get_params(deep=False),
            "classes": [str(c) for c in self.classes_],
            "versions": {lib: package_version(lib) for lib in ("tsteval", *self.libraries)},
        }
        (directory / self.manifest_name).write_text(json.dumps(manifest, indent=2, default=str))
        return directory

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise TstevalError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    @abstractmethod
    def _fit(self, items: list, y: np.ndarray) -> None:
        """Train on validated items and integer labels indexing ``classes_``."""

    @abstractmethod
    def _predict_proba(self, items: list) -> np.ndarray:
        """``(n, k)`` probabilities (normalised by the caller)."""

    @abstractmethod
    def _save_state(self, directory: Path) -> None:
        """Write learned state (weights, vocabulary) to ``directory``."""

    @abstractmethod
    def _load_state(self, directory: Path) -> None:
        """Restore learned state written by ``_save_state``; ``classes_`` is already set."""


def load_saved(directory: str | Path, manifest_name: str, make: Callable[..., SavedClassifier], what: str,
               label_noun: str, expected_classes: Sequence[object] | None = None) -> SavedClassifier:
    """Load a model saved by :meth:`SavedClassifier.save`; a label set other than ``expected_classes`` is an error."""
    directory = Path(directory)
    manifest_path = directory / manifest_name
    if not manifest_path.is_file():
        raise TstevalError(f"{directory} is not a saved tsteval {what} (no {manifest_name})")
    manifest = json.loads(manifest_path.read_text())
    classes = [str(c) for c in manifest["classes"]]
    if expected_classes is not None and sorted(str(c) for c in expected_classes) != classes:
        raise LabelMismatchError(
            f"{directory} was trained on the {label_noun} {classes}, but these data have "
            f"{sorted(str(c) for c in expected_classes)}; train a {what} on this label set")
    model = make(manifest.get("backend", "?"), **manifest["params"])
    model.classes_ = np.array(classes, dtype=object)
    model._load_state(directory)
    return model


class TextClassifier(SavedClassifier):
    """Base class of all text classifiers."""

    def fit(self, texts: Sequence[str], labels: Sequence[object]) -> Self:
        """Learn from raw texts and their style labels."""
        texts, labels = check_training_data(texts, labels)
        self._fit(texts, self._encode_labels(labels))
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, k)`` class probabilities in the order of ``classes_``; rows sum to 1."""
        return self._normalised(check_texts(texts))

    @classmethod
    def load(cls, directory: str | Path, expected_classes: Sequence[object] | None = None) -> TextClassifier:
        """Read a model saved by :meth:`save`; with ``expected_classes``, refuse a different label set."""
        return load_classifier(directory, expected_classes)


def load_classifier(directory: str | Path, expected_classes: Sequence[object] | None = None) -> TextClassifier:
    """Load any saved backend; a label set other than ``expected_classes`` is a clear error."""
    return load_saved(directory, MANIFEST, make_classifier, "style classifier", "styles", expected_classes)
