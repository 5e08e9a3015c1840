"""``make bench-gpu`` (benchmarks/bench_gpu.py) in its smoke mode: every step it takes on the GPU, run on the CPU on
a few pairs, so a rename breaks here instead of on a lent GPU; its page renders into the GPU results page."""

from __future__ import annotations

import json

from benchmarks import bench_gpu, speed_gpu


def test_smoke_run_measures_every_figure_on_the_cpu() -> None:
    report = bench_gpu.main(["--smoke"])
    assert report["device"] == "cpu (smoke run)"
    assert list(report["lm"]["metrics"]) == list(bench_gpu.LM_METRICS)
    lm, sizes = report["lm"]["metrics"], bench_gpu.SMOKE
    assert [x["pairs"] for x in lm.values()] == [sizes["lm"]] * len(lm)
    assert (report["bertscore"]["pairs"], report["score"]["pairs"]) == (sizes["bertscore"], sizes["score"])
    assert all(x["pairs_per_s"] > 0 for x in [*lm.values(), report["bertscore"], report["score"]])
    for part in [*lm.values(), report["bertscore"]]:
        assert part["max_abs_diff_vs_cpu"] == 0.0 and part["deviation"] == {}  # the CPU against itself, fp32 only
    assert report["bertscore"]["max_abs_diff_subset_vs_whole"] < 1e-12
    gaps = report["score"]["max_abs_diff_vs_cpu"]  # the recommended profile's neural columns, CPU vs CPU
    assert gaps["sbert@none"] == 0.0 and gaps["lp_mean@gemma3-270m"] < 1e-5 and len(gaps) == 2
    committed = json.loads((speed_gpu.OUT / "speed_gpu.json").read_text())
    page = speed_gpu.markdown({**committed, "done_when": report})
    assert "## Issue 30's figures (`make bench-gpu`) on cpu (smoke run)" in page
    assert page.count("| `judge_") == 3 and "| BERTScore |" in page
