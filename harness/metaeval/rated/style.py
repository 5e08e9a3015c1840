"""The style columns of the committed rated tables rescored alone, and merged into them (issue 42).

A style column's meta-evaluation depends on its own values, the style rating, the rows every style column has and
the bootstrap draws, which are drawn from the inputs and the seed only (:mod:`tsteval.metaeval.statistics`). So new
style classifiers join the committed tables without rescoring the other aspects (the LM columns take an hour on 2
cores): the rated rows are scored by every classifier of ``names``
(:data:`tsteval.metaeval.rated.datasets.STYLE_CLASSIFIERS`, trained on the same corpus and exclusions as the
committed ones), meta-evaluated against the style rating with the table's own baseline, seed and resamples, and
their rows replace or join the table's. The columns the table already had are the check: their recomputed rows must
equal the committed ones (:data:`TOLERANCE`), else nothing is written; the columns of classifiers named in
``retrain`` (trained anew on purpose, as Mir's transformer on the recipe's sample instead of an earlier smaller one)
are replaced without that check, and the notes say so. Rows of other columns (the LM judges of style, published
scores, other aspects) are kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import TstevalError
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.rated.datasets import (
    LAI_RATINGS,
    MIR_RATINGS,
    Log,
    dualrl_form,
    lai_materials,
    mir_materials,
    style_classifiers,
)
from tsteval.metaeval.tables import MetaEvaluation, Rating
from tsteval.scorecard import Scorecard

# How far a recomputed committed row may be from the committed one (CSV round trip of float64).
TOLERANCE = 1e-9
NUMERIC = ("r", "lo", "hi", "r_baseline", "diff", "williams_t", "p")
RECOMMENDATION = "recommendation.csv"


def style_rating(name: str) -> Rating:
    """The style rating of rated dataset ``name``."""
    return next(r for r in (MIR_RATINGS if name == "mir" else LAI_RATINGS) if r.aspect == "style")


def specs(names: Sequence[str], max_train: int | None = None) -> dict[str, object]:
    """The classifier specs of ``names``; with ``max_train``, every transformer (an ensemble's member too) trains on
    a sample of at most that many texts instead of its default.

    >>> specs(["fasttext_transformer"], 4000)["fasttext_transformer"].params["member_params"]
    {'transformer': {'max_train': 4000}}
    """
    from dataclasses import replace

    chosen = style_classifiers(names)
    if max_train is None:
        return chosen
    for name, spec in chosen.items():
        if spec.backend == "transformer":
            chosen[name] = replace(spec, params={**spec.params, "max_train": max_train})
        elif "transformer" in str(spec.params.get("members", "")):
            chosen[name] = replace(spec, params={**spec.params, "member_params": {"transformer": {
                "max_train": max_train}}})
    return chosen


def style_card(name: str, names: Sequence[str], *, inputs: int | None = None, seed: int = 0,
               max_train: int | None = None, log: Log = print) -> tuple[Scorecard, dict]:
    """The rated rows of ``name`` (the seeded subset of ``inputs`` inputs when given, as the three-LM tables have)
    scored by the style classifiers ``names`` only (:func:`specs`), on the style view the full run uses (Lai's in
    DualRL's form), the rows' text as the dataset writes it; and the corpus counts."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run
    from tsteval.metaeval.rated.lm_subset import input_subset

    transfers, corpus, _, notes = (mir_materials if name == "mir" else lai_materials)(seed, log)
    if inputs is not None:
        transfers = input_subset(transfers, inputs, seed)
    view = dualrl_form(transfers) if name == "lai" else transfers
    card = run(Plan(view, classifiers=specs(names, max_train), corpus=corpus, seed=seed))
    frame = card.frame.copy()
    for column in ("input", "output"):  # the clusters are the inputs as written, as in the committed run
        frame[column] = transfers.frame[column].to_numpy()
    return Scorecard(frame, dict(card.signatures)), notes


def _key(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("metric", "source", "baseline", "rating", "aspect", "level", "method") if c in frame.columns]


def _of(names: Sequence[str], metrics: Sequence[str]) -> set[str]:
    """Those of ``metrics`` that are a column of a classifier in ``names`` (``metric@name``).

    >>> sorted(_of(["transformer"], ["sti@transformer", "sti@fasttext_transformer", "sti@fasttext"]))
    ['sti@transformer']
    """
    return {m for m in metrics if m.rpartition("@")[2] in set(names)}


def check_recomputed(committed: pd.DataFrame, recomputed: pd.DataFrame, what: str) -> float:
    """The largest difference between the rows of ``recomputed`` and the same rows of ``committed`` (those of the
    metrics both have); a row missing from either, or a difference above :data:`TOLERANCE`, is an error."""
    key = _key(recomputed)
    old = committed[committed["metric"].isin(set(recomputed["metric"]))]
    new = recomputed[recomputed["metric"].isin(set(old["metric"]))]
    joined = old.merge(new, on=key, how="outer", suffixes=("_old", "_new"), indicator=True)
    if (joined["_merge"] != "both").any():
        raise TstevalError(f"{what}: the recomputed rows are not the committed rows of the same metrics "
                           f"({int((joined['_merge'] != 'both').sum())} unmatched); the data or code changed")
    worst = 0.0
    for column in (c for c in NUMERIC if f"{c}_old" in joined.columns):
        a, b = joined[f"{column}_old"].to_numpy(float), joined[f"{column}_new"].to_numpy(float)
        both = ~(np.isnan(a) & np.isnan(b))
        worst = max(worst, float(np.nanmax(np.abs(a[both] - b[both]), initial=0.0)))
    if worst > TOLERANCE:
        raise TstevalError(f"{what}: the committed style columns recompute to other values (largest difference "
                           f"{worst:.3g}); rerun the whole meta-evaluation instead")
    return worst


def merged(committed: pd.DataFrame, recomputed: pd.DataFrame) -> pd.DataFrame:
    """``committed`` with the rows of ``recomputed``'s metrics replaced by ``recomputed``'s, new metrics appended
    after the rows of their rating; the other rows as they were, in their order."""
    kept = committed[~committed["metric"].isin(set(recomputed["metric"]))]
    parts = []
    for rating in dict.fromkeys([*committed["rating"], *recomputed["rating"]]):
        parts += [kept[kept["rating"] == rating], recomputed[recomputed["rating"] == rating]]
    return pd.concat(parts, ignore_index=True)[committed.columns]


def update_tables(directory: Path, name: str, names: Sequence[str], *, inputs: int | None = None,
                  max_train: int | None = None, retrain: Sequence[str] = (), log: Log = print) -> dict:
    """Rescore the style columns of ``names`` (transformers on at most ``max_train`` texts when given) on rated
    dataset ``name`` and merge them into the meta-evaluation in ``directory`` (its ``recommendation.csv`` too, where
    it has one); the committed columns of ``retrain`` (some of ``names``) are replaced, not checked; returns what was
    checked, added and replaced."""
    info = json.loads((directory / "metaeval.json").read_text())
    notes = json.loads((directory / "notes.json").read_text())
    title = (directory / "metaeval.md").read_text().splitlines()[0].lstrip("# ").strip()
    rating = style_rating(name)
    seed, resamples = info["seed"], info["resamples"]
    card, _ = style_card(name, names, inputs=inputs, seed=seed, max_train=max_train, log=log)
    fresh = meta_evaluate(card, [rating], baselines={rating.column: info["baselines"][rating.column]},
                          n_resamples=resamples, seed=seed)
    table, baseline = pd.read_csv(directory / "metaeval.csv"), pd.read_csv(directory / "baseline.csv")
    counts = pd.read_csv(directory / "counts.csv")
    replaced = sorted(_of(retrain, card.metrics) & set(table["metric"]))

    def checked(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[~frame["metric"].isin(replaced)]

    worst = max(check_recomputed(table, checked(fresh.table), f"{directory}/metaeval.csv"),
                check_recomputed(baseline, checked(fresh.baseline), f"{directory}/baseline.csv"))
    used = fresh.counts.set_index("rating").loc[rating.column]
    row = counts["rating"] == rating.column
    if int(used["used"]) != int(counts.loc[row, "used"].iloc[0]):
        raise TstevalError(f"{directory}: the new style columns leave {int(used['used'])} rows, not "
                           f"{int(counts.loc[row, 'used'].iloc[0])}; they would change every style row")
    added = sorted(set(card.metrics) - set(table["metric"]))
    counts.loc[row, "metrics"] += len(added)
    added = sorted(set(added) | set(notes.get("style_update", {}).get("added", [])))  # by an earlier update too
    result = MetaEvaluation(merged(table, fresh.table), merged(baseline, fresh.baseline), counts, info)
    recommendation = None
    if (directory / RECOMMENDATION).is_file():
        from tsteval.metaeval.rated.lm_subset import RULE_RECOMMENDATIONS

        against = meta_evaluate(card, [rating], baselines={rating.column: RULE_RECOMMENDATIONS["style"]},
                                n_resamples=resamples, seed=seed).baseline
        committed = pd.read_csv(directory / RECOMMENDATION)
        worst = max(worst, check_recomputed(committed, checked(against), f"{directory}/{RECOMMENDATION}"))
        recommendation = merged(committed, against)
    notes["metrics"] = [*notes["metrics"], *(m for m in card.metrics if m not in notes["metrics"])]
    notes["style_update"] = {"classifiers": list(names), "added": added, "replaced": replaced, "checked_columns":
                             sorted(set(card.metrics) - set(added) - set(replaced)), "largest_difference": worst,
                             "transformer_max_train": max_train, "module": __name__}
    if recommendation is not None:  # not a file the meta-evaluation writes: out of the way while it rewrites the folder
        (directory / RECOMMENDATION).unlink()
    result.write(directory, overwrite=True, title=title, notes=notes)
    if recommendation is not None:
        recommendation.to_csv(directory / RECOMMENDATION, index=False)
    log(f"{directory}: {len(added)} style columns added {added}, {len(replaced)} replaced {replaced}; the committed "
        f"ones recompute to within {worst:.1g}")
    return notes["style_update"]
