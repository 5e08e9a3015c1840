"""Pieces the benchmarks share: the Mir transfers, the Yelp training corpus and its classifiers, a timer, writing a
result."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tsteval.classifiers.training import TrainedClassifier, train_classifier
from tsteval.core.records import Corpus, Transfers
from tsteval.readers.mir import load_mir
from tsteval.readers.yelp import load_yelp_corpus

# CPU fine-tuning of the transformer is slow: it trains on a seeded subsample of the Yelp corpus.
TRANSFORMER_TRAIN_SIZE = 4000
TRANSFORMER_PARAMS = {"epochs": 1, "precision": "fp32"}  # fp32 on every CPU (auto: bf16 where native)


def mir_and_yelp() -> tuple[Transfers, Corpus]:
    """Mir et al.'s transfers (with human ratings) and Yelp dev+test without any copy of their inputs."""
    transfers = load_mir()
    corpus = load_yelp_corpus(splits=("dev", "test"), exclude=set(transfers.frame["input"]))
    return transfers, corpus


def subsample(corpus: Corpus, size: int, seed: int = 0) -> Corpus:
    """A seeded random subset of ``size`` texts (all of them when the corpus is smaller)."""
    if len(corpus) <= size:
        return corpus
    keep = np.sort(np.random.default_rng(seed).choice(len(corpus), size, replace=False))
    return Corpus([corpus.texts[i] for i in keep], [corpus.labels[i] for i in keep], corpus.origin)


def yelp_transformer(corpus: Corpus, seed: int = 0, verbose: bool = True) -> TrainedClassifier:
    """The fine-tuned MiniLM style classifier on a Yelp subsample (cached after the first run)."""
    params = {**TRANSFORMER_PARAMS, "verbose": verbose}
    return train_classifier("transformer", subsample(corpus, TRANSFORMER_TRAIN_SIZE, seed), params, seed=seed,
                            heldout=0.05)


def timed(fn: Callable[..., object], *args: object, **kwargs: object) -> tuple[object, float, float]:
    """``fn(*args, **kwargs)``, the wall seconds it took and the process's CPU seconds (every thread)."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def r_margin(pair: tuple[float, float] | None) -> str:
    """A correlation and its margin as a table cell, ``—`` where there is none.

    >>> r_margin((0.4567, 0.0512))
    '0.457 ± 0.051'
    """
    return "—" if pair is None else f"{pair[0]:.3f} ± {pair[1]:.3f}"


def publish(folder: Path, stem: str, report: object, render: Callable[[object], str]) -> str:
    """``report`` as ``folder/STEM.json`` and its page, ``render(report)``, as ``folder/STEM.md``; the page, printed
    and returned."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    (folder / f"{stem}.md").write_text(page := render(report), encoding="utf-8")
    print(page)
    return page
