"""Word Mover's Distance (Kusner et al. 2015) with POT's exact solver, batched with shared vocabulary work.

Each text is a normalised bag of words (OOV dropped) over unit-normalised word vectors; the ground cost is
the Euclidean distance between word vectors.  Mir et al. called gensim's ``wmdistance`` on a model after
``init_sims(replace=True)`` (vectors overwritten by unit vectors); gensim 4 has no ``init_sims`` but its
``wmdistance(norm=True)`` default normalises too, so the definitions agree.  gensim builds the cost over the
union of the two texts' words with zero weights for absent words; the optimum is the same as ours on
the (text-x words x text-x' words) block.  gensim returns ``inf`` for an empty/all-OOV text and when all
distances are zero; we follow :mod:`tsteval.metrics.content.policy` (identical bags -> 0, unusable -> 2).

Batching: per chunk of pairs the distances between all distinct words of the chunk are computed once
(one matrix product) and each pair slices its block; identical bags are 0 without a solve and repeated
pairs are solved once.  Mass shared by both bags stays in place (see :func:`_transport_cost`), and the
optimal-transport LP of what is left is one call of POT's exact solver per pair: it takes one problem at
a time (POT's batched solvers are entropic, i.e. approximate).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from ot.lp.emd_wrap import emd_c

from tsteval.core.errors import TstevalError
from tsteval.metrics.content.policy import MAX_DISTANCE, MetricResult, Tokens, apply_policy, pair_tokens
from tsteval.metrics.content.word_vectors import WordVectors

CHUNK = 512
MASS_EPS = 1e-12
MAX_ITER = 100_000


def _bag(ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    words, counts = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
    return words, counts / counts.sum()


def _transport_cost(wa: np.ndarray, pa: np.ndarray, wb: np.ndarray, pb: np.ndarray, vocab: np.ndarray,
                    vecs: np.ndarray, sq: np.ndarray) -> float:
    """Exact EMD between two bags whose words index ``vocab`` (rows of ``vecs``, squared norms ``sq``).

    Mass a word has in both bags stays in place: with a metric ground cost (Euclidean here) some optimal
    plan never moves it (triangle inequality), so only the leftover mass goes to the solver, usually a
    much smaller problem.  A side left with one word has a closed form; otherwise POT's network-simplex
    solver is called directly (``emd_c``, the core of ``ot.emd2``, without its per-call checks).
    """
    shared, ia, ib = np.intersect1d(wa, wb, assume_unique=True, return_indices=True)
    if shared.size:
        kept = np.minimum(pa[ia], pb[ib])
        pa, pb = pa.copy(), pb.copy()
        pa[ia] -= kept
        pb[ib] -= kept
    left_a, left_b = pa > MASS_EPS, pb > MASS_EPS
    if not left_a.any() or not left_b.any():
        return 0.0
    a, b = pa[left_a], pb[left_b]
    ra, rb = np.searchsorted(vocab, wa[left_a]), np.searchsorted(vocab, wb[left_b])
    block = np.sqrt(np.maximum(sq[ra][:, None] + sq[rb][None, :] - 2.0 * vecs[ra] @ vecs[rb].T, 0.0))
    if a.size == 1:
        return float(b @ block[0])
    if b.size == 1:
        return float(a @ block[:, 0])
    b = b * (a.sum() / b.sum())  # equal totals up to rounding, as the solver requires
    return float(emd_c(a, b, block, MAX_ITER, 1)[1])


def wmd(refs: Sequence[str], hyps: Sequence[str], word_vectors: WordVectors,
        tokens: Tokens | None = None) -> MetricResult:
    """WMD per pair (0 = same bag of words, at most 2 on unit vectors), with the empty/OOV policy."""
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    bags: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}
    for text in (*ref_tokens, *hyp_tokens):
        key = tuple(text)
        if key not in bags:
            bags[key] = _bag(word_vectors.ids(text))
    values = np.zeros(len(ref_tokens))
    all_oov = np.zeros(len(ref_tokens), dtype=bool)
    solved: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}
    for start in range(0, len(ref_tokens), CHUNK):
        pairs = [(tuple(r), tuple(h)) for r, h in zip(ref_tokens[start:start + CHUNK],
                                                      hyp_tokens[start:start + CHUNK], strict=True)]
        # Shared vocabulary work: the chunk's distinct words are gathered and converted once.
        vocab = np.unique(np.concatenate([bags[k][0] for pair in pairs for k in pair] + [np.zeros(0, np.int64)]))
        vecs = word_vectors.unit[vocab].astype(np.float64)
        sq = (vecs ** 2).sum(1)
        for k, pair in enumerate(pairs, start=start):
            (wa, pa), (wb, pb) = bags[pair[0]], bags[pair[1]]
            if len(wa) == 0 or len(wb) == 0:
                all_oov[k] = True
                values[k] = MAX_DISTANCE
                continue
            if len(wa) == len(wb) and np.array_equal(wa, wb) and np.allclose(pa, pb):
                continue
            if pair not in solved:
                solved[pair] = _transport_cost(wa, pa, wb, pb, vocab, vecs, sq)
            values[k] = solved[pair]
    return apply_policy(values, ref_tokens, hyp_tokens, distance=True, all_oov=all_oov)


def wmd_similarity(distances: Sequence[float] | np.ndarray) -> np.ndarray:
    """A per-sentence 0-1 similarity: ``1 - WMD / 2`` (2 = the largest WMD on unit vectors); 1 = same bag."""
    return 1.0 - np.asarray(distances, dtype=np.float64) / MAX_DISTANCE


def mir_normalized_inverse(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Mir et al.'s ``normalize_inverses``: ``(1/v) / ||1/v||_2`` over the whole set.

    A set-relative score: each value depends on every other in the set (its scale shrinks as the set grows),
    so it compares systems only within one set of the same size; it is not a per-sentence similarity.
    Zero distances (identical texts) have no reciprocal, so they are an error here: use :func:`wmd_similarity`.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise TstevalError("mir_normalized_inverse needs finite, strictly positive distances "
                           f"({int(np.sum(values <= 0))} are <= 0); use wmd_similarity for identical texts")
    inverse = 1.0 / values
    return inverse / np.linalg.norm(inverse)
