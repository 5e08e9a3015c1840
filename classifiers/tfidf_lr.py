r"""TF-IDF n-grams + logistic regression: the fast, strong linear baseline for style classification.

Saved without pickle: the vocabulary, idf weights and vectoriser settings go to ``tfidf.json`` and
the coefficients to ``logreg.safetensors``; loading rebuilds fitted scikit-learn objects from them,
so a reloaded model gives bit-identical probabilities.

Words are scikit-learn's (runs of two or more word characters) with combining marks counted as word characters:
scikit-learn's default pattern (Python's ``\w``) breaks Devanagari, Bengali, Telugu or Kannada words at every
vowel sign (``किताब`` became ``ताब``, its first letter dropped as a one-letter word).  On ASCII text the two read
the same words; a model saved before reads as it was trained (``tfidf.json`` without ``"words"``).

>>> words("किताब पढ़ो, don't")
['किताब', 'पढ़ो', 'don']
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import regex
from safetensors.numpy import load_file, save_file
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import Interval, RealNotInt

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, IntSequence, ParameterError, TextClassifier
from tsteval.core.errors import TstevalError

VECTORIZER_FILE = "tfidf.json"
WEIGHTS_FILE = "logreg.safetensors"
WORDS = "marks-1"  # the word pattern's version in tfidf.json and in the cache key of non-ASCII corpora
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}_]{2,}")


def words(text: str) -> list[str]:
    """The words the vectoriser reads in ``text`` (lower-cased before): runs of two or more letters, marks,
    digits or underscores."""
    return _WORD.findall(text)


class TfidfLogisticRegression(TextClassifier):
    """Word n-gram TF-IDF features and an L2 logistic regression (multinomial when k > 2)."""

    backend = "tfidf-lr"
    libraries = ("scikit-learn", "numpy")
    _parameter_constraints = {
        "ngram_range": [IntSequence(low=1, length=2)],
        # As scikit-learn's vectoriser: a document count, or a share of the documents.
        "min_df": [AT_LEAST_ONE, Interval(RealNotInt, 0, 1, closed="both")],
        "C": [POSITIVE],
        "max_iter": [AT_LEAST_ONE],
        "seed": [SEED],
    }

    def __init__(self, ngram_range: tuple[int, int] = (1, 2), min_df: int | float = 1, C: float = 1.0,
                 max_iter: int = 1000, seed: int = 0) -> None:
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.C = C
        self.max_iter = max_iter
        self.seed = seed

    def _check_params(self) -> None:
        low, high = self.ngram_range
        if low > high:
            raise ParameterError(self.backend, "ngram_range", self.ngram_range,
                                 "must be [low, high] with low <= high", [high, low])

    def _new_vectorizer(self, marks: bool = True) -> TfidfVectorizer:
        """The vectoriser; ``marks=False``: scikit-learn's default word pattern (a model saved before :data:`WORDS`)."""
        if not marks:
            return TfidfVectorizer(ngram_range=tuple(self.ngram_range), min_df=self.min_df, dtype=np.float64)
        return TfidfVectorizer(ngram_range=tuple(self.ngram_range), min_df=self.min_df, dtype=np.float64,
                               tokenizer=words, token_pattern=None)

    def cache_key_extra(self, texts: list[str]) -> tuple[str, ...]:
        """:data:`WORDS` for a corpus with any non-ASCII text (ASCII is read as before: cached models stay valid)."""
        return () if all(t.isascii() for t in texts) else (f"words:{WORDS}",)

    def _new_logreg(self) -> LogisticRegression:
        # lbfgs fits a multinomial (softmax) model whenever there are more than two classes.
        return LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed, solver="lbfgs")

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        self.vectorizer_ = self._new_vectorizer()
        try:
            features = self.vectorizer_.fit_transform(texts)
        except ValueError as error:  # no n-gram left: min_df above every count, or no word of two letters
            raise TstevalError(f"tfidf-lr kept no n-gram of the training texts ({error}) (fix: lower min_df, e.g. "
                               "--param min_df=1, or give texts with words of two or more letters)") from error
        self.logreg_ = self._new_logreg().fit(features, y)

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        return self.logreg_.predict_proba(self.vectorizer_.transform(texts))

    def _save_state(self, directory: Path) -> None:
        vocabulary = {term: int(index) for term, index in self.vectorizer_.vocabulary_.items()}
        state = {"vocabulary": vocabulary, "idf": self.vectorizer_.idf_.tolist(),
                 "logreg_classes": self.logreg_.classes_.tolist(), "words": WORDS}
        (directory / VECTORIZER_FILE).write_text(json.dumps(state, ensure_ascii=False))
        save_file({"coef": np.ascontiguousarray(self.logreg_.coef_),
                   "intercept": np.ascontiguousarray(self.logreg_.intercept_)}, str(directory / WEIGHTS_FILE))

    def _load_state(self, directory: Path) -> None:
        state = json.loads((directory / VECTORIZER_FILE).read_text())
        vectorizer = self._new_vectorizer(marks=state.get("words") == WORDS)
        vectorizer.vocabulary_ = state["vocabulary"]
        vectorizer.idf_ = np.asarray(state["idf"], dtype=np.float64)
        weights = load_file(str(directory / WEIGHTS_FILE))
        logreg = self._new_logreg()
        logreg.classes_ = np.asarray(state["logreg_classes"], dtype=np.int64)
        logreg.coef_ = weights["coef"]
        logreg.intercept_ = weights["intercept"]
        logreg.n_features_in_ = weights["coef"].shape[1]
        self.vectorizer_, self.logreg_ = vectorizer, logreg
