"""The masking-placeholder study (``benchmarks.studies.mask_placeholder``): its page is its CSV and JSON rendered,
and the page's counts are recomputed from Mir et al.'s raw ratings and lexicon."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_the_page_is_its_table_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.studies import mask_placeholder as study

    monkeypatch.setattr(study, "RESULTS", tmp_path)
    report = json.loads((RESULTS / "mask_placeholder.json").read_text(encoding="utf-8"))
    extra = {k: v for k, v in report.items() if k not in ("by_subset", "signatures")}
    study.write_markdown(pd.read_csv(RESULTS / "mask_placeholder.csv"), extra, report["by_subset"])
    assert (tmp_path / "mask_placeholder.md").read_text(encoding="utf-8") == \
        (RESULTS / "mask_placeholder.md").read_text(encoding="utf-8")


def test_the_counts_are_mir_s_rows_inputs_and_lexicon_words(data_root: Path) -> None:
    """2,928 rated transfers of 243 inputs, Mir's published lexicon of style words: from the raw files."""
    from tsteval.readers.mir import load_mir

    report = json.loads((RESULTS / "mask_placeholder.json").read_text(encoding="utf-8"))
    frame = load_mir().frame
    lexicon = json.loads((data_root / "mir2019" / "style_lexicon" / "style_words_and_weights.json").read_text())
    assert (report["rows"], report["inputs"]) == (len(frame), frame["input"].nunique()) == (2928, 243)
    assert report["lexicon_words"] == len({word for word, _ in lexicon["binary sentiment"]}) == 433
