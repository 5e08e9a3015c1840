"""The one policy for empty texts and out-of-vocabulary words, shared by every content metric.

Texts are tokenized by :func:`tsteval.core.tokenize.tokenize`; masking or style removal can leave a text empty.

* Both texts empty (no tokens): nothing was lost, similarity ``1.0`` (``100`` on BLEU/chrF's 0-100 scale),
  distance ``0.0``.  Counted as ``n_both_empty``.
* Exactly one text empty: everything was lost (or invented), similarity ``0.0``, distance :data:`MAX_DISTANCE`.
  Counted as ``n_one_empty``.
* Word-vector metrics drop out-of-vocabulary (OOV) words.  When neither text is empty but one or both has
  no in-vocabulary word, the pair cannot be compared: similarity ``0.0``, distance :data:`MAX_DISTANCE`,
  unless the two token sequences are identical (then ``1.0`` / ``0.0``).  Counted as ``n_all_oov``.
* Identical token sequences score the maximum similarity / zero distance where a word-vector metric cannot compare
  them (all OOV); identical texts always do for a neural metric (``texts=``), whose own figure for them is that only
  up to float32 noise (a MiniLM cosine of a text with itself comes out 0.9999998 to 1.0000001, by text and by
  machine), which would order pairs that must tie and move a rank correlation's third decimal.
* A neural metric whose model reads at most ``max_tokens`` tokens of a text (the sentence encoder, BERTScore) counts
  the pairs with a text cut at that limit as ``n_truncated`` (:mod:`tsteval.metrics.truncation`); their values are
  the model's on the text's start, as the model computes them.

:data:`MAX_DISTANCE` is 2, the largest Euclidean distance between unit vectors and so the largest possible
WMD on unit-normalised vectors: a finite worst score keeps means and bootstraps defined (gensim returns
``inf`` instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from tsteval.core.tokenize import tokenize

MAX_DISTANCE = 2.0
# tsteval's tokens of the references and of the hypotheses, computed once per modification by the scorer and
# passed to every content metric (``tokens=``).
Tokens = tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]]


def pair_tokens(refs: Sequence[str], hyps: Sequence[str], tokens: Tokens | None) -> Tokens:
    """``tokens`` (tsteval's tokens of ``refs`` and ``hyps``, computed once by the caller), else tokenised here."""
    if tokens is None:
        return [tokenize(t) for t in refs], [tokenize(t) for t in hyps]
    if len(tokens[0]) != len(refs) or len(tokens[1]) != len(hyps):
        raise ValueError("tokens must hold one token list per reference and per hypothesis")
    return tokens


@dataclass
class PolicyCounts:
    """How many pairs the empty/OOV policy decided, for the summary; ``n_truncated``: how many pairs had a text cut
    at the model's limit of ``max_tokens`` tokens (None: the metric reads every text whole)."""

    n_both_empty: int = 0
    n_one_empty: int = 0
    n_all_oov: int = 0
    n_truncated: int = 0
    max_tokens: int | None = None

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict (``n_truncated`` and ``max_tokens`` only for a metric with a length limit)."""
        counts = asdict(self)
        if self.max_tokens is None:
            del counts["n_truncated"], counts["max_tokens"]
        return counts


@dataclass
class MetricResult:
    """Per-sentence values of one metric plus the policy counts behind them; ``truncated``: per pair, whether a text
    was cut at the model's limit (None: the metric has none)."""

    values: np.ndarray
    counts: PolicyCounts = field(default_factory=PolicyCounts)
    truncated: np.ndarray | None = None


def empty_masks(refs: Sequence[Sequence[str]], hyps: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (both empty, exactly one empty) over token-list pairs."""
    a = np.array([len(r) == 0 for r in refs], dtype=bool)
    b = np.array([len(h) == 0 for h in hyps], dtype=bool)
    return a & b, a ^ b


def apply_policy(values: np.ndarray, refs: Sequence[Sequence[str]], hyps: Sequence[Sequence[str]], *,
                 distance: bool = False, scale: float = 1.0, all_oov: np.ndarray | None = None,
                 truncated: np.ndarray | None = None, max_tokens: int | None = None,
                 texts: tuple[Sequence[str], Sequence[str]] | None = None) -> MetricResult:
    """Overwrite ``values`` where the policy decides and count the cases.

    ``scale`` is the metric's maximum similarity (1, or 100 for BLEU/chrF); ``all_oov`` marks pairs where a
    word-vector metric found no in-vocabulary word in a non-empty text; ``truncated`` the pairs with a text cut at
    the model's limit of ``max_tokens`` tokens (counted, values kept); ``texts``, a neural metric's pairs as it read
    them, whose identical pairs score the maximum.

    >>> apply_policy(np.array([0.9999998, 0.5]), [["a"], ["b"]], [["a"], ["c"]], texts=(["a", "b"], ["a", "c"])).values
    array([1. , 0.5])
    """
    values = np.asarray(values, dtype=np.float64).copy()
    both, one = empty_masks(refs, hyps)
    best, worst = (0.0, MAX_DISTANCE) if distance else (scale, 0.0)
    oov = np.zeros(len(values), dtype=bool) if all_oov is None else (all_oov & ~both & ~one)
    identical = np.array([list(r) == list(h) for r, h in zip(refs, hyps, strict=True)], dtype=bool)
    values[oov] = worst
    values[one] = worst
    values[identical & oov] = best
    if texts is not None:
        values[np.array([r == h for r, h in zip(*texts, strict=True)], dtype=bool)] = best
    values[both] = best
    cut = 0 if truncated is None else int(np.count_nonzero(truncated))
    return MetricResult(values, PolicyCounts(int(both.sum()), int(one.sum()), int(oov.sum()), cut, max_tokens),
                        truncated)
