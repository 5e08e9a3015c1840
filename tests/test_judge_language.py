"""benchmarks/results/judge_language.{md,json}: the page is its JSON rendered, its rows are the study's seeded
sample of RUSSE-2022, and a correlation and a paired difference are recomputed from the per-row scores and the raw
file with scipy."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import pearsonr, spearmanr

from benchmarks.studies import judge_language as study
from benchmarks.studies.multilingual import sample_rows

REPORT = json.loads((study.RESULTS / "judge_language.json").read_text(encoding="utf-8"))


def _row(metric: str, method: str) -> dict:
    return next(r for r in REPORT["results"] if r["metric"] == metric and r["method"] == method)


def test_the_page_is_its_json_rendered() -> None:
    assert (study.RESULTS / "judge_language.md").read_text(encoding="utf-8") == study.markdown(REPORT)


def test_a_correlation_and_the_russian_templates_difference_recomputed(data_root: Path) -> None:
    raw = pd.read_csv(data_root / "russe2022/test_all_metrics_russe2022.csv")
    scores = pd.read_csv(study.RESULTS / "judge_language_rows.csv")
    assert scores["row"].tolist() == sample_rows(len(raw), REPORT["rows"]).tolist()
    fluency = raw["fluency"].to_numpy()[scores["row"].to_numpy()]
    assert scores["human_fluency"].tolist() == pytest.approx(fluency.tolist())
    for language in ("en", "ru"):  # to 1e-3: the CSV keeps 6 significant digits
        column = f"judge_fluency@qwen2.5-coder-1.5b-{language}"
        assert _row(column, "spearman")["r"] == pytest.approx(spearmanr(scores[column], fluency)[0], abs=1e-3)
    english, russian = (pearsonr(scores[f"judge_content@gemma3-270m-{k}"], raw["content"].to_numpy()[
        scores["row"].to_numpy()])[0] for k in ("en", "ru"))
    assert _row("judge_content@gemma3-270m-ru", "pearson")["diff_english"] == pytest.approx(russian - english,
                                                                                             abs=1e-3)
