"""Tox600 (Dale et al. 2021): a toxicity classifier trained on the released text, and the three rated systems
ranked by J beside the raters' own joint score.

1. **The corpus**: ``detox2021``'s toxic and normal comments (dev + test_10k) without any line matching a rated text
   of the data root (:func:`tsteval.readers.detox.rated_texts`: Tox600's inputs and outputs, the ``tox600`` and
   ``CAE`` content sets, the CAE-T5 comments and rewrites), written to ``runs/detox/{toxic,normal}.txt`` with the
   dropped lines in ``runs/detox/excluded.txt`` (``tsteval train-classifier ... --exclude excluded.txt`` on the
   original files builds the same corpus).
2. **The classifiers**: fastText, tf-idf + logistic regression and the transformer recipe, each trained through the
   cache with 10% held out (:func:`tsteval.classifiers.training.train_classifier`); their held-out accuracy.
3. **The run**: ``manifests/detox_tox600.yaml`` on ``runs/detox/tox600.csv`` (the 600 rated outputs of
   ``manual_markup/emnlp_eval_mean.tsv``, each with the mean of its three raters' ``style``, ``meaning``,
   ``fluency`` and ``joint`` from ``emnlp_eval_long.tsv``): J = target_acc@fasttext x sbert@none x
   naturalness_pooled@unigram>0.5 per sentence, averaged per system (Dale et al.: STA x SIM x FL, each a
   classifier's decision or an embedding cosine), beside the raters' mean joint per system, and both rankings.

Run: ``python -m benchmarks.studies.detox_tox600`` (the transformer trains for minutes on 2 cores, once; then
cached) -> ``benchmarks/results/detox_tox600.{json,md}``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.aggregate import N_RESAMPLES
from tsteval.core.datapaths import dataset_dir
from tsteval.metaeval.statistics import correlation

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
WORK = ROOT / "runs" / "detox"
MANIFEST = ROOT / "manifests" / "detox_tox600.yaml"
BACKENDS = {"fasttext": ("fasttext", {}), "tfidflr": ("tfidf-lr", {}), "transformer": ("transformer", {})}
HELDOUT = 0.1
RATINGS = ("style", "meaning", "fluency", "joint")
SYSTEMS = ("condbert", "paragedi", "mask_infill")


def tox600_table() -> pd.DataFrame:
    """The 600 rated outputs as a transfers table: ``item`` (line of ``test_10k_toxic``), ``system``, ``input``,
    ``output``, the styles and ``human_{style,meaning,fluency,joint}`` (the mean of the three raters)."""
    markup = dataset_dir("detox2021") / "manual_markup"
    read = {"sep": "\t", "quoting": 3, "keep_default_na": False}
    mean = pd.read_csv(markup / "emnlp_eval_mean.tsv", **read)
    long = pd.read_csv(markup / "emnlp_eval_long.tsv", **read)
    raters = long.groupby(["idx", "source"])[list(RATINGS)].mean().add_prefix("human_").reset_index()
    table = mean[["idx", "source", "original", "rewritten"]].merge(raters, on=["idx", "source"], validate="1:1")
    table = table.rename(columns={"idx": "item", "source": "system", "original": "input", "rewritten": "output"})
    return table.assign(source_style="toxic", target_style="normal")


def output_provenance(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Per rated system, the share of its outputs equal to the line of each ``test/model_outputs`` file (line-aligned
    with ``test_10k_toxic``): which released outputs are the rated ones."""
    folder = dataset_dir("detox2021") / "test" / "model_outputs"
    files = {p.stem: p.read_text(encoding="utf-8").split("\n") for p in sorted(folder.glob("*.txt"))}
    out = {}
    for system, part in table.groupby("system"):
        out[str(system)] = {name: round(float(np.mean([lines[i] == o for i, o in zip(part["item"], part["output"],
                                                                                        strict=True)])), 3)
                            for name, lines in files.items()}
    return out


def prepare() -> tuple[object, dict]:
    """Write the corpus files, the exclusion list and the Tox600 table under :data:`WORK`; the corpus and counts."""
    from tsteval.readers.detox import load_detox_corpus, rated_texts

    rated = rated_texts()
    corpus = load_detox_corpus(set().union(*rated.values()))
    WORK.mkdir(parents=True, exist_ok=True)
    for style in corpus.styles:
        texts = [t for t, label in zip(corpus.texts, corpus.labels, strict=True) if label == style]
        (WORK / f"{style}.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (WORK / "excluded.txt").write_text("\n".join(corpus.dropped) + "\n", encoding="utf-8")
    table = tox600_table()
    table.to_csv(WORK / "tox600.csv", index=False)
    counts = {"rated_texts": {k: len(v) for k, v in rated.items()},
              "rated_texts_distinct": len(set().union(*rated.values())),
              "corpus_lines_removed": corpus.removed, "distinct_texts_removed": corpus.removed_texts,
              "training_texts": len(corpus), "per_style": {s: corpus.labels.count(s) for s in corpus.styles},
              "tox600_inputs_in_test_10k_toxic": int(table["item"].nunique())}
    return corpus, counts


def train(corpus: object, seed: int = 0) -> dict[str, dict]:
    """Each backend of :data:`BACKENDS` trained through the cache; its held-out report."""
    from tsteval.classifiers.training import train_classifier

    out = {}
    for name, (backend, params) in BACKENDS.items():
        report = train_classifier(backend, corpus, dict(params), seed=seed, heldout=HELDOUT).report
        out[name] = {k: report[k] for k in ("backend", "accuracy", "macro_f1", "n_train", "n_heldout",
                                            "train_seconds")}
        print(f"{name}: held-out accuracy {report['accuracy']:.4f} (n={report['n_heldout']})")
    return out


def system_table(card: pd.DataFrame, joint: str, seed: int = 0) -> dict[str, dict]:
    """Per system: mean J with a bootstrap interval over its outputs, J's factors, the raters' means."""
    from tsteval.aggregate import bootstrap_means

    out = {}
    for system in SYSTEMS:
        part = card[card["system"] == system]
        columns = {"J": part[joint].to_numpy(float), "human_joint": part["human_joint"].to_numpy(float)}
        stats = bootstrap_means(columns, n_resamples=N_RESAMPLES, seed=seed)
        out[system] = {"n": len(part), **{f"{k}_{field}": value for k, triple in stats.items()
                                          for field, value in zip(("mean", "low", "high"), triple, strict=True)},
                       **{c: float(part[c].mean()) for c in card.columns if c.startswith(("human_", "target_acc@"))
                          or c == "sbert@none"},
                       "fluent_share": float((part["naturalness_pooled@unigram"] > 0.5).mean())}
    return out


def _separated(systems: dict[str, dict], name: str) -> bool:
    """Whether the best system's interval of ``name`` lies above the second's."""
    first, second = sorted(systems.values(), key=lambda e: -e[f"{name}_mean"])[:2]
    return bool(first[f"{name}_low"] > second[f"{name}_high"])


def agreement(systems: dict[str, dict], card: pd.DataFrame, joint: str) -> dict:
    """The two rankings, Kendall's tau between the system means, and the sentence-level Spearman of J with the
    raters' joint."""
    ours = [systems[s]["J_mean"] for s in SYSTEMS]
    theirs = [systems[s]["human_joint_mean"] for s in SYSTEMS]
    rank = lambda values: [SYSTEMS[i] for i in np.argsort(values)[::-1]]  # noqa: E731
    return {"ranking_J": rank(ours), "ranking_human": rank(theirs),
            "top_two_separated_J": _separated(systems, "J"),
            "top_two_separated_human": _separated(systems, "human_joint"),
            "kendall_tau_systems": correlation(ours, theirs, "kendall"),
            "spearman_sentences": correlation(card[joint], card["human_joint"], "spearman")}


def main() -> None:
    from tsteval.experiment.run.runner import run_experiment

    corpus, counts = prepare()
    classifiers = train(corpus)
    card = run_experiment(MANIFEST, WORK / "run", quiet=True, overwrite=True).frame
    joint = next(c for c in card.columns if c.startswith("joint@"))
    systems = system_table(card, joint)
    report = {"corpus": counts, "classifiers": classifiers, "provenance": output_provenance(tox600_table()),
              "joint_column": joint, "systems": systems, "agreement": agreement(systems, card, joint),
              "resamples": N_RESAMPLES}
    from benchmarks.studies.detox_tox600_page import markdown

    publish(RESULTS, "detox_tox600", report, markdown)


if __name__ == "__main__":
    main()
