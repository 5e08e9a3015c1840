"""Speed of the batched content metrics vs per-pair reference implementations, on 10,000 real pairs.

Pairs: the first 10,000 (input, output) pairs of the DualRL Yelp release (real outputs of style-transfer
systems and human rewrites, in the order ``load_dualrl`` gives them).  WMD: ours vs gensim ``wmdistance`` on the
same GloVe 50d vectors (gensim timed on a subset and extrapolated); METEOR: ours vs NLTK ``meteor_score``;
embedding metrics: batched vs calling the same code one pair at a time (subset, extrapolated).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish, timed
from tsteval.core import markdown as md
from tsteval.core.tokenize import tokenize
from tsteval.metrics.content import embedding_metrics as em
from tsteval.metrics.content.overlap import meteor
from tsteval.metrics.content.wmd import wmd
from tsteval.metrics.content.word_vectors import load_glove
from tsteval.metrics.content.wordnet import load_wordnet
from tsteval.readers.dualrl import load_dualrl

N, SUBSET = 10_000, 1_000
OUT = Path(__file__).resolve().parents[1] / "results"


def pairs() -> tuple[list[str], list[str]]:
    """The first 10,000 (input, output) pairs of the DualRL Yelp release: real outputs of 11 systems + humans."""
    frame = load_dualrl("yelp").frame.iloc[:N]
    return frame["input"].tolist(), frame["output"].tolist()


def main() -> None:
    from gensim.models import KeyedVectors
    from nltk.translate.meteor_score import meteor_score

    refs, hyps = pairs()
    glove = load_glove()
    wn = load_wordnet()
    meteor(refs[:50], hyps[:50])  # warm WordNet's lazily-read files for both implementations
    rows = []

    ours, t_ours, _ = timed(wmd, refs, hyps, glove)
    words = sorted({t for text in refs + hyps for t in tokenize(text) if t in glove.vocab})
    kv = KeyedVectors(vector_size=glove.vectors.shape[1])
    kv.add_vectors(words, glove.vectors[[glove.vocab[w] for w in words]])
    theirs, t_g, _ = timed(lambda: np.array([kv.wmdistance(tokenize(r), tokenize(h))
                                          for r, h in zip(refs[:SUBSET], hyps[:SUBSET], strict=True)]))
    ok = np.isfinite(theirs) & (theirs > 0)
    rows.append({"metric": "WMD", "ours_s": t_ours, "reference": "gensim wmdistance (per pair)",
                 "reference_s": t_g * N / SUBSET, "reference_measured_on": SUBSET,
                 "max_abs_diff": float(np.max(np.abs(ours.values[:SUBSET][ok] - theirs[ok])))})

    ours, t_ours, _ = timed(meteor, refs, hyps)
    theirs, t_n, _ = timed(lambda: np.array([meteor_score([tokenize(r)], tokenize(h), wordnet=wn)
                                          for r, h in zip(refs, hyps, strict=True)]))
    rows.append({"metric": "METEOR", "ours_s": t_ours, "reference": "nltk meteor_score (per pair)",
                 "reference_s": t_n, "reference_measured_on": N,
                 "max_abs_diff": float(np.max(np.abs(ours.values - theirs)))})

    for name, fn in (("EmbedAvg", em.embedding_average), ("Greedy", em.greedy_matching),
                     ("Extrema", em.vector_extrema)):
        ours, t_ours, _ = timed(fn, refs, hyps, glove)
        loop, t_l, _ = timed(lambda f=fn: np.array([f([r], [h], glove).values[0]
                                                 for r, h in zip(refs[:SUBSET], hyps[:SUBSET], strict=True)]))
        rows.append({"metric": name, "ours_s": t_ours, "reference": "same code, one pair per call",
                     "reference_s": t_l * N / SUBSET, "reference_measured_on": SUBSET,
                     "max_abs_diff": float(np.max(np.abs(ours.values[:SUBSET] - loop)))})

    for row in rows:
        row["speedup"] = row["reference_s"] / row["ours_s"]
    machine = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.platform(), "pairs": N,
               "pairs_source": "DualRL yelp outputs, first 10,000 (input, output) pairs", "vectors": glove.source}
    publish(OUT, "speed_content", {"machine": machine, "rows": rows}, page)


def page(results: dict) -> str:
    """The results page of ``speed_content.json``."""
    table = md.table(pd.DataFrame([{
        "metric": r["metric"], "ours (s)": f"{r['ours_s']:.2f}", "reference": r["reference"],
        "reference (s, 10k)": f"{r['reference_s']:.2f}", "measured on": r["reference_measured_on"],
        "speed-up": f"{r['speedup']:.1f}x", "max abs diff": f"{r['max_abs_diff']:.2e}"} for r in results["rows"]]))
    return "\n".join(["# Content metrics speed (10,000 pairs)", "",
                      *[f"- {k}: {v}" for k, v in results["machine"].items()], "", table, "",
                      "Reference times measured on fewer than 10,000 pairs are extrapolated linearly.", ""])


if __name__ == "__main__":
    main()
