"""Which fluency measure tracks human naturalness ratings: sentence-level correlations on Mir et al.'s Yelp data.

Scores Mir et al.'s 12 settings with every naturalness scorer through one :class:`tsteval.experiment.plan.plan.Plan`
(perplexity, mean token log-probability and SLOR under the Kneser–Ney trigram and SmolLM2-135M; the adversarial
unigram classifier per system and setting; the pooled one on normalised text), with Yelp dev+test sentences
(Mir's 244 evaluation inputs removed) as the human corpus: the KN model, the SLOR unigram models and the
adversarial classifiers' human side.  (The data root has no Yelp train split.)  Then correlates each column
with the mean human rating of the output's naturalness (``human_naturalness_output``, 1-5; 9 rated settings x
244 outputs) at sentence level (Pearson with its Fisher-z 95% interval, which treats rows as independent although
the 9 settings share inputs; Spearman) and at setting level (means per setting, n = 9).

Run: ``python -m benchmarks.studies.fluency_measures [--threads N]``.  Writes ``results/fluency_measures.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from scipy import stats

from benchmarks.common import mir_and_yelp
from tsteval.core.markdown import escape
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.execute import execute
from tsteval.metrics.registry import metric_of

RESULTS = Path(__file__).resolve().parents[1] / "results"
RATING = "human_naturalness_output"
SCORERS = ("kn3", "smollm2", "unigram", "unigram-pooled")
COLUMNS = ("ppl@kn3", "lp_mean@kn3", "slor@kn3", "ppl@smollm2", "lp_mean@smollm2", "slor@smollm2",
           "naturalness@unigram", "naturalness_pooled@unigram")


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads for SmolLM2")
    return parser


def main() -> None:
    """Score, correlate, write ``results/fluency_measures.{md,json}`` and print the table."""
    args = parser().parse_args()
    transfers, corpus = mir_and_yelp()
    logs: list[str] = []
    start = time.perf_counter()
    card = execute(Plan(transfers, naturalness=SCORERS, human=corpus.texts, threads=args.threads, seed=0,
                        precision="fp32"),
                   log=logs.append).card
    seconds = time.perf_counter() - start
    rated = card.frame[card.frame[RATING].notna()]
    rating = rated[RATING].to_numpy(float)
    by_setting = rated.groupby(["system", "setting"])
    rows = []
    for column in COLUMNS:
        values = rated[column].to_numpy(float)
        pearson = stats.pearsonr(values, rating)
        low, high = pearson.confidence_interval(0.95)
        means = by_setting[[column, RATING]].mean()
        metric = metric_of(column, card.signatures[column])
        rows.append({"column": column, "higher_is_better": metric.higher_is_better, "n": len(values),
                     "pearson": float(pearson.statistic), "pearson_low": float(low), "pearson_high": float(high),
                     "spearman": float(stats.spearmanr(values, rating).statistic),
                     "setting_pearson": float(stats.pearsonr(means[column], means[RATING]).statistic),
                     "signature": card.signatures[column]})
    result = {"rows": rows, "n_rated": len(rated), "n_settings": len(means), "human_corpus_sentences": len(corpus),
              "seconds": seconds, "log": logs}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fluency_measures.json").write_text(json.dumps(result, indent=2))
    md = [
        "# Fluency measures against human naturalness ratings (Mir et al. 2019, Yelp)", "",
        f"{len(rated):,} rated outputs ({len(means)} settings x 244 inputs; rating: mean 1-5 naturalness of the "
        f"output); human corpus: {len(corpus):,} Yelp dev+test sentences without Mir's inputs (KN training text, "
        "SLOR unigram models, the adversarial classifiers' human side).  r is signed so that a measure that agrees "
        "with the raters is positive: a lower-is-better measure (perplexity) is shown as -r.  Sentence-level 95% "
        "intervals are Fisher-z intervals over rows (they ignore that the settings share inputs: too narrow).", "",
        "| measure | sentence Pearson r [95%] | sentence Spearman rho | setting-level Pearson r (n = 9) |",
        "|---|---:|---:|---:|",
    ]
    for row in rows:
        sign = 1 if row["higher_is_better"] else -1
        low, high = sorted((sign * row["pearson_low"], sign * row["pearson_high"]))
        md.append(f"| {escape(row['column'])} | {sign * row['pearson']:.3f} [{low:.3f}, {high:.3f}] | "
                  f"{sign * row['spearman']:.3f} | {sign * row['setting_pearson']:.3f} |")
    md += ["", f"Scoring took {seconds:.0f} s on 2 shared CPU cores ({'; '.join(logs)}).", "",
           "Run: `python -m benchmarks.studies.fluency_measures`.", ""]
    (RESULTS / "fluency_measures.md").write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
