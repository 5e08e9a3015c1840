"""Pair classifiers: does text ``b`` match text ``a`` in content?  (De Mattei et al.'s HH and AH checks.)

The seam mirrors :mod:`tsteval.classifiers.base` for pairs of texts: parameters are ``__init__`` arguments, learned
state ends in ``_``, ``classes_`` holds the labels as sorted strings and ``predict_proba`` returns an
``(n, k)`` array in the order of ``classes_``.  A saved model is a directory with
``tsteval-pair-classifier.json`` beside the backend's weights in safe formats (safetensors, JSON); nothing
is unpickled.

Two backends:

* :class:`CrossEncoderPairClassifier` fine-tunes an encoder (all-MiniLM-L6-v2 by default, any Hugging Face
  id or directory) on ``[CLS] a [SEP] b [SEP]``.
* :class:`FeaturePairClassifier` is a fast logistic regression on lexical pair features.

Empty-side policy: a pair whose first or second text is empty (or whitespace) is an :class:`InputError` naming
the pair and the side; there is no silent score for it.

Long-document policy (the cross-encoder; e.g. AH, where ``b`` is a whole chapter): with
``long_documents="windows"`` (the default) the first text ``a`` is kept whole and the second text ``b`` is cut
into overlapping token windows so that every ``[CLS] a [SEP] window [SEP]`` fits ``max_length``.  At prediction
the pair's probabilities are those of the window with the highest probability of ``positive_label`` (a match
anywhere in the document is a match).  At training, where labelling every window of a matching document as
a match would be wrong, each pair contributes one window: the one sharing the most word types with ``a``
(for a match, where its content sits; for a non-match, the hardest window).  With
``long_documents="truncate"`` the document is cut to fit after its head (``a`` kept whole), both in training
and prediction.  The feature backend has no window: its features are computed on the whole document.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from collections.abc import Sequence
from numbers import Integral
from pathlib import Path
from typing import Self

import numpy as np
from safetensors.numpy import load_file, save_file
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import Interval, StrOptions

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, ParameterError, SavedClassifier, load_saved
from tsteval.core.errors import InputError, TstevalError, did_you_mean

PAIR_MANIFEST = "tsteval-pair-classifier.json"
PAIR_BACKENDS: dict[str, str] = {
    "cross-encoder": "tsteval.classifiers.pairs:CrossEncoderPairClassifier",
    "features": "tsteval.classifiers.pairs:FeaturePairClassifier",
}
MATCH = "match"
NO_MATCH = "no-match"
_WORD = re.compile(r"\w+")

Pair = tuple[str, str]


def check_pairs(pairs: Sequence[Pair], what: str = "pairs") -> list[Pair]:
    """Pairs as a list of ``(a, b)`` string tuples; an empty side is an :class:`InputError` naming it."""
    if isinstance(pairs, str | tuple) and len(pairs) == 2 and all(isinstance(p, str) for p in pairs):
        raise InputError(f"{what} must be a sequence of (a, b) pairs, not one pair")
    pairs = list(pairs)
    if not pairs:
        raise InputError(f"{what} are empty")
    checked = []
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or len(pair) != 2:
            raise InputError(f"{what}[{i}] is not a pair of two texts: {pair!r}")
        for side, text in zip(("first", "second"), pair, strict=True):
            if not isinstance(text, str) or not text.strip():
                raise InputError(f"{what}[{i}] has an empty or non-string {side} text: {text!r}",
                                 fix="a pair classifier needs two non-empty texts; drop or fill such pairs")
        checked.append((pair[0], pair[1]))
    return checked


def pair_backend_class(name: str) -> type[PairClassifier]:
    """The pair classifier class registered under ``name``."""
    if name not in PAIR_BACKENDS:
        raise TstevalError(f"unknown pair classifier backend {name!r}; choose one of {sorted(PAIR_BACKENDS)}"
                           f"{did_you_mean(name, PAIR_BACKENDS, '; ')}")
    module, attr = PAIR_BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), attr)


def make_pair_classifier(name: str, **params: object) -> PairClassifier:
    """A new, unfitted pair classifier of backend ``name`` with the given parameters, validated."""
    return pair_backend_class(name).from_params(params)


class PairClassifier(SavedClassifier):
    """Base class of pair classifiers: the protocol of ``tsteval.classifiers.base`` over ``(a, b)`` pairs."""

    manifest_name = PAIR_MANIFEST

    def fit(self, pairs: Sequence[Pair], labels: Sequence[object]) -> Self:
        """Learn from ``(a, b)`` pairs and their labels (at least two classes); parameters are validated first."""
        self._validate_params()
        pairs = check_pairs(pairs, "training pairs")
        labels = [str(label) for label in labels]
        if len(pairs) != len(labels):
            raise InputError(f"{len(pairs)} training pairs but {len(labels)} labels")
        if len(set(labels)) < 2:
            raise InputError(f"training pairs have a single label ({labels[0]!r}); a pair classifier needs two",
                             fix="add non-matching pairs (e.g. random pairings) as negatives")
        self._fit(pairs, self._encode_labels(labels))
        return self

    def predict_proba(self, pairs: Sequence[Pair]) -> np.ndarray:
        """``(n, k)`` probabilities in the order of ``classes_``; rows sum to 1."""
        return self._normalised(check_pairs(pairs))

    @classmethod
    def load(cls, directory: str | Path, expected_classes: Sequence[object] | None = None) -> PairClassifier:
        """Read a model saved by :meth:`save`; with ``expected_classes``, refuse a different label set."""
        return load_pair_classifier(directory, expected_classes)


def load_pair_classifier(directory: str | Path, expected_classes: Sequence[object] | None = None) -> PairClassifier:
    """Load any saved pair backend; a label set other than ``expected_classes`` is a clear error."""
    return load_saved(directory, PAIR_MANIFEST, pair_backend_class, "pair classifier", "labels",
                      expected_classes)


# --- lexical features --------------------------------------------------------------------------------------------

FEATURE_NAMES = ("word_cosine", "char_cosine", "jaccard", "a_in_b", "b_in_a", "length_ratio", "log_len_a",
                 "log_len_b")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _row_cosine(x: object, y: object) -> np.ndarray:
    """Cosine of row i of ``x`` with row i of ``y`` (rows are L2-normalised TF-IDF vectors)."""
    return np.asarray(x.multiply(y).sum(axis=1)).ravel()


class FeaturePairClassifier(PairClassifier):
    """Logistic regression on TF-IDF cosines (words, character 3-grams), token Jaccard, containment both ways
    and length ratios.  Fast and transparent; the vectorisers and weights are saved as JSON and safetensors.
    """

    backend = "features"
    libraries = ("scikit-learn", "numpy")
    _parameter_constraints = {"C": [POSITIVE], "max_iter": [AT_LEAST_ONE], "seed": [SEED]}

    def __init__(self, C: float = 1.0, max_iter: int = 1000, seed: int = 0) -> None:
        self.C = C
        self.max_iter = max_iter
        self.seed = seed

    @staticmethod
    def _vectorizers() -> dict[str, TfidfVectorizer]:
        return {"word": TfidfVectorizer(lowercase=True, token_pattern=r"\w+", sublinear_tf=True),
                "char": TfidfVectorizer(lowercase=True, analyzer="char_wb", ngram_range=(3, 3), sublinear_tf=True)}

    def features(self, pairs: Sequence[Pair]) -> np.ndarray:
        """The ``(n, len(FEATURE_NAMES))`` feature matrix of validated pairs (vectorisers must be fitted)."""
        pairs = check_pairs(pairs)
        a_texts, b_texts = [a for a, _ in pairs], [b for _, b in pairs]
        columns = [_row_cosine(v.transform(a_texts), v.transform(b_texts)) for v in self.vectorizers_.values()]
        lexical = np.empty((len(pairs), 6))
        for i, (a, b) in enumerate(pairs):
            wa, wb = _words(a), _words(b)
            sa, sb = set(wa), set(wb)
            shared = len(sa & sb)
            lexical[i] = (shared / max(len(sa | sb), 1), shared / max(len(sa), 1), shared / max(len(sb), 1),
                          min(len(wa), len(wb)) / max(len(wa), len(wb), 1), math.log1p(len(wa)), math.log1p(len(wb)))
        return np.column_stack([*columns, lexical])

    def _new_logreg(self) -> LogisticRegression:
        return LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed)

    def _fit(self, pairs: list[Pair], y: np.ndarray) -> None:
        self.vectorizers_ = self._vectorizers()
        texts = [t for pair in pairs for t in pair]
        for vectorizer in self.vectorizers_.values():
            vectorizer.fit(texts)
        x = self.features(pairs)
        self.mean_, self.scale_ = x.mean(axis=0), x.std(axis=0) + 1e-9
        self.logreg_ = self._new_logreg().fit((x - self.mean_) / self.scale_, y)

    def _predict_proba(self, pairs: list[Pair]) -> np.ndarray:
        return self.logreg_.predict_proba((self.features(pairs) - self.mean_) / self.scale_)

    def _save_state(self, directory: Path) -> None:
        state = {name: {"vocabulary": {t: int(i) for t, i in v.vocabulary_.items()}, "idf": v.idf_.tolist()}
                 for name, v in self.vectorizers_.items()}
        state["logreg_classes"] = self.logreg_.classes_.tolist()
        (directory / "vectorizers.json").write_text(json.dumps(state, ensure_ascii=False))
        save_file({"coef": np.ascontiguousarray(self.logreg_.coef_), "intercept": self.logreg_.intercept_,
                   "mean": self.mean_, "scale": self.scale_}, str(directory / "logreg.safetensors"))

    def _load_state(self, directory: Path) -> None:
        state = json.loads((directory / "vectorizers.json").read_text())
        self.vectorizers_ = self._vectorizers()
        for name, vectorizer in self.vectorizers_.items():
            vectorizer.vocabulary_ = state[name]["vocabulary"]
            vectorizer.idf_ = np.asarray(state[name]["idf"], dtype=np.float64)
        weights = load_file(str(directory / "logreg.safetensors"))
        logreg = self._new_logreg()
        logreg.classes_ = np.asarray(state["logreg_classes"], dtype=np.int64)
        logreg.coef_, logreg.intercept_ = weights["coef"], weights["intercept"]
        logreg.n_features_in_ = weights["coef"].shape[1]
        self.logreg_, self.mean_, self.scale_ = logreg, weights["mean"], weights["scale"]


# --- cross-encoder -----------------------------------------------------------------------------------------------

LONG_DOCUMENT_POLICIES = ("windows", "truncate")
INFERENCE_BATCH = 64
# Room for the special tokens, the first text and a window of the second, which overlap by up to a quarter.
MIN_PAIR_LENGTH = 16


class CrossEncoderPairClassifier(PairClassifier):
    """A fine-tuned cross-encoder over ``(a, b)``; see the module docstring for the long-document policy.

    ``positive_label`` names the class whose probability picks the window (default ``"match"``; when the
    labels do not include it the last class in ``classes_`` is used).  ``stride`` is the token overlap of
    consecutive windows.
    """

    backend = "cross-encoder"
    libraries = ("torch", "transformers", "safetensors", "numpy")
    _parameter_constraints = {
        "model_name_or_path": [str, None],
        "epochs": [AT_LEAST_ONE],
        "lr": [POSITIVE],
        "batch_size": [AT_LEAST_ONE],
        "max_length": [Interval(Integral, MIN_PAIR_LENGTH, None, closed="left")],
        "long_documents": [StrOptions(set(LONG_DOCUMENT_POLICIES))],
        "stride": [Interval(Integral, 0, None, closed="left")],
        "positive_label": [str],
        "seed": [SEED],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, model_name_or_path: str | None = None, epochs: int = 1, lr: float = 5e-5,
                 batch_size: int = 16, max_length: int = 128, long_documents: str = "windows", stride: int = 32,
                 positive_label: str = MATCH, seed: int = 0, device: str | None = None,
                 verbose: bool = False) -> None:
        self.model_name_or_path = model_name_or_path
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.max_length = max_length
        self.long_documents = long_documents
        self.stride = stride
        self.positive_label = positive_label
        self.seed = seed
        self.device = device
        self.verbose = verbose

    def _check_params(self) -> None:
        if self.stride > self.max_length // 4:
            raise ParameterError(self.backend, "stride", self.stride,
                                 f"must be at most a quarter of max_length ({self.max_length // 4})",
                                 self.max_length // 4)

    def _positive_index(self) -> int:
        classes = [str(c) for c in self.classes_]
        return classes.index(self.positive_label) if self.positive_label in classes else len(classes) - 1

    @property
    def length_limit(self) -> int:
        """The tokens of the first text the model reads: half of what ``max_length`` leaves after the special
        tokens, so that a window of the second always fits."""
        return (self.max_length - self.tokenizer_.num_special_tokens_to_add(pair=True)) // 2

    def truncated(self, pairs: Sequence[Pair]) -> np.ndarray:
        """Per pair, whether the model reads only the start of a text: the first past :attr:`length_limit`; with
        ``long_documents="truncate"`` also the second past what ``max_length`` leaves (windows read it whole)."""
        self._check_fitted()
        pairs = check_pairs(pairs)
        firsts = np.array([len(ids) for ids in self.tokenizer_([a for a, _ in pairs], add_special_tokens=False)[
            "input_ids"]], dtype=np.int64)
        cut = firsts > self.length_limit
        if self.long_documents == "truncate":
            seconds = np.array([len(ids) for ids in self.tokenizer_([b for _, b in pairs], add_special_tokens=False)[
                "input_ids"]], dtype=np.int64)
            room = self.max_length - self.tokenizer_.num_special_tokens_to_add(pair=True)
            cut |= np.minimum(firsts, self.length_limit) + seconds > room
        return cut

    def windows(self, pairs: Sequence[Pair]) -> tuple[list[dict[str, list[int]]], np.ndarray]:
        """The encoded inputs (one per window) and, for each, the index of its pair.

        The first text is cut to half the token budget when longer, so a window of the document always fits.
        """
        pairs = check_pairs(pairs)
        limit = self.length_limit
        firsts = []
        for (a, _), offsets in zip(pairs, self.tokenizer_([a for a, _ in pairs], add_special_tokens=False,
                                                          return_offsets_mapping=True)["offset_mapping"], strict=True):
            firsts.append(a if len(offsets) <= limit else a[:offsets[limit - 1][1]])
        overflow = self.long_documents == "windows"
        enc = self.tokenizer_(firsts, [b for _, b in pairs], truncation="only_second", max_length=self.max_length,
                              stride=self.stride if overflow else 0, return_overflowing_tokens=overflow)
        names = [n for n in self.tokenizer_.model_input_names if n in enc]
        rows = [{n: enc[n][k] for n in names} for k in range(len(enc["input_ids"]))]
        owner = np.asarray(enc["overflow_to_sample_mapping"] if overflow else range(len(pairs)), dtype=np.int64)
        return rows, owner

    @staticmethod
    def _overlap(row: dict[str, list[int]]) -> int:
        """Token types shared by the first text and the document window of one encoded input."""
        first = {t for t, kind in zip(row["input_ids"], row["token_type_ids"], strict=True) if kind == 0}
        return len(first & {t for t, kind in zip(row["input_ids"], row["token_type_ids"], strict=True) if kind == 1})

    def _training_rows(self, pairs: list[Pair]) -> list[dict[str, list[int]]]:
        """One encoded input per pair: the window sharing the most token types with the first text."""
        rows, owner = self.windows(pairs)
        if len(rows) == len(pairs):
            return rows
        best: dict[int, tuple[int, int]] = {}
        for k, i in enumerate(owner.tolist()):
            score = self._overlap(rows[k]) if "token_type_ids" in rows[k] else 0
            if i not in best or score > best[i][0]:
                best[i] = (score, k)
        return [rows[best[i][1]] for i in range(len(pairs))]

    def _batch(self, rows: Sequence[dict[str, list[int]]]) -> dict:
        batch = self.tokenizer_.pad(list(rows), return_tensors="pt")
        return {name: tensor.to(self.device_) for name, tensor in batch.items()}

    def _fit(self, pairs: list[Pair], y: np.ndarray) -> None:
        import torch

        from tsteval.classifiers.textcnn import resolve_device
        from tsteval.classifiers.transformer import _from_pretrained, check_max_length, default_model_path, fine_tune

        self.device_ = resolve_device(self.device)
        labels = {i: str(c) for i, c in enumerate(self.classes_)}
        targets = torch.from_numpy(y)
        with torch.random.fork_rng(devices=[self.device_] if self.device_.type == "cuda" else []):
            torch.manual_seed(self.seed)
            self.tokenizer_, model = _from_pretrained(self.model_name_or_path or default_model_path(),
                                                      num_labels=len(labels), id2label=labels,
                                                      label2id={c: i for i, c in labels.items()})
            check_max_length(self.tokenizer_, self.max_length, self.backend)
            examples = self._training_rows(pairs)
            self.model_ = model.to(self.device_)
            fine_tune(self.model_, lambda batch: self._batch([examples[i] for i in batch]), targets,
                      epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, seed=self.seed,
                      desc="cross-encoder", verbose=self.verbose)

    def _predict_proba(self, pairs: list[Pair]) -> np.ndarray:
        import torch

        rows, owner = self.windows(pairs)
        order = sorted(range(len(rows)), key=lambda k: len(rows[k]["input_ids"]))
        proba = np.empty((len(rows), len(self.classes_)))
        self.model_.eval()
        with torch.inference_mode():
            for start in range(0, len(order), INFERENCE_BATCH):
                chunk = order[start:start + INFERENCE_BATCH]
                logits = self.model_(**self._batch([rows[k] for k in chunk])).logits
                proba[chunk] = torch.softmax(logits.double(), dim=1).cpu().numpy()
        if len(rows) == len(pairs):
            return proba[np.argsort(owner)]
        # Per pair, the window most in favour of the positive label.
        positive = self._positive_index()
        best = np.full(len(pairs), -1.0)
        result = np.empty((len(pairs), len(self.classes_)))
        for k, i in enumerate(owner.tolist()):
            if proba[k, positive] > best[i]:
                best[i], result[i] = proba[k, positive], proba[k]
        return result

    def _save_state(self, directory: Path) -> None:
        self.model_.save_pretrained(directory)
        self.tokenizer_.save_pretrained(directory)

    def _load_state(self, directory: Path) -> None:
        from tsteval.classifiers.textcnn import resolve_device
        from tsteval.classifiers.transformer import _from_pretrained

        self.device_ = resolve_device(self.device)
        self.tokenizer_, model = _from_pretrained(str(directory))
        if model.config.num_labels != len(self.classes_):
            raise TstevalError(f"{directory} holds a model with {model.config.num_labels} labels but its manifest "
                               f"names {len(self.classes_)} classes; the directory is corrupt")
        self.model_ = model.to(self.device_).eval()
