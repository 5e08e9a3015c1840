"""``make demo``: a first table within a minute or two, then the full Mir et al. Table 4.3 reproduction.

First table: fastText and TF-IDF + logistic regression (fast to train on 2 CPU cores) on Yelp dev+test without
the evaluation inputs, the 12 CAAE/ARAE/DAR settings of Mir et al. scored with them, and the Pearson correlation of
EMD and of target-style probability with the human style ratings per model, beside the paper's fastText figures.
It prints the seconds it took.  Then :mod:`benchmarks.mir_style_reproduction` runs in full (fastText again from the
cache, text-CNN, the MiniLM transformer), which on a busy 2-core machine takes hours; ``--quick`` stops after the
first table.

Run: ``python -m benchmarks.demo [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from benchmarks import mir_style_reproduction as reproduction
from benchmarks.common import mir_and_yelp
from tsteval.classifiers.training import train_classifier
from tsteval.metrics.style.scorer import score_style
from tsteval.scorecard import Scorecard

QUICK_BACKENDS = ("fasttext", "tfidf-lr")


def quick_table(seed: int = 0) -> str:
    """Markdown: per fast classifier and model, Pearson r (± Mir's margin) of EMD and target probability with
    ``human_style_intensity``, the paper's fastText values beside them."""
    transfers, corpus = mir_and_yelp()
    card = Scorecard.from_transfers(transfers)
    accuracy = {}
    for backend in QUICK_BACKENDS:
        trained = train_classifier(backend, corpus, reproduction.CLASSIFIER_PARAMS.get(backend, {}), seed=seed,
                                   heldout=0.05)
        accuracy[backend] = trained.report["accuracy"]
        score_style(card, trained.model, backend, model_id=trained.key)
    frame = card.frame
    rows = []
    for backend in QUICK_BACKENDS:
        frame[f"emd@{backend}"] = frame[f"sti@{backend}"].abs()
        for metric in ("target_prob", "emd"):
            ours = reproduction.correlations(frame, f"{metric}@{backend}")
            paper = reproduction.PAPER.get((backend, metric))
            rows += [{"classifier": f"{backend} (held-out acc. {accuracy[backend]:.3f})", "metric": metric,
                      "model": model, "ours": reproduction.fmt(ours[model][:2]),
                      "paper": reproduction.fmt(paper[model] if paper else None)}
                     for model in (*reproduction.MODELS, "Average")]
    return "\n".join(["# First look: STI vs human style ratings with fast classifiers (Mir et al. Table 4.3)", "",
                      f"12 settings x 244 items = {len(frame)} rows; classifiers trained on {len(corpus)} Yelp "
                      "sentences (dev + test, evaluation inputs removed). Pearson r ± Mir's margin.", "",
                      pd.DataFrame(rows).to_markdown(index=False), ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="stop after the first table")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(quick_table())
    print(f"(first table after {time.perf_counter() - start:.0f} s; the full reproduction with text-CNN and the "
          f"transformer follows{'' if not args.quick else ': skipped (--quick)'})\n", flush=True)
    if args.quick:
        return 0
    sys.stdout.flush()
    return reproduction.main([])


if __name__ == "__main__":
    raise SystemExit(main())
