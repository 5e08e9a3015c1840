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
    :class:`~tsteval.metrics.content.erasure.Erasure`) for ``erase``.
    """

    models: Mapping[str, tuple[object, str]] = field(default_factory=dict)
    ground: str = "nominal"
    content: tuple[str, ...] = ()
    modifications: tuple[str, ...] = ("none",)
    lexicon: object = None
    placeholder: str = "<masked>"
    vectors: Mapping[str, object] = field(default_factory=dict)
    erasure: object = None


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
    from tsteval.metrics.content.scorer import score_content
    from tsteval.metrics.style.scorer import style_columns

    scores = SentenceScores()
    for name, (model, identity) in job.models.items():
        scores.hits[name] = style_columns(card, model, name, model_id=identity, ground=job.ground)
    for modification in job.modifications if job.content else ():
        start = time.perf_counter()
        counts = score_content(card, job.content, modification=modification, lexicon=job.lexicon,
                               placeholder=job.placeholder, modified=(attributed or {}).get(modification),
                               word_vectors=job.vectors.get(modification), erasure=job.erasure)
        scores.policy |= counts
        flagged = {c: {k: v for k, v in n.items() if v} for c, n in counts.items() if any(n.values())}
        log(f"content @{modification}: {', '.join(job.content)} in {time.perf_counter() - start:.1f} s"
            + (f"; empty/OOV policy applied: {flagged}" if flagged else ""))
    return scores
