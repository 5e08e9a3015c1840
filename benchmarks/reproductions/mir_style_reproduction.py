"""Reproduce Mir et al. (2019) Table 4.3: style transfer intensity against human ratings on Yelp.

Trains fastText, text-CNN and (on a 4,000-sentence subsample: CPU fine-tuning is slow) the MiniLM
transformer on Yelp dev + test with every copy of the evaluation inputs removed (Mir trained on the train
split, which is not in our data snapshot), scores the 12 CAAE/ARAE/DAR settings, and reports the Pearson
correlation of EMD (unsigned, the paper's column; and signed, tsteval's STI) and of target-style
probability with ``human_style_intensity``, per model and on average, beside the paper's table and beside
the same correlations recomputed from Mir's own stored scores.  Also writes corpus-level STI per setting.

Run: ``python -m benchmarks.reproductions.mir_style_reproduction`` (this is ``make reproduce``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import mir_and_yelp, r_margin, yelp_transformer
from tsteval.classifiers.training import train_classifier
from tsteval.metaeval.agreement import by_system
from tsteval.metrics.style.intensity import target_probability
from tsteval.metrics.style.scorer import score_style
from tsteval.readers.mir import load_mir_stored_style
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
MODELS = ("CAAE", "ARAE", "DAR")
# Mir et al. (2019), Table 4.3: Pearson r and the "±" (1.96 x (1 - r^2) / sqrt(n)) per model.  Their
# "Wasserstein" column is the unsigned EMD: recomputed from their stored distributions it matches to three
# decimals, while the signed scores their released code stores correlate lower (see the results file).
PAPER = {
    ("fasttext", "target_prob"): {"CAAE": (0.566, 0.038), "ARAE": (0.513, 0.053), "DAR": (0.470, 0.049),
                                  "Average": (0.516, 0.047)},
    ("fasttext", "emd"): {"CAAE": (0.587, 0.037), "ARAE": (0.519, 0.053), "DAR": (0.536, 0.045),
                          "Average": (0.547, 0.045)},
    ("textcnn", "target_prob"): {"CAAE": (0.587, 0.037), "ARAE": (0.515, 0.053), "DAR": (0.508, 0.047),
                                 "Average": (0.537, 0.046)},
    ("textcnn", "emd"): {"CAAE": (0.602, 0.036), "ARAE": (0.522, 0.053), "DAR": (0.565, 0.043),
                         "Average": (0.563, 0.044)},
}
PAPER_BACKENDS = ("fasttext", "textcnn")
CLASSIFIER_PARAMS = {"fasttext": {}, "textcnn": {"epochs": 3}}


def correlations(frame: pd.DataFrame, column: str, human: str = "human_style_intensity") -> dict[str, tuple]:
    """Pearson r and Mir's margin per model (settings pooled) and their mean over models ("Average")."""
    table = by_system(frame, column, human)
    out = {model: (table[model].r, table[model].margin, table[model].se, table[model].n) for model in MODELS}
    out["Average"] = tuple(float(np.mean([out[m][i] for m in MODELS])) for i in range(3)) + (len(frame),)
    return out


def ordering_summary(table: pd.DataFrame) -> str:
    """Whether the paper's two findings (EMD beats target probability; text-CNN beats fastText) hold in ours."""
    ours = table.set_index(["classifier", "metric", "model"])["ours_r"]
    cells = [(c, m) for c in PAPER_BACKENDS for m in MODELS if (c, "emd", m) in ours.index]
    wins = [f"{c}/{m}" for c, m in cells if ours[(c, "emd", m)] > ours[(c, "target_prob", m)]]
    text = (f"EMD correlates more strongly than target probability in {len(wins)} of {len(cells)} "
            f"classifier/model cells of ours (paper: 6 of 6)")
    if all((c, "emd", "Average") in ours.index for c in PAPER_BACKENDS):
        cnn, ft = ours[("textcnn", "emd", "Average")], ours[("fasttext", "emd", "Average")]
        text += f"; on average text-CNN {'beats' if cnn > ft else 'does not beat'} fastText ({cnn:.3f} vs {ft:.3f}; "
        text += "paper .563 vs .547)"
    return text + "."


def overlaps(ours: tuple, paper: tuple) -> bool:
    """Whether two ``r ± margin`` intervals overlap."""
    return abs(ours[0] - paper[0]) <= ours[1] + paper[1]


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="fasttext,textcnn,transformer",
                        help="comma-separated style classifier backends")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]

    transfers, corpus = mir_and_yelp()
    print(f"Yelp training corpus: {len(corpus)} sentences (dev + test, {corpus.removed} lines holding the "
          f"evaluation inputs removed)")

    card = Scorecard.from_transfers(transfers)
    reports = {}
    for backend in backends:
        start = time.perf_counter()
        if backend == "transformer":
            trained = yelp_transformer(corpus, seed=args.seed)
        else:
            trained = train_classifier(backend, corpus, CLASSIFIER_PARAMS[backend], seed=args.seed, heldout=0.05)
        reports[backend] = {**trained.report, "seconds_incl_cache": round(time.perf_counter() - start, 1)}
        print(f"{backend}: held-out accuracy {trained.report['accuracy']:.3f}, macro-F1 "
              f"{trained.report['macro_f1']:.3f} on {trained.report['n_heldout']} sentences")
        score_style(card, trained.model, backend, model_id=trained.identity)

    frame = card.frame
    mir = load_mir_stored_style()
    target = frame["target_style"].astype(int).to_numpy()
    stored = {}
    for clf in PAPER_BACKENDS:
        stored[f"sti@{clf}"] = mir.sti[clf]
        stored[f"emd@{clf}"] = np.abs(mir.sti[clf])
        stored[f"target_prob@{clf}"] = target_probability(mir.outputs[clf], target)
    for backend in backends:
        frame[f"emd@{backend}"] = frame[f"sti@{backend}"].abs()
    rows = []
    for clf in PAPER_BACKENDS:
        for metric in ("target_prob", "emd", "sti"):
            theirs = correlations(frame.assign(_s=stored[f"{metric}@{clf}"]), "_s")
            ours = correlations(frame, f"{metric}@{clf}") if clf in backends else None
            paper = PAPER.get((clf, metric))
            for model in (*MODELS, "Average"):
                rows.append({"classifier": clf, "metric": metric, "model": model,
                             "paper": r_margin(paper[model] if paper else None),
                             "mir_stored_scores": r_margin(theirs[model][:2]),
                             "ours": r_margin(ours[model][:2]) if ours else "—",
                             "intervals_overlap": overlaps(ours[model], paper[model]) if ours and paper else "—",
                             "ours_r": ours[model][0] if ours else None, "ours_se": ours[model][2] if ours else None})
    for backend in backends:
        extra = ("sti_norm", "target_acc") + (() if backend in PAPER_BACKENDS else ("target_prob", "emd", "sti"))
        for metric in extra:
            ours = correlations(frame, f"{metric}@{backend}")
            for model in (*MODELS, "Average"):
                rows.append({"classifier": backend, "metric": metric, "model": model, "paper": "—",
                             "mir_stored_scores": "—", "ours": r_margin(ours[model][:2]), "intervals_overlap": "—",
                             "ours_r": ours[model][0], "ours_se": ours[model][2]})
    table = pd.DataFrame(rows)

    human = frame.groupby(["system", "setting"], sort=False)["human_style_intensity"].mean()
    corpus_level = card.summary([f"sti@{b}" for b in backends], seed=args.seed)
    corpus_level["human_style_intensity_mean"] = [human[(s, t)] for s, t in
                                                  zip(corpus_level["system"], corpus_level["setting"], strict=True)]
    corpus_level["mir_stored_sti@textcnn"] = [
        float(np.mean(stored["sti@textcnn"][(frame["system"] == s) & (frame["setting"] == t)]))
        for s, t in zip(corpus_level["system"], corpus_level["setting"], strict=True)]

    args.out.mkdir(parents=True, exist_ok=True)
    md = ["# Mir et al. (2019) Table 4.3 reproduction: STI vs human style ratings", "",
          f"Data: `$TSTEVAL_DATA/mir2019` (12 settings x 244 items = {len(frame)} rows) and Yelp dev+test "
          f"({len(corpus)} training sentences, evaluation inputs removed).",
          "Pearson r with `human_style_intensity`, settings of a model pooled; `±` is Mir's margin "
          "1.96·(1−r²)/√n; Average is the mean over the three models, as in the paper.",
          "Metrics: `target_prob` = target-style probability of x'; `emd` = unsigned EMD between the "
          "distributions of x and x' (the paper's \"Wasserstein\" column); `sti` = signed EMD (negative when "
          "x' moves away from the target), which Mir's released code stores and tsteval reports as STI; "
          "`sti_norm` = share of the possible gain/loss (Reed & Beck); `target_acc` = x' classified as target.",
          "`mir_stored_scores` recomputes the correlation from the authors' own stored per-sentence scores "
          "(their classifiers, trained on the Yelp train split), which checks our correlation code; "
          "`ours` uses our classifiers trained here.", "",
          table.drop(columns=["ours_r", "ours_se"]).to_markdown(index=False), "",
          "## Why our numbers differ from the paper's", "",
          "The `mir_stored_scores` column equals the paper to the third decimal (±0.001 from rounding), so the "
          "correlation and EMD code is not the difference. What differs is the classifier: Mir et al. trained on "
          "the Yelp train split (~444k sentences; not in our data snapshot), we train on dev + test minus every "
          "copy of the evaluation inputs (below), with our own fastText and text-CNN settings and seed. Sentence-"
          "level style probabilities of two classifiers with the same held-out accuracy still differ, and the "
          "correlation with 3-rater human means is sensitive to that (the ± intervals of ours and the paper's "
          "overlap wherever the last column says so).", "", ordering_summary(table), "",
          "## Classifiers", "",
          pd.DataFrame(reports).T[["n_train", "n_heldout", "accuracy", "macro_f1", "train_seconds", "key"]]
          .to_markdown(floatfmt=".3f"), "",
          "Parameters and cache keys: `mir_style_classifiers.json`.", "",
          "## Corpus-level STI per setting (mean signed EMD, 95% bootstrap CI)", "",
          corpus_level.drop(columns=["signature"]).to_markdown(index=False, floatfmt=".3f"), ""]
    (args.out / "mir_style_reproduction.md").write_text("\n".join(md))
    table.to_csv(args.out / "mir_style_reproduction.csv", index=False)
    corpus_level.to_csv(args.out / "mir_corpus_level_sti.csv", index=False)
    (args.out / "mir_style_classifiers.json").write_text(json.dumps(reports, indent=2, default=str))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
