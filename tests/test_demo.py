"""``make demo``'s second part: its manifest scores the recommended metrics with fast classifiers, and the one
significance test it prints is the run's row for the two best published systems."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks import demo
from tsteval import load_manifest
from tsteval.metrics.recommended import RECOMMENDED


def test_demo_manifest_uses_fast_classifiers_and_the_recommended_metrics() -> None:
    manifest = load_manifest(demo.MANIFEST)
    assert {c.backend for c in manifest.classifiers.values()} <= {"fasttext", "tfidf-lr"}
    style, content, naturalness = (r.column("fasttext") for r in RECOMMENDED)
    assert (manifest.tradeoff.style, manifest.tradeoff.content, manifest.tradeoff.naturalness) == (
        style, content, naturalness)
    assert manifest.compare is not None and list(manifest.compare.metrics) == [demo.JOINT]


def _board(folder: Path) -> None:
    j = [0.5, 0.4, 0.3, 0.2, 0.9]
    pd.DataFrame({"source_style": ["0"] * 4 + ["1"], "target_style": ["1"] * 4 + ["0"], "rank": [1, 2, 3, 4, 1],
                  "system": ["Human0", "B", "baseline:copy", "A", "Z"], "setting": "default", "n": 500, "J": j,
                  "J_low": [v - 0.05 for v in j], "J_high": [v + 0.05 for v in j], "style": 0.9, "content": 0.8,
                  "fluency": 0.5}).to_csv(folder / "leaderboard.csv", index=False)


def test_leaderboard_text_is_one_table_per_direction(tmp_path: Path) -> None:
    _board(tmp_path)
    text = demo.leaderboard_text(tmp_path)
    first, second = text.split("### 0 → 1")[1].split("### 1 → 0")
    assert [line.split("|")[2].strip() for line in first.strip().splitlines()[2:]] == [
        "Human0", "B", "baseline:copy", "A"]
    assert "0.400 [0.350, 0.450]" in first and "| Z " in second and "Z" not in first
    board = pd.read_csv(tmp_path / "leaderboard.csv", dtype=str)
    board.insert(2, "direction", board["source_style"].map({"0": "negative → positive", "1": "positive → negative"}))
    board.to_csv(tmp_path / "leaderboard.csv", index=False)
    named = demo.leaderboard_text(tmp_path)
    assert "### negative → positive" in named and "### positive → negative" in named and "### 0 → 1" not in named


def test_significance_line_reads_the_two_best_published_systems(tmp_path: Path) -> None:
    _board(tmp_path)
    rows = [{"metric": demo.JOINT, "a": a, "b": b, "n": 1000, "mean_a": 0.2, "mean_b": 0.4, "difference": 0.2,
             "low": 0.1, "high": 0.3, "p_bootstrap": 0.001, "p_holm": p, "better": better, "resamples": 3060}
            for a, b, p, better in (("A", "B", 0.01, "B"), ("A", "Z", 0.5, "-"), ("B", "Z", 0.5, "-"))]
    pd.DataFrame(rows).to_csv(tmp_path / "significance.csv", index=False)
    line = demo.significance_line(tmp_path)
    assert line.startswith(f"## One significance test: B vs A on {demo.JOINT}")
    assert "p = 0.0010" in line and "Holm-adjusted over all 3 pairs p = 0.0100: B is better" in line
