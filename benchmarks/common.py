"""Pieces the benchmarks share: the Mir transfers, the Yelp training corpus and its classifiers, a timer, writing a
result."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.classifiers.training import TrainedClassifier, train_classifier
from tsteval.core.records import Corpus, Transfers
from tsteval.readers.mir import load_mir
from tsteval.readers.yelp import load_yelp_corpus

# CPU fine-tuning of the transformer is slow: it trains on a seeded subsample of the Yelp corpus.
TRANSFORMER_TRAIN_SIZE = 4000
TRANSFORMER_PARAMS = {"epochs": 1, "precision": "fp32"}  # fp32 on every CPU (auto: bf16 where native)
MODELS = ("CAAE", "ARAE", "DAR")  # Mir et al.'s three systems, in their tables' order
FIELDS = ("r", "margin", "lo", "hi")  # what by_model gives per model, and the columns of a reproduction's CSV


def by_text(score: Callable[[list[str]], np.ndarray], frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``score``'s values of each row's input and of its output, every distinct text scored once, in one call.

    >>> pairs = pd.DataFrame({"input": ["ab", "c", "ab"], "output": ["ab", "de", "f"]})
    >>> [v.tolist() for v in by_text(lambda texts: np.array([len(t) for t in texts]), pairs)]
    [[2, 1, 2], [2, 2, 1]]
    """
    texts = list(dict.fromkeys([*frame["input"].astype(str), *frame["output"].astype(str)]))
    at, values = {text: k for k, text in enumerate(texts)}, np.asarray(score(texts))
    inputs, outputs = (values[[at[t] for t in frame[c].astype(str)]] for c in ("input", "output"))
    return inputs, outputs


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


def r_margin(figure: Sequence[float | None] | None) -> str:
    """A correlation, its margin and, where it has one, its interval (:data:`FIELDS`) as a table cell; ``—`` where
    there is none.

    >>> r_margin((0.4567, 0.0512)), r_margin((0.4567, 0.0512, 0.41, 0.5)), r_margin((float("nan"), 0.1, None, None))
    ('0.457 ± 0.051', '0.457 ± 0.051 [0.410, 0.500]', '—')
    """
    if figure is None or pd.isna(figure[0]):
        return "—"
    text = f"{figure[0]:.3f} ± {figure[1]:.3f}"
    return text if len(figure) < 4 or pd.isna(figure[2]) else f"{text} [{figure[2]:.3f}, {figure[3]:.3f}]"


def publish(folder: Path, stem: str, report: object, render: Callable[[object], str]) -> str:
    """``report`` as ``folder/STEM.json`` and its page, ``render(report)``, as ``folder/STEM.md``; the page, printed
    and returned."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    (folder / f"{stem}.md").write_text(page := render(report), encoding="utf-8")
    print(page)
    return page


def by_model(frame: pd.DataFrame, columns: Sequence[str], human: str, seed: int = 0,
             lower_is_better: Collection[str] = ()) -> dict[str, dict[str, tuple[float, float, float, float]]]:
    """Mir et al.'s per-model table of each column: ``(r, margin, low, high)`` per model (settings pooled) and for their
    mean ("Average"): Pearson r with ``human``, Mir's margin 1.96·(1−r²)/√n (the rows taken as independent, as the
    paper prints; the Average's is the mean of the models'), and the 95% interval of the engine's bootstrap clustered by
    input (:func:`~tsteval.metaeval.engine.correlate`; the Average's as the within-system level with the
    models as the systems, every model resampled by the same inputs); ``lower_is_better`` columns sign-flipped."""
    from tsteval.metaeval.agreement import by_system
    from tsteval.metaeval.engine import correlate

    ends: dict[tuple[str, str], tuple[float, float]] = {}
    for model in (*MODELS, "Average"):
        rows, level = (frame, "within_system") if model == "Average" else (frame[frame["system"] == model], "sentence")
        table = correlate(rows, columns, [human], lower_is_better=lower_is_better, group=("system",), seed=seed)
        ends |= {(row.metric, model): (row.lo, row.hi) for row in table[table["level"] == level].itertuples()}
    out = {}
    for column in columns:
        sign, mir = -1.0 if column in lower_is_better else 1.0, by_system(frame, column, human)
        pairs = {m: (sign * mir[m].r, mir[m].margin) for m in MODELS}
        pairs["Average"] = tuple(float(np.mean([pairs[m][i] for m in MODELS])) for i in range(2))
        out[column] = {m: (*pairs[m], *ends[(column, m)]) for m in pairs}
    return out
