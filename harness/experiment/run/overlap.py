"""A CUDA run's CPU-side metrics on the other cores while the GPU works (the local engine).

With the run's device CUDA, :class:`Overlap` starts worker processes (spawned: they never touch the GPU, and a
forked child of a process holding a CUDA context must not) while this process loads its neural models.  While
this process scores the neural columns on the GPU, the workers score

- the per-sentence columns that need no GPU resource (the style classifiers, the lexical content metrics), over
  :func:`~tsteval.experiment.run.blocks.blocks` of rows;
- the naturalness scorers that read no neural model
  (:data:`~tsteval.metrics.naturalness.registry.CPU_SCORERS`), each on the whole table.

Their columns come back with the values and signatures the sequential run gives, and join the scorecard in its
order.  Off on the CPU (the cores already share the work through torch's threads) and with attribution
modifications (their texts come from the classifier in this process).  The processes stay up for the next run of
the same process (:func:`worker_pool`), so only the first pays for their start-up.
"""

from __future__ import annotations

import copyreg
import os
import pickle
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from tsteval.experiment.plan.plan import Log
from tsteval.experiment.run.blocks import blocks, check_styles, merge, needs_gpu, score_block, ship, unship
from tsteval.experiment.run.sentences import SENTENCE_COLUMNS, SentenceJob, SentenceScores, score_sentences
from tsteval.metrics.resources import ResourceOptions, Resources
from tsteval.scorecard import Scorecard

_JOBS: dict[str, SentenceJob] = {}  # in a worker: the shipped job of each file, loaded once
_HELD: list[object] = []  # in a worker: its thread limits and quiet switch, held for as long as it lives


def _proxy(mapping: dict) -> MappingProxyType:
    """A read-only mapping again, in the worker (the metrics' parameters are ones)."""
    return MappingProxyType(mapping)


copyreg.pickle(MappingProxyType, lambda proxy: (_proxy, (dict(proxy),)))


def _start() -> None:
    """A worker's set-up: one torch thread and one BLAS/OpenMP thread (the cores are the workers: with a pool of
    BLAS threads each, 15 workers fitting the unigram classifiers on a 16-core GPU machine took seconds per fold),
    no progress bars."""
    import sklearn.linear_model  # noqa: F401 - loads SciPy's BLAS too, so that the limit below reaches it
    import torch
    from threadpoolctl import threadpool_limits

    from tsteval.core.progress import quieted

    torch.set_num_threads(1)
    _HELD.append(threadpool_limits(1))  # kept: the limits hold for as long as the worker lives
    quiet = quieted()  # kept too: a dropped context manager is closed when collected, which restores the bars
    quiet.__enter__()
    _HELD.append(quiet)


def _warm() -> None:
    """Import what the tasks need while the driver loads its models."""
    import tsteval.experiment.run.blocks  # noqa: F401
    import tsteval.metrics.naturalness.registry  # noqa: F401


def _block(path: str, batch: pd.DataFrame) -> pd.DataFrame:
    """One block scored by the job shipped to ``path`` (a worker keeps the latest run's job only)."""
    if path not in _JOBS:
        _JOBS.clear()
        _JOBS[path] = unship(pickle.loads(Path(path).read_bytes()))
    return score_block(_JOBS[path], batch)


def _naturalness(name: str, frame: pd.DataFrame, human: Sequence[str] | None, seed: int, folds: int,
                 options: ResourceOptions) -> list[tuple[str, np.ndarray, str]]:
    """The columns (name, values, signature) naturalness scorer ``name`` adds to a scorecard of ``frame``."""
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

    card = Scorecard(frame.copy())
    NATURALNESS_METRICS[name](card, human, seed, folds, resources=Resources(options))
    return [(column, card.frame[column].to_numpy(), card.signatures[column]) for column in card.metrics]


def sentence_order(columns: Sequence[str], job: SentenceJob) -> list[str]:
    """``columns`` of the per-sentence phase in the order :func:`score_sentences` adds them: the style columns
    first (as given), then the content columns by modification and by the metric's place in ``job.content``.

    >>> job = SentenceJob(content=("bleu", "sbert"), modifications=("none", "mask"))
    >>> sentence_order(["acc@ft", "bleu@none", "bleu@mask", "sbert@none", "sbert@mask"], job)
    ['acc@ft', 'bleu@none', 'sbert@none', 'bleu@mask', 'sbert@mask']
    """
    def key(column: str) -> tuple[int, int]:
        name, _, rest = column.partition("@")
        if name not in job.content:  # a style column
            return -1, 0
        return job.modifications.index(rest.split("[", 1)[0]), job.content.index(name)

    return sorted(columns, key=key)  # stable: the style columns keep their order


_POOLS: dict[int, ProcessPoolExecutor] = {}  # worker count -> the process's pool of that size


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """The process's pool of ``workers`` spawned processes, started (and warmed up) on first use and kept for the
    runs after it; a pool of another size is shut down first."""
    if workers not in _POOLS:
        for other in _POOLS.values():
            other.shutdown(wait=False, cancel_futures=True)
        _POOLS.clear()
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_start)
        for _ in range(workers):
            _POOLS[workers].submit(_warm)
    return _POOLS[workers]


class Overlap:
    """A run's work for :func:`worker_pool` (see the module).  Use as a context manager: on leaving, what the run
    sent and no worker began is cancelled."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.pool = worker_pool(workers)
        self.folder = tempfile.TemporaryDirectory(prefix="tsteval-overlap-")
        self.blocks: list[Future] = []
        self.natural: dict[str, Future] = {}
        self.grouped: dict[str, tuple[list, dict, list[Future]]] = {}  # per-group scorers: tasks, fields, futures
        self.cpu_job: SentenceJob | None = None
        self.started = time.perf_counter()

    def __enter__(self) -> Overlap:
        return self

    def __exit__(self, *_exc: object) -> None:
        futures = [*self.blocks, *self.natural.values(), *(f for *_, group in self.grouped.values() for f in group)]
        for future in futures:
            future.cancel()
        for future in futures:  # the folder holds their job: wait for those begun
            if not future.cancelled():
                future.exception()
        self.folder.cleanup()

    def start_sentences(self, card: Scorecard, job: SentenceJob) -> SentenceJob:
        """Send ``job``'s style classifiers and content metrics that need no GPU (nor the whole table) to the
        workers, over blocks of ``card``'s rows; returns the rest of the job, for this process."""
        from tsteval.metrics.registry import METRICS

        check_styles(card, job)
        cpu = tuple(m for m in job.content if not needs_gpu(m) and not METRICS[m].whole_table(job.params.get(m, {})))
        self.cpu_job = replace(job, content=cpu)
        if job.models or cpu:
            path = Path(self.folder.name) / "job.pickle"
            path.write_bytes(pickle.dumps(ship(self.cpu_job)))
            frame = card.frame[list(SENTENCE_COLUMNS)]
            self.blocks = [self.pool.submit(_block, str(path), part) for part in blocks(frame, self.workers)]
        return replace(job, models={}, content=tuple(m for m in job.content if m not in cpu))

    def start_naturalness(self, card: Scorecard, names: Sequence[str], human: Sequence[str] | None, seed: int,
                          folds: int, options: ResourceOptions) -> None:
        """Send the naturalness scorers of ``names`` that read no neural model to the workers."""
        from tsteval.metrics.naturalness.adversarial import score_group
        from tsteval.metrics.naturalness.registry import CPU_SCORERS, PER_GROUP_SCORERS, adversarial_tasks

        light = replace(options, transfers=None, classifiers={}, pair_classifiers={})
        frame = card.frame.copy()
        for name in names:
            if name in PER_GROUP_SCORERS:  # a task per (system, setting): the processes share them
                tasks, fields = adversarial_tasks(name, card, human, seed, folds)
                self.grouped[name] = (tasks, fields, [self.pool.submit(score_group, task) for task in tasks])
            elif name in CPU_SCORERS:
                self.natural[name] = self.pool.submit(_naturalness, name, frame, human, seed, folds, light)

    def sentences(self, card: Scorecard, rest: SentenceJob, job: SentenceJob, log: Log) -> SentenceScores:
        """Score ``rest`` here, gather the workers' blocks, and add every column of ``job`` to ``card`` in the
        sequential order."""
        mine = Scorecard(card.frame[list(SENTENCE_COLUMNS)].copy())
        scores = score_sentences(mine, rest, log=log)
        theirs = Scorecard(card.frame[list(SENTENCE_COLUMNS)].copy())
        if self.blocks:
            start = time.perf_counter()
            gathered = merge(theirs, pd.concat([f.result() for f in self.blocks]), list(job.models), "CPU")
            scores.hits |= gathered.hits
            scores.policy |= gathered.policy
            log(f"per-sentence metrics ({', '.join([*job.models, *self.cpu_job.content])}) in {self.workers} CPU "
                f"processes beside the GPU: done {time.perf_counter() - self.started:.1f} s after they started "
                f"(waited {time.perf_counter() - start:.1f} s here)")
        values = {c: (mine.frame[c], mine.signatures[c]) for c in mine.metrics}
        values |= {c: (theirs.frame[c], theirs.signatures[c]) for c in theirs.metrics}
        for column in sentence_order([*theirs.metrics, *mine.metrics], job):
            card.add(column, values[column][0].to_numpy(), values[column][1])
        return scores

    def naturalness(self, card: Scorecard, name: str, log: Log) -> bool:
        """Add the columns of naturalness scorer ``name`` if the workers scored it (else False)."""
        if name not in self.natural and name not in self.grouped:
            return False
        start = time.perf_counter()
        if name in self.grouped:
            from tsteval.metrics.naturalness.adversarial import add_group_scores

            tasks, fields, futures = self.grouped[name]
            add_group_scores(card, tasks, [future.result() for future in futures], fields)
        for column, values, signature in self.natural[name].result() if name in self.natural else ():
            card.add(column, values, signature)
        log(f"naturalness {name} in a CPU process beside the GPU (waited {time.perf_counter() - start:.1f} s here)")
        return True


def overlap_workers(device: str | None, workers: int | None, attribution: bool) -> int:
    """How many CPU processes work beside the GPU: none unless the run's ``device`` (``--device``) resolves to
    CUDA, none with attribution modifications, else ``workers`` (default: every core but the one that feeds the
    GPU, at least one).

    >>> overlap_workers("cpu", None, False), overlap_workers(None, 3, False)
    (0, 0)
    """
    from tsteval.core.devices import resolve_device

    if device in (None, "cpu") or attribution or not resolve_device(device).startswith("cuda"):
        return 0
    return workers or max(1, (os.cpu_count() or 2) - 1)
