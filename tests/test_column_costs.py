"""The committed column-cost benchmark (``harness/metaeval/column_costs.json``, the package's data): every candidate
column measured, each figure per 1,000 pairs recomputed from the raw seconds and pairs stored beside it, the page its
JSON rendered.  No model runs."""

from __future__ import annotations

import json

import pytest

from benchmarks.speed import column_costs
from tsteval.metaeval.study.rule import COSTS

REPORT = json.loads(COSTS.read_text())
LMS = ("smollm2", "gemma3-270m", "qwen2.5-coder-1.5b")
CLASSIFIERS = ("fasttext", "transformer", "fasttext_transformer")
STYLE = ("sti", "sti_norm", "target_prob", "style_strength", "target_acc")
# The candidate columns as the evidence tables name them (written out here, not taken from the benchmark).
COLUMNS = ["bleu@none", "chrf@none", "sbert@none", "bertscore_f1@none", "e5@none", "learned@bi-loso", "ppl@kn3",
           "lp_mean@kn3", "slor@kn3",
           *(f"{s}@{c}" for c in CLASSIFIERS for s in STYLE),
           *(f"{name}@{lm}" for lm in LMS for name in ("ppl", "lp_mean", "slor", "logprop_content", "logprop_style")),
           *(f"{judge}@{lm}-t{k}" for lm in LMS for judge, k in (("judge_style", 3), ("judge_content", 1),
                                                                  ("judge_fluency", 2)))]


def test_every_candidate_column_is_measured_with_a_positive_cost() -> None:
    assert len(COLUMNS) == 48
    assert sorted(REPORT["columns"]) == sorted(COLUMNS)
    for column in COLUMNS:
        entry = REPORT["columns"][column]
        assert entry["cpu_s"] > 0 and entry["wall_s"] > 0 and entry["cpu_s_per_1000"] > 0, column
        assert entry["scorer"] in REPORT["scorers"], column


def test_the_benchmark_scores_exactly_these_columns() -> None:
    assert sorted(c for g in column_costs.groups() for c in g.columns.values()) == sorted(COLUMNS)


@pytest.mark.parametrize("column", COLUMNS)
def test_each_figure_follows_from_the_raw_seconds(column: str) -> None:
    entry = REPORT["columns"][column]
    n = entry["pairs_measured"]
    assert n == (REPORT["qwen_pairs"] if column.split("@")[1].startswith("qwen2.5-coder-1.5b") else REPORT["pairs"])
    assert entry["cpu_s_per_1000"] == pytest.approx(entry["cpu_s"] / n * 1000, abs=0.006)
    assert entry["wall_s_per_1000"] == pytest.approx(entry["wall_s"] / n * 1000, abs=0.006)
    w = entry["warm_call_pairs"]
    assert w == REPORT["warmup_pairs"] < n
    assert entry["marginal_cpu_s_per_1000"] == pytest.approx((entry["cpu_s"] - entry["warm_call_cpu_s"]) / (n - w)
                                                             * 1000, abs=0.006)
    scorer = REPORT["scorers"][entry["scorer"]]  # the scorer's own record: the same call
    assert column in scorer["columns"]
    assert (scorer["pairs"], scorer["cpu_s"], scorer["wall_s"]) == (n, entry["cpu_s"], entry["wall_s"])
    assert (scorer["warm_call"]["pairs"], scorer["warm_call"]["cpu_s"]) == (w, entry["warm_call_cpu_s"])


def test_a_group_measured_alone_is_merged_with_a_note() -> None:
    earlier = {"notes": ["first"], "columns": {"a@none": {"cpu_s_per_1000": 1.0}}, "scorers": {"a": {}},
               "one_time": {"x": {}}}
    later = {"machine": {"load_average_before": 3.5}, "cache": "a fresh temporary cache",
             "columns": {"b@none": {"cpu_s_per_1000": 2.0}}, "scorers": {"b": {}}, "one_time": {"y": {}}}
    out = column_costs.merged(earlier, later, ["b"])
    assert sorted(out["columns"]) == ["a@none", "b@none"] and sorted(out["one_time"]) == ["x", "y"]
    assert out["notes"][0] == "first"
    assert out["notes"][1].startswith("The column group b was measured later, alone (--only)")
    assert "load average 3.5 before" in out["notes"][1] and earlier["notes"] == ["first"]


def test_one_time_costs_are_each_classifier_training_and_each_lm_load() -> None:
    once = REPORT["one_time"]
    for name in CLASSIFIERS:
        assert once[f"classifier {name}: training"]["cpu_s"] > 0
        assert once[f"classifier {name}: training"]["what"].startswith(f"training on {REPORT['training_texts']} texts")
    for lm in LMS:
        assert once[f"{lm}: GGUF conversion"]["cpu_s"] > 0 and once[f"{lm}: model load"]["cpu_s"] > 0


def test_the_page_is_the_json_rendered_cheapest_first_without_absolute_paths() -> None:
    page = (column_costs.RESULTS / "column_costs.md").read_text()
    assert page == column_costs.markdown(REPORT)
    rows = [line for line in page.splitlines() if line.startswith("| ") and "@" in line]
    assert len(rows) == len(COLUMNS)
    costs = [float(line.split(" | ")[3]) for line in rows]
    assert costs == sorted(costs)
    text = page + json.dumps(REPORT)
    assert "/work/" not in text and "/tmp/" not in text and "/root" not in text and "/home/" not in text
