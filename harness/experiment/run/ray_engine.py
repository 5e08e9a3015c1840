"""The Ray engine: the per-sentence phase of a plan on Ray Data workers (``tsteval score --engine ray``).

The driver (:func:`tsteval.experiment.run.execute.execute`) loads or trains every resource as for the local engine and
reads and checks the transfers with the same readers (so a bad file is one error line before any work).  Here
the rows become a Ray dataset, sorted by input so that the transfers of one input share a block (each distinct
text is classified and encoded once per block), and ``map_batches`` runs :class:`SentenceWorker`: each worker
loads the style classifiers (shipped as their saved files and loaded through the verified path), the lexicon,
the word vectors and the sentence encoder once, then calls
:func:`~tsteval.experiment.run.sentences.score_sentences` -- the function the local engine calls -- on each block.
With ``--device cuda`` the metrics that need a neural model (a resource declared ``gpu``:
the sentence encoder, the causal LM) run apart, on workers that each hold one GPU (``num_gpus=1``: one model copy
per GPU, ``--workers`` of them, default every GPU of the cluster), after the rest on one CPU worker per CPU.
The driver puts the rows back in order, checks that every block reports the same signatures, and adds the
columns to the scorecard; what needs all rows of a group (naturalness, references' corpus scores, the
bootstrap) is then scored on the driver over the whole table.

Ray is imported only here, and this module only when ``engine="ray"``.
"""

from __future__ import annotations

import json
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace

import pandas as pd

from tsteval.core.errors import TstevalError
from tsteval.experiment.run.blocks import INFO, blocks, check_styles, merge, needs_gpu, score_block, ship, unship
from tsteval.experiment.run.sentences import SENTENCE_COLUMNS, SentenceJob, SentenceScores, score_sentences
from tsteval.scorecard import Scorecard

INSTALL_HINT = "install it with: pip install 'tsteval[ray]'"


class SentenceWorker:
    """A Ray Data worker: loads the job's models once, then scores blocks of rows with
    :func:`~tsteval.experiment.run.blocks.score_block`."""

    def __init__(self, shipped_ref: list) -> None:
        import ray

        from tsteval.core.progress import quieted

        self.quiet = ExitStack()  # a worker shows no progress bars, for as long as it lives
        self.quiet.enter_context(quieted())
        self.job = unship(ray.get(shipped_ref[0]))

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        import ray

        return score_block(self.job, batch, {"held": sorted(ray.get_runtime_context().get_assigned_resources())})


def worker_request(accelerator: str | None) -> dict[str, object]:
    """The Ray resources of a worker: one CPU, and one unit of ``accelerator`` (``"GPU"``: one GPU; a custom
    resource name, as the tests declare one) when given.

    >>> worker_request(None), worker_request("GPU"), worker_request("fake_gpu")
    ({'num_cpus': 1}, {'num_cpus': 1, 'num_gpus': 1}, {'num_cpus': 1, 'resources': {'fake_gpu': 1}})
    """
    if accelerator is None:
        return {"num_cpus": 1}
    return {"num_cpus": 1, "num_gpus": 1} if accelerator == "GPU" else {"num_cpus": 1, "resources": {accelerator: 1}}


def _tsteval_error(error: BaseException) -> TstevalError | None:
    """The :class:`TstevalError` a worker raised, found among the causes of Ray's exception, else None."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TstevalError) and type(error).__module__.startswith("tsteval"):
            return error
        error = getattr(error, "cause", None) or error.__cause__
    return None


@contextmanager
def connected(address: str | None, quiet: bool) -> Iterator[object]:
    """The ``ray`` module, connected: to ``address``, else to the running Ray of this process, else to the cluster
    in ``RAY_ADDRESS``, else to a new local cluster (shut down at the end, like any connection made here)."""
    try:
        import ray
    except ImportError as error:
        raise TstevalError(f"the ray engine needs Ray ({error}); {INSTALL_HINT}") from error
    level = logging.ERROR if quiet else logging.WARNING
    started = not ray.is_initialized()
    if started:
        target = address or os.environ.get("RAY_ADDRESS") or "local"
        try:
            ray.init(address=target, include_dashboard=False, logging_level=level, log_to_driver=not quiet)
        except (ConnectionError, ValueError, RuntimeError) as error:
            raise TstevalError(f"cannot join the Ray cluster at {target} ({str(error).splitlines()[0]}); start one "
                               "with `ray start --head` and give the address it prints to --address") from error
    elif address is not None:
        raise TstevalError(f"this process is already connected to a Ray cluster, so --address {address} cannot "
                           "be joined: leave --address out to use that cluster")
    context, logger = ray.data.DataContext.get_current(), logging.getLogger("ray.data")
    saved = context.enable_progress_bars, context.raise_original_map_exception, logger.level
    context.enable_progress_bars = not quiet
    context.raise_original_map_exception = True  # a worker's TstevalError reaches the driver (see _tsteval_error)
    logger.setLevel(level)
    try:
        yield ray
    finally:
        context.enable_progress_bars, context.raise_original_map_exception = saved[:2]
        logger.setLevel(saved[2])
        if started:
            ray.shutdown()


def _mapped(ray: object, card: Scorecard, job: SentenceJob, n: int, accelerator: str | None,
            log: Callable[[str], None]) -> SentenceScores:
    """Score ``job``'s columns into ``card`` on ``n`` workers of :func:`worker_request` ``(accelerator)``."""
    start = time.perf_counter()
    parts = blocks(card.frame[list(SENTENCE_COLUMNS)], n)
    # The job goes to the object store once; each worker gets a reference to it (in a list, so that Ray
    # passes the reference, and not the job, as the constructor's argument).
    shipped = ray.put(ship(job))
    try:
        with warnings.catch_warnings():
            # max_restarts=0: a worker that dies fails the run (Ray would otherwise restart it, and says on
            # stderr that it may not manage); Ray 2.60 warns that this keyword will move, hence the pin <2.61.
            warnings.filterwarnings("ignore", message=".*ray_remote_args.*is deprecated")
            scored = ray.data.from_pandas(parts).map_batches(
                SentenceWorker, fn_constructor_args=([shipped],), batch_format="pandas", batch_size=None,
                compute=ray.data.ActorPoolStrategy(size=n), max_restarts=0, **worker_request(accelerator)).to_pandas()
    except Exception as error:  # a user error in a worker arrives wrapped in Ray's exceptions
        cause = _tsteval_error(error)
        if cause is None:
            raise
        raise cause from None
    scores = merge(card, scored, list(job.models))
    held = set.intersection(*(set(json.loads(text)["held"]) for text in scored[INFO].dropna()))
    log(f"per-sentence metrics ({', '.join([*job.models, *job.content])}) on Ray ({n} workers holding "
        f"{', '.join(sorted(held))}; {len(parts)} blocks): {len(card.frame)} rows in "
        f"{time.perf_counter() - start:.1f} s")
    return scores


def score_sentences_on_ray(card: Scorecard, job: SentenceJob, *, address: str | None = None,
                           workers: int | None = None, quiet: bool = True,
                           log: Callable[[str], None] = lambda _message: None,
                           accelerator: str | None = None) -> SentenceScores:
    """Add the per-sentence columns of ``job`` to ``card`` as :func:`~tsteval.experiment.run.sentences.score_sentences`
    does, with ``workers`` Ray Data workers (default: one per CPU of the cluster).  With the job's device CUDA
    (``accelerator`` ``"GPU"``; the tests name a custom Ray resource instead), the metrics that need a ``gpu``
    resource run on ``workers`` workers holding one unit of it each (default: every unit of the cluster), the
    rest on one worker per CPU."""
    from tsteval.metrics.registry import METRICS

    whole = tuple(m for m in job.content if METRICS[m].whole_table(job.params.get(m, {})))
    pooled = SentenceScores()
    if whole:  # values that depend on every pair of the call: scored on the whole table here, never per block
        start = time.perf_counter()
        pooled = score_sentences(card, replace(job, models={}, content=whole), log=log)
        log(f"{', '.join(whole)} on the whole table (the driver): their values depend on every pair; "
            f"{time.perf_counter() - start:.1f} s")
        job = replace(job, content=tuple(m for m in job.content if m not in whole))
    if not (job.models or job.content):
        return pooled
    check_styles(card, job)
    if accelerator is None and str(job.resources.options.device).startswith("cuda"):
        accelerator = "GPU"
    neural = tuple(m for m in job.content if accelerator and needs_gpu(m))
    rest = replace(job, content=tuple(m for m in job.content if m not in neural))
    with connected(address, quiet) as ray:
        cluster = ray.cluster_resources()
        cpus = max(1, int(cluster.get("CPU", 1)))
        units = int(cluster.get(accelerator, 0)) if neural else 0
        if neural and not 1 <= (workers or units) <= units:
            raise TstevalError(f"the neural metrics ({', '.join(neural)}) need {workers or 1} {accelerator} on the "
                               f"Ray cluster, which has {units}: give --workers at most the GPUs it has, or "
                               "--device cpu")
        scores = SentenceScores()
        if rest.models or rest.content:
            scores = _mapped(ray, card, rest, cpus if neural else workers or cpus, None, log)
        if neural:
            scores.policy |= _mapped(ray, card, replace(job, models={}, content=neural), workers or units,
                                     accelerator, log).policy
    scores.policy |= pooled.policy
    return scores
