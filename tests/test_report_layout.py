"""The report's layout: no pivot artefact column, wide tables in scroll boxes, no made-up hyperparameter values,
a marker, colour and direct label per system in the tradeoff plot, and a title that only claims what is there."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.experiment.compare.tradeoff import (
    MARKERS,
    draw_tradeoff,
    hyperparameters,
    points_caption,
    separate_labels,
    tradeoff_curves,
)
from tsteval.experiment.report.report import (
    Heading,
    Table,
    Text,
    aggregates_table,
    agreement_blocks,
    points_table,
    to_html,
    to_markdown,
)
from tsteval.metaeval.engine import meta_evaluate
from tsteval.scorecard import Scorecard


def _frame(systems: int = 15, swept: bool = False) -> pd.DataFrame:
    """``systems`` one-setting systems (DualRL-like), plus a swept one with hyperparameter rho when asked."""
    rng = np.random.default_rng(3)
    rows = [{"system": f"System_{k:02d}", "setting": "default", "item": i, "sti@c": rng.uniform(0.3, 0.9),
             "bleu@none": rng.uniform(10, 40)} for k in range(systems) for i in range(4)]
    if swept:
        rows += [{"system": "Swept", "setting": f"rho={rho}", "hp.rho": rho, "item": i, "sti@c": rho,
                  "bleu@none": 40 - 30 * rho} for rho in (0.1, 0.5, 1.0) for i in range(4)]
    return pd.DataFrame(rows)


def _header_and_cells(html: str) -> list[tuple[int, list[int]]]:
    """Per table: the number of header cells and of cells in each body row."""
    out = []
    for table in re.findall(r"<table.*?</table>", html, flags=re.S):
        head = re.search(r"<thead>(.*?)</thead>", table, flags=re.S).group(1)
        rows = re.findall(r"<tr>(.*?)</tr>", re.search(r"<tbody>(.*?)</tbody>", table, flags=re.S).group(1), re.S)
        out.append((head.count("<th"), [row.count("<td") for row in rows]))
    return out


def test_aggregate_and_agreement_tables_have_no_empty_pivot_column() -> None:
    frame = _frame(3)
    frame["input"] = frame["item"].astype(str)
    frame["human_content"] = frame["bleu@none"] + np.arange(len(frame)) % 5
    card = Scorecard(frame.drop(columns=["sti@c", "bleu@none"]))
    card.add("sti@c", frame["sti@c"], "metric:sti|x")
    card.add("bleu@none", frame["bleu@none"], "metric:bleu|x")
    table = aggregates_table(card.summary(n_resamples=20), ["sti@c", "bleu@none"])
    assert table.columns.name is None and list(table.columns) == ["system", "setting", "n", "sti@c", "bleu@none"]
    agreements = meta_evaluate(card, {"human_content": "content"}, n_resamples=20)
    blocks = agreement_blocks(agreements)
    assert [type(b) for b in blocks] == [Text, Heading, Table]
    assert agreement_blocks(None)[0].text.startswith("No agreement to show")
    assert blocks[1].text == "content: `human_content` (n = 12 rated transfers)"
    wide = blocks[2].frame
    assert wide.columns.name is None and list(wide.columns) == [
        "metric", "source", "sentence r [95% CI]", "within_system r", "system r", "beats baseline? (sentence)"]
    html = to_html([Table(table), Table(wide)], "t", Path("."))
    for header, cells in _header_and_cells(html):
        assert cells and all(n == header for n in cells), "every header cell has a column beneath it"
    assert "<th></th>" not in html and "| |" not in to_markdown([Table(table)])


def test_wide_tables_scroll_in_their_own_box() -> None:
    wide = pd.DataFrame({f"metric_{k}@none": ["0.123 [0.100, 0.150]"] for k in range(30)})
    html = to_html([Table(wide)], "t", Path("."))
    assert html.count('<div class="scroll"><table') == html.count("<table") == 1
    assert re.search(r"\.scroll\{overflow-x:auto", html)


def test_a_system_with_one_setting_has_no_hyperparameter_value() -> None:
    hps = hyperparameters(_frame(2, swept=True)).set_index("system")
    assert hps.loc["System_00", "hp_name"] == "" and np.isnan(hps.loc["System_00", "hp_value"])
    assert hps.loc["Swept", "hp_name"].tolist() == ["rho"] * 3
    t = tradeoff_curves(_frame(2, swept=True), "sti@c", "bleu@none", "Content preservation", n_resamples=20)
    table = points_table(t).set_index("system")
    assert table.loc["System_00", "hp_value"] == "—" and table.loc["System_00", "hp_name"] == "—"
    assert table.loc["Swept", "hp_value"].tolist() == ["0.1", "0.5", "1"]
    one_setting = tradeoff_curves(_frame(3), "sti@c", "bleu@none", "Content preservation", n_resamples=20)
    assert "hp_value" not in points_table(one_setting).columns and "0.000" not in to_markdown([Table(
        points_table(one_setting))])


def test_fifteen_systems_get_distinct_markers_colours_and_direct_labels() -> None:
    t = tradeoff_curves(_frame(15), "sti@c", "bleu@none", "Content preservation", n_resamples=20)
    fig = draw_tradeoff(t, "dualrl-like")
    ax = fig.axes[0]
    styles = [(line.get_marker(), tuple(line.get_color())) for line in ax.lines if line.get_marker() in MARKERS]
    assert len(styles) == len(set(styles)) == 15, "one line per system, no two alike"
    assert {text.get_text() for text in ax.texts} >= {f"System_{k:02d}" for k in range(15)}
    assert "hyperparameter" not in ax.get_title() and "one setting each" in ax.get_title()


def test_title_names_the_hyperparameter_only_when_there_is_one() -> None:
    swept = tradeoff_curves(_frame(2, swept=True), "sti@c", "bleu@none", "Content preservation", n_resamples=20)
    assert points_caption(swept) == "points: settings, labelled by hyperparameter"
    hp_labels = {text.get_text() for text in draw_tradeoff(swept, "t").axes[0].texts}
    assert {"0.1", "0.5", "1", "Swept"} <= hp_labels


def test_overlapping_labels_are_moved_apart() -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    labels = [ax.annotate(f"label {k}", (0.5, 0.5), textcoords="offset points", xytext=(5, 5)) for k in range(4)]
    assert separate_labels(fig, labels) == 0
    assert len({label.get_position() for label in labels}) == 4
