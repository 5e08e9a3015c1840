"""What ``tsteval compare`` prints: two runs, two systems of one run, or the system x system matrices of one run,
as plain text for the terminal, Markdown, or one JSON document.

The numbers come from :mod:`tsteval.experiment.compare.significance`; this module only lays them out.  Every transfer
direction (source style, target style) is its own table, between two runs as inside one: directions are never
pooled.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core import markdown as md
from tsteval.core.errors import clip
from tsteval.core.styles import direction_label, style_names
from tsteval.core.texttable import text_table
from tsteval.experiment.compare.significance import (
    choose_direction,
    choose_systems,
    compare_runs,
    compare_systems,
    direction_matrices,
    direction_title,
    group_labels,
    matrix_resamples,
    matrix_table,
)
from tsteval.scorecard import Scorecard

Render = Callable[[pd.DataFrame], str]
PAIR_HEADERS = {"mean_a": "A", "mean_b": "B", "difference": "B-A", "low": "95% low", "high": "95% high",
                "p_bootstrap": "p (bootstrap)", "p_randomisation": "p (randomisation)",
                "p_bootstrap_holm": "p Holm (bootstrap)", "p_randomisation_holm": "p Holm (randomisation)"}
PAIR_COLUMNS = ["metric", *PAIR_HEADERS, "better"]


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def renderer(form: str) -> tuple[Render, Callable[[object], str]]:
    """The table renderer and the way names are shown for ``form`` (``text`` or ``markdown``)."""
    if form == "markdown":
        return (lambda frame: md.table(frame, _cell)), md.escape
    return (lambda frame: text_table(frame, _cell)), (lambda name: clip(str(name), 120))


def _jsonable(records: list[dict]) -> list[dict]:
    """Records with NaN as null (JSON has no NaN) and NumPy scalars as Python numbers."""
    def plain(value: object) -> object:
        if hasattr(value, "item"):
            value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    return [{k: plain(v) for k, v in record.items()} for record in records]


def two_runs(run_a: str, run_b: str, form: str, n_resamples: int, seed: int, ignore_signatures: bool) -> str:
    """Run B against run A (each one system), one table per transfer direction (directions are never pooled)."""
    a, b = Scorecard.load(run_a), Scorecard.load(run_b)
    table, counts = compare_runs(a, b, origin_a=run_a, origin_b=run_b, n_resamples=n_resamples, seed=seed,
                                 ignore_signatures=ignore_signatures)
    names = {**style_names(b.frame), **style_names(a.frame)}
    matched = int(counts["matched"].sum())
    if form == "json":
        return json.dumps({"a": run_a, "b": run_b, "matched": matched, "rows_a": len(a.frame),
                           "rows_b": len(b.frame), "resamples": n_resamples, "seed": seed,
                           "directions": _direction_documents(table, counts, names)}, indent=2)
    render, name = renderer(form)
    head = (f"A = {name(run_a)}, B = {name(run_b)}: {matched} rows matched (A has {len(a.frame)}, B has "
            f"{len(b.frame)}), paired by input within each direction (directions are not pooled); paired bootstrap "
            f"and approximate randomisation, {n_resamples} resamples, seed {seed}; Holm-adjusted across the "
            f"{table['metric'].nunique()} metrics of each direction")
    return "\n".join([head, *_direction_tables(table, counts, names, render, name)])


def _direction_documents(table: pd.DataFrame, counts: pd.DataFrame, names: dict[str, str]) -> list[dict]:
    """One JSON object per direction of :func:`~tsteval.experiment.compare.significance.compare_systems`' result."""
    parts = []
    for count in counts.to_dict(orient="records"):
        rows = table[(table["source_style"] == count["source_style"])
                     & (table["target_style"] == count["target_style"])]
        parts.append({**count, "direction": direction_label(count["source_style"], count["target_style"], names),
                      "metrics": _jsonable(rows[PAIR_COLUMNS].to_dict(orient="records"))})
    return _jsonable(parts)


def _direction_tables(table: pd.DataFrame, counts: pd.DataFrame, names: dict[str, str], render: Render,
                      name: Callable[[object], str]) -> list[str]:
    """The lines of one table per direction of
    :func:`~tsteval.experiment.compare.significance.compare_systems`' result."""
    lines: list[str] = []
    for count in counts.itertuples(index=False):
        title = f"{name(direction_title((count.source_style, count.target_style), names))}: "
        if count.matched == 0:
            lines += ["", title + f"no shared input (A has {count.rows_a} rows, B has {count.rows_b})"]
            continue
        rows = table[(table["source_style"] == count.source_style) & (table["target_style"] == count.target_style)]
        lines += ["", title + f"{count.matched} rows matched (A has {count.rows_a}, B has {count.rows_b})", "",
                  render(rows[PAIR_COLUMNS].rename(columns=PAIR_HEADERS))]
    return lines


def in_one_run(run: str, systems: list[str] | None, direction: str | None, metrics: list[str] | None, form: str,
               n_resamples: int | None, seed: int) -> str:
    """Two systems of one run (``systems`` names two), or the matrices of several or all (``systems`` None, ``all``
    or three names or more), one table per direction (only ``direction`` when given)."""
    card = Scorecard.load(run)
    chosen = choose_direction(card, direction)
    groups = choose_systems(card, systems)
    if systems and systems != ["all"] and len(groups) == 2:
        resamples = N_RESAMPLES if n_resamples is None else n_resamples
        return _pair(run, card, groups, chosen, metrics, form, resamples, seed)
    return _matrices(run, card, groups, chosen, metrics, form, n_resamples, seed)


def _pair(run: str, card: Scorecard, groups: list[tuple[str, str]], chosen: list[tuple[str, str]],
          metrics: list[str] | None, form: str, n_resamples: int, seed: int) -> str:
    labels, names = group_labels(card.frame), style_names(card.frame)
    a, b = groups
    table, counts = compare_systems(card, a, b, chosen, metrics, n_resamples, seed)
    if form == "json":
        return json.dumps({"run": run, "a": labels[a], "b": labels[b], "resamples": n_resamples, "seed": seed,
                           "directions": _direction_documents(table, counts, names)}, indent=2)
    render, name = renderer(form)
    n_metrics = table["metric"].nunique()
    head = (f"{name(run)}: A = {name(labels[a])}, B = {name(labels[b])}, paired by input within each direction "
            f"(directions are not pooled); paired bootstrap and approximate randomisation, {n_resamples} resamples, "
            f"seed {seed}; Holm-adjusted across the {n_metrics} metrics of each direction")
    return "\n".join([head, *_direction_tables(table, counts, names, render, name)])


def _matrices(run: str, card: Scorecard, groups: list[tuple[str, str]], chosen: list[tuple[str, str]],
              metrics: list[str] | None, form: str, n_resamples: int | None, seed: int) -> str:
    pairs = direction_matrices(card, groups, chosen, metrics, n_resamples, seed)
    labels, names = group_labels(card.frame), style_names(card.frame)
    if form == "json":
        parts = [{"source_style": source, "target_style": target, "direction": direction_label(source, target, names),
                  "pairs": _jsonable(part.drop(columns=["source_style", "target_style"]).to_dict(orient="records"))}
                 for (source, target), part in pairs.groupby(["source_style", "target_style"], sort=False)]
        return json.dumps({"run": run, "systems": [labels[g] for g in groups], "seed": seed, "directions": parts},
                          indent=2)
    render, name = renderer(form)
    lines = [f"{name(run)}: {len(groups)} systems; cell = row minus column, the difference of the means over the "
             "inputs both share in that direction (directions are not pooled); * = significant at 0.05 by the paired "
             f"bootstrap (sacreBLEU's --paired-bs, seed {seed}) after Holm's correction over the pairs of one column "
             "in one direction; n/a = no shared input"]
    for (source, target), part in pairs.groupby(["source_style", "target_style"], sort=False):
        for column in dict.fromkeys(part["metric"]):
            one = part[part["metric"] == column]
            resamples = int(one["resamples"].iloc[0])
            floor = len(one) / (resamples + 1)
            note = (f"; with {resamples} resamples no pair can be significant after Holm: give --resamples "
                    f"{matrix_resamples(len(one))} or more") if floor >= 0.05 else ""
            title = direction_title((source, target), names)
            lines += ["", f"{name(title)}, {name(column)}: {len(one)} pairs, {resamples} resamples{note}", "",
                      render(matrix_table(one, column))]
    return "\n".join(lines)
