"""Content-preservation columns on a scorecard: ``f"{metric}@{modification}"`` with a signature each.

The modification (``mask``, ``remove``; Mir et al. 3.2.2) is applied to both the ``input`` and the ``output``
column by :func:`tsteval.lexicons.modify.modify_texts` (re-tokenised, lower-cased text) before any metric runs.
``none`` and ``erase`` change no text: every metric gets the texts as written, the word-level metrics (BLEU,
chrF, METEOR, ROUGE-L, the word-vector metrics) read their tokens (:func:`tsteval.core.tokenize.tokens_of`), the
neural ones (``sbert``, BERTScore) the text itself, through their own tokenizer.  At ``erase`` the embedding
metrics (``sbert`` and the word-vector metrics) compare embeddings with the style erased
(:mod:`tsteval.metrics.content.erasure`); the text-overlap metrics have no ``@erase`` column.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.progress import progress
from tsteval.core.signature import texts_hash
from tsteval.core.tokenize import tokens_of
from tsteval.metrics.content.declarations import CONTENT
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard

MODIFICATION_MODES = {"none": "none", "mask": "mask", "remove": "remove"}
# Sentence-level attribution masking (tsteval.lexicons.attribution), applied by the plan's runner and passed in
# as ``modified`` texts: modification label -> AttributionMasker mode.
ATTRIBUTION_MODIFICATIONS = {"attribution-mask": "mask", "attribution-delete": "delete"}
_RENAMED = {"attr-mask": "attribution-mask", "attr-delete": "attribution-delete"}
CONTENT_METRICS = {m.name: m for m in CONTENT}
# The modification that erases style from embeddings rather than from texts (metrics whose resources have erasers).
ERASE = "erase"


def erasable(metrics: Sequence[str]) -> list[str]:
    """The metrics of ``metrics`` that compare embeddings (the ones scored ``@erase``)."""
    from tsteval.metrics.registry import METRICS
    from tsteval.metrics.resources import erasable as has_eraser

    return [m for m in metrics if m in METRICS and METRICS[m].aspect == "content" and has_eraser(METRICS[m])]


def check_modifications(modifications: Sequence[str], flag: str = "modifications") -> tuple[str, ...]:
    """``modifications`` when each is one of :data:`MODIFICATION_MODES`, :data:`ATTRIBUTION_MODIFICATIONS` or
    :data:`ERASE`, else one error line naming the unknown ones (and the new name of a renamed one)."""
    known = [*MODIFICATION_MODES, *ATTRIBUTION_MODIFICATIONS, ERASE]
    bad = [m for m in modifications if m not in known]
    if bad:
        renamed = [f"{m} is now {_RENAMED[m]}" for m in bad if m in _RENAMED]
        raise TstevalError(f"unknown {flag} {bad}; choose from {known}" + (f" ({'; '.join(renamed)})" if renamed
                                                                           else "")
                           + "".join(did_you_mean(m, known, f"; {m!r}: ") for m in bad if m not in _RENAMED))
    return tuple(modifications)


def _lexicon_hash(lexicon: object) -> str:
    if lexicon is None:
        return "none"
    words = getattr(lexicon, "words", lexicon)
    if not isinstance(words, Collection) or isinstance(words, str):
        raise TstevalError("lexicon must be a Lexicon or a collection of words")
    return texts_hash(sorted(words))


def modified_texts(card: Scorecard, modification: str, lexicon: object = None,
                   placeholder: str = "<masked>") -> tuple[list[str], list[str]]:
    """The card's inputs and outputs after ``modification``: as written for ``none``, re-tokenised with the
    lexicon's words masked or removed for ``mask`` and ``remove``."""
    from tsteval.lexicons.modify import modify_texts

    if modification not in MODIFICATION_MODES:
        raise TstevalError(f"modification must be one of {sorted(MODIFICATION_MODES)}, not {modification!r}")
    inputs, outputs = card.frame["input"].tolist(), card.frame["output"].tolist()
    if modification == "none":
        return inputs, outputs
    mode = MODIFICATION_MODES[modification]
    return modify_texts(inputs, lexicon, mode, placeholder), modify_texts(outputs, lexicon, mode, placeholder)


def score_content(card: Scorecard, metrics: Sequence[str], *, modification: str = "none", lexicon: object = None,
                  placeholder: str = "<masked>", tag: str | None = None,
                  modified: tuple[Sequence[str], Sequence[str]] | None = None,
                  texts: tuple[Sequence[str], Sequence[str]] | None = None, resources: Resources | None = None,
                  params: Mapping[str, Mapping[str, object]] | None = None) -> dict[str, dict[str, int]]:
    """Add one column per metric to ``card``; returns the empty/OOV policy counts per column.

    Columns are ``metric@modification`` (``metric@modification[tag]`` with a ``tag``, to tell apart runs
    with different lexicons or vectors).  ``modified`` gives already-modified (input, output) texts, e.g.
    from attribution masking; ``modification`` then only names what was done (any label).  ``modification=
    "erase"`` scores the embedding metrics only, with the style erased from their embeddings.  Each metric's
    resources come from ``resources`` (:class:`~tsteval.metrics.resources.Resources`; default options when None),
    its parameters from ``params`` (by metric name, over the declared defaults).
    """
    from tsteval.metrics.registry import METRICS

    unknown = [m for m in metrics if m not in METRICS or METRICS[m].aspect != "content" or METRICS[m].scorer is None]
    if unknown:
        raise TstevalError(f"unknown content metrics {unknown}; known: {sorted(CONTENT_METRICS)}")
    resources = resources if resources is not None else Resources()
    params = params or {}
    if modification == ERASE:
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
        metric = METRICS[name]
        fields: dict[str, object] = {"mod": modification}
        if modification != ERASE:
            fields["lex"] = _lexicon_hash(lexicon)
        if modified is not None:
            fields["texts"] = texts_hash([*refs, *hyps])
        elif modification == "mask":
            fields["placeholder"] = placeholder
        kwargs, used = resources.scorer_arguments(metric, modification, erase=modification == ERASE)
        values = metric.check_params(params.get(name, {}))
        result = metric.function()(refs, hyps, tokens=tokens, **kwargs, **values)
        column = f"{name}@{modification}" + (f"[{tag}]" if tag else "")
        card.add(column, metric.clipped(result.values), str(metric.signature(param_values=values, **fields, **used)))
        counts[column] = result.counts.as_dict()
    return counts
