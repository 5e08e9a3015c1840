"""``make demo``'s second part: its manifest scores the recommended metrics with fast classifiers, and the one
significance test it prints compares the two best published systems per direction; a missing data root is one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import demo
from tsteval import load_manifest
from tsteval.metaeval.recommended import FAST_NATURALNESS, RECOMMENDED


def test_demo_manifest_uses_fast_classifiers_and_the_recommended_metrics() -> None:
    manifest = load_manifest(demo.MANIFEST)
    assert {c.backend for c in manifest.classifiers.values()} <= {"fasttext", "tfidf-lr"}
    style, content, _ = (r.column("fasttext") for r in RECOMMENDED)
    assert (manifest.tradeoff.style, manifest.tradeoff.content, manifest.tradeoff.naturalness) == (
        style, content, FAST_NATURALNESS)  # the fast profile: no causal LM in the demo
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


def test_significance_line_compares_the_two_best_published_systems_per_direction(tmp_path: Path) -> None:
    """The demo's test is ``compare RUN --systems A B`` on J: one table per direction, B - A recomputed here from
    the scorecard's rows of that direction."""
    from tsteval.core.records import Transfers
    from tsteval.scorecard import Scorecard

    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"system": system, "setting": "default", "item": range(40 * d, 40 * d + 40),
                            "input": [f"in {source} {i}" for i in range(40)],
                            "output": [f"{system} {i}" for i in range(40)], "source_style": source,
                            "target_style": target})
              for system in ("A", "B", "Human0") for d, (source, target) in enumerate((("0", "1"), ("1", "0")))]
    card = Scorecard.from_transfers(Transfers(pd.concat(frames, ignore_index=True)))
    card.add(demo.JOINT, rng.uniform(size=len(card.frame)), "metric:joint|recipe:strap")
    run = card.save(tmp_path / "run")
    _board(run)
    text = demo.significance_line(run, resamples=200)
    assert text.startswith(f"## One significance test per direction: A vs B on {demo.JOINT}")
    frame = card.frame
    for source, target in (("0", "1"), ("1", "0")):
        part = text.split(f"{source} → {target}: ")[1].split("→")[0]
        row = next(line for line in part.splitlines() if line.startswith(demo.JOINT)).split()
        mean = {s: frame[(frame["system"] == s) & (frame["source_style"] == source)][demo.JOINT].mean()
                for s in ("A", "B")}
        assert float(row[1]) == pytest.approx(mean["B"], abs=5e-4)  # A = the best (B), B = the second (A)
        assert float(row[3]) == pytest.approx(mean["A"] - mean["B"], abs=5e-4)


def test_a_missing_data_root_stops_the_demo_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-data"
    done = subprocess.run([sys.executable, "-m", "benchmarks.demo", "--quick"], capture_output=True, text=True,
                          env={**os.environ, "TSTEVAL_DATA": str(missing)}, cwd=Path(__file__).parents[1], timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"demo: data root {missing} is not a directory; looked at TSTEVAL_DATA={missing}. Set TSTEVAL_DATA to the "
        "folder that holds the datasets (e.g. yelp/, mir2019/)."]
