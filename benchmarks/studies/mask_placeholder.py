"""Why style masking hurts the sentence encoder: ``sbert`` against Mir et al.'s content ratings, by placeholder.

On Mir et al.'s 2,928 rated transfers (``load_mir``, ``human_content_preservation``), style words of Mir's
published lexicon are masked in both texts and the MiniLM cosine is correlated with the ratings (Pearson, all
rows pooled; 95% intervals and differences from ``sbert@none`` by a bootstrap that resamples the 243 inputs).
Placeholders: tsteval's ``<masked>`` (MiniLM's WordPiece splits it into ``<``, ``masked``, ``>``), MiniLM's own
``[MASK]`` token, a neutral word (``something``), removal (no placeholder), and LEACE erasure
(no text change; eraser fitted on Yelp dev+test without the Mir inputs).  Diagnostics: how much masking raises
the cosine, and the correlation of that rise with the number of masked words.

Run: ``python -m benchmarks.studies.mask_placeholder`` (a few minutes on 2 CPU cores).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import mir_and_yelp
from tsteval.aggregate import N_RESAMPLES
from tsteval.core import markdown as md
from tsteval.core.datapaths import dataset_dir
from tsteval.lexicons.lexicon import Lexicon
from tsteval.lexicons.modify import modify_texts
from tsteval.metaeval.statistics import clustered_bootstrap
from tsteval.metrics.content.scorer import score_content
from tsteval.metrics.resources import ResourceOptions, Resources
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
HUMAN = "human_content_preservation"
DEFAULT = "<masked>"
# Placeholders the shared tokenizer does not keep as one token are substituted for <masked> after masking.
PLACEHOLDERS = {"<masked>": DEFAULT, "[MASK]": "[MASK]", "something": "something"}
SEED = 0


def main() -> None:
    import torch

    torch.set_num_threads(2)
    start = time.time()
    transfers, corpus = mir_and_yelp()
    lexicon = Lexicon.load(dataset_dir("mir2019") / "style_lexicon" / "style_words_and_weights.json")
    card = Scorecard.from_transfers(transfers)
    frame = card.frame
    inputs, outputs = frame["input"].astype(str).tolist(), frame["output"].astype(str).tolist()
    resources = Resources(ResourceOptions(corpus=corpus, seed=SEED, precision="fp32"))  # the same on every CPU
    score_content(card, ["sbert"], modification="none", resources=resources)
    score_content(card, ["sbert"], modification="remove", lexicon=lexicon, resources=resources)
    masked_in, masked_out = modify_texts(inputs, lexicon, "mask"), modify_texts(outputs, lexicon, "mask")
    for label, token in PLACEHOLDERS.items():
        modified = ([t.replace(DEFAULT, token) for t in masked_in], [t.replace(DEFAULT, token) for t in masked_out])
        score_content(card, ["sbert"], modification="mask", lexicon=lexicon, modified=modified, tag=label,
                      resources=resources)
    score_content(card, ["sbert"], modification="erase", resources=resources)
    frame = card.frame
    n_masked = np.array([a.split().count(DEFAULT) + b.split().count(DEFAULT)
                         for a, b in zip(masked_in, masked_out, strict=True)])
    human = frame[HUMAN].to_numpy(float)
    base = frame["sbert@none"].to_numpy(float)
    columns = [c for c in card.metrics if c.startswith("sbert@")]
    pearson = lambda x, rows: float(np.corrcoef(x[rows], human[rows])[0, 1])  # noqa: E731
    statistics = {}
    for column in columns:
        x = frame[column].to_numpy(float)
        statistics[f"r|{column}"] = lambda rows, x=x: pearson(x, rows)
        statistics[f"d|{column}"] = lambda rows, x=x: pearson(x, rows) - pearson(base, rows)  # paired
    intervals = clustered_bootstrap(frame["input"], statistics, N_RESAMPLES, SEED)
    rows = []
    for column in columns:
        x = frame[column].to_numpy(float)
        rise = x - base
        r, low, high = intervals[f"r|{column}"]
        d, d_low, d_high = intervals[f"d|{column}"]
        rows.append({"column": column, "pearson": r, "low": low, "high": high, "minus_none": d, "minus_low": d_low,
                     "minus_high": d_high, "mean": float(x.mean()), "mean_rise": float(rise.mean()),
                     "rise_vs_masked_words": float(np.corrcoef(rise, n_masked)[0, 1]) if rise.std() > 0 else 0.0})
    table = pd.DataFrame(rows)
    table.to_csv(RESULTS / "mask_placeholder.csv", index=False)  # full precision: the page rounds once
    with_mask = n_masked > 0
    extra = {"rows": len(frame), "inputs": int(frame["input"].nunique()), "rows_with_a_masked_word":
             int(with_mask.sum()), "lexicon_words": len(lexicon.words), "n_resamples": N_RESAMPLES, "seed": SEED,
             "erase_corpus_texts": len(corpus), "seconds": round(time.time() - start)}
    by_subset = {}
    for name, rows_ in (("with a masked word", with_mask), ("no masked word", ~with_mask)):
        by_subset[name] = {c: float(np.corrcoef(frame[c].to_numpy(float)[rows_], human[rows_])[0, 1])
                           for c in columns}
    (RESULTS / "mask_placeholder.json").write_text(json.dumps({**extra, "by_subset": by_subset,
                                                               "signatures": {c: card.signatures[c]
                                                                              for c in columns}}, indent=1))
    write_markdown(table, extra, by_subset)
    print(table.to_string(index=False))
    print(json.dumps(by_subset, indent=1))


def write_markdown(table: pd.DataFrame, extra: dict, by_subset: dict[str, dict[str, float]]) -> None:
    """The correlation table, the subset table and how to read them."""
    lines = [
        "# Why masking hurts the sentence encoder (Mir et al.'s rated transfers)",
        "",
        f"{extra['rows']:,} rated transfers of {extra['inputs']} inputs ({extra['rows_with_a_masked_word']:,} with "
        f"at least one word of Mir's {extra['lexicon_words']}-word lexicon in the input or output).  Pearson r of "
        "the MiniLM cosine with `human_content_preservation`, all rows pooled; 95% intervals from "
        f"{extra['n_resamples']} bootstrap resamples of the inputs (seed {extra['seed']}); `r - r(none)` is paired "
        "(same resamples).  `mean rise` is the mean of cosine(variant) - cosine(none); `rise ~ masked` is the "
        "correlation of that rise with the number of masked words of the pair.",
        "",
        md.table(pd.DataFrame([{"column": r.column, "r [95% CI]": f"{r.pearson:.3f} [{r.low:.3f}, {r.high:.3f}]",
                                "r - r(none) [95% CI]":
                                    f"{r.minus_none:+.3f} [{r.minus_low:+.3f}, {r.minus_high:+.3f}]",
                                "mean cosine": f"{r.mean:.3f}", "mean rise": f"{r.mean_rise:+.3f}",
                                "rise ~ masked": f"{r.rise_vs_masked_words:+.3f}"} for r in table.itertuples()])),
        "", "Pearson r within subsets (no interval):", "",
        md.table(pd.DataFrame([{"column": column, **{s: f"{by_subset[s][column]:.3f}" for s in by_subset}}
                               for column in table["column"]])),
    ]
    lines += ["", f"Runtime {extra['seconds']} s on 2 CPU cores."]
    (RESULTS / "mask_placeholder.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
