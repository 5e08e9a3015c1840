"""A Kneser–Ney word n-gram language model of human text, for the naturalness scores of
:mod:`tsteval.metrics.naturalness.lm_scores` (``ppl``, ``lp_mean``, ``slor`` ``@kn3``).

Mir et al. (2019) found no significant correlation between sentence perplexity and human naturalness ratings;
the length-normalised log-probability and SLOR track grammaticality better (Kann et al. 2018).  SmolLM2 is in
:mod:`tsteval.metrics.naturalness.causal_lm`; both give :class:`~tsteval.metrics.naturalness.lm_scores.SentenceLogProbs`
and are added to a scorecard with :func:`~tsteval.metrics.naturalness.lm_scores.score_language_model`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Self

import numpy as np

from tsteval.classifiers.base import check_texts
from tsteval.core.errors import TstevalError
from tsteval.core.signature import texts_hash
from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.metrics.naturalness.lm_scores import SentenceLogProbs, UnigramLM

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
# Used when Ney's estimate n1 / (n1 + 2 n2) is undefined (tiny corpora without singletons or doubletons).
FALLBACK_DISCOUNT = 0.75
KNOWN_NGRAMS = 500_000  # n-gram probabilities kept for reuse within a call (then forgotten): memory stays bounded
DECLARED = {m.name: m for m in NATURALNESS}


class KneserNeyLM:
    """Interpolated Kneser–Ney word n-gram LM over :func:`tsteval.core.tokenize.tokenize` tokens.

    Sentences are padded with ``order - 1`` ``<s>`` and one ``</s>``; ``</s>`` is predicted, ``<s>`` never.
    The highest order uses raw counts, lower orders continuation counts (n-grams starting with ``<s>`` keep
    their raw counts, as in KenLM, since nothing can precede them), and the unigram level interpolates with
    the uniform distribution over the vocabulary, so every token has a non-zero probability.
    OOV policy: tokens seen fewer than ``min_count`` times in training are ``<unk>`` in training and scoring,
    so ``<unk>`` gets a learned probability; an ``<unk>`` counts as one token in the perplexity.
    The counted tokens of a sentence (|s| of every length-normalised score) are its words and the final ``</s>``;
    SLOR's unigram model is the add-one unigram distribution of the same tokens (``<unk>`` and ``</s>``
    included) in the same training texts.
    """

    def __init__(self, order: int = 3, min_count: int = 2, discount: float | None = None) -> None:
        if order < 1:
            raise TstevalError(f"order must be >= 1, not {order}")
        if min_count < 1:
            raise TstevalError(f"min_count must be >= 1, not {min_count}")
        if discount is not None and not 0 < discount < 1:
            raise TstevalError(f"discount must be in (0, 1), not {discount}")
        self.order, self.min_count, self.discount = order, min_count, discount

    def fit(self, texts: Sequence[str]) -> Self:
        """Count n-grams of the human texts ``texts``."""
        texts = check_texts(texts, "language-model training texts")
        self.corpus_hash_ = texts_hash(texts)
        tokenized = [tokenize(t) for t in texts]
        counts = Counter(tok for toks in tokenized for tok in toks)
        self.vocab_ = {tok for tok, c in counts.items() if c >= self.min_count} | {UNK, EOS}
        n = self.order
        top: Counter[tuple[str, ...]] = Counter()
        for toks in tokenized:
            padded = [BOS] * (n - 1) + [tok if tok in self.vocab_ else UNK for tok in toks] + [EOS]
            top.update(tuple(padded[i:i + n]) for i in range(len(padded) - n + 1))
        levels = [top]
        for _ in range(n - 1):
            lower: Counter[tuple[str, ...]] = Counter()
            for gram, c in levels[-1].items():
                lower[gram[1:]] += c if gram[1] == BOS else 1
            levels.append(lower)
        levels.reverse()  # levels[k - 1] holds the k-grams
        levels[0].pop((BOS,), None)
        self.counts_ = levels
        self.unigram_ = UnigramLM(Counter(tok for toks in tokenized for tok in self._mapped(toks)), len(self.vocab_))
        self.totals_: list[Counter[tuple[str, ...]]] = []
        self.types_: list[Counter[tuple[str, ...]]] = []
        self.discounts_: list[float] = []
        for grams in levels:
            totals, types = Counter(), Counter()
            for gram, c in grams.items():
                totals[gram[:-1]] += c
                types[gram[:-1]] += 1
            self.totals_.append(totals)
            self.types_.append(types)
            self.discounts_.append(self.discount if self.discount is not None else _ney_discount(grams))
        return self

    def _prob(self, history: tuple[str, ...], word: str) -> float:
        p = 1.0 / len(self.vocab_)
        for k in range(1, self.order + 1):
            context = history[len(history) - (k - 1):] if k > 1 else ()
            total = self.totals_[k - 1].get(context, 0)
            if total:
                d = self.discounts_[k - 1]
                count = self.counts_[k - 1].get(context + (word,), 0)
                p = (max(count - d, 0.0) + d * self.types_[k - 1][context] * p) / total
        return p

    def _mapped(self, tokens: Sequence[str]) -> list[str]:
        """The counted tokens: ``tokens`` with out-of-vocabulary words as ``<unk>``, then ``</s>``."""
        return [t if t in self.vocab_ else UNK for t in tokens] + [EOS]

    def log_probs(self, text: str) -> list[float]:
        """Natural-log probability of each token of ``text`` and of the final ``</s>``."""
        self._check_fitted()
        return self._log_probs(self._mapped(tokenize(text)))

    def _log_probs(self, counted: list[str], known: dict[tuple[str, ...], float] | None = None) -> list[float]:
        """Log-probability of each counted token given its history; ``known``: n-grams already computed (filled)."""
        n = self.order
        padded = [BOS] * (n - 1) + counted
        known = {} if known is None else known
        out = []
        for i in range(n - 1, len(padded)):
            gram = tuple(padded[i - n + 1:i + 1])
            if gram not in known:
                if len(known) >= KNOWN_NGRAMS:
                    known.clear()
                known[gram] = math.log(self._prob(gram[:-1], gram[-1]))
            out.append(known[gram])
        return out

    def sentence_log_probs(self, texts: Sequence[str]) -> SentenceLogProbs:
        """Summed LM and unigram log-probabilities of each text's words and ``</s>``, and their number (each
        distinct n-gram's probability computed once per call, up to :data:`KNOWN_NGRAMS` of them kept at a time)."""
        self._check_fitted()
        counted = [self._mapped(tokenize(t)) for t in check_texts(texts)]
        known: dict[tuple[str, ...], float] = {}
        return SentenceLogProbs(np.array([math.fsum(self._log_probs(c, known)) for c in counted]),
                                np.array([self.unigram_.log_prob_sum(c) for c in counted]),
                                np.array([len(c) for c in counted]))

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean negative log-probability per token, ``</s>`` included) of each text."""
        return self.sentence_log_probs(texts).ppl()

    def signatures(self) -> dict[str, str]:
        """How each score (``ppl``, ``lp_mean``, ``slor``) was computed."""
        self._check_fitted()
        discount = "ney" if self.discount is None else self.discount
        fields = {"lm": f"kn{self.order}", "discount": discount, "min_count": self.min_count, "unk": "min_count",
                  "tok": "tsteval", "corpus": self.corpus_hash_}
        unigram = {"unigram": "add-one", "unigram_corpus": self.corpus_hash_}
        return {name: str(DECLARED[name].signature(**fields, **(unigram if name == "slor" else {})))
                for name in ("ppl", "lp_mean", "slor")}

    def _check_fitted(self) -> None:
        if not hasattr(self, "counts_"):
            raise TstevalError("this KneserNeyLM is not fitted yet; call fit() on human texts first")


def _ney_discount(grams: Counter[tuple[str, ...]]) -> float:
    """Ney et al.'s discount n1 / (n1 + 2 n2) from the count-of-counts, or the fallback when undefined."""
    n1 = sum(1 for c in grams.values() if c == 1)
    n2 = sum(1 for c in grams.values() if c == 2)
    d = n1 / (n1 + 2 * n2) if n1 and n2 else FALLBACK_DISCOUNT
    return d if 0 < d < 1 else FALLBACK_DISCOUNT


