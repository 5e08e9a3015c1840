"""Build a style lexicon from a labelled corpus, as Mir et al. (2019, appendix A.1) do.

A logistic regression on binary bag-of-words features (``CountVectorizer(binary=True)`` with the shared
tokenizer) weighs every word; the words whose weight lies at least ``D`` standard deviations from the
mean weight form the lexicon.  Following Mir et al.'s released code (``extract_nonzero_weights`` and
``select_feature_numbers``), the mean and standard deviation are taken over the *nonzero* weights only:
with an L1 penalty most words get exactly zero, and counting them would shrink the spread and admit
noise.  (Their code uses strict inequalities, the paper says "at or beyond"; we use at-or-beyond, which
differs only on exact ties.)

* Two styles: one weight vector for the second (sorted) style.  Words with weight >= mean + D*sd go to
  that style, words with weight <= mean - D*sd to the other; weights keep their sign, so the first
  style's words have negative weights, as in Mir et al.'s published file.
* Three or more styles: one-vs-rest, one binary classifier per style (Mir et al.'s footnote).  A style
  keeps only the words with weight >= mean + D*sd of *its* classifier.  Strongly negative words are not
  kept: in a one-vs-rest model they mark "some other style", and the classifier of that other style
  already picks them up with a positive weight; keeping them would file one style's words under another.

The fit (vectorizer + regressions) does not depend on ``D``, so :class:`LexiconModel` fits once and
:meth:`LexiconModel.select` cuts lexicons for any number of ``D`` values.  Fits are cached by a content
hash of the corpus and the configuration (``tsteval.core.cache``).
"""

from __future__ import annotations

import inspect
import math
import warnings
from pathlib import Path
from typing import Self

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from tsteval.classifiers.corpus_checks import check_styles_separable
from tsteval.core.cache import cached_dir
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import Corpus
from tsteval.core.signature import content_hash, package_version, texts_hash
from tsteval.core.tokenize import cache_key_part, tokenize
from tsteval.lexicons.lexicon import Lexicon

PENALTIES = ("l1", "l2", None)
# Bump when the fitted quantities change meaning, so old cache entries are not reused.
FIT_VERSION = 1
FIT_FILE = "fit.npz"
MAX_ITER = 1000


def _logistic_regression(penalty: str | None, C: float, seed: int) -> LogisticRegression:
    """A logistic regression with ``penalty``, written for scikit-learn before and after 1.8 (``penalty`` deprecated).

    L1 and L2 use liblinear (deterministic and fast on sparse binary features); no penalty needs lbfgs.
    """
    modern = inspect.signature(LogisticRegression).parameters["penalty"].default == "deprecated"
    if penalty is None:
        kwargs: dict = {"C": math.inf} if modern else {"penalty": None}
        return LogisticRegression(**kwargs, solver="lbfgs", max_iter=MAX_ITER, random_state=seed)
    kwargs = {"l1_ratio": 1.0 if penalty == "l1" else 0.0} if modern else {"penalty": penalty}
    return LogisticRegression(**kwargs, C=C, solver="liblinear", max_iter=MAX_ITER, random_state=seed)


def _bounds(weights: np.ndarray, D: float) -> tuple[float, float] | None:
    """``(mean - D*sd, mean + D*sd)`` over the nonzero weights, or None when they have no spread."""
    nonzero = weights[weights != 0]
    if nonzero.size < 2 or np.std(nonzero) == 0:
        return None
    mean, sd = float(np.mean(nonzero)), float(np.std(nonzero))
    return mean - D * sd, mean + D * sd


class LexiconModel:
    """Logistic-regression word weights of a corpus, fitted once, from which lexicons are selected by ``D``.

    ``penalty`` is ``"l1"``, ``"l2"`` or ``None`` (unpenalised; ``C`` is then ignored); ``min_df`` drops
    words seen in fewer documents.  After :meth:`fit`: ``classes_`` (sorted styles), ``vocabulary_``
    (words), ``weights_`` (one row per classifier: a single row for the second style when there are two
    styles, else one row per style) and ``converged_``.
    """

    def __init__(self, penalty: str | None = "l1", C: float = 3.0, seed: int = 0, min_df: int = 1,
                 use_cache: bool = True) -> None:
        penalty = None if penalty == "none" else penalty
        if penalty not in PENALTIES:
            raise TstevalError(f"penalty must be one of {PENALTIES} (or 'none'), not {penalty!r}")
        if not C > 0:
            raise TstevalError(f"C must be positive, not {C}")
        if not isinstance(min_df, int) or min_df < 1:
            raise TstevalError(f"min_df must be a positive integer (a document count), not {min_df!r}")
        self.penalty = penalty
        self.C = C
        self.seed = seed
        self.min_df = min_df
        self.use_cache = use_cache

    def config(self) -> dict:
        """The parameters that determine the fit (for cache keys and reports)."""
        return {"penalty": self.penalty, "C": None if self.penalty is None else self.C, "seed": self.seed,
                "min_df": self.min_df}

    def fit(self, corpus: Corpus) -> Self:
        """Fit the vectorizer and the regression(s) on ``corpus``, or load the cached fit."""
        classes = corpus.styles
        if len(classes) < 2:
            raise InputError(f"the corpus has a single style ({classes[0]!r}); a lexicon contrasts at least two",
                             path=corpus.origin, fix="add texts of another style")
        key = content_hash("lexicon-fit", FIT_VERSION, self.config(), package_version("scikit-learn"),
                           texts_hash(corpus.texts), texts_hash(corpus.labels), *cache_key_part(corpus.texts))
        if self.use_cache:
            path = cached_dir("lexicon-fits", key, lambda directory: self._fit_and_save(corpus, directory))
            self._load(path / FIT_FILE)
        else:
            self._fit(corpus)
        return self

    def _fit(self, corpus: Corpus) -> None:
        vectorizer = CountVectorizer(binary=True, tokenizer=tokenize, lowercase=False, token_pattern=None,
                                     min_df=self.min_df)
        try:
            features = vectorizer.fit_transform(corpus.texts)
        except ValueError as error:
            raise InputError(f"no words left to weigh: {error}", path=corpus.origin,
                             fix="lower min_df or give a larger corpus") from error
        labels = np.asarray(corpus.labels)
        self.classes_ = corpus.styles
        targets = [self.classes_[1]] if len(self.classes_) == 2 else self.classes_
        rows = []
        converged = True
        for style in targets:
            model = _logistic_regression(self.penalty, self.C, self.seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model.fit(features, labels == style)
            converged &= bool(np.all(np.asarray(model.n_iter_) < MAX_ITER))
            rows.append(model.coef_[0])
        self.vocabulary_ = vectorizer.get_feature_names_out().astype(str)
        self.weights_ = np.vstack(rows)
        self.converged_ = converged

    def _fit_and_save(self, corpus: Corpus, directory: Path) -> None:
        self._fit(corpus)
        np.savez(directory / FIT_FILE, classes=np.asarray(self.classes_, dtype=str), vocabulary=self.vocabulary_,
                 weights=self.weights_, converged=np.asarray(self.converged_))

    def _load(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as fit:
            self.classes_ = [str(c) for c in fit["classes"]]
            self.vocabulary_ = fit["vocabulary"]
            self.weights_ = fit["weights"]
            self.converged_ = bool(fit["converged"])

    def _check_fitted(self) -> None:
        if not hasattr(self, "weights_"):
            raise TstevalError("this LexiconModel is not fitted yet; call fit() first")

    @property
    def nonzero_weights(self) -> int:
        """How many (classifier, word) weights are nonzero: L1 gives far fewer than L2."""
        self._check_fitted()
        return int(np.count_nonzero(self.weights_))

    def word_weights(self) -> dict[str, np.ndarray]:
        """Each word's weight row (one value per classifier), for inspection."""
        self._check_fitted()
        return {str(word): self.weights_[:, i] for i, word in enumerate(self.vocabulary_)}

    def _pairs(self, weights: np.ndarray, chosen: np.ndarray) -> list[tuple[str, float]]:
        return [(str(self.vocabulary_[i]), float(weights[i])) for i in np.flatnonzero(chosen)]

    def select(self, D: float = 2.0) -> Lexicon:
        """The lexicon of words at least ``D`` standard deviations from the mean nonzero weight."""
        self._check_fitted()
        if not D > 0:
            raise TstevalError(f"D must be positive, not {D}")
        entries: dict[str, list[tuple[str, float]]] = {style: [] for style in self.classes_}
        binary = len(self.classes_) == 2
        for row, weights in enumerate(self.weights_):
            bounds = _bounds(weights, D)
            if bounds is None:
                continue
            low, high = bounds
            style = self.classes_[1] if binary else self.classes_[row]
            nonzero = weights != 0
            entries[style] += self._pairs(weights, nonzero & (weights >= high))
            if binary:
                entries[self.classes_[0]] += self._pairs(weights, nonzero & (weights <= low))
        return Lexicon(entries, origin=f"LexiconModel({self.config()}, D={D:g})")


def build_lexicon(corpus: Corpus, penalty: str | None = "l1", C: float = 3.0, D: float = 2.0, seed: int = 0,
                  min_df: int = 1) -> Lexicon:
    """Fit a :class:`LexiconModel` on ``corpus`` and select the lexicon at ``D`` standard deviations.

    A corpus whose texts mostly appear under several styles is refused (:mod:`tsteval.classifiers.corpus_checks`).
    """
    check_styles_separable(corpus)
    return LexiconModel(penalty, C, seed, min_df).fit(corpus).select(D)
