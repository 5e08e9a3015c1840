"""Reproduce Mir et al. (2019) Table 4.3: style transfer intensity against human ratings on Yelp.

Trains fastText, text-CNN and (on a 4,000-sentence subsample: CPU fine-tuning is slow) the MiniLM
transformer on Yelp dev + test with every copy of the evaluation inputs removed (Mir trained on the train
split, which is not in our data snapshot), scores the 12 CAAE/ARAE/DAR settings, and reports the Pearson
correlation of EMD (unsigned, the paper's column; and signed, tsteval's STI) and of target-style
probability with ``human_style_intensity``, per model and on average (each with Mir's ± and the engine's interval
clustered by input, :func:`benchmarks.common.by_model`), beside the paper's table and beside the same correlations
recomputed from Mir's own stored scores.  Also writes corpus-level STI per setting and direction.  The page is its
CSVs and JSON rendered (:func:`page`).

Run: ``python -m benchmarks.reproductions.mir_style_reproduction`` (this is ``make reproduce``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from benchmarks.common import FIELDS, MODELS, by_model, mir_and_yelp, publish, r_margin, yelp_transformer
from tsteval.classifiers.training import train_classifier
from tsteval.core import markdown as md
from tsteval.core.records import Corpus
from tsteval.metrics.style.intensity import target_probability
from tsteval.metrics.style.scorer import score_style
from tsteval.readers.mir import load_mir_stored_style
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
CHANGES = ("Changed since this page's previous version (commit b72cb6b): each r of ours and of Mir's stored scores now "
           "has the engine's 95% interval clustered by input beside Mir's ±; it is 0.82 to 1.71 times as wide as the "
           "± (which takes the rows of an input's settings as independent). Rerun on an Intel Xeon (2 cores, 224 s "
           "with the classifiers trained anew): fastText and the text-CNN give back every r to 1e-15, and every ± "
           "overlap verdict stands. The transformer follows the current recipe in fp32 on every CPU (held-out "
           "accuracy .930 -> .915): its r move by up to .023 (target_acc on CAAE .577 -> .554; emd's Average .589 -> "
           ".580). The corpus-level STI is now per transfer direction (122 items each), as tsteval's summary never "
           "pools directions; the human and Mir-stored means beside it are of the same rows.")
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


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="fasttext,textcnn,transformer",
                        help="comma-separated style classifier backends")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser


def score(backends: Sequence[str], seed: int = 0) -> tuple[Scorecard, Corpus, dict]:
    """Mir's transfers scored by each backend's classifier (trained on Yelp dev+test without Mir's inputs; cached),
    the corpus and each classifier's training report."""
    transfers, corpus = mir_and_yelp()
    print(f"Yelp training corpus: {len(corpus)} sentences (dev + test, {corpus.removed} lines holding the "
          f"evaluation inputs removed)")
    card = Scorecard.from_transfers(transfers)
    reports = {}
    for backend in backends:
        start = time.perf_counter()
        trained = yelp_transformer(corpus, seed=seed) if backend == "transformer" else train_classifier(
            backend, corpus, CLASSIFIER_PARAMS.get(backend, {}), seed=seed, heldout=0.05)
        reports[backend] = {**trained.report, "seconds_incl_cache": round(time.perf_counter() - start, 1)}
        print(f"{backend}: held-out accuracy {trained.report['accuracy']:.3f}, macro-F1 "
              f"{trained.report['macro_f1']:.3f} on {trained.report['n_heldout']} sentences")
        score_style(card, trained.model, backend, model_id=trained.identity)
    return card, corpus, reports


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]

    card, corpus, reports = score(backends, args.seed)
    frame = card.frame
    mir = load_mir_stored_style()
    target = frame["target_style"].astype(int).to_numpy()
    for clf in PAPER_BACKENDS:  # Mir's own stored scores, as columns NAME@CLF-mir
        frame[f"sti@{clf}-mir"] = mir.sti[clf]
        frame[f"target_prob@{clf}-mir"] = target_probability(mir.outputs[clf], target)
    for backend in (*backends, *(f"{clf}-mir" for clf in PAPER_BACKENDS)):
        frame[f"emd@{backend}"] = frame[f"sti@{backend}"].abs()
    cells = [(clf, metric) for clf in PAPER_BACKENDS for metric in ("target_prob", "emd", "sti")]
    cells += [(b, m) for b in backends for m in ("sti_norm", "target_acc") + (
        () if b in PAPER_BACKENDS else ("target_prob", "emd", "sti"))]
    stored = cells[:6]  # the cells Mir's release has scores for
    columns = [f"{m}@{c}" for c, m in cells if c in backends] + [f"{m}@{c}-mir" for c, m in stored]
    figures = by_model(frame, columns, "human_style_intensity", args.seed)
    rows = []
    for clf, metric in cells:
        ours = figures[f"{metric}@{clf}"] if clf in backends else None
        theirs = figures[f"{metric}@{clf}-mir"] if (clf, metric) in stored else None
        paper = PAPER.get((clf, metric))
        for model in (*MODELS, "Average"):
            row = {"classifier": clf, "metric": metric, "model": model}
            row |= dict(zip(("paper_r", "paper_margin"), paper[model] if paper else (None, None), strict=True))
            for name, found in (("stored", theirs), ("ours", ours)):
                row |= dict(zip((f"{name}_{k}" for k in FIELDS), found[model] if found else (None,) * 4, strict=True))
            row["intervals_overlap"] = (abs(ours[model][0] - paper[model][0]) <= ours[model][1] + paper[model][1]
                                        if ours and paper else None)  # the two r ± margin intervals overlap
            rows.append(row)
    table = pd.DataFrame(rows)

    corpus_level = card.summary([f"sti@{b}" for b in backends], seed=args.seed)  # per direction, never pooled
    keys = ["system", "setting", "source_style", "target_style"]
    means = frame.astype({k: str for k in keys}).groupby(keys)[["human_style_intensity", "sti@textcnn-mir"]].mean()
    corpus_level = corpus_level.astype({k: str for k in keys}).join(means.rename(columns={
        "human_style_intensity": "human_style_intensity_mean", "sti@textcnn-mir": "mir_stored_sti@textcnn"}), on=keys)
    args.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out / "mir_style_reproduction.csv", index=False)  # full precision: the page rounds once
    corpus_level.drop(columns=["signature"]).to_csv(args.out / "mir_corpus_level_sti.csv", index=False)
    publish(args.out, "mir_style_reproduction", {"rows": len(frame), "corpus": len(corpus), "seed": args.seed,
                                                 "classifiers": reports}, lambda _: page(args.out))
    return 0


def page(folder: Path) -> str:
    """``mir_style_reproduction.md`` from its CSVs and JSON in ``folder``."""
    table = pd.read_csv(folder / "mir_style_reproduction.csv")
    corpus_level = pd.read_csv(folder / "mir_corpus_level_sti.csv")
    run = json.loads((folder / "mir_style_reproduction.json").read_text(encoding="utf-8"))

    shown = pd.DataFrame([{"classifier": r["classifier"], "metric": r["metric"], "model": r["model"], **{
        label: r_margin(tuple(r.get(f"{name}_{k}") for k in FIELDS)) for name, label in (
            ("paper", "paper"), ("stored", "Mir's stored scores"), ("ours", "ours"))},
        "± overlap with the paper": "—" if pd.isna(r["intervals_overlap"]) else str(bool(r["intervals_overlap"]))}
        for _, r in table.iterrows()])
    classifiers = pd.DataFrame(run["classifiers"]).T[["n_train", "n_heldout", "accuracy", "macro_f1",
                                                      "train_seconds", "key"]].rename_axis("classifier").reset_index()
    return "\n".join([
        "# Mir et al. (2019) Table 4.3 reproduction: STI vs human style ratings", "",
        f"Data: `$TSTEVAL_DATA/mir2019` (12 settings x 244 items = {run['rows']} rows) and Yelp dev+test "
        f"({run['corpus']} training sentences, evaluation inputs removed).",
        "Pearson r with `human_style_intensity`, settings of a model pooled; Average is the mean over the three "
        "models, as in the paper. `±` is Mir's margin 1.96·(1−r²)/√n, which takes the rows as independent (it is "
        "what the paper prints, and the overlap column compares with it); `[…]` is the engine's 95% interval "
        "(`tsteval.metaeval.engine.meta_evaluate_frame`: 1,000 bootstrap resamples clustered by input, seed "
        f"{run['seed']}; the Average's as the within-system level with the models as the systems).",
        "Metrics: `target_prob` = target-style probability of x'; `emd` = unsigned EMD between the "
        "distributions of x and x' (the paper's \"Wasserstein\" column); `sti` = signed EMD (negative when "
        "x' moves away from the target), which Mir's released code stores and tsteval reports as STI; "
        "`sti_norm` = share of the possible gain/loss (Reed & Beck); `target_acc` = x' classified as target.",
        "`Mir's stored scores` recomputes the correlation from the authors' own stored per-sentence scores "
        "(their classifiers, trained on the Yelp train split), which checks our correlation code; "
        "`ours` uses our classifiers trained here.", "", CHANGES, "", md.table(shown), "",
        "## Why our numbers differ from the paper's", "",
        "The stored-score column equals the paper to the third decimal (±0.001 from rounding), so the "
        "correlation and EMD code is not the difference. What differs is the classifier: Mir et al. trained on "
        "the Yelp train split (~444k sentences; not in our data snapshot), we train on dev + test minus every "
        "copy of the evaluation inputs (below), with our own fastText and text-CNN settings and seed. Sentence-"
        "level style probabilities of two classifiers with the same held-out accuracy still differ, and the "
        "correlation with 3-rater human means is sensitive to that (the ± intervals of ours and the paper's "
        "overlap wherever the last column says so).", "", ordering_summary(table), "",
        "## Classifiers", "", md.table(classifiers, md.floats(".3f")), "",
        "Parameters and cache keys: `mir_style_reproduction.json`.", "",
        "## Corpus-level STI per setting and direction (mean signed EMD, 95% bootstrap CI)", "",
        md.table(corpus_level, md.floats(".3f")), ""])


if __name__ == "__main__":
    raise SystemExit(main())
