"""The same plan on the local engine and on Ray Data with 1 and 2 workers: pairs per second, end to end.

Input: a seeded sample of DualRL Yelp items with every system's transfer of them (``--pairs``, default about
2,000 rows); style: fastText trained on Yelp dev without those inputs (cached); content: ``bleu,chrf,sbert`` on
the unmodified texts; one torch thread per process (the local engine's too).  One local Ray cluster
(``ray.init(num_cpus=2)``) is started once (its start-up time is reported apart); each Ray run starts its
workers afresh, so its time includes each worker's start and model loading, as ``tsteval score --engine ray``
would.  Each run starts from an empty embedding cache (its own ``TSTEVAL_CACHE``; a Ray cluster is started per
run so that its workers see it), so every run encodes its texts.  All three runs happen in one process, one after
the other, and their scorecards are compared (largest absolute difference per column).  Run
``python -m benchmarks.speed.speed_ray [--pairs N]``; it writes ``benchmarks/results/speed_ray.{md,json}``.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.classifiers.training import train_classifier
from tsteval.core import markdown as md
from tsteval.core.records import Transfers
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.execute import execute
from tsteval.readers.dualrl import load_dualrl
from tsteval.readers.yelp import load_yelp_corpus

RESULTS = Path(__file__).resolve().parents[1] / "results"
CONTENT = ("bleu", "chrf", "sbert")


def sample(pairs: int, seed: int = 0) -> Transfers:
    """Every DualRL Yelp system's transfer of a seeded sample of items, about ``pairs`` rows in all."""
    transfers = load_dualrl("yelp")
    frame = transfers.frame
    systems = frame["system"].nunique()
    items = np.random.default_rng(seed).choice(np.sort(frame["item"].unique()), -(-pairs // systems), replace=False)
    return Transfers(frame[frame["item"].isin(items)].reset_index(drop=True), transfers.origin)


def timed(plan: Plan) -> tuple[float, object]:
    """Seconds of :func:`execute` and its scorecard."""
    start = time.perf_counter()
    card = execute(plan).card
    return time.perf_counter() - start, card


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000, help="about this many transfers (default 2000)")
    return parser


def main(argv: list[str] | None = None) -> None:
    """Time the three engines on the same plan and write ``speed_ray.{md,json}``."""
    import ray
    import torch

    args = parser().parse_args(argv)
    transfers = sample(args.pairs)
    corpus = load_yelp_corpus(splits=("dev",), exclude=set(transfers.frame["input"]))
    clf = train_classifier("fasttext", corpus, {}, seed=0, heldout=0.0)
    plan = {"classifiers": {"ft": clf}, "content": CONTENT, "precision": "fp32"}
    torch.set_num_threads(1)  # as in each Ray worker (Ray sets OMP_NUM_THREADS to its one CPU)
    load_before = os.getloadavg()
    rows, cards, starts = [], {}, []
    with tempfile.TemporaryDirectory(prefix="tsteval-ray-bench-") as tmp:
        os.environ["TSTEVAL_CACHE"] = str(Path(tmp) / "local")
        seconds, local = timed(Plan(transfers, **plan))
        rows.append({"engine": "local", "workers": 1, "seconds": seconds})
        for workers in (1, 2):
            os.environ["TSTEVAL_CACHE"] = str(Path(tmp) / f"ray{workers}")  # before ray.init: workers inherit it
            start = time.perf_counter()
            ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
            starts.append(time.perf_counter() - start)
            try:
                seconds, cards[workers] = timed(Plan(transfers, engine="ray", workers=workers, **plan))
            finally:
                ray.shutdown()
            rows.append({"engine": "ray", "workers": workers, "seconds": seconds})
    cluster_start = float(np.mean(starts))
    load_after = os.getloadavg()
    n = len(transfers.frame)
    for row in rows:
        row["pairs_per_s"] = n / row["seconds"]
    differences = {column: max(float(np.abs(cards[w].frame[column].to_numpy() - local.frame[column].to_numpy())
                                     .max()) for w in cards) for column in local.metrics}
    meta = {"pairs": n, "systems": int(transfers.frame["system"].nunique()),
            "items": int(transfers.frame["item"].nunique()), "content": list(CONTENT), "style": "fasttext",
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "ray_cluster_start_s": round(cluster_start, 1),
            "load_average_1min": {"before": round(load_before[0], 1), "after": round(load_after[0], 1)},
            "max_abs_difference_from_local": differences}
    publish(RESULTS, "speed_ray", {"meta": meta, "results": rows}, page)


def page(results: dict) -> str:
    """The results page of ``speed_ray.json``."""
    meta, rows = results["meta"], results["results"]
    local_rate = rows[0]["pairs_per_s"]
    load = meta["load_average_1min"]
    busy = ("shared with other jobs: the figures are under load" if load["before"] > 1.5
            else "otherwise idle before the run; the load after includes its own workers")
    table = md.table(pd.DataFrame([{
        "engine": r["engine"], "workers": r["workers"], "seconds": f"{r['seconds']:.1f}",
        "pairs/s": f"{r['pairs_per_s']:.1f}", "vs local": f"{r['pairs_per_s'] / local_rate:.2f}x"} for r in rows]))
    lines = ["# The local engine vs Ray Data (1 and 2 workers), end to end\n",
             f"{meta['pairs']} DualRL Yelp transfers ({meta['systems']} systems x {meta['items']} items, both "
             f"directions); fastText style + content {', '.join(meta['content'])} at `none`; one torch thread per "
             f"process. {meta['cores']} cores ({meta['cpu']}), 1-minute load average {load['before']} before and "
             f"{load['after']} after ({busy}); all three were taken in one run, each from an "
             "empty embedding cache. Ray times include starting each worker and loading its models; a local "
             f"cluster took {meta['ray_cluster_start_s']} s to start (mean of the two; not included).\n", table,
             "", "Largest absolute difference from the local scorecard (either worker count):", ""]
    lines += [f"- `{column}`: {value:.3g}" for column, value in meta["max_abs_difference_from_local"].items()]
    return "\n".join(lines) + "\n"

if __name__ == "__main__":
    main()
