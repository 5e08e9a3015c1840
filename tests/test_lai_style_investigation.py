"""The Lai style investigation (``benchmarks.studies.lai_style_investigation``) reruns into its committed page."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

PAGE = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "lai_style_investigation.md"


def test_the_page_is_the_study_rerun_and_its_casing_figure_is_recomputed(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The study, rerun from the data root (its classifiers trained again), writes the committed page byte for byte;
    the page's r between all-lower-case outputs and the rating is scipy's Pearson on Lai's raw outputs."""
    from benchmarks.studies import lai_style_investigation as study
    from tsteval.readers.lai import load_lai

    monkeypatch.setattr(study, "RESULTS", tmp_path)
    monkeypatch.setattr(sys, "argv", ["lai_style_investigation"])
    study.main()
    committed = PAGE.read_text(encoding="utf-8")
    assert (tmp_path / PAGE.name).read_text(encoding="utf-8") == committed
    frame = load_lai().frame
    lower = np.array([t == t.lower() for t in frame["output"]], dtype=float)
    r = stats.pearsonr(lower, frame["human_style"].to_numpy(float)).statistic
    shown = re.search(r"r\(all lower case, rating\) = ([+-]\d\.\d{3})", committed).group(1)
    assert shown == f"{r:+.3f}"
