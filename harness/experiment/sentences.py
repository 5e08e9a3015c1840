"""The per-sentence phase of a plan: the style and content columns, which score every row on its own.

:func:`score_sentences` is what both engines call on a scorecard: the local engine on the whole table, the Ray
engine (:mod:`tsteval.experiment.ray_engine`) on each batch in its workers.  A :class:`SentenceJob` holds the
loaded resources it needs.  What needs all rows of a group at once (references' corpus scores, naturalness,
the bootstrap) is not here: :func:`tsteval.experiment.plan.execute` scores it on the whole table afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tsteval.scorecard import Scorecard

# The columns the per-sentence scorers read.
SENTENCE_COLUMNS = ("input", "output", "source_style", "target_style")


def _silent(_message: str) -> None:
    """The default log: nothing."""


@dataclass(frozen=True)
class SentenceJob:
    """Loaded resources of the per-sentence metrics.

    ``models``: style classifier and its identity (for the signatures) by name, for the style columns;
    ``content`` metrics at each of ``modifications`` (``remove``/``mask`` with ``lexicon``), with ``vectors`` (the
    word vectors of each modification) when a metric needs them; ``erasure`` (the style erasers,
    :class:`~tsteval.metrics.content.erasure.Erasure`) for ``erase``; ``encoder`` (a
    :class:`~tsteval.metrics.content.sentence_embedding.SentenceEncoder`; made here on ``device`` with ``threads``
    when None and a metric needs one) encodes every text any modification needs in one pass.
    """

    models: Mapping[str, tuple[object, str]] = field(default_factory=dict)
    ground: str = "nominal"
    content: tuple[str, ...] = ()
    modifications: tuple[str, ...] = ("none",)
    lexicon: object = None
    placeholder: str = "<masked>"
    vectors: Mapping[str, object] = field(default_factory=dict)
    erasure: object = None
    encoder: object = None
    device: str = "cpu"
    threads: int | None = None


@dataclass
class SentenceScores:
    """What :func:`score_sentences` adds besides the columns: per style classifier, whether each input's most
    probable class is its target style (for the swapped-labels warning); the empty/OOV policy counts per column."""

    hits: dict[str, np.ndarray] = field(default_factory=dict)
    policy: dict[str, dict[str, int]] = field(default_factory=dict)


def score_sentences(card: Scorecard, job: SentenceJob, *,
                    attributed: Mapping[str, tuple[Sequence[str], Sequence[str]]] | None = None,
                    log: Callable[[str], None] = _silent) -> SentenceScores:
    """Add every style column (:func:`~tsteval.metrics.style.scorer.style_columns`) and content column
    (:func:`~tsteval.metrics.content.scorer.score_content`) of ``job`` to ``card``.

    ``attributed`` gives the already-modified (input, output) texts of attribution modifications by label.
    """
    from tsteval.metrics import registry
    from tsteval.metrics.content.scorer import ERASE, modified_texts, score_content
    from tsteval.metrics.style.scorer import style_columns

    scores = SentenceScores()
    for name, (model, identity) in job.models.items():
        scores.hits[name] = style_columns(card, model, name, model_id=identity, ground=job.ground)
    if not job.content:
        return scores
    attributed = attributed or {}
    texts = {m: attributed.get(m) or modified_texts(card, "none" if m == ERASE else m, job.lexicon, job.placeholder)
             for m in job.modifications}
    encoder = job.encoder
    if encoder is None and any("sentence_encoder" in registry.METRICS[m].needs for m in job.content):
        from tsteval.metrics.content.sentence_embedding import SentenceEncoder

        encoder = SentenceEncoder(device=job.device, threads=job.threads)
    if encoder is not None:  # one encode over every text any modification needs
        start = time.perf_counter()
        encoder.prefetch([t for pair in texts.values() for side in pair for t in side])
        log(f"sentence encoder: {encoder.encoded} texts encoded on {encoder.device} in "
            f"{time.perf_counter() - start:.1f} s ({len(encoder.rows)} distinct; the rest from the cache)")
    for modification in job.modifications:
        start = time.perf_counter()
        counts = score_content(card, job.content, modification=modification, lexicon=job.lexicon,
                               placeholder=job.placeholder, modified=attributed.get(modification),
                               texts=texts[modification], encoder=encoder,
                               word_vectors=job.vectors.get(modification), erasure=job.erasure)
        scores.policy |= counts
        flagged = {c: {k: v for k, v in n.items() if v} for c, n in counts.items() if any(n.values())}
        log(f"content @{modification}: {', '.join(job.content)} in {time.perf_counter() - start:.1f} s"
            + (f"; empty/OOV policy applied: {flagged}" if flagged else ""))
    return scores
