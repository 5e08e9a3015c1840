"""The Tox600 results page (``benchmarks/results/detox_tox600.md``), rendered from its JSON
(:mod:`benchmarks.studies.detox_tox600` computes it)."""

from __future__ import annotations

import pandas as pd

from tsteval.core.markdown import table


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
              "Sentence level: "
              f"Spearman of J with the raters' joint over the 600 outputs {agreement['spearman_sentences']:.3f}.", ""]
    return "\n".join(lines)
