"""What case carries on Lai et al.'s formality ratings, and what a classifier trained on cased text makes of it
(issue 42, part 3).

* Lai's outputs: the share that is all lower case (:func:`tsteval.classifiers.text_forms.all_lowercase`) and the
  Pearson r of that indicator with the formality rating (``human_style``, the mean of the two annotators).
* A cased formal/informal classifier: GYAFC's training set is not openly distributed and DualRL's copy of its test
  sets is lower-cased, and no openly licensed, cased formal/informal corpus is in the data root or the package
  index.  The nearest is the Corpus of Diverse Styles sample (``cds/``, published under the MIT licence by Krishna et
  al.; the sources it samples keep their own terms): edited prose of 1990-2000 and 1890-1910 (COHA) labelled
  ``formal`` against tweets and Switchboard telephone speech labelled ``informal``, 2,000 sentences a side.  The
  transformer (the default recipe) and fastText are trained on it as written (so ``text_form`` is ``as-written``),
  and score Lai's outputs as written and lower-cased: r of P(formal | output) with the rating.

Writes ``results/lai_case.{json,md}``.  Run: ``python -m benchmarks.studies.lai_case`` (a few minutes on 2 cores).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.classifiers.text_forms import all_lowercase
from tsteval.classifiers.training import train_classifier
from tsteval.core.datapaths import dataset_dir
from tsteval.core.markdown import table
from tsteval.core.records import Corpus
from tsteval.metaeval.statistics import correlation
from tsteval.readers.lai import load_lai
from tsteval.readers.lines import read_lines

RESULTS = Path(__file__).resolve().parents[1] / "results"
FORMAL = ("coha_1990-2000", "coha_1890-1910")
INFORMAL = ("english_tweets", "switchboard")
BACKENDS = {"transformer": {"verbose": False}, "fasttext": {}}


def cased_corpus() -> Corpus:
    """The CDS files of :data:`FORMAL` and :data:`INFORMAL`, labelled ``formal`` and ``informal``."""
    root = dataset_dir("cds")
    texts, labels = [], []
    for label, names in (("formal", FORMAL), ("informal", INFORMAL)):
        for name in names:
            lines = read_lines(root / f"{name}.txt")
            texts += lines
            labels += [label] * len(lines)
    return Corpus(texts, labels, str(root))


def case_rows(outputs: list[str], ratings: np.ndarray) -> dict:
    """The share of ``outputs`` all in lower case and r of that indicator with ``ratings`` (texts with letters)."""
    lower = all_lowercase(outputs)
    keep = np.array([v is not None for v in lower])
    indicator = np.array([bool(v) for v in lower])[keep]
    return {"outputs": len(outputs), "with_letters": int(keep.sum()), "all_lowercase": int(indicator.sum()),
            "share_all_lowercase": float(indicator.mean()),
            "r_all_lowercase_rating": correlation(indicator, ratings[keep]),
            "mean_rating_all_lowercase": float(ratings[keep][indicator].mean()),
            "mean_rating_other": float(ratings[keep][~indicator].mean())}


def main() -> None:
    lai = load_lai().frame
    outputs, ratings = list(lai["output"]), lai["human_style"].to_numpy(float)
    report = {"ratings": "human_style (Lai et al. 2022, mean of two annotators, 0-100)", "n": len(outputs),
              "case": case_rows(outputs, ratings), "corpus": {"formal": FORMAL, "informal": INFORMAL,
                                                               "source": "cds (Krishna et al. 2020, MIT)"},
              "classifiers": []}
    corpus = cased_corpus()
    for backend, params in BACKENDS.items():
        trained = train_classifier(backend, corpus, params, seed=0, heldout=0.1)
        formal = list(trained.model.classes_).index("formal")
        row = {"backend": backend, "text_form": trained.model.text_form_, "n_train": trained.report["n_train"],
               "heldout_accuracy": trained.report["accuracy"]}
        seen = {}
        for view, texts in (("as written", outputs), ("lower-cased", [t.lower() for t in outputs])):
            seen[view] = trained.model.predict_proba(texts)[:, formal]
            row[view] = {"r": correlation(seen[view], ratings), "mean_p_formal": float(seen[view].mean())}
        row["reads_case"] = not np.allclose(seen["as written"], seen["lower-cased"], atol=1e-9)
        report["classifiers"].append(row)
        print(json.dumps(row), flush=True)
    publish(RESULTS, "lai_case", report, markdown)


def markdown(report: dict) -> str:
    """``lai_case.md`` from the report."""
    c = report["case"]
    lines = ["# Case on Lai et al.'s formality ratings", "",
             f"Made by `python -m benchmarks.studies.lai_case`. Pearson r with {report['ratings']}, n = "
             f"{report['n']} outputs.", "",
             f"**All lower case**: {c['all_lowercase']} of {c['with_letters']} outputs with letters "
             f"({c['share_all_lowercase']:.1%}); r(all lower case, rating) = {c['r_all_lowercase_rating']:+.3f}; "
             f"mean rating {c['mean_rating_all_lowercase']:.1f} against {c['mean_rating_other']:.1f} for the others.",
             "", "**A cased classifier**: trained on the Corpus of Diverse Styles sample (MIT; formal = "
             f"{', '.join(report['corpus']['formal'])}; informal = {', '.join(report['corpus']['informal'])}), "
             "as written; no openly licensed cased formal/informal corpus closer to GYAFC was found in the data "
             "root or the package index.", ""]
    lines.append(table(pd.DataFrame([{
        "backend": r["backend"], "text form": r["text_form"], "n train": f"{r['n_train']:,}",
        "held-out acc": f"{r['heldout_accuracy']:.3f}", "r, outputs as written": f"{r['as written']['r']:+.3f}",
        "r, outputs lower-cased": f"{r['lower-cased']['r']:+.3f}",
        "mean P(formal) as written": f"{r['as written']['mean_p_formal']:.3f}",
        "reads case": "yes" if r["reads_case"] else "no: the same probabilities lower-cased"}
        for r in report["classifiers"]])))
    lines += ["", "\"Reads case\": whether lower-casing the outputs changes any probability. MiniLM as packaged "
              "(all-MiniLM-L6-v2) has an uncased vocabulary: its tokenizer lower-cases every text, so a transformer "
              "fine-tuned from it cannot see case whatever the text form; fastText's tokens keep it."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
