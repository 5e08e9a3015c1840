"""11-way style classification on the Corpus of Diverse Styles sample (Krishna et al., 2020).

Every file of ``cds/`` is one style (1,000 sentences each).  Each backend is trained through
``train_classifier`` with a stratified, seeded 80/20 held-out split and scored by held-out accuracy
and macro-F1 against chance (1/11).  Run ``python -m benchmarks.reproductions.cds_multiclass``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import torch

from benchmarks.common import publish
from tsteval.classifiers.training import train_classifier
from tsteval.core import markdown as md
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
    publish(RESULTS, "cds_multiclass", summary, page)


def page(summary: dict) -> str:
    """The results page of ``cds_multiclass.json``."""
    styles = summary["styles"]
    table = md.table(pd.DataFrame([{
        "backend": r["backend"], "params": json.dumps(r["params"]), "n train": f"{r['n_train']:,}",
        "n held out": f"{r['n_heldout']:,}", "accuracy": f"{r['accuracy']:.3f}", "macro-F1": f"{r['macro_f1']:.3f}",
        "train s": str(r["train_seconds"])} for r in summary["results"]]))
    return "\n".join([
        "# 11-style classification on the Corpus of Diverse Styles sample", "",
        f"{summary['n']:,} sentences, {len(styles)} styles ({', '.join(styles)}); stratified 80/20 held-out split, "
        f"seed 0; chance = 1/{len(styles)} = {1 / len(styles):.3f}.", "", table]) + "\n"

if __name__ == "__main__":
    main()
