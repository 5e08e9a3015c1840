"""BERTScore: tsteval's ``bertscore`` against the ``bert-score`` package's ``score`` on the same pairs, model
(the packaged all-MiniLM-L6-v2 folder), layer (6) and threads, in the same run.

The pairs are the first :data:`SYSTEMS` systems of the DualRL Yelp outputs (both directions, 1,000 inputs each),
so inputs repeat across systems as in any comparison of systems.  Both sides start cold (the model loaded inside
the timing), run on :data:`THREADS` torch threads, and are interleaved, best of :data:`REPEATS`; CPU seconds and
wall seconds.  Values: the largest absolute difference of F1, and the share of pairs equal to 1e-5 (elsewhere the
package's batch padding raises a negative best token match to 0; see ``tests/test_bertscore.py``).

Run: ``python -m benchmarks.speed.speed_bertscore``.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish, timed
from tsteval.core import markdown as md

OUT = Path(__file__).resolve().parents[1] / "results"
SYSTEMS = 3
THREADS = 2
REPEATS = 2


def measure() -> dict[str, object]:
    """Both implementations on the same pairs; the report as a dict."""
    import torch
    from bert_score import score

    from tsteval.metrics.content.bertscore import bertscore
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model, loaded_encoder
    from tsteval.readers.dualrl import load_dualrl

    torch.set_num_threads(THREADS)
    frame = load_dualrl("yelp").frame
    frame = frame[frame["system"].isin(frame["system"].unique()[:SYSTEMS])]
    refs, hyps = frame["input"].tolist(), frame["output"].tolist()

    def ours() -> np.ndarray:
        loaded_encoder.cache_clear()  # cold, as the package is
        return bertscore(refs, hyps, SentenceEncoder(cache=False, threads=THREADS, precision="fp32"))[:, 2]

    def theirs() -> np.ndarray:
        with torch.inference_mode():
            return score(hyps, refs, model_type=default_model(), num_layers=6, batch_size=64, nthreads=0)[2].numpy()

    runs: dict[str, list[tuple[float, float]]] = {"tsteval": [], "bert-score": []}
    values = {}
    for _ in range(REPEATS):
        for name, fn in (("tsteval", ours), ("bert-score", theirs)):
            values[name], wall_s, cpu_s = timed(fn)
            runs[name].append((cpu_s, wall_s))
    best = {name: min(r, key=lambda t: t[0]) for name, r in runs.items()}
    gap = np.abs(np.asarray(values["tsteval"], float) - np.asarray(values["bert-score"], float))
    return {"pairs": len(refs), "distinct_texts": len(set(refs) | set(hyps)), "threads": THREADS,
            "repeats": REPEATS, "cpu_s": {n: b[0] for n, b in best.items()},
            "wall_s": {n: b[1] for n, b in best.items()},
            "max_abs_f1_difference": float(gap.max()), "share_equal_1e5": float((gap <= 1e-5).mean()),
            "load_before": os.getloadavg()[0], "cpu": platform.processor() or platform.machine(),
            "cores": os.cpu_count()}


def ratio(report: dict[str, object], kind: str = "cpu_s") -> float:
    """How many times less time tsteval took than the package."""
    seconds = report[kind]
    return seconds["bert-score"] / seconds["tsteval"]


def markdown(report: dict[str, object]) -> str:
    """The results page."""
    cpu, wall = report["cpu_s"], report["wall_s"]
    return "\n".join([
        "# BERTScore: tsteval vs the bert-score package", "",
        f"{report['pairs']:,} DualRL Yelp pairs ({report['distinct_texts']:,} distinct texts), all-MiniLM-L6-v2 "
        f"layer 6, {report['threads']} torch threads, both cold, best of {report['repeats']} "
        f"(load average {report['load_before']:.2f} before; {report['cores']} cores).", "",
        md.table(pd.DataFrame([{
            "implementation": name, "CPU s": f"{cpu[name]:.2f}", "wall s": f"{wall[name]:.2f}",
            "pairs per CPU-s": f"{report['pairs'] / cpu[name]:.0f}"} for name in ("tsteval", "bert-score")])), "",
        f"tsteval is {ratio(report):.2f}x faster in CPU time and {ratio(report, 'wall_s'):.2f}x in wall time. "
        f"F1 equal to 1e-5 on {report['share_equal_1e5']:.1%} of the pairs (largest difference "
        f"{report['max_abs_f1_difference']:.2g}: the package's batch padding clamps a negative best match to 0).",
        ""])


def main() -> None:
    report = measure()
    publish(OUT, "speed_bertscore", report, markdown)


if __name__ == "__main__":
    main()
