"""Tradeoff curves: Pareto frontier and curve intersections against hand examples, and the plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.experiment.compare.tradeoff import (
    axis_label,
    pareto_frontier,
    plot_tradeoff,
    segment_intersections,
    tradeoff_curves,
)


def test_pareto_frontier_keeps_undominated_points_and_ties() -> None:
    x = np.array([0.0, 1.0, 0.5, 0.4, 1.0])
    y = np.array([1.0, 0.0, 0.5, 0.4, 0.0])
    assert pareto_frontier(x, y).tolist() == [True, True, True, False, True]


def test_pareto_frontier_single_dominating_point() -> None:
    assert pareto_frontier([0.1, 0.9, 0.5], [0.2, 0.8, 0.8]).tolist() == [False, True, False]


def test_crossing_segments() -> None:
    hits = segment_intersections(np.array([[0, 0], [1, 1]]), np.array([[0, 1], [1, 0]]))
    np.testing.assert_allclose(hits, [[0.5, 0.5, 0, 0]])


def test_polyline_crossed_twice() -> None:
    hits = segment_intersections(np.array([[0, 0], [1, 2], [2, 0]]), np.array([[0, 1], [2, 1]]))
    np.testing.assert_allclose(hits, [[0.5, 1, 0, 0], [1.5, 1, 1, 0]])


def test_parallel_and_disjoint_segments_do_not_meet() -> None:
    assert segment_intersections(np.array([[0, 0], [1, 0]]), np.array([[0, 1], [1, 1]])).shape == (0, 4)
    assert segment_intersections(np.array([[0, 0], [1, 1]]), np.array([[2, 0], [3, -1]])).shape == (0, 4)
    assert segment_intersections(np.array([[0, 0]]), np.array([[0, 0], [1, 1]])).shape == (0, 4)


def test_meeting_at_a_shared_vertex_counts_once() -> None:
    hits = segment_intersections(np.array([[0, 0], [1, 1], [2, 0]]), np.array([[1, 1], [1, 2]]))
    assert hits.shape == (1, 4)
    np.testing.assert_allclose(hits[0, :2], [1, 1])


def _frame(y_name: str) -> pd.DataFrame:
    """Two systems, three settings each, 2 items per setting with identical scores (zero-width intervals)."""
    rows = []
    curves = {"A": [(0.1, 0.9, 1.0), (0.5, 0.5, 2.0), (0.9, 0.1, 3.0)],
              "B": [(0.1, 0.1, 10.0), (0.9, 0.9, 20.0), (0.95, 0.05, 5.0)]}
    for system, points in curves.items():
        for x, y, hp in points:
            for item in range(2):
                rows.append({"system": system, "setting": f"h={hp:g}", "item": item, f"hp.h{system}": hp,
                             "sti@c": x, y_name: y})
    return pd.DataFrame(rows)


def test_tradeoff_curves_order_by_hyperparameter_and_find_crossings() -> None:
    t = tradeoff_curves(_frame("bleu@none"), "sti@c", "bleu@none", "Content preservation", n_resamples=50)
    b = t.points[t.points["system"] == "B"]
    assert b["hp_value"].tolist() == [5.0, 10.0, 20.0], "points follow the hyperparameter, not the file order"
    assert (t.points["x"] == t.points["x_low"]).all() and (t.points["y"] == t.points["y_high"]).all()
    assert sorted(t.points[t.points["pareto"]]["setting"]) == ["h=20", "h=5"]
    assert len(t.intersections) == 1, "B crosses A once, at A's middle vertex (reported once)"
    row = t.intersections.iloc[0]
    assert (row.system_a, row.system_b) == ("A", "B")
    assert row.x == pytest.approx(0.5) and row.y == pytest.approx(0.5)
    assert row.between_a == "h=1 → h=2" or row.between_a == "h=2 → h=3"


def test_distance_metric_flips_the_frontier_and_says_so() -> None:
    t = tradeoff_curves(_frame("wmd@mask"), "sti@c", "wmd@mask", "Content preservation", n_resamples=50)
    front = set(zip(t.points[t.points["pareto"]]["system"], t.points[t.points["pareto"]]["setting"], strict=True))
    assert front == {("B", "h=5")}, "low WMD is good content preservation: (0.95, 0.05) dominates every point"
    assert "inverted" in axis_label("wmd@mask", "Content preservation")
    assert "inverted" not in axis_label("bleu@none", "Content preservation")


def test_plots_are_written(tmp_path: Path) -> None:
    t = tradeoff_curves(_frame("wmd@mask"), "sti@c", "wmd@mask", "Content preservation", n_resamples=50)
    paths = plot_tradeoff(t, tmp_path / "plots" / "tradeoff", "test")
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert all(p.stat().st_size > 1000 for p in paths)
    assert "wmd@mask" in paths[1].read_text()


def test_untrusted_system_names_are_drawn_as_written(tmp_path: Path) -> None:
    """A ``$`` in a system name is not mathtext (an unclosed one used to crash the plot); ``_x`` is not hidden."""
    frame = _frame("bleu@none").replace({"system": {"A": "$x^{", "B": "_hidden"}})
    frame = frame.rename(columns={"hp.hA": "hp.h1", "hp.hB": "hp.h2"})
    t = tradeoff_curves(frame, "sti@c", "bleu@none", "Content preservation", n_resamples=20)
    svg = plot_tradeoff(t, tmp_path / "tradeoff", "run $a")[1].read_text()
    assert "hidden" in svg, "a legend entry starting with _ must still be shown"
