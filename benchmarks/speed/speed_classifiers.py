"""Inference throughput of every classifier backend, batched versus one sentence at a time.

Each backend is trained once on a fixed slice of Yelp dev (the transformer on a smaller one) and
then scores the same 5,000 held-out Yelp dev sentences through ``predict_proba``.  The baseline is
the straightforward library call per sentence (sklearn pipeline, fastText ``predict``, a torch
forward pass, a Hugging Face forward pass), timed on a prefix of those sentences; the ratio of the
two rates is what batching buys.  Run ``python -m benchmarks.speed.speed_classifiers``.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from benchmarks.common import publish
from tsteval.classifiers.base import TextClassifier, make_classifier
from tsteval.core import markdown as md
from tsteval.core.datapaths import data_root

RESULTS = Path(__file__).resolve().parents[1] / "results"
N_TRAIN_PER_CLASS = 5000
N_TRAIN_TRANSFORMER_PER_CLASS = 500
N_EVAL_PER_CLASS = 2500
THREADS = 2
# backend -> (parameters, sentences for the one-at-a-time baseline)
BACKENDS: dict[str, tuple[dict, int]] = {
    "tfidf-lr": ({}, 5000),
    "fasttext": ({"epoch": 25}, 5000),
    "textcnn": ({"epochs": 2, "verbose": False}, 1000),
    "transformer": ({"verbose": False}, 300),
}


def read_lines(path: Path, start: int, n: int) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle]
    return lines[start:start + n]


def yelp(start: int, n_per_class: int) -> tuple[list[str], list[str]]:
    """``n_per_class`` negative then positive Yelp dev sentences from line ``start``."""
    neg = read_lines(data_root() / "yelp" / "sentiment.dev.0", start, n_per_class)
    pos = read_lines(data_root() / "yelp" / "sentiment.dev.1", start, n_per_class)
    return neg + pos, ["0"] * len(neg) + ["1"] * len(pos)


def one_at_a_time(backend: str, model: TextClassifier) -> Callable[[str], object]:
    """The plain library call that scores a single sentence with the fitted model."""
    if backend == "tfidf-lr":
        return lambda text: model.logreg_.predict_proba(model.vectorizer_.transform([text]))
    if backend == "fasttext":
        return lambda text: model.model_.predict(text, k=-1)
    if backend == "textcnn":
        def textcnn(text: str) -> object:
            with torch.inference_mode():
                return torch.softmax(model.network_(model._encode([text])), dim=1)
        return textcnn

    def transformer(text: str) -> object:
        with torch.inference_mode():
            return torch.softmax(model.model_(**model._tokenize([text])).logits, dim=1)
    return transformer


def timed(run: Callable[[], object], repeats: int = 3) -> tuple[object, float]:
    """What ``run()`` returns and the best of ``repeats`` timings (the machine may be shared)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return result, best


def main() -> None:
    torch.set_num_threads(THREADS)
    eval_x, eval_y = yelp(N_TRAIN_PER_CLASS, N_EVAL_PER_CLASS)
    rows = []
    for backend, (params, n_single) in BACKENDS.items():
        per_class = N_TRAIN_TRANSFORMER_PER_CLASS if backend == "transformer" else N_TRAIN_PER_CLASS
        train_x, train_y = yelp(0, per_class)
        start = time.perf_counter()
        model = make_classifier(backend, **params).fit(train_x, train_y)
        train_seconds = time.perf_counter() - start
        model.predict_proba(eval_x[:64])  # warm-up
        predicted, seconds = timed(lambda m=model: m.predict(eval_x))
        batched = len(eval_x) / seconds
        single_call = one_at_a_time(backend, model)
        _, seconds = timed(lambda f=single_call, n=n_single: [f(t) for t in eval_x[:n]])
        single = n_single / seconds
        rows.append({"backend": backend, "params": params, "n_train": len(train_x),
                     "train_seconds": round(train_seconds, 1),
                     "heldout_accuracy": round(float(np.mean(predicted == np.array(eval_y))), 4),
                     "n_batched": len(eval_x), "batched_per_s": round(batched, 1),
                     "n_single": n_single, "single_per_s": round(single, 1),
                     "batching_ratio": round(batched / single, 2)})
        print(rows[-1], flush=True)
    machine = {"cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
               "python": platform.python_version(), "platform": platform.platform(),
               "cuda": torch.cuda.is_available()}
    publish(RESULTS, "speed_classifiers", {"machine": machine, "results": rows}, page)


def page(report: dict) -> str:
    """The results page of ``speed_classifiers.json``."""
    machine, rows = report["machine"], report["results"]
    table = md.table(pd.DataFrame([{
        "backend": r["backend"], "params": json.dumps(r["params"]), "n train": f"{r['n_train']:,}",
        "train s": str(r["train_seconds"]), "held-out acc": f"{r['heldout_accuracy']:.3f}",
        "batched sent/s": f"{r['batched_per_s']:,.0f}",
        "one-at-a-time sent/s (n)": f"{r['single_per_s']:,.0f} ({r['n_single']:,})",
        "batching ratio": f"{r['batching_ratio']:.1f}×"} for r in rows]))
    return "\n".join([
        "# Classifier inference speed (Yelp dev)", "",
        f"Machine: {machine['cpu_count']} CPUs, torch {machine['torch']} with {machine['torch_threads']} threads, "
        f"CUDA {'yes' if machine['cuda'] else 'no'}, Python {machine['python']}, {machine['platform']}.", "",
        f"Training: the first {N_TRAIN_PER_CLASS:,} lines of each `sentiment.dev.{{0,1}}` "
        f"(transformer: the first {N_TRAIN_TRANSFORMER_PER_CLASS:,}). Evaluation: the next "
        f"{N_EVAL_PER_CLASS:,} lines of each ({rows[0]['n_batched']:,} sentences), scored in one `predict_proba` "
        "call; the one-at-a-time baseline is the plain library call per sentence on the first *n* of them. Each "
        "timing is the best of 3 runs.", "", table]) + "\n"

if __name__ == "__main__":
    main()
