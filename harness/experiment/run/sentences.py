"""The per-sentence phase of a plan: the style and content columns, which score every row on its own.

:func:`score_sentences` is what both engines call on a scorecard: the local engine on the whole table, the Ray
engine (:mod:`tsteval.experiment.run.ray_engine`) on each batch in its workers.  A :class:`SentenceJob` holds the
loaded resources it needs.  What needs all rows of a group at once (references' corpus scores, naturalness,
the bootstrap) is not here: :func:`tsteval.experiment.run.execute.execute` scores it on the whole table afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tsteval.metrics.resources import RESOURCES, Resources
from tsteval.scorecard import Scorecard

# The columns the per-sentence scorers read.
SENTENCE_COLUMNS = ("input", "output", "source_style", "target_style")


def _silent(_message: str) -> None:
    """The default log: nothing."""


@dataclass(frozen=True)
class SentenceJob:
    """What the per-sentence phase scores, with which resources.

    ``models``: style classifier and its identity (for the signatures) by name, for the style columns;
    ``content`` metrics (with ``params`` by metric name) at each of ``modifications`` (``remove``/``mask`` with
    ``lexicon``); ``resources`` (:class:`~tsteval.metrics.resources.Resources`) builds what the metrics need, once.
    """

    models: Mapping[str, tuple[object, str]] = field(default_factory=dict)
    ground: str = "nominal"
    content: tuple[str, ...] = ()
    modifications: tuple[str, ...] = ("none",)
    lexicon: object = None
    placeholder: str = "<masked>"
    resources: Resources = field(default_factory=Resources)
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)


@dataclass
class SentenceScores:
    """What :func:`score_sentences` adds besides the columns: per style classifier, whether each input's most
    probable class is its target style (for the swapped-labels warning); the policy counts per column (empty/OOV, and
    texts cut at a model's length limit)."""

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
    from tsteval.metrics.style.scorer import style_columns, style_truncation
    from tsteval.metrics.truncation import LIMIT

    scores = SentenceScores()
    for name, (model, identity) in job.models.items():
        scores.hits[name] = style_columns(card, model, name, model_id=identity, ground=job.ground)
        scores.policy |= style_truncation(card, model, name)
    if not job.content:
        return scores
    attributed = attributed or {}
    texts = {m: attributed.get(m) or modified_texts(card, "none" if m == ERASE else m, job.lexicon, job.placeholder)
             for m in job.modifications}
    needed = sorted({need for m in job.content for need in registry.METRICS[m].needs})
    every_text = [t for pair in texts.values() for side in pair for t in side]
    for need in needed:  # a resource that embeds texts does it in one pass over every text any modification needs
        if RESOURCES[need].variants:
            continue
        value = job.resources.get(need).value
        if hasattr(value, "prefetch"):
            start = time.perf_counter()
            value.prefetch(every_text)
            log(f"{need}: {getattr(value, 'encoded', len(every_text))} texts encoded on "
                f"{getattr(value, 'device', 'cpu')} in {time.perf_counter() - start:.1f} s")
    for modification in job.modifications:
        start = time.perf_counter()
        counts = score_content(card, job.content, modification=modification, lexicon=job.lexicon,
                               placeholder=job.placeholder, modified=attributed.get(modification),
                               texts=texts[modification], resources=job.resources, params=job.params)
        scores.policy |= counts
        decided = {c: {k: v for k, v in n.items() if v and k != LIMIT} for c, n in counts.items()}  # not the limit
        flagged = {c: n for c, n in decided.items() if n}
        log(f"content @{modification}: {', '.join(job.content)} in {time.perf_counter() - start:.1f} s"
            + (f"; empty/OOV policy applied: {flagged}" if flagged else ""))
    return scores
