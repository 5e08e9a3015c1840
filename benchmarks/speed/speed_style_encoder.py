"""Scoring speed of the style columns: the fine-tuned MiniLM (``transformer``) against fastText in the same run
(issue 42, part 4).

10,000 DualRL Yelp transfer pairs (every system's outputs, in order, the first 10,000), both classifiers trained as
the rated meta-evaluation trains them (Yelp without Mir's rated inputs, held-out 10 %, seed 0, the transformer on
:data:`MAX_TRAIN` sentences, as an earlier rated run did: from the cache when it ran first; training
does not change the scoring cost).  Each classifier adds its five style columns (``sti``,
``sti_norm``, ``target_prob``, ``style_strength``, ``target_acc``: :func:`tsteval.metrics.style.scorer.style_columns`,
each distinct text classified once, in its training form) to a scorecard of the pairs; the classifiers are loaded
and warmed up on 64 other pairs before the clock starts.  The best of :data:`REPEATS` timings, each with the
1-minute load average at its start (the 2-core machine is shared).  Writes ``results/speed_style_encoder.{json,md}``.

Run: ``python -m benchmarks.speed.speed_style_encoder [--threads 2]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import pandas as pd
import torch

from benchmarks.common import mir_and_yelp, publish
from tsteval.classifiers.training import train_classifier
from tsteval.core import markdown as md
from tsteval.core.devices import cpu_capability
from tsteval.metrics.style.scorer import style_columns
from tsteval.readers.dualrl import load_dualrl
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
PAIRS = 10_000
WARM = 64
REPEATS = 1
MAX_TRAIN = 4000
BACKENDS = ("fasttext", "transformer")


def timed(frame: object, classifier: object, name: str) -> tuple[float, float, float]:
    """Seconds, CPU seconds and the load average at the start of adding ``name``'s style columns to ``frame``."""
    card = Scorecard(frame.copy())
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    style_columns(card, classifier, name, model_id=name)
    return time.perf_counter() - start, time.process_time() - cpu, load


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    torch.set_num_threads(args.threads)
    frame = load_dualrl("yelp").frame.reset_index(drop=True)
    pairs, warm = frame.iloc[:PAIRS], frame.iloc[PAIRS:PAIRS + WARM]
    _, corpus = mir_and_yelp()
    rows = []
    for backend in BACKENDS:
        params = {"verbose": False, "max_train": MAX_TRAIN} if backend == "transformer" else {}
        model = train_classifier(backend, corpus, params, seed=0, heldout=0.1).model
        style_columns(Scorecard(warm.copy()), model, backend, model_id=backend)
        runs = [timed(pairs, model, backend) for _ in range(REPEATS)]
        seconds, cpu, load = min(runs)
        texts = len(set(pairs["input"]) | set(pairs["output"]))
        rows.append({"classifier": backend, "pairs": len(pairs), "distinct_texts": texts, "seconds": round(seconds, 3),
                     "cpu_seconds": round(cpu, 3), "pairs_per_s": round(len(pairs) / seconds, 1),
                     "load_average": round(load, 2), "text_form": model.text_form_})
        print(rows[-1], flush=True)
    report = {"machine": {"cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                          "torch": torch.__version__, "python": platform.python_version(),
                          "cpu_capability": cpu_capability()}, "rows": rows}
    publish(RESULTS, "speed_style_encoder", report, markdown)


def markdown(report: dict) -> str:
    """``speed_style_encoder.md`` from the report."""
    m, rows = report["machine"], report["rows"]
    lines = ["# Style columns: the fine-tuned MiniLM against fastText (10,000 DualRL Yelp pairs)", "",
             f"Machine: {m['cpu_count']} CPUs (torch capability {m['cpu_capability']}), torch {m['torch']} with "
             f"{m['torch_threads']} threads. **Shared and loaded**: the 1-minute load average at the start of each "
             "timing is in its row; above the core count, other work shared the CPUs. Five style columns per "
             f"classifier, each distinct text classified once (in fp32); the best of {REPEATS} timing(s).", "",
             md.table(pd.DataFrame([{
                 "classifier": r["classifier"], "pairs": f"{r['pairs']:,}",
                 "distinct texts": f"{r['distinct_texts']:,}",
                 "seconds": f"{r['seconds']:.2f}", "CPU seconds": f"{r['cpu_seconds']:.2f}",
                 "pairs/s": f"{r['pairs_per_s']:,.0f}", "load avg": f"{r['load_average']:.2f}"} for r in rows]))]
    if len(rows) == 2:
        lines += ["", f"fastText is {rows[1]['seconds'] / rows[0]['seconds']:.0f}x faster than the transformer here."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
