"""New style classifiers into the committed rated tables, then the profile rule on them (issue 42).

The fine-tuned MiniLM (``transformer``, its default recipe) and the calibrated ensemble of fastText and it
(``fasttext_transformer``) are trained on the corpora of the committed runs (Yelp without Mir's inputs; DualRL's
GYAFC without Lai's items and their parallel lines) and their style columns (``target_prob``, ``style_strength``,
``sti``, ``sti_norm``, ``target_acc``) are merged into ``results/meta_eval/{mir,lai}`` (every rated row) by
:func:`tsteval.metaeval.rated.style.update_tables`, which first checks that the committed fastText columns (the
baseline's classifier, retrained beside them) recompute to their committed rows.  The rule's subsets
(``results/meta_eval_lm/``) score these classifiers themselves (:data:`SUBSET_CLASSIFIERS`).  The rule then runs on
the ``recommendation.csv`` tables as ``python -m benchmarks.studies.meta_eval_lm --rule-only`` does (which
regenerates the README's profile table), and ``results/meta_eval_style.md`` tabulates every style column of the
full tables (:func:`style_page`).

Run: ``python -m benchmarks.studies.meta_eval_style [--dataset mir|lai] [--rule-only] [--retrain transformer]``
(tens of minutes on 2 cores: the transformers train once each, then come from the cache). ``--retrain``: the named
classifiers' committed columns are replaced, not checked, as Mir's transformer was when it moved from a
4,000-sentence sample to the recipe's 20,000.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from benchmarks.studies import meta_eval_lm
from tsteval.core.markdown import table
from tsteval.metaeval.rated.datasets import DATASETS, STYLE_BACKENDS
from tsteval.metaeval.rated.lm_subset import SUBSET_CLASSIFIERS
from tsteval.metaeval.rated.style import update_tables

RESULTS = Path(__file__).resolve().parents[1] / "results"
STYLE_METRICS = ("target_prob", "style_strength", "sti", "sti_norm")
def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=DATASETS, action="append", help="default: both")
    parser.add_argument("--rule-only", action="store_true", help="rescore nothing: the rule and the README table")
    parser.add_argument("--classifiers", type=lambda text: text.split(","), default=list(SUBSET_CLASSIFIERS),
                        help="comma-separated names of rated.STYLE_CLASSIFIERS (default: %(default)s)")
    parser.add_argument("--max-train", type=int, help="train the transformers on at most this many texts (default: "
                        "the recipe's max_train)")
    parser.add_argument("--retrain", type=lambda text: text.split(","), default=[],
                        help="comma-separated classifiers whose committed columns are replaced, not checked (trained "
                        "anew on purpose, e.g. on another sample size)")
    return parser


def style_rows(results: Path, dataset: str) -> pd.DataFrame:
    """Every classifier's style column on ``dataset``'s full table: sentence-level Pearson r with the style rating
    and the difference from the baseline (``baseline.csv``), one row per column the table has."""
    directory = results / "meta_eval" / dataset
    table, baseline = pd.read_csv(directory / "metaeval.csv"), pd.read_csv(directory / "baseline.csv")
    columns = [f"{metric}@{name}" for name in STYLE_BACKENDS for metric in STYLE_METRICS]
    sentence = (table["level"] == "sentence") & (table["method"] == "pearson") & (table["aspect"] == "style")
    rows = table[sentence & table["metric"].isin(columns)].set_index("metric")
    base = baseline[(baseline["level"] == "sentence") & (baseline["method"] == "pearson")
                    & (baseline["aspect"] == "style")].set_index("metric")
    return pd.DataFrame([{"column": c, "r": rows.loc[c, "r"], "lo": rows.loc[c, "lo"], "hi": rows.loc[c, "hi"],
                          **({"diff": base.loc[c, "diff"], "diff_lo": base.loc[c, "lo"], "diff_hi": base.loc[c, "hi"],
                              "verdict": base.loc[c, "verdict"]} if c in base.index else
                             {"diff": 0.0, "diff_lo": 0.0, "diff_hi": 0.0, "verdict": "baseline"})}
                         for c in columns if c in rows.index]).set_index("column")


def style_page(results: Path) -> str:
    """``meta_eval_style.md``: every classifier's style columns on both full tables (:func:`style_rows`)."""
    verdicts = {"yes": "better", "no": "worse", "not significant": "n.s.", "baseline": "the baseline"}
    mir, lai = style_rows(results, "mir"), style_rows(results, "lai")
    used = {name: pd.read_csv(results / "meta_eval" / name / "counts.csv").set_index("aspect").loc["style", "used"]
            for name in ("mir", "lai")}
    lines = ["# Every style classifier's columns on the full rated tables", "",
             "Made by `python -m benchmarks.studies.meta_eval_style` from `meta_eval/{mir,lai}`: sentence-level "
             f"Pearson r with the style rating (Mir: the change of sentiment, {used['mir']:,} rows; Lai: the "
             f"output's formality, {used['lai']:,} rows), 95% clustered-bootstrap intervals, the difference from "
             "`target_prob@fasttext`.",
             ""]

    def cells(t: pd.DataFrame, column: str, name: str) -> dict[str, str]:
        x = t.loc[column] if column in t.index else None
        return {f"{name} r": "—" if x is None else f"{x.r:.3f} [{x.lo:.3f}, {x.hi:.3f}]",
                f"vs baseline on {name}": "—" if x is None else f"{x['diff']:+.3f} [{x.diff_lo:+.3f}, "
                f"{x.diff_hi:+.3f}] {verdicts[x.verdict]}"}

    columns = dict.fromkeys([*mir.index, *lai.index])
    lines.append(table(pd.DataFrame([{"column": c, **cells(mir, c, "Mir"), **cells(lai, c, "Lai")} for c in columns])))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    for name in [] if args.rule_only else args.dataset or DATASETS:
        start = time.perf_counter()
        done = update_tables(RESULTS / "meta_eval" / name, name, args.classifiers, max_train=args.max_train,
                             retrain=args.retrain)
        print(json.dumps(done), f"{time.perf_counter() - start:.0f} s", flush=True)
    meta_eval_lm.main(["--rule-only"])
    (RESULTS / "meta_eval_style.md").write_text(style_page(RESULTS))


if __name__ == "__main__":
    main()
