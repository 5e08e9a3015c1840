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
from tsteval.core.markdown import table
from tsteval.metaeval.statistics import correlation

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
WORK = ROOT / "runs" / "detox"
MANIFEST = ROOT / "manifests" / "detox_tox600.yaml"
FP32 = {"precision": "fp32"}  # as the manifest's run trains it: one model and cache key for report and STA, any CPU
BACKENDS = {"fasttext": ("fasttext", {}), "tfidflr": ("tfidf-lr", {}), "transformer": ("transformer", FP32)}
HELDOUT = 0.1
SYSTEMS = ("condbert", "paragedi", "mask_infill")
CHANGES = ("Changed since fecbc8b: the transformer is trained in fp32, as the manifest's run trains it (its pinned "
           "precision holds for training since af18242), where `auto` had it trained in bf16 on this AVX512-BF16 Xeon: "
           "held-out accuracy .9416 -> .9413; every STA, J and agreement figure the same.")


def tox600_table() -> pd.DataFrame:
    """The 600 rated outputs as a transfers table: the built-in rated set ``tox600`` (``item``: the line of
    ``test_10k_toxic``; ``human_{style,meaning,fluency,joint}``: the means of the three raters), the target style
    named as the corpus names it."""
    from tsteval.readers.rated import read_rated_set

    return read_rated_set("tox600").frame.drop(columns="setting").assign(target_style="normal")


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


def prepare() -> tuple[object, dict, pd.DataFrame]:
    """Write the corpus files, the exclusion list and the Tox600 table under :data:`WORK`; the corpus, counts, table."""
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
    return corpus, counts, table


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
            "spearman_sentences": sentence_spearman(card, joint)}


def sentence_spearman(card: pd.DataFrame, joint: str, seed: int = 0) -> dict[str, float]:
    """J's sentence-level Spearman with the raters' joint over the outputs, with the engine's 95% interval clustered
    by input (:func:`~tsteval.metaeval.engine.correlate`)."""
    from tsteval.metaeval.engine import correlate

    rows = correlate(card, [joint], ["human_joint"], methods=("spearman",), group=("system",), seed=seed)
    row = rows[rows["level"] == "sentence"].iloc[0]
    return {"r": float(row["r"]), "lo": float(row["lo"]), "hi": float(row["hi"])}


def main() -> None:
    from tsteval.experiment.run.runner import run_experiment

    corpus, counts, table = prepare()
    classifiers = train(corpus)
    card = run_experiment(MANIFEST, WORK / "run", quiet=True, overwrite=True).frame
    joint = next(c for c in card.columns if c.startswith("joint@"))
    systems = system_table(card, joint)
    report = {"corpus": counts, "classifiers": classifiers, "provenance": output_provenance(table),
              "joint_column": joint, "systems": systems, "agreement": agreement(systems, card, joint),
              "resamples": N_RESAMPLES, "scores": {"item": card["item"].astype(int).tolist(),
                                                   "system": card["system"].astype(str).tolist(),
                                                   "J": [round(float(v), 6) for v in card[joint]]}}
    publish(RESULTS, "detox_tox600", report, markdown)


def _ci(entry: dict, name: str) -> str:
    return f"{entry[f'{name}_mean']:.3f} [{entry[f'{name}_low']:.3f}, {entry[f'{name}_high']:.3f}]"


def markdown(report: dict) -> str:
    """The page, from the JSON the study writes."""
    corpus, systems, agreement = report["corpus"], report["systems"], report["agreement"]
    joint = report["joint_column"]
    lines = ["# Tox600: a toxicity classifier from the released text, and J beside the raters' joint score", "",
             "Dale et al. (2021)'s 600 rated detoxifications (200 toxic comments of `test_10k_toxic` x condbert, "
             "paragedi, mask_infill; three raters an output). Produced by `python -m benchmarks.studies."
             "detox_tox600`, which writes the corpus and the table and runs `manifests/detox_tox600.yaml`.", "",
             "## The classifier's training text", "",
             f"`detox2021` dev + test_10k toxic and normal comments: {corpus['training_texts']:,} texts "
             f"({', '.join(f'{s} {n:,}' for s, n in corpus['per_style'].items())}) after removing "
             f"{corpus['corpus_lines_removed']} lines that match (lower case, punctuation and spaces ignored) one "
             f"of the {corpus['rated_texts_distinct']:,} distinct rated texts of the data root:", ""]
    lines += [f"- {source}: {n:,}" for source, n in corpus["rated_texts"].items()]
    lines += ["", "The same corpus from the command line: `tsteval train-classifier BACKEND --style "
              "toxic=dev/dev_toxic --style toxic=test/test_10k_toxic --style normal=dev/dev_normal --style "
              "normal=test/test_10k_normal --exclude runs/detox/excluded.txt --heldout 0.1 --out ...` "
              "(paths under `$TSTEVAL_DATA/detox2021`).", "",
              table(pd.DataFrame([{"classifier": f"{name} ({e['backend']})",
                                   "held-out accuracy": f"{e['accuracy']:.4f}", "macro-F1": f"{e['macro_f1']:.4f}",
                                   "trained on": f"{e['n_train']:,}", "held out": f"{e['n_heldout']:,}",
                                   "seconds": f"{e['train_seconds']:.0f}"}
                                  for name, e in report["classifiers"].items()]))]
    lines += ["", "## Which outputs were rated", "",
              "Share of each rated system's outputs equal to the same line of a `test/model_outputs` file: the "
              "rated outputs are read from `emnlp_eval_mean.tsv`, not from those files.", "",
              table(pd.DataFrame([{"system": system, **{k: f"{v:.3f}" for k, v in shares.items()}}
                                  for system, shares in report["provenance"].items()]))]
    lines += ["", "## J per system beside the raters' joint score", "",
              f"`{joint}`: per sentence target_acc@fasttext (the output classified as normal) x sbert@none x "
              "(naturalness_pooled@unigram > 0.5), averaged per system (Dale et al.'s STA x SIM x FL); the raters' "
              "joint: each rater's style x meaning x fluency (0 / 0.5 / 1 each), averaged over the three raters "
              f"and the system's outputs. 95% bootstrap intervals over outputs ({report['resamples']} resamples).",
              "", table(pd.DataFrame([{
                  "system": system, "n": e["n"], "J (ours)": _ci(e, "J"), "raters' joint": _ci(e, "human_joint"),
                  "STA (fastText)": f"{e['target_acc@fasttext']:.3f}",
                  "STA (transformer)": f"{e['target_acc@transformer']:.3f}", "SIM": f"{e['sbert@none']:.3f}",
                  "FL (share > 0.5)": f"{e['fluent_share']:.3f}", "raters' style": f"{e['human_style']:.3f}",
                  "raters' meaning": f"{e['human_meaning']:.3f}", "raters' fluency": f"{e['human_fluency']:.3f}"}
                  for system, e in systems.items()]))]
    lines += ["", f"Ranking by J: {' > '.join(agreement['ranking_J'])}; by the raters' joint: "
              f"{' > '.join(agreement['ranking_human'])}; Kendall's tau between the system means "
              f"{agreement['kendall_tau_systems']:+.3f} (three systems: +1, +1/3, -1/3 or -1). The first two systems' "
              f"intervals {'do not overlap' if agreement['top_two_separated_J'] else 'overlap'} by J and "
              f"{'do not overlap' if agreement['top_two_separated_human'] else 'overlap'} by the raters' joint. "
              "Sentence level: Spearman of J with the raters' joint over the 600 outputs "
              "{r:.3f} [{lo:.3f}, {hi:.3f}]".format(**agreement["spearman_sentences"])
              + f" (95% interval of {report['resamples']} resamples "
              "clustered by input: the engine's).", "", CHANGES, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
