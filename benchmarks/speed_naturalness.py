"""Throughput of the cross-fitted unigram adversarial classifier against sklearn's ``cross_val_predict``.

Data: 10,000 DualRL Yelp outputs (seeded sample over the 11 systems and 4 human rewrites) as system text and
10,000 Yelp dev+test sentences (DualRL inputs and outputs removed) as human text, with the same 5 folds for
both.  Ours tokenises every text once and fits the 5 logistic regressions on row slices, and also scores the
10,000 inputs; the baseline refits ``CountVectorizer(analyzer=tokenize)`` + ``LogisticRegression`` per fold.

Run: ``python -m benchmarks.speed_naturalness``.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline

from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.adversarial import HUMAN, SYSTEM, UnigramFolds, assign_folds, cross_fit, human_sample
from tsteval.readers.published import load_dualrl, load_yelp_corpus

RESULTS = Path(__file__).parent / "results"
N_PAIRS, K, SEED = 10_000, 5, 0


def main() -> None:
    """Time both on the same data and folds, check they agree, write ``results/speed_naturalness.{md,json}``."""
    frame = load_dualrl("yelp").frame
    pick = np.sort(np.random.default_rng(SEED).choice(len(frame), N_PAIRS, replace=False))
    outputs, inputs = frame["output"].iloc[pick].tolist(), frame["input"].iloc[pick].tolist()
    corpus = load_yelp_corpus(splits=("dev", "test"), exclude=set(frame["input"]) | set(frame["output"]))
    human = human_sample(corpus.texts, N_PAIRS, set(), SEED)

    start = time.perf_counter()
    ours = cross_fit(human, outputs, inputs, UnigramFolds([*human, *outputs, *inputs], seed=SEED), k=K, seed=SEED)
    ours_s = time.perf_counter() - start

    folds = np.concatenate([ours.folds, ours.folds])  # human row i shares item i's fold, as in cross_fit
    cv = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(K)]
    texts, labels = human + outputs, [HUMAN] * N_PAIRS + [SYSTEM] * N_PAIRS
    pipeline = make_pipeline(CountVectorizer(analyzer=tokenize),
                             LogisticRegression(max_iter=1000, random_state=SEED))
    start = time.perf_counter()
    baseline = cross_val_predict(pipeline, texts, labels, cv=cv, method="predict_proba")
    base_s = time.perf_counter() - start
    np.testing.assert_array_equal(ours.folds, assign_folds(N_PAIRS, K, SEED))

    diff = np.abs(ours.p_output - baseline[N_PAIRS:, 0])  # classes sorted: column 0 is "human"
    repeated = len(outputs) - len(set(outputs))
    copies = sum(o in set(inputs) for o in outputs)
    result = {
        "n_pairs": N_PAIRS, "k": K, "ours_seconds": ours_s, "cross_val_predict_seconds": base_s,
        "ours_texts_per_s": 3 * N_PAIRS / ours_s, "cross_val_predict_texts_per_s": 2 * N_PAIRS / base_s,
        "speedup": base_s / ours_s, "max_abs_diff_p_output": float(diff.max()),
        "median_abs_diff_p_output": float(np.median(diff)), "outputs_differing_gt_1e-4": int((diff > 1e-4).sum()),
        "repeated_outputs": repeated, "outputs_equal_to_an_input": copies,
        "python": platform.python_version(), "sklearn": sklearn.__version__,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "speed_naturalness.json").write_text(json.dumps(result, indent=2))
    md = [
        "# Cross-fitted unigram adversarial classifier: speed", "",
        f"{N_PAIRS:,} DualRL Yelp outputs + {N_PAIRS:,} human Yelp sentences, {K} seeded folds (the same for both); "
        f"2 shared CPU cores, Python {result['python']}, scikit-learn {result['sklearn']}.", "",
        "| method | seconds | texts fitted-and-scored / s |", "|---|---:|---:|",
        f"| tsteval.metrics.naturalness.adversarial.cross_fit (unigram; also scores the {N_PAIRS:,} inputs) "
        f"| {ours_s:.1f} | "
        f"{result['ours_texts_per_s']:,.0f} |",
        f"| sklearn cross_val_predict(CountVectorizer + LogisticRegression) | {base_s:.1f} | "
        f"{result['cross_val_predict_texts_per_s']:,.0f} |", "",
        f"Speed-up: {result['speedup']:.1f}x (ours does 50% more scoring).  P(human | output) differs from "
        f"cross_val_predict by at most {result['max_abs_diff_p_output']:.2g} (median "
        f"{result['median_abs_diff_p_output']:.2g}; {result['outputs_differing_gt_1e-4']} outputs differ by more "
        f"than 1e-4) because ours drops from each fold's training set every text that the fold scores, inputs "
        f"included ({copies} outputs equal some input, {repeated} repeat another output; the 15 systems share "
        "1,000 inputs, so each fold scores nearly all of them), while cross_val_predict trains on them.  With "
        "nothing to drop the two agree to 1e-6 (tests/test_naturalness.py).", "",
    ]
    (RESULTS / "speed_naturalness.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
