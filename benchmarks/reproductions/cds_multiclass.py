"""11-way style classification on the Corpus of Diverse Styles sample (Krishna et al., 2020).

Every file of ``cds/`` is one style (1,000 sentences each).  Each backend is trained through
``train_classifier`` with a stratified, seeded 80/20 held-out split and scored by held-out accuracy
and macro-F1 against chance (1/11).  Run ``python -m benchmarks.reproductions.cds_multiclass``.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from tsteval.classifiers.training import train_classifier
from tsteval.core.datapaths import data_root
from tsteval.core.records import Corpus

RESULTS = Path(__file__).resolve().parents[1] / "results"
BACKENDS: dict[str, dict] = {
    "tfidf-lr": {},
    "fasttext": {},
    "fasttext (epoch 25)": {"epoch": 25},
    "textcnn": {"epochs": 5, "verbose": False},
}


def read_cds(folder: Path) -> Corpus:
    """All ``*.txt`` files of ``folder``, one style per file (the file name), blank lines skipped."""
    texts: list[str] = []
    labels: list[str] = []
    for path in sorted(folder.glob("*.txt")):
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        texts += lines
        labels += [path.stem] * len(lines)
    return Corpus(texts, labels, str(folder))


def main() -> None:
    torch.set_num_threads(2)
    corpus = read_cds(data_root() / "cds")
    chance = 1 / len(corpus.styles)
    rows = []
    for name, params in BACKENDS.items():
        report = train_classifier(name.split(" ")[0], corpus, params, seed=0, heldout=0.2, use_cache=False).report
        rows.append({"backend": name, "params": params, "n_train": report["n_train"], "n_heldout": report["n_heldout"],
                     "accuracy": round(report["accuracy"], 4), "macro_f1": round(report["macro_f1"], 4),
                     "train_seconds": report["train_seconds"]})
        print(rows[-1], flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    summary = {"styles": corpus.styles, "n": len(corpus), "chance": round(chance, 4), "results": rows}
    (RESULTS / "cds_multiclass.json").write_text(json.dumps(summary, indent=2))
    lines = [
        "# 11-style classification on the Corpus of Diverse Styles sample",
        "",
        f"{len(corpus):,} sentences, {len(corpus.styles)} styles ({', '.join(corpus.styles)}); stratified 80/20 "
        f"held-out split, seed 0; chance = 1/{len(corpus.styles)} = {chance:.3f}.",
        "",
        "| backend | params | n train | n held out | accuracy | macro-F1 | train s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {r['backend']} | `{json.dumps(r['params'])}` | {r['n_train']:,} | {r['n_heldout']:,} | "
              f"{r['accuracy']:.3f} | {r['macro_f1']:.3f} | {r['train_seconds']} |" for r in rows]
    (RESULTS / "cds_multiclass.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
