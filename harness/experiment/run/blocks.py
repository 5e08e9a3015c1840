"""The per-sentence phase in blocks of rows, for workers in other processes (Ray's, or the local engine's CPU
workers beside a GPU: :mod:`tsteval.experiment.run.overlap`).

A :class:`SentenceJob` travels as a :class:`ShippedJob` (:func:`ship`; a worker gets it back with :func:`unship`),
the rows as :func:`blocks` sorted by input (the transfers of one input share a block, so each distinct text is
classified and encoded once per block); :func:`score_block` scores one with
:func:`~tsteval.experiment.run.sentences.score_sentences`, and :func:`merge` puts the blocks' columns back in the
scorecard's row order.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import TstevalError
from tsteval.experiment.run.sentences import SENTENCE_COLUMNS, SentenceJob, SentenceScores, score_sentences
from tsteval.metrics.truncation import summed
from tsteval.scorecard import Scorecard

ROW = "__tsteval_row"  # position of the row in the scorecard
INFO = "__tsteval_block"  # JSON on the first row of each block: its signatures and empty/OOV policy counts
HIT = "__tsteval_hit@"  # per style classifier: the input's most probable class is its target style
BLOCK_ROWS = 1024  # at most this many rows per block (one batch of a worker)
BLOCKS_PER_WORKER = 4  # at least this many blocks per worker (while there are rows), to balance the load


@dataclass(frozen=True)
class ShippedJob:
    """A :class:`SentenceJob` as it travels to the workers: each style classifier as the files its ``save``
    writes (loaded by the worker through :func:`tsteval.classifiers.base.load_classifier`, which verifies them)."""

    job: SentenceJob
    models: Mapping[str, tuple[dict[str, bytes], str]]


def needs_gpu(metric: str) -> bool:
    """Whether content metric ``metric`` reads a neural model on the run's device (a resource declared ``gpu``):
    with CUDA it stays with the GPU, the rest can go to CPU workers.

    >>> needs_gpu("sbert"), needs_gpu("bleu")
    (True, False)
    """
    from tsteval.metrics.registry import METRICS
    from tsteval.metrics.resources import RESOURCES

    return any(RESOURCES[need].gpu for need in METRICS[metric].needs)


def check_styles(card: Scorecard, job: SentenceJob) -> None:
    """An unknown style of ``card`` is one error line before any worker starts (the classifiers of ``job``)."""
    from tsteval.metrics.style.scorer import class_indices

    for model, _identity in job.models.values():
        for column in ("target_style", "source_style"):
            class_indices(model, card.frame[column].unique().tolist(), column)


def ship(job: SentenceJob) -> ShippedJob:
    """``job`` with its classifiers replaced by their saved files (classifiers need not pickle; fastText's do not)."""
    models = {}
    with tempfile.TemporaryDirectory(prefix="tsteval-job-") as tmp:
        for name, (model, identity) in job.models.items():
            folder = Path(tmp) / name
            model.save(folder)
            models[name] = ({str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                             if p.is_file()}, identity)
    return ShippedJob(replace(job, models={}, resources=job.resources.shipped()), models)


def unship(shipped: ShippedJob) -> SentenceJob:
    """The job of ``shipped`` with its classifiers loaded (quiet) from their files."""
    from tsteval.classifiers.base import load_classifier

    models = {}
    with tempfile.TemporaryDirectory(prefix="tsteval-job-") as tmp:
        for name, (files, identity) in shipped.models.items():
            folder = Path(tmp) / name
            for relative, data in files.items():
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                (folder / relative).write_bytes(data)
            model = load_classifier(folder)
            if hasattr(model, "verbose"):
                model.verbose = False
            models[name] = (model, identity)
    return replace(shipped.job, models=models)


def score_block(job: SentenceJob, batch: pd.DataFrame, info: Mapping[str, object] | None = None) -> pd.DataFrame:
    """The columns of ``job`` on the rows of ``batch`` (one of :func:`blocks`), with ``ROW``, the ``HIT`` columns
    and, on the first row, ``INFO``: the signatures, the empty/OOV policy counts and ``info``."""
    card = Scorecard(batch[list(SENTENCE_COLUMNS)].reset_index(drop=True))
    scores = score_sentences(card, job)
    out = card.frame[card.metrics].copy()
    out[ROW] = batch[ROW].to_numpy()
    for name, hits in scores.hits.items():
        out[HIT + name] = hits
    first = json.dumps({"signatures": card.signatures, "policy": scores.policy, **(info or {})})
    out[INFO] = [first] + [None] * (len(out) - 1)
    return out


def blocks(frame: pd.DataFrame, workers: int) -> list[pd.DataFrame]:
    """The rows (with their position in ``ROW``) sorted by input, in contiguous blocks: at most ``BLOCK_ROWS``
    rows each, and at least ``BLOCKS_PER_WORKER`` per worker while there are rows.

    >>> [len(b) for b in blocks(pd.DataFrame({"input": list("babc")}), workers=1)]
    [1, 1, 1, 1]
    >>> blocks(pd.DataFrame({"input": list("babc")}), workers=1)[0]["input"].tolist()
    ['a']
    """
    rows = frame.assign(**{ROW: np.arange(len(frame))}).sort_values("input", kind="stable")
    count = min(len(rows), max(-(-len(rows) // BLOCK_ROWS), BLOCKS_PER_WORKER * workers))
    return [rows.iloc[part] for part in np.array_split(np.arange(len(rows)), count)]


def merge(card: Scorecard, scored: pd.DataFrame, styles: list[str], engine: str = "Ray") -> SentenceScores:
    """Add the workers' columns to ``card`` in its row order; every block must report the same signatures."""
    scored = scored.sort_values(ROW, kind="stable")
    if scored[ROW].tolist() != list(range(len(card.frame))):
        raise TstevalError(f"the {engine} workers returned {len(scored)} rows for {len(card.frame)} transfers")
    infos = [json.loads(text) for text in scored[INFO].dropna()]
    signatures = infos[0]["signatures"]
    for info in infos[1:]:
        differ = sorted(c for c in {*signatures, *info["signatures"]}
                        if signatures.get(c) != info["signatures"].get(c))
        if differ:
            column = differ[0]
            raise TstevalError(f"the {engine} workers disagree on the signature of {column}: "
                               f"{signatures.get(column)!r} vs {info['signatures'].get(column)!r}; install the same "
                               "versions of tsteval and its libraries on every node")
    for column, signature in signatures.items():
        card.add(column, scored[column].to_numpy(dtype=np.float64), signature)
    columns = dict.fromkeys(column for info in infos for column in info["policy"])
    policy = {column: summed([info["policy"][column] for info in infos if column in info["policy"]])
              for column in columns}
    return SentenceScores(hits={name: scored[HIT + name].to_numpy(dtype=bool) for name in styles}, policy=policy)
