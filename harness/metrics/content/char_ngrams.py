"""sacreBLEU's chrF statistics for many pairs at once, in numpy.

``CHRF._compute_segment_statistics`` (one reference, ``word_order=0``, whitespace removed) counts, per character
n-gram order, the hypothesis n-grams (0 when the reference has none), the reference n-grams and the clipped
matches, with a Python ``Counter`` per text and order.  :func:`char_statistics` gets the same integers for a
chunk of pairs from sorted integer codes: each character becomes a small id, each n-gram the base-``B`` number
of its ids (exact, no hashing), offset by its pair; ``np.unique`` counts them and ``np.intersect1d`` finds the
matches.  It returns None when the codes would not fit in 62 bits (a chunk with very many distinct characters);
the caller then uses sacreBLEU's own per-segment path.

>>> char_statistics(["ab c"], ["abc"], 2).tolist()
[[3, 3, 3, 2, 2, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_LIMIT = 2**62


def _code_points(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of all texts, concatenated, and each text's length."""
    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    return np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32), lengths


def _ngram_keys(ids: np.ndarray, lengths: np.ndarray, base: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A key per n-gram (pair * base**n + its code) and its pair."""
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    count = np.maximum(lengths - n + 1, 0)
    pair = np.repeat(np.arange(len(lengths), dtype=np.int64), count)
    position = np.repeat(starts - np.concatenate([[0], np.cumsum(count)[:-1]]), count) + np.arange(int(count.sum()))
    code = np.zeros(len(position), dtype=np.int64)
    for k in range(n):
        code = code * base + ids[position + k]
    return pair * base**n + code, pair


def char_statistics(refs: Sequence[str], hyps: Sequence[str], order: int) -> np.ndarray | None:
    """Per pair ``[hyp, ref, match]`` counts of character n-grams of orders 1..``order`` (shape (n, 3*order)),
    as ``CHRF(char_order=order, word_order=0)._compute_segment_statistics``; None when the codes overflow."""
    refs = ["".join(r.split()) for r in refs]
    hyps = ["".join(h.split()) for h in hyps]
    ref_points, ref_lengths = _code_points(refs)
    hyp_points, hyp_lengths = _code_points(hyps)
    chars, inverse = np.unique(np.concatenate([ref_points, hyp_points]), return_inverse=True)
    base, n_pairs = len(chars) + 1, len(refs)
    if n_pairs * base**order >= _LIMIT:
        return None
    ids = inverse.astype(np.int64) + 1
    ref_ids, hyp_ids = ids[:len(ref_points)], ids[len(ref_points):]
    out = np.zeros((n_pairs, 3 * order), dtype=np.int64)
    for n in range(1, order + 1):
        hyp_keys, hyp_pairs = _ngram_keys(hyp_ids, hyp_lengths, base, n)
        ref_keys, ref_pairs = _ngram_keys(ref_ids, ref_lengths, base, n)
        ref_count = np.bincount(ref_pairs, minlength=n_pairs)
        hyp_unique, hyp_counts = np.unique(hyp_keys, return_counts=True)
        ref_unique, ref_counts = np.unique(ref_keys, return_counts=True)
        common, h, r = np.intersect1d(hyp_unique, ref_unique, assume_unique=True, return_indices=True)
        match = np.bincount(common // base**n, weights=np.minimum(hyp_counts[h], ref_counts[r]), minlength=n_pairs)
        out[:, 3 * (n - 1)] = np.where(ref_count > 0, np.bincount(hyp_pairs, minlength=n_pairs), 0)
        out[:, 3 * (n - 1) + 1] = ref_count
        out[:, 3 * (n - 1) + 2] = np.rint(match).astype(np.int64)
    return out
