"""De Mattei et al.'s TF-IDF pair builder: align two collections by cosine, then label pairs for HH training.

Both collections are embedded with one TF-IDF vectoriser fitted on their union (L2-normalised rows, so a dot
product is the cosine).  Candidates are restricted to the same *block* (De Mattei et al. compare only news
published in the same short time window; for the Bible a block is a book), and each block's cosines are
computed as a sparse product a few hundred rows at a time, keeping only entries at or above the loose
threshold: nothing dense of size n x n is ever built.  With ``best_only`` (the default, their "rank them")
each left text keeps only its best-scoring right text.

Groups: ``positive`` (cosine > ``strict``, 0.5), ``loose`` (``loose`` < cosine <= ``strict``, i.e. 0.185-0.5:
kept apart, used neither as positives nor as negatives) and ``negative``: as many random pairs as positives,
drawn uniformly (seeded) from all left x right pairs, any block, whose cosine is at most ``loose`` and which are
not positives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from tsteval.core.errors import InputError

STRICT = 0.5
LOOSE = 0.185
QUALITY_THRESHOLDS = (0.185, 0.3, 0.5, 0.7)
ROW_BATCH = 512


def _blocks(n: int, blocks: Sequence[object] | None, side: str) -> np.ndarray:
    if blocks is None:
        return np.zeros(n, dtype=object)
    if len(blocks) != n:
        raise InputError(f"{len(blocks)} {side} blocks for {n} {side} texts; give one block per text")
    return np.asarray(blocks, dtype=object)


def tfidf_vectors(left: Sequence[str], right: Sequence[str]) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """L2-normalised TF-IDF rows of both collections, with the vocabulary and idf of their union."""
    vectorizer = TfidfVectorizer(lowercase=True, token_pattern=r"\w+", dtype=np.float64)
    vectorizer.fit(list(left) + list(right))
    return vectorizer.transform(left).tocsr(), vectorizer.transform(right).tocsr()


def candidate_pairs(left_vectors: sparse.csr_matrix, right_vectors: sparse.csr_matrix, left_blocks: np.ndarray,
                    right_blocks: np.ndarray, minimum: float) -> pd.DataFrame:
    """Every same-block pair with cosine >= ``minimum``: columns ``left, right, cosine`` (sparse, batched)."""
    found = []
    right_by_block = pd.Series(np.arange(len(right_blocks))).groupby(right_blocks).apply(np.asarray).to_dict()
    for block, left_rows in pd.Series(np.arange(len(left_blocks))).groupby(left_blocks):
        right_rows = right_by_block.get(block)
        if right_rows is None:
            continue
        right_block = right_vectors[right_rows].T.tocsc()
        left_rows = left_rows.to_numpy()
        for start in range(0, len(left_rows), ROW_BATCH):
            rows = left_rows[start:start + ROW_BATCH]
            product = (left_vectors[rows] @ right_block).tocoo()
            keep = product.data >= minimum
            found.append(pd.DataFrame({"left": rows[product.row[keep]], "right": right_rows[product.col[keep]],
                                       "cosine": product.data[keep]}))
    if not found:
        return pd.DataFrame({"left": [], "right": [], "cosine": []})
    return pd.concat(found, ignore_index=True)


def build_pairs(left: Sequence[str], right: Sequence[str], *, left_blocks: Sequence[object] | None = None,
                right_blocks: Sequence[object] | None = None, strict: float = STRICT, loose: float = LOOSE,
                best_only: bool = True, seed: int = 0) -> pd.DataFrame:
    """Labelled pairs ``left, right, cosine, group, label`` (indices into ``left``/``right``).

    ``group`` is ``positive``, ``loose`` or ``negative``; ``label`` is 1 for positives, 0 for negatives and
    missing for the loose band.  See the module docstring for blocks, ``best_only`` and the negatives.
    """
    if not 0 <= loose < strict <= 1:
        raise InputError(f"thresholds must satisfy 0 <= loose < strict <= 1, not loose={loose}, strict={strict}")
    if len(left) == 0 or len(right) == 0:
        raise InputError("both collections need at least one text")
    left_vectors, right_vectors = tfidf_vectors(left, right)
    candidates = candidate_pairs(left_vectors, right_vectors, _blocks(len(left), left_blocks, "left"),
                                 _blocks(len(right), right_blocks, "right"), np.nextafter(loose, 1.0))
    if best_only and not candidates.empty:
        candidates = candidates.sort_values(["left", "cosine"], ascending=[True, False], kind="stable")
        candidates = candidates.drop_duplicates("left")
    candidates["group"] = np.where(candidates["cosine"] > strict, "positive", "loose")
    positives = candidates[candidates["group"] == "positive"]
    negatives = random_negatives(left_vectors, right_vectors, len(positives), loose,
                                 set(zip(positives["left"], positives["right"], strict=True)), seed)
    pairs = pd.concat([candidates, negatives], ignore_index=True)
    pairs["label"] = pairs["group"].map({"positive": 1, "negative": 0}).astype("Int64")
    return pairs.sort_values(["group", "left", "right"], kind="stable").reset_index(drop=True)


def random_negatives(left_vectors: sparse.csr_matrix, right_vectors: sparse.csr_matrix, n: int, loose: float,
                     exclude: set[tuple[int, int]], seed: int) -> pd.DataFrame:
    """``n`` distinct random pairs with cosine <= ``loose`` that are not in ``exclude`` (rejection sampling)."""
    rng = np.random.default_rng(seed)
    chosen: dict[tuple[int, int], float] = {}
    n_left, n_right = left_vectors.shape[0], right_vectors.shape[0]
    for _ in range(100):
        if len(chosen) >= n:
            break
        size = 2 * (n - len(chosen)) + 16
        rows, cols = rng.integers(0, n_left, size), rng.integers(0, n_right, size)
        cosines = np.asarray(left_vectors[rows].multiply(right_vectors[cols]).sum(axis=1)).ravel()
        for i, j, c in zip(rows.tolist(), cols.tolist(), cosines.tolist(), strict=True):
            if c <= loose and (i, j) not in exclude and (i, j) not in chosen and len(chosen) < n:
                chosen[(i, j)] = c
    if len(chosen) < n:
        raise InputError(f"found only {len(chosen)} of {n} random pairs below the cosine {loose}; the collections "
                         "are too similar or too small for random negatives")
    return pd.DataFrame({"left": [k[0] for k in chosen], "right": [k[1] for k in chosen],
                         "cosine": list(chosen.values()), "group": "negative"})


def alignment_quality(pairs: pd.DataFrame, true_alignment: Iterable[tuple[int, int]],
                      thresholds: Sequence[float] = QUALITY_THRESHOLDS) -> pd.DataFrame:
    """Precision and recall of the pairs with cosine > t against the true (left, right) alignment, per t.

    ``pairs`` needs ``left, right, cosine`` (negatives, if present, are ignored); precision is the share of
    kept pairs that are true alignments, recall the share of true alignments kept.
    """
    truth = set(true_alignment)
    if not truth:
        raise InputError("the true alignment is empty")
    aligned = pairs if "group" not in pairs else pairs[pairs["group"] != "negative"]
    correct = np.array([(i, j) in truth for i, j in zip(aligned["left"], aligned["right"], strict=True)], dtype=bool)
    cosine = aligned["cosine"].to_numpy()
    rows = []
    for t in thresholds:
        kept = cosine > t
        n_kept, n_true = int(kept.sum()), int((kept & correct).sum())
        rows.append({"threshold": t, "pairs": n_kept, "true_pairs": n_true,
                     "precision": n_true / n_kept if n_kept else float("nan"), "recall": n_true / len(truth)})
    return pd.DataFrame(rows)
