"""Inference throughput of the two pair classifiers on KJV x BBE verse pairs, batched vs one pair at a time.

The feature backend scores 10,000 pairs batched (and 1,000 one at a time); the cross-encoder (max_length 128,
2 torch threads) scores 300 pairs batched and 30 one at a time, and its 10,000-pair time is extrapolated
linearly from that rate (stated in the output).  Each model is fitted first on 64 real pairs; the fit is not
timed.  Run ``python -m benchmarks.speed.speed_pairs``.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from benchmarks.common import publish
from tsteval.classifiers.pairs import MATCH, NO_MATCH, CrossEncoderPairClassifier, FeaturePairClassifier, PairClassifier
from tsteval.core import markdown as md
from tsteval.readers.bible import parallel_verses

RESULTS = Path(__file__).resolve().parents[1] / "results"
N_PAIRS = 10_000
# backend -> (pairs scored batched, pairs scored one at a time)
SIZES = {"features": (10_000, 1_000), "cross-encoder": (300, 30)}


def rate(model: PairClassifier, pairs: list[tuple[str, str]], batched: bool) -> float:
    """Pairs per second through ``predict_proba``, all at once or one call per pair."""
    start = time.perf_counter()
    if batched:
        model.predict_proba(pairs)
    else:
        for pair in pairs:
            model.predict_proba([pair])
    return len(pairs) / (time.perf_counter() - start)


def main() -> None:
    """Fit both backends on a few pairs, time them and write ``speed_pairs.{md,json}``."""
    torch.set_num_threads(2)
    verses = parallel_verses(["KJV", "BBE"])
    rng = np.random.default_rng(0)
    rows, other = rng.integers(0, len(verses), N_PAIRS), rng.integers(0, len(verses), N_PAIRS)
    pairs = [(verses.KJV.iat[i], verses.BBE.iat[j if k % 2 else i])
             for k, (i, j) in enumerate(zip(rows, other, strict=True))]
    labels = [NO_MATCH if k % 2 else MATCH for k in range(64)]
    results = []
    for name, model in (("features", FeaturePairClassifier()), ("cross-encoder", CrossEncoderPairClassifier())):
        model.fit(pairs[:64], labels)
        n_batched, n_single = SIZES[name]
        batched, single = rate(model, pairs[:n_batched], True), rate(model, pairs[:n_single], False)
        results.append({"backend": name, "batched_pairs": n_batched, "batched_per_s": batched,
                        "single_pairs": n_single, "single_per_s": single, "speedup": batched / single,
                        "seconds_for_10k": N_PAIRS / batched, "extrapolated": n_batched < N_PAIRS})
    RESULTS.mkdir(exist_ok=True)
    meta = {"cpu": platform.processor() or platform.machine(), "torch_threads": 2}
    publish(RESULTS, "speed_pairs", {"meta": meta, "results": results}, page)


def page(report: dict) -> str:
    """The results page of ``speed_pairs.json``."""
    table = md.table(pd.DataFrame([{
        "backend": r["backend"], "batched pairs/s (n)": f"{r['batched_per_s']:.1f} ({r['batched_pairs']})",
        "one-at-a-time pairs/s (n)": f"{r['single_per_s']:.1f} ({r['single_pairs']})",
        "speed-up": f"{r['speedup']:.1f}x",
        "s for 10k pairs": f"{r['seconds_for_10k']:.1f}" + (" (extrapolated)" if r["extrapolated"] else "")}
        for r in report["results"]]))
    meta = report["meta"]
    return "\n".join(["# Pair classifier throughput (KJV x BBE verse pairs)\n",
                      f"{meta['cpu']}, {meta['torch_threads']} torch threads, shared machine. Cross-encoder timed on "
                      "fewer pairs and extrapolated to 10,000 (linear).\n", table]) + "\n"

if __name__ == "__main__":
    main()
