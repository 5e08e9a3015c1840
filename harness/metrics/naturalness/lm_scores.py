"""Length-normalised language-model scores of a sentence: perplexity, mean token log-probability and SLOR.

For a sentence s of |s| counted tokens, with ln P_LM(s) the sum of the LM's natural-log token probabilities and
ln P_u(s) the same sum under a unigram model of human text:

- ``ppl``     = exp(-ln P_LM(s) / |s|)                 (lower is better)
- ``lp_mean`` = ln P_LM(s) / |s|                        (higher is better)
- ``slor``    = (ln P_LM(s) - ln P_u(s)) / |s|          (Kann et al. 2018, "Sentence-level fluency evaluation:
  references help, but can be spared!"; higher is better): a sentence is not penalised for rare words as such,
  only for being less likely than its words' frequencies predict.

Which tokens |s| counts is the LM's: words and ``</s>`` for the Kneser–Ney model, SmolLM2's subword tokens for
SmolLM2 (see each LM).  The unigram model is add-one smoothed over the LM's vocabulary,
P_u(t) = (c(t) + 1) / (N + V), so a token unseen in the human text keeps a finite probability.

>>> u = UnigramLM({"a": 3, "b": 1}, vocab_size=3)
>>> round(float(np.exp(u.log_prob_sum(["a"]))), 4)   # (3 + 1) / (4 + 3)
0.5714
>>> scores = SentenceLogProbs(np.array([-6.0]), np.array([-8.0]), np.array([3]))
>>> float(scores.lp_mean()[0]), round(float(scores.ppl()[0]), 4), round(float(scores.slor()[0]), 4)
(-2.0, 7.3891, 0.6667)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tsteval.scorecard import Scorecard


@dataclass(frozen=True)
class SentenceLogProbs:
    """Per text: summed ln P_LM and ln P_unigram of its counted tokens, and how many tokens were counted; ``cut``
    (an LM with a context limit, :attr:`ScoringLM.max_tokens`): whether the text was cut at it (None: every text read
    whole)."""

    lm: np.ndarray
    unigram: np.ndarray
    length: np.ndarray
    cut: np.ndarray | None = None

    def ppl(self) -> np.ndarray:
        """exp(mean negative token log-probability)."""
        return np.exp(-self.lp_mean())

    def lp_mean(self) -> np.ndarray:
        """Mean natural-log probability per counted token."""
        return self.lm / self.length

    def slor(self) -> np.ndarray:
        """(ln P_LM - ln P_unigram) / |s|."""
        return (self.lm - self.unigram) / self.length


class UnigramLM:
    """Add-one unigram model over a vocabulary of ``vocab_size`` tokens: P(t) = (c(t) + 1) / (N + V)."""

    def __init__(self, counts: Mapping[Hashable, int], vocab_size: int) -> None:
        self.counts = dict(counts)
        self.log_total = math.log(sum(self.counts.values()) + vocab_size)

    def log_prob_sum(self, tokens: Iterable[Hashable]) -> float:
        """Sum of the natural-log probabilities of ``tokens``."""
        return float(sum(math.log(self.counts.get(t, 0) + 1) - self.log_total for t in tokens))


class ScoringLM(Protocol):
    """A language model that gives each text's :class:`SentenceLogProbs` and a signature per metric."""

    def sentence_log_probs(self, texts: Sequence[str]) -> SentenceLogProbs: ...

    def signatures(self) -> dict[str, str]: ...


def score_language_model(card: Scorecard, lm: ScoringLM, name: str, texts: Sequence[str] | None = None,
                         text_form: str | None = None, metrics: Sequence[str] = ("ppl", "lp_mean", "slor")
                         ) -> dict[str, dict[str, int]]:
    """Add ``ppl@NAME``, ``lp_mean@NAME`` and ``slor@NAME`` (those of ``metrics``) for the outputs (as ``texts``
    when given: the outputs in the form ``text_form`` the LM reads); each distinct text scored once.  Returns, for an
    LM that cut texts at its context, the columns' counts of :mod:`tsteval.metrics.truncation` (else nothing)."""
    from tsteval.metrics.truncation import cut_counts

    texts = card.frame["output"].tolist() if texts is None else list(texts)
    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    scores = lm.sentence_log_probs(list(unique))
    signatures = lm.signatures() if text_form is None else lm.signatures(text_form)
    counts = {}
    for metric, values in (("ppl", scores.ppl()), ("lp_mean", scores.lp_mean()), ("slor", scores.slor())):
        if metric in metrics:
            card.add(f"{metric}@{name}", values[inverse], signatures[metric])
            if scores.cut is not None:
                counts[f"{metric}@{name}"] = cut_counts(scores.cut[inverse], lm.max_tokens)
    return counts
