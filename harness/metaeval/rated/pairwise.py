"""Does a style column order a pair of texts as the raters do?  The check of a pairwise judgment (InFormal's "which
of the two sentences is more formal", Mir et al.'s "which is more natural").

A column scores both texts of each pair (higher = more of the judged quality); it picks the text it scores higher.
On the pairs whose raters' majority picks one text (not a tie, not split), its **accuracy** is the share of pairs
where it picks the same one (a tie of the two scores counts as a miss), with the 95% interval of the one resampler
(:func:`tsteval.metaeval.statistics.clustered_bootstrap`, each pair its own cluster).  Beside it, the **raters' own
accuracy**: each rater against the majority of the others on the pairs where the others all pick one text, the
level a column can hope to reach.

>>> import pandas as pd
>>> raters = pd.DataFrame({"item": [0, 0, 0, 1, 1, 1], "rater": ["a", "b", "c"] * 2,
...                        "choice": ["c1", "c1", "c0", "c0", "c0", "c0"]})
>>> check = pairwise_order(raters, "c0", "c1", input_scores=[0.2, 0.9], output_scores=[0.7, 0.1])
>>> check["accuracy"], check["pairs"], round(check["rater_accuracy"], 3)
(1.0, 2, 0.75)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.metaeval.statistics import clustered_bootstrap


def majority(choices: Sequence[str]) -> str | None:
    """The choice most raters made; None when two choices tie for most."""
    counts = pd.Series(list(choices)).value_counts()
    return None if len(counts) == 0 or (len(counts) > 1 and counts.iloc[0] == counts.iloc[1]) else counts.index[0]


def pairwise_order(raters: pd.DataFrame, input_choice: str, output_choice: str, *,
                   input_scores: Sequence[float], output_scores: Sequence[float], n_resamples: int = N_RESAMPLES,
                   seed: int = 0) -> dict:
    """The check of the module notes.  ``raters``: one row per (``item``, ``rater``) with the rater's ``choice``
    (``input_choice``: the pair's first text, ``output_choice``: its second, anything else a tie); items are
    numbered 0..n-1 in the order of ``input_scores`` and ``output_scores`` (the column's scores of each pair's two
    texts)."""
    first, second = np.asarray(input_scores, dtype=float), np.asarray(output_scores, dtype=float)
    by_item = raters.groupby("item")["choice"].agg(list)
    decided = {item: m for item, m in ((i, majority(c)) for i, c in by_item.items())
               if m in (input_choice, output_choice)}
    items = np.array(sorted(decided), dtype=int)
    picks_output = np.array([decided[i] == output_choice for i in items], dtype=bool)
    hit = np.where(picks_output, second[items] > first[items], first[items] > second[items]).astype(float)
    hits = int(hit.sum())
    low, high = clustered_bootstrap(items, {"accuracy": lambda rows: float(hit[rows].mean())}, n_resamples,
                                    seed)["accuracy"][1:] if len(items) else (np.nan, np.nan)
    human_hits = human_n = 0
    for choices in by_item:
        for i, choice in enumerate(choices):
            others = set(choices[:i] + choices[i + 1:])
            if len(others) == 1 and others <= {input_choice, output_choice}:
                human_n += 1
                human_hits += choice in others
    return {"pairs": len(items), "hits": hits, "accuracy": hits / len(items) if len(items) else float("nan"),
            "ci_low": float(low), "ci_high": float(high), "score_ties": int(np.sum(first[items] == second[items])),
            "undecided": len(by_item) - len(items), "rater_accuracy": human_hits / human_n if human_n else
            float("nan"), "rater_pairs": human_n}


def choice_table(raters: pd.DataFrame, question: str, choices: Sequence[str]) -> pd.DataFrame:
    """A rated set's per-rater table (:attr:`tsteval.readers.rated.Ratings.raters`) of the choice ``question`` as
    :func:`pairwise_order` reads it: ``item``, ``rater``, ``choice`` (the text of the coded position)."""
    sub = raters[raters["question"] == question]
    return pd.DataFrame({"item": sub["item"].to_numpy(), "rater": sub["rater"].to_numpy(),
                         "choice": [choices[int(v)] for v in sub["value"]]})
