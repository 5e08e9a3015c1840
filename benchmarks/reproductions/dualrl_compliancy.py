"""DualRL's published Yelp outputs (11 systems + Human0..3) ranked by De Mattei et al.'s compliancy score.

* Main: fastText sentiment classifier on Yelp dev+test without any DualRL test input.
* HH: the feature pair classifier trained on (input, human reference) pairs from the four DualRL references as
  matches and as many random (input, reference of another input) pairings as non-matches.  It is trained on
  the references of the same test inputs the systems transfer (there is no other parallel Yelp data), so its
  decisions favour outputs that look like the references; say so when quoting the ranking.
* AH: omitted.  A Yelp sentence has no source document; AH against the input would repeat HH.  Compliancy is
  therefore HH and Main only (the AH column is empty).

BLEU/ROUGE against the input and against the four references are given beside.  Run
``python -m benchmarks.reproductions.dualrl_compliancy``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.classifiers.pairs import MATCH, NO_MATCH, FeaturePairClassifier
from tsteval.classifiers.training import train_classifier
from tsteval.core.records import Transfers
from tsteval.metrics.compatibility.compliancy import compliancy_table, score_compliancy, table_markdown
from tsteval.readers.dualrl import load_dualrl, load_dualrl_references
from tsteval.readers.yelp import load_yelp_corpus

RESULTS = Path(__file__).resolve().parents[1] / "results"
REFERENCES = [f"reference{k}" for k in range(4)]
SEED = 0


def main() -> None:
    """Train the classifiers, score every system and write the ranking."""
    transfers = load_dualrl("yelp")
    refs = load_dualrl_references("yelp")
    corpus = load_yelp_corpus(exclude=set(transfers.frame["input"]))
    style = train_classifier("fasttext", corpus, {"epoch": 10}, seed=SEED, heldout=0.05)
    rng = np.random.default_rng(SEED)
    positives = [(i, r) for i, *rs in refs[["input", *REFERENCES]].itertuples(index=False) for r in rs]
    shift = rng.integers(1, len(refs), len(positives))
    negatives = [(refs["input"].iat[k // 4], refs[REFERENCES[k % 4]].iat[(k // 4 + s) % len(refs)])
                 for k, s in enumerate(shift)]
    hh = FeaturePairClassifier(seed=SEED).fit(positives + negatives,
                                              [MATCH] * len(positives) + [NO_MATCH] * len(negatives))
    frame = transfers.frame.merge(refs[["item", *REFERENCES]], on="item", how="left")
    scored = score_compliancy(Transfers(frame, transfers.origin), style.model, hh, None,
                              reference_columns=REFERENCES)
    table = compliancy_table(scored, REFERENCES, {("0", "1"): "neg2pos", ("1", "0"): "pos2neg"})
    ranking = table[table.direction == "avg"].sort_values("Compl.", ascending=False).reset_index(drop=True)
    ranking.insert(0, "rank", range(1, len(ranking) + 1))
    RESULTS.mkdir(exist_ok=True)
    pd.concat([ranking.assign(table="ranking"), table.assign(table="per_direction")]).to_csv(
        RESULTS / "dualrl_compliancy.csv", index=False)
    text = [
        "# DualRL Yelp outputs ranked by compliancy (De Mattei et al. 2020)\n",
        f"Main = fastText on Yelp dev+test minus the DualRL test inputs ({len(corpus)} sentences; held-out "
        f"accuracy {style.report['accuracy']:.3f}). HH = feature pair classifier, matches = (input, human "
        f"reference) x 4 references ({len(positives)} pairs), non-matches = as many random pairings; it was "
        "trained on these same test inputs' references, so it rewards reference-like outputs. AH omitted: Yelp "
        "sentences have no source document, so Compl. = HH and Main. BLEU = corpus BLEU (0-1; -ref against the 4 "
        "references), ROUGE = mean ROUGE-L F (-ref: best reference). Human0..3 are the human rewrites, scored "
        "like systems (each is also one of the HH training references).\n",
        "## Ranking (mean of the two directions)\n",
        table_markdown(ranking),
        "## Per direction\n",
        table_markdown(table),
    ]
    (RESULTS / "dualrl_compliancy.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
