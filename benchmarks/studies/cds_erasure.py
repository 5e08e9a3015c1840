"""Style invariance after LEACE erasure on the Corpus of Diverse Styles (11 styles): do the erased embeddings that
``sbert@erase`` and the word-vector metrics ``@erase`` use carry less style?

A seeded sample of 500 CDS sentences per style is split per style into a *fit* half (the eraser is fitted on
it) and a disjoint *probe* half (every statistic is computed on it), so the probe never sees the eraser's
training sentences.  Embedders:

* MiniLM (unit mean-pooled all-MiniLM-L6-v2) and the same with the sentence eraser (LEACE on the fit half's unit
  embeddings: what :func:`tsteval.metrics.content.erasure.sentence_eraser` does);
* the sum of unit GloVe 6B 50d word vectors, and the same with the word eraser applied to every word vector
  (:func:`~tsteval.metrics.content.erasure.word_eraser` + :func:`~tsteval.metrics.content.erasure.
  erased_word_vectors`, exactly the vectors behind ``wmd@erase``).

Statistics (:mod:`tsteval.probes.invariance`): 5-fold linear-probe accuracy (chance = 1/11), between-style share
of variance, self-similarity count and the within-minus-between cosine gap with its permutation p-value.

Run: ``python -m benchmarks.studies.cds_erasure`` (a few minutes on 2 CPU cores; MiniLM embeddings are cached).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from benchmarks.common import publish
from benchmarks.reproductions.cds_invariance import cached_encoder
from benchmarks.reproductions.cds_multiclass import RESULTS
from tsteval.core.markdown import table
from tsteval.lexicons.erasure import fit_eraser
from tsteval.metrics.content.erasure import erased_word_vectors, word_eraser
from tsteval.metrics.content.word_vectors import WordVectors, load_glove
from tsteval.probes.invariance import style_invariance, summed_word_vectors
from tsteval.readers.cds import load_cds

SEED = 0
N_PERMUTATIONS = 200
PER_STYLE = 500  # of the 1,000 CDS sentences a style (seeded): 250 to fit the erasers on, 250 to probe


def split(labels: np.ndarray, seed: int) -> np.ndarray:
    """A boolean mask of the fit half: half of each style's sentences, seeded."""
    rng = np.random.default_rng(seed)
    fit = np.zeros(len(labels), dtype=bool)
    for style in np.unique(labels):
        rows = np.flatnonzero(labels == style)
        fit[rng.choice(rows, len(rows) // 2, replace=False)] = True
    return fit


def main() -> None:
    import torch

    torch.set_num_threads(2)
    start = time.time()
    cds = load_cds()
    labels = np.asarray(cds.labels)
    chosen = np.sort(np.concatenate([np.random.default_rng(SEED).choice(np.flatnonzero(labels == s), PER_STYLE,
                                                                        replace=False) for s in np.unique(labels)]))
    texts, labels = [cds.texts[i] for i in chosen], labels[chosen]
    fit = split(labels, SEED)
    fit_texts, fit_labels = [texts[i] for i in np.flatnonzero(fit)], labels[fit].tolist()
    minilm = cached_encoder()(texts)
    sentence = fit_eraser(minilm[fit], fit_labels)
    glove = load_glove()
    unit_glove = WordVectors(glove.vocab, glove.unit, f"{glove.source}+unit", glove.hash + "-unit")
    erased_glove = erased_word_vectors(glove, word_eraser(fit_texts, fit_labels, glove))
    probe_texts = [texts[i] for i in np.flatnonzero(~fit)]
    embeddings = {
        "MiniLM-L6 (mean pool)": minilm[~fit],
        "MiniLM-L6, LEACE-erased": sentence(minilm[~fit]),
        "GloVe-6B-50d (sum of unit vectors)": summed_word_vectors(unit_glove)(probe_texts),
        "GloVe-6B-50d, LEACE-erased word vectors (sum)": summed_word_vectors(erased_glove)(probe_texts),
    }
    keep = np.all([np.linalg.norm(x, axis=1) > 0 for x in embeddings.values()], axis=0)
    probe_labels = list(labels[~fit][keep])
    rows = []
    for name, x in embeddings.items():
        report = style_invariance(np.asarray(x, dtype=np.float64)[keep], probe_labels,
                                  n_permutations=N_PERMUTATIONS, seed=SEED)
        rows.append({"embedder": name, "n": report.n, "probe_accuracy": report.probe.accuracy,
                     "probe_fold_sd": float(np.std(report.probe.fold_accuracies)), "probe_chance": 1 / 11,
                     "between_share": report.between_share, "between_chance": report.between_chance,
                     "self_count": report.self_count, "gap": report.permutation.gap,
                     "gap_p": report.permutation.gap_p})
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    frame.to_csv(RESULTS / "cds_erasure.csv", index=False, float_format="%.4f")
    meta = {"fit_sentences": int(fit.sum()), "probe_sentences": int(keep.sum()),
            "dropped_zero_vectors": int((~keep).sum()), "n_permutations": N_PERMUTATIONS, "seed": SEED,
            "seconds": round(time.time() - start)}
    publish(RESULTS, "cds_erasure", {**meta, "rows": rows}, markdown)


def markdown(report: dict) -> str:
    """``cds_erasure.md``: the before/after table and how it was made, from ``cds_erasure.json``."""
    lines = [
        "# Style invariance after LEACE erasure (Corpus of Diverse Styles, 11 styles)",
        "",
        f"{PER_STYLE} CDS sentences per style, split per style (seed {report['seed']}) into "
        f"{report['fit_sentences']:,} sentences the erasers are fitted on and {report['probe_sentences']:,} disjoint "
        f"sentences every statistic is computed on ({report['dropped_zero_vectors']} probe sentences without an "
        "in-vocabulary GloVe word dropped for all rows). Probe: multinomial logistic regression on unit-normalised, "
        "standardised embeddings, stratified 5-fold (chance 1/11 = 0.091).  Between share: between-style over total "
        "sum of squares of the unit embeddings (chance (k-1)/(n-1)).  Self count: styles whose own mean cosine is "
        "their row maximum (of 11).  "
        f"Gap: mean within-style minus between-style cosine, p from {report['n_permutations']} label permutations.",
        "",
        table(pd.DataFrame([{
            "embedder": r["embedder"],
            "probe accuracy (fold sd)": f"{r['probe_accuracy']:.3f} ({r['probe_fold_sd']:.3f})",
            "between share (chance)": f"{r['between_share']:.4f} ({r['between_chance']:.4f})",
            "self count": r["self_count"], "within - between (p)": f"{r['gap']:.4f} (p = {r['gap_p']:.3g})"}
            for r in report["rows"]])),
        "", f"Runtime {report['seconds']} s on 2 shared CPU cores."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
