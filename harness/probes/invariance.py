"""Style invariance of sentence embeddings (Fitzpatrick, Park & Obst, 2022), and tie-free scores beyond it.

Content-preservation metrics compare embeddings of an input and its transfer by cosine; that is fair only
if the embedding ignores style.  Fitzpatrick et al. embed non-parallel sentences of 11 styles, average the
cosine of every pair of sentences from styles A and B, and count the styles most similar to themselves
(chance: 1 in 11).  That count is coarse (it ties, and a near-miss counts as nothing), so we add a
label-permutation test, a cross-validated linear probe (can style be read off the embedding at all?) and
the share of embedding variance between styles.

Every cosine is of unit-normalised rows, so the mean cosine of styles A and B is ``s_A . s_B / (n_A n_B)``
with ``s_A`` the sum of A's unit vectors; within a style the n_A self-pairs (cosine 1) are excluded:
``(|s_A|^2 - n_A) / (n_A (n_A - 1))``.  That makes the matrix exact, symmetric and O(n d), and lets the
permutation test recompute it for hundreds of relabellings at once.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import sparse

from tsteval.core.cache import cached_dir
from tsteval.core.errors import InputError
from tsteval.core.signature import content_hash, package_version, texts_hash
from tsteval.core.tokenize import tokenize
from tsteval.metrics.content.word_vectors import WordVectors

Embedder = Callable[[Sequence[str]], np.ndarray]


# --- input checks -----------------------------------------------------------------------------------------------

def _unit_rows(embeddings: ArrayLike, labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Unit-normalised float64 rows, integer style codes and the sorted style names; bad input raises."""
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"embeddings must be a 2-D (texts x dimensions) array, got shape {x.shape}")
    if len(labels) != len(x):
        raise InputError(f"{len(x)} embeddings but {len(labels)} style labels")
    if not np.isfinite(x).all():
        raise InputError("embeddings contain NaN or infinite values")
    norms = np.linalg.norm(x, axis=1)
    if (norms == 0).any():
        raise InputError(f"{int((norms == 0).sum())} embeddings are zero vectors (cosine undefined), e.g. row "
                         f"{int(np.argmax(norms == 0))}", fix="drop texts with no in-vocabulary word first")
    styles, codes = np.unique(np.asarray([str(label) for label in labels]), return_inverse=True)
    if len(styles) < 2:
        raise InputError(f"style invariance needs at least 2 styles, got {len(styles)}")
    counts = np.bincount(codes)
    if counts.min() < 2:
        raise InputError(f"style {styles[int(np.argmin(counts))]!r} has {counts.min()} text; every style needs 2+")
    return x / norms[:, None], codes, [str(s) for s in styles]


# --- Fitzpatrick et al.'s matrix and counts ------------------------------------------------------------------

def _matrix_from_sums(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Mean pairwise cosines between styles from per-style sums of unit vectors; self-pairs excluded.

    ``sums`` is (..., k, d); the result (..., k, k).
    """
    gram = sums @ np.swapaxes(sums, -1, -2)
    matrix = gram / np.outer(counts, counts)
    diagonal = (np.diagonal(gram, axis1=-2, axis2=-1) - counts) / (counts * (counts - 1))
    k = len(counts)
    matrix[..., np.arange(k), np.arange(k)] = diagonal
    return matrix


def similarity_matrix(embeddings: ArrayLike, labels: Sequence[str]) -> pd.DataFrame:
    """Fitzpatrick et al.'s Tables 1-3: mean cosine of every pair of sentences of styles A and B.

    Rows and columns are the sorted style names; the diagonal excludes each sentence's pair with itself.
    """
    unit, codes, styles = _unit_rows(embeddings, labels)
    counts = np.bincount(codes).astype(np.float64)
    sums = np.zeros((len(styles), unit.shape[1]))
    np.add.at(sums, codes, unit)
    return pd.DataFrame(_matrix_from_sums(sums, counts), index=styles, columns=styles)


def most_similar(matrix: pd.DataFrame, tolerance: float = 1e-12) -> dict[str, list[str]]:
    """Each style's most similar style(s) along its row (ties within ``tolerance`` all listed)."""
    values = matrix.to_numpy()
    return {style: [matrix.columns[j] for j in np.flatnonzero(row >= row.max() - tolerance)]
            for style, row in zip(matrix.index, values, strict=True)}


def _self_count(matrices: np.ndarray) -> np.ndarray:
    """How many styles are at least as similar to themselves as to any other style, per (..., k, k) matrix."""
    diagonal = np.diagonal(matrices, axis1=-2, axis2=-1)
    return (diagonal >= matrices.max(axis=-1)).sum(axis=-1)


def _gap(matrices: np.ndarray) -> np.ndarray:
    """Mean within-style cosine minus mean between-style cosine (styles weighted equally), per matrix."""
    k = matrices.shape[-1]
    diagonal = np.diagonal(matrices, axis1=-2, axis2=-1).sum(axis=-1)
    return diagonal / k - (matrices.sum(axis=(-2, -1)) - diagonal) / (k * (k - 1))


@dataclass(frozen=True)
class PermutationTest:
    """Observed statistics, their permutation p-values ``(1 + #{null >= observed}) / (1 + B)`` and the null means."""

    self_count: int
    self_count_p: float
    self_count_null_mean: float
    gap: float
    gap_p: float
    gap_null_mean: float
    n_permutations: int
    seed: int


def permutation_test(embeddings: ArrayLike, labels: Sequence[str], n_permutations: int = 1000, seed: int = 0,
                     chunk: int = 100) -> PermutationTest:
    """Shuffle the style labels (seeded) and recompute the self-similarity count and the within-between gap.

    Each chunk of relabellings is one sparse indicator product giving every permutation's style sums at once.
    """
    if n_permutations < 1:
        raise InputError(f"n_permutations must be positive, got {n_permutations}")
    unit, codes, styles = _unit_rows(embeddings, labels)
    counts = np.bincount(codes).astype(np.float64)
    k, n = len(styles), len(codes)
    sums = np.zeros((k, unit.shape[1]))
    np.add.at(sums, codes, unit)
    observed = _matrix_from_sums(sums, counts)
    rng = np.random.default_rng(seed)
    null_count, null_gap = [], []
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        shuffled = np.stack([rng.permutation(codes) for _ in range(size)])  # (size, n)
        columns = (shuffled + k * np.arange(size)[:, None]).ravel()
        indicator = sparse.csr_matrix((np.ones(size * n), (columns, np.tile(np.arange(n), size))),
                                      shape=(size * k, n))
        matrices = _matrix_from_sums((indicator @ unit).reshape(size, k, -1), counts)
        null_count.append(_self_count(matrices))
        null_gap.append(_gap(matrices))
    counts_null, gaps_null = np.concatenate(null_count), np.concatenate(null_gap)
    self_count, gap = int(_self_count(observed)), float(_gap(observed))
    return PermutationTest(
        self_count=self_count, self_count_p=float((1 + (counts_null >= self_count).sum()) / (1 + n_permutations)),
        self_count_null_mean=float(counts_null.mean()), gap=gap,
        gap_p=float((1 + (gaps_null >= gap).sum()) / (1 + n_permutations)), gap_null_mean=float(gaps_null.mean()),
        n_permutations=n_permutations, seed=seed)


# --- tie-free scores ---------------------------------------------------------------------------------------------

def between_share(embeddings: ArrayLike, labels: Sequence[str]) -> float:
    """Between-style sum of squares over the total, ``sum_A n_A |m_A - m|^2 / sum_i |u_i - m|^2``, on unit rows.

    A multivariate R^2 (one-way MANOVA's trace ratio): 0 when every style has the same mean embedding.
    With random labels its expectation is about ``(k - 1) / (n - 1)``.
    """
    unit, codes, styles = _unit_rows(embeddings, labels)
    centred = unit - unit.mean(axis=0)
    total = float((centred**2).sum())
    if total == 0:
        raise InputError("every embedding points the same way: the variance is zero")
    counts = np.bincount(codes).astype(np.float64)
    means = np.zeros((len(styles), unit.shape[1]))
    np.add.at(means, codes, centred)
    means /= counts[:, None]
    return float((counts * (means**2).sum(axis=1)).sum() / total)


@dataclass(frozen=True)
class ProbeResult:
    """Cross-validated accuracy of a linear style probe, per fold, beside the majority-class chance rate."""

    accuracy: float
    fold_accuracies: tuple[float, ...]
    chance: float
    folds: int
    seed: int


def probe_accuracy(embeddings: ArrayLike, labels: Sequence[str], folds: int = 5, seed: int = 0,
                   max_iter: int = 1000) -> ProbeResult:
    """Stratified ``folds``-fold accuracy of multinomial logistic regression predicting style from unit rows.

    Rows are unit-normalised (the cosine geometry being probed) and standardised inside each fold.
    An embedding that ignores style leaves the probe at chance; 1.0 means style is linearly readable.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    unit, codes, _ = _unit_rows(embeddings, labels)
    smallest = int(np.bincount(codes).min())
    if smallest < folds:
        raise InputError(f"the smallest style has {smallest} texts, fewer than the {folds} folds")
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=max_iter))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_score(model, unit, codes, cv=splitter, scoring="accuracy", n_jobs=1)
    return ProbeResult(accuracy=float(scores.mean()), fold_accuracies=tuple(float(s) for s in scores),
                       chance=float(np.bincount(codes).max() / len(codes)), folds=folds, seed=seed)


# --- everything for one embedder ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class InvarianceReport:
    """Fitzpatrick et al.'s matrix, most-similar styles and self-similarity count, with our added scores."""

    matrix: pd.DataFrame
    most_similar: dict[str, list[str]]
    self_similar: list[str]
    permutation: PermutationTest
    probe: ProbeResult | None
    between_share: float
    between_chance: float
    n: int
    styles: list[str] = field(default_factory=list)

    @property
    def self_count(self) -> int:
        """Styles at least as similar to themselves as to any other (ties count, as a bold tie would)."""
        return len(self.self_similar)

    @property
    def self_share(self) -> float:
        """Self-similarity count over the number of styles; chance is 1 / k."""
        return self.self_count / len(self.styles)

    @property
    def chance(self) -> float:
        """The share of self-similar styles expected if the most similar style were uniform: 1 / k."""
        return 1.0 / len(self.styles)


def style_invariance(embeddings: ArrayLike, labels: Sequence[str], n_permutations: int = 1000, seed: int = 0,
                     probe: bool = True, folds: int = 5) -> InvarianceReport:
    """Every style-invariance statistic of one embedding of a labelled corpus (seeded, deterministic)."""
    matrix = similarity_matrix(embeddings, labels)
    best = most_similar(matrix)
    styles = list(matrix.index)
    n = len(labels)
    return InvarianceReport(
        matrix=matrix, most_similar=best, self_similar=[s for s in styles if s in best[s]],
        permutation=permutation_test(embeddings, labels, n_permutations, seed),
        probe=probe_accuracy(embeddings, labels, folds, seed) if probe else None,
        between_share=between_share(embeddings, labels), between_chance=(len(styles) - 1) / (n - 1), n=n,
        styles=styles)


# --- embedders ---------------------------------------------------------------------------------------------------

def summed_word_vectors(vectors: WordVectors) -> Embedder:
    """Sentence = element-wise sum of its tokens' word vectors (OOV tokens dropped), as Fitzpatrick et al."""

    def embed(texts: Sequence[str]) -> np.ndarray:
        rows, cols = [], []
        for i, text in enumerate(texts):
            ids = vectors.ids(tokenize(text))
            rows += [i] * len(ids)
            cols += ids
        counts = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                                   shape=(len(texts), len(vectors.vocab)))
        return np.asarray(counts @ vectors.vectors)

    return embed


def train_fasttext(texts: Sequence[str], dim: int = 100, epoch: int = 5, min_count: int = 5,
                   bucket: int = 200_000) -> Path:
    """Path of an unsupervised fastText skip-gram model on our tokenizer's tokens, cached by texts+params.

    One thread and a zero-filled heap (:func:`tsteval.classifiers.fasttext_backend.zeroed_heap`: fasttext-numpy2
    leaves most of its input matrix uninitialised) make it reproducible.
    fasttext-numpy2's ``train_unsupervised`` accepts no ``seed``: its fixed default, 0, is used.  The model
    stays in fastText's own ``.bin`` format (no pickle).
    """
    import fasttext

    from tsteval.classifiers.fasttext_backend import zeroed_heap

    options = {"model": "skipgram", "dim": dim, "epoch": epoch, "minCount": min_count, "bucket": bucket,
               "thread": 1}
    key = content_hash(texts_hash(texts), options, "seed=0", package_version("fasttext-numpy2"))

    def build(tmp: Path) -> None:
        with tempfile.TemporaryDirectory(prefix="tsteval-fasttext-") as work:
            corpus = Path(work) / "corpus.txt"
            corpus.write_text("".join(" ".join(tokenize(t)) + "\n" for t in texts), encoding="utf-8")
            with zeroed_heap():
                model = fasttext.train_unsupervised(input=str(corpus), verbose=0, **options)
            model.save_model(str(tmp / "model.bin"))

    return cached_dir("fasttext-unsupervised", key, build) / "model.bin"


def summed_fasttext(model_path: Path) -> Embedder:
    """Sentence = sum of fastText word vectors of its tokens; OOV words get their subword vectors."""
    import fasttext

    model = fasttext.load_model(str(model_path))
    cache: dict[str, np.ndarray] = {}

    def vector(token: str) -> np.ndarray:
        if token not in cache:
            cache[token] = model.get_word_vector(token)
        return cache[token]

    def embed(texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), model.get_dimension()), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in tokenize(text):
                out[i] += vector(token)
        return out

    return embed


def sentence_encoder(model: str | None = None) -> Embedder:
    """A Hugging Face encoder with attention-masked mean pooling (MiniLM by default); any id or local path."""
    from tsteval.metrics.content.sentence_embedding import encode

    def embed(texts: Sequence[str]) -> np.ndarray:
        return encode(list(texts), model)

    return embed
