"""Word-embedding similarity per pair (Rus & Lintean 2012; Liu et al. 2016; Mir et al. 2019, A.2).

All three use unit-normalised word vectors (as Mir's ``init_sims(replace=True)`` model), drop OOV words and
run batched: the pairs of a chunk are padded to (pairs, max_len, dim) tensors with masks, no per-pair loop.

* embedding average: cosine between the mean word vectors of x and x'.
* greedy matching: each word of x takes its best cosine in x', averaged over x; the same from x'; the two
  directions averaged.
* vector extrema: per dimension the value with the largest absolute value over the words; cosine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tsteval.metrics.content.policy import MetricResult, Tokens, apply_policy, pair_tokens
from tsteval.metrics.content.word_vectors import WordVectors

CHUNK = 2048


def pad_ids(token_lists: Sequence[Sequence[str]], wv: WordVectors) -> tuple[np.ndarray, np.ndarray]:
    """Padded in-vocabulary row ids (pairs, max_len) and their mask."""
    ids = [wv.ids(t) for t in token_lists]
    width = max([len(i) for i in ids] + [1])
    out = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=bool)
    for k, row in enumerate(ids):
        out[k, :len(row)] = row
        mask[k, :len(row)] = True
    return out, mask


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((na > 0) & (nb > 0), (a * b).sum(-1) / (na * nb), 0.0)


def _average(x: np.ndarray, mx: np.ndarray, y: np.ndarray, my: np.ndarray) -> np.ndarray:
    return _cosine((x * mx[..., None]).sum(1), (y * my[..., None]).sum(1))


def _extrema_vector(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    high = np.where(mask[..., None], x, -np.inf).max(1)
    low = np.where(mask[..., None], x, np.inf).min(1)
    return np.where(high > np.abs(low), high, low)


def _extrema(x: np.ndarray, mx: np.ndarray, y: np.ndarray, my: np.ndarray) -> np.ndarray:
    return _cosine(_extrema_vector(x, mx), _extrema_vector(y, my))


def _greedy(x: np.ndarray, mx: np.ndarray, y: np.ndarray, my: np.ndarray) -> np.ndarray:
    sim = np.einsum("pid,pjd->pij", x, y)
    both = mx[:, :, None] & my[:, None, :]
    sim = np.where(both, sim, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        forward = np.where(mx, sim.max(2), 0.0).sum(1) / mx.sum(1)
        backward = np.where(my, sim.max(1), 0.0).sum(1) / my.sum(1)
    return (forward + backward) / 2


def _batched(kernel: Callable[..., np.ndarray], refs: Sequence[str], hyps: Sequence[str],
             wv: WordVectors, tokens: Tokens | None) -> MetricResult:
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    values = np.zeros(len(ref_tokens))
    for start in range(0, len(ref_tokens), CHUNK):
        stop = start + CHUNK
        ia, ma = pad_ids(ref_tokens[start:stop], wv)
        ib, mb = pad_ids(hyp_tokens[start:stop], wv)
        values[start:stop] = kernel(wv.unit[ia], ma, wv.unit[ib], mb)
    all_oov = np.array([not wv.ids(r) or not wv.ids(h) for r, h in zip(ref_tokens, hyp_tokens, strict=True)])
    return apply_policy(np.nan_to_num(values), ref_tokens, hyp_tokens, all_oov=all_oov)


def embedding_average(refs: Sequence[str], hyps: Sequence[str], word_vectors: WordVectors,
                      tokens: Tokens | None = None) -> MetricResult:
    """Cosine between mean word vectors, per pair."""
    return _batched(_average, refs, hyps, word_vectors, tokens)


def greedy_matching(refs: Sequence[str], hyps: Sequence[str], word_vectors: WordVectors,
                    tokens: Tokens | None = None) -> MetricResult:
    """Greedy matching, both directions averaged, per pair."""
    return _batched(_greedy, refs, hyps, word_vectors, tokens)


def vector_extrema(refs: Sequence[str], hyps: Sequence[str], word_vectors: WordVectors,
                   tokens: Tokens | None = None) -> MetricResult:
    """Cosine between vector-extrema sentence vectors, per pair."""
    return _batched(_extrema, refs, hyps, word_vectors, tokens)
