"""Sentence-level style masking by integrated-gradients attribution (Reed & Beck 2022, "Content Preservation").

Instead of a global lexicon, a fine-tuned transformer style classifier says which words of *this*
sentence carry its style:

1. The text is split into words by :func:`tsteval.core.tokenize.tokenize` and encoded with
   ``is_split_into_words=True``, so the fast tokenizer's ``word_ids()`` maps every sub-word piece to its word.
   (The classifier therefore sees the lower-cased word sequence, the same one every metric sees.)
2. Integrated gradients (captum ``LayerIntegratedGradients`` on the input-embedding layer) attribute the
   probability of the target class (the predicted class unless given) to each piece; the baseline is the
   same sequence with every piece replaced by the pad id, keeping [CLS]/[SEP] and the attention mask.
   Attributing the probability makes the total (by completeness, p(text) - p(baseline)) comparable across
   sentences.
3. A word's attribution is the signed sum over its pieces (IG is additive), unlike Reed & Beck, who
   treated pieces separately and so could mask "striking" but keep "##ly".
4. Words are ranked by share = |a| / sum |a| (ties by position) and masked in rank order while the share
   masked so far is below ``threshold``: the word that reaches or crosses the threshold *is* masked, so the
   masked words are the smallest top-ranked set carrying at least ``threshold`` of the attribution, and a
   higher threshold masks a superset.

Guard (Reed & Beck always mask at least one token, which removes content from sentences without style): a
text loses nothing when the classifier cannot tell it from neutral text, that is when its top-class probability
is less than ``min_confidence_margin`` above the classifier's confidence on neutral text: the highest top-class
probability it gives any of ``neutral_texts`` (sentences of the domain that carry no style, e.g. "we went there at
noon ."), or 1/k (the uniform distribution over the k styles) without them (guard ``"neutral"``).  So a sentence
is masked only when the classifier is surer of its style than of any neutral sentence's.  A classifier as sure of
itself on neutral sentences as on styled ones (a sentiment classifier that calls every restaurant sentence
positive) therefore masks nothing rather than masking ordinary words; give ``neutral_texts`` to measure that.
A text is also kept whole when its total |attribution| is below ``min_total_attribution``, and a word whose own
share is below ``min_attribution_share`` is never masked, so a sentence whose attribution is spread thinly over
many words (no word stands out) keeps them all.  Words cut off by the classifier's ``max_length`` get no attribution
and are never masked; a run counts the rows that have such words (:func:`truncated`, ``n_truncated`` of
``MODIFICATION@CLASSIFIER`` in ``policy.json``).

Output texts are the words joined by single spaces, masked words replaced by ``placeholder`` (``"mask"``)
or dropped (``"delete"``), like :func:`tsteval.lexicons.modify.modify_texts`; a text whose words are all deleted
becomes ``""``.  :meth:`AttributionMasker.remask` re-decides stored attributions under another masker's
threshold and guards and :meth:`AttributionMasker.render` writes the texts, so a sweep over thresholds and
modes runs integrated gradients once per text.  Deterministic: no sampling, and batching pads within a batch
under the attention mask, so a batched result equals the one-at-a-time result up to float rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from captum.attr import LayerIntegratedGradients

from tsteval.classifiers.transformer import TransformerClassifier
from tsteval.core.errors import InputError, LabelMismatchError, TstevalError
from tsteval.core.progress import progress
from tsteval.core.tokenize import cut_ids, tokenize
from tsteval.lexicons.modify import PLACEHOLDER, check_placeholder


@dataclass(frozen=True)
class WordAttributions:
    """One text's words with their attribution toward ``target`` and what the masker does with them.

    ``scores`` are signed (probability units, positive = pushes toward ``target``), ``shares`` are
    |score| / sum |score| (all zero when there is no attribution), ``masked`` marks the words masked, and
    ``guard`` names the rule that kept the whole text unmasked (``"neutral"``, ``"no-attribution"``) or is None.
    """

    words: tuple[str, ...]
    scores: np.ndarray
    shares: np.ndarray
    masked: np.ndarray
    target: str
    confidence: float
    guard: str | None

    @property
    def ranked(self) -> list[tuple[str, float]]:
        """``(word, share)`` pairs, most attributed first."""
        return [(self.words[i], float(self.shares[i])) for i in _rank(self.shares)]


def neutral_confidence(classifier: TransformerClassifier, neutral_texts: Sequence[str] | None) -> float:
    """The classifier's confidence on neutral text: its highest top-class probability over ``neutral_texts`` (read
    as the masker reads every text: the words of :func:`tsteval.core.tokenize.tokenize`), or 1/k (the uniform
    distribution) without them."""
    if neutral_texts is None:
        return 1 / len(classifier.classes_)
    if isinstance(neutral_texts, str) or not len(neutral_texts):
        raise InputError("neutral_texts must be a non-empty list of sentences without style")
    return float(classifier.predict_proba([" ".join(tokenize(text)) for text in neutral_texts]).max())


def _rank(shares: np.ndarray) -> np.ndarray:
    """Word indices by share descending, ties by position (stable sort)."""
    return np.argsort(-shares, kind="stable")


def truncated(classifier: TransformerClassifier, texts: Sequence[str]) -> np.ndarray:
    """Per text, whether some of its words fall past the classifier's ``max_length`` in the masker's reading (its
    words, as :meth:`AttributionMasker.attributions` gives them to the tokenizer): they get no attribution and are
    never masked."""
    return cut_ids(classifier.tokenizer_, [tokenize(t) for t in texts], classifier.max_length,
                   is_split_into_words=True)[1]


class AttributionMasker:
    """Masks, per sentence, the words a transformer style classifier attributes most of its decision to."""

    def __init__(self, classifier: TransformerClassifier, threshold: float = 0.25,
                 mode: Literal["mask", "delete"] = "mask", placeholder: str = PLACEHOLDER, n_steps: int = 32,
                 batch_size: int = 16, min_attribution_share: float = 0.05, min_confidence_margin: float = 0.1,
                 min_total_attribution: float = 1e-4, neutral_texts: Sequence[str] | None = None) -> None:
        if not isinstance(classifier, TransformerClassifier) or not hasattr(classifier, "model_"):
            raise TstevalError("AttributionMasker needs a fitted TransformerClassifier")
        if not getattr(classifier.tokenizer_, "is_fast", False):
            raise TstevalError("AttributionMasker needs a fast tokenizer (word_ids() maps pieces to words)")
        if not 0 < threshold <= 1:
            raise TstevalError(f"threshold is a share of the attribution, in (0, 1], not {threshold}")
        if mode not in ("mask", "delete"):
            raise TstevalError(f"mode must be 'mask' or 'delete', not {mode!r}")
        if n_steps < 1 or batch_size < 1:
            raise TstevalError(f"n_steps and batch_size must be positive, not {n_steps} and {batch_size}")
        if not 0 <= min_attribution_share < 1 or min_confidence_margin < 0 or min_total_attribution < 0:
            raise TstevalError("min_attribution_share must be in [0, 1), the other guards non-negative")
        self.classifier = classifier
        self.threshold = threshold
        self.mode = mode
        self.placeholder = check_placeholder(placeholder)
        self.n_steps = n_steps
        self.batch_size = batch_size
        self.min_attribution_share = min_attribution_share
        self.min_confidence_margin = min_confidence_margin
        self.min_total_attribution = min_total_attribution
        self.neutral_confidence = neutral_confidence(classifier, neutral_texts)

    def _targets(self, n: int, target_classes: Sequence[object] | None) -> list[int | None]:
        if target_classes is None:
            return [None] * n
        if isinstance(target_classes, str) or len(target_classes) != n:
            raise InputError(f"target_classes must be a sequence of {n} style labels, one per text")
        index = {str(c): i for i, c in enumerate(self.classifier.classes_)}
        unknown = sorted({str(t) for t in target_classes} - set(index))
        if unknown:
            raise LabelMismatchError(f"target classes {unknown} are not styles of the classifier "
                                     f"{sorted(index)}")
        return [index[str(t)] for t in target_classes]

    def attributions(self, texts: Sequence[str], target_classes: Sequence[object] | None = None
                     ) -> list[WordAttributions]:
        """Word attributions and masking decisions for every text (toward ``target_classes`` when given)."""
        if isinstance(texts, str):
            raise InputError("texts must be a sequence of strings, not one string")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"text {i} is {type(text).__name__}, not a string")
        targets = self._targets(len(texts), target_classes)
        words = [tokenize(text) for text in texts]
        results: list[WordAttributions | None] = [None] * len(texts)
        nonempty = [i for i in range(len(texts)) if words[i]]
        for i in set(range(len(texts))) - set(nonempty):
            results[i] = self._empty(targets[i])
        # Similar lengths share a batch, so little work goes into padding; results return to input order.
        order = sorted(nonempty, key=lambda i: len(words[i]))
        for start in progress(range(0, len(order), self.batch_size), "attribution masking", unit="batch"):
            rows = order[start:start + self.batch_size]
            for i, result in zip(rows, self._attribute_batch([words[i] for i in rows], [targets[i] for i in rows]),
                                 strict=True):
                results[i] = result
        return results

    def apply(self, texts: Sequence[str], target_classes: Sequence[object] | None = None) -> list[str]:
        """The texts with their most style-attributed words masked or deleted (see the module docstring)."""
        return self.render(self.attributions(texts, target_classes))

    def remask(self, results: Sequence[WordAttributions]) -> list[WordAttributions]:
        """``results`` re-decided under this masker's threshold and guards, without recomputing attributions.

        The stored scores and confidence are reused, so attributions computed once (by a masker on the same
        classifier with the same ``n_steps``) serve every threshold; the result equals :meth:`attributions`.
        """
        return [result if not result.words else
                self._decide(result.words, result.scores, result.confidence, result.target) for result in results]

    def render(self, results: Sequence[WordAttributions]) -> list[str]:
        """The words of each result joined by spaces, masked words replaced by the placeholder or dropped."""
        out = []
        for result in results:
            if self.mode == "mask":
                kept = [self.placeholder if m else w for w, m in zip(result.words, result.masked, strict=True)]
            else:
                kept = [w for w, m in zip(result.words, result.masked, strict=True) if not m]
            out.append(" ".join(kept))
        return out

    def _empty(self, target: int | None) -> WordAttributions:
        empty = np.zeros(0)
        label = "" if target is None else str(self.classifier.classes_[target])
        return WordAttributions((), empty, empty, np.zeros(0, dtype=bool), label, float("nan"), "no-attribution")

    def _attribute_batch(self, words: list[list[str]], targets: list[int | None]) -> list[WordAttributions]:
        clf = self.classifier
        model = clf.model_.eval()
        encoding = clf.tokenizer_(words, is_split_into_words=True, truncation=True, max_length=clf.max_length,
                                  padding=True, return_tensors="pt", return_special_tokens_mask=True)
        input_ids = encoding["input_ids"].to(clf.device_)
        attention_mask = encoding["attention_mask"].to(clf.device_)
        special = encoding["special_tokens_mask"].to(clf.device_).bool()
        baseline = torch.where(special, input_ids, torch.full_like(input_ids, clf.tokenizer_.pad_token_id))
        extra = (attention_mask, encoding["token_type_ids"].to(clf.device_)) if "token_type_ids" in encoding \
            else (attention_mask,)

        def probabilities(ids: torch.Tensor, mask: torch.Tensor, token_types: torch.Tensor | None = None
                          ) -> torch.Tensor:
            return torch.softmax(model(input_ids=ids, attention_mask=mask, token_type_ids=token_types).logits, -1)

        with torch.no_grad():
            proba = probabilities(input_ids, *extra).double().cpu().numpy()
        target_index = [int(proba[b].argmax()) if t is None else t for b, t in enumerate(targets)]
        ig = LayerIntegratedGradients(probabilities, model.get_input_embeddings())
        token_scores = ig.attribute(input_ids, baselines=baseline, additional_forward_args=extra,
                                    target=torch.tensor(target_index, device=clf.device_),
                                    n_steps=self.n_steps).sum(-1).detach().double().cpu().numpy()
        results = []
        for b, text_words in enumerate(words):
            scores = np.zeros(len(text_words))
            for position, word in enumerate(encoding.word_ids(b)):
                if word is not None:
                    scores[word] += token_scores[b, position]
            results.append(self._decide(tuple(text_words), scores, float(proba[b].max()),
                                        str(clf.classes_[target_index[b]])))
        return results

    def _decide(self, words: tuple[str, ...], scores: np.ndarray, confidence: float, target: str) -> WordAttributions:
        """Apply the guards and the cumulative-share threshold to one text's word scores (``confidence``: top
        probability of the classifier)."""
        total = float(np.abs(scores).sum())
        shares = np.abs(scores) / total if total > 0 else np.zeros_like(scores)
        masked = np.zeros(len(words), dtype=bool)
        guard = None
        if confidence - self.neutral_confidence < self.min_confidence_margin:
            guard = "neutral"
        elif total < self.min_total_attribution:
            guard = "no-attribution"
        else:
            cumulative = 0.0
            for i in _rank(shares):
                if cumulative >= self.threshold or shares[i] < self.min_attribution_share:
                    break
                masked[i] = True
                cumulative += shares[i]
        return WordAttributions(words, scores, shares, masked, target, confidence, guard)
