"""``make bench-gpu`` (benchmarks/speed/bench_gpu.py) in its smoke mode: every step it takes on the GPU, run on the
CPU on a few pairs, so a rename breaks here instead of on a lent GPU; the committed GPU page is its JSON rendered."""

from __future__ import annotations

import json

from benchmarks.speed import bench_gpu, profile_lm, speed_gpu


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
    page = "\n".join(bench_gpu.markdown(report))
    assert "## `make bench-gpu` on cpu (smoke run)" in page
    assert page.count("| `judge_") == 3 and "| BERTScore |" in page
    row = next(line for line in page.splitlines() if line.startswith("| `cond_lp` |"))
    assert f"**{lm['cond_lp']['pairs'] / lm['cond_lp']['seconds']:,.0f}**" in row  # pairs/s from its seconds


def test_the_committed_gpu_page_is_its_json_rendered() -> None:
    """results/bench_gpu.md from its three JSON files, and one ratio and one rate recomputed from raw figures."""
    runs = [json.loads((speed_gpu.OUT / f"{name}.json").read_text()) for name in ("bench_gpu", "bench_gpu_before",
                                                                                   "profile_lm")]
    page = (speed_gpu.OUT / "bench_gpu.md").read_text()
    assert page == profile_lm.page(*runs)
    after, before, profile = runs
    lm = after["lm"]["metrics"]["logprop_content"]
    ratio = lm["pairs"] / lm["seconds"] / before["lm"]["metrics"]["logprop_content"]["pairs_per_s"]
    assert f"| `logprop_content` | {before['lm']['metrics']['logprop_content']['pairs_per_s']:,.0f} | " \
           f"{lm['pairs'] / lm['seconds']:,.0f} | {ratio:.2f}x |" in page
    row = profile["metrics"]["bf16:logprop_content"]
    tflops = 2 * row["non_embedding_params"] * row["positions"]["computed"] / row["gpu_busy_s"] / 1e12
    assert f"| {tflops:.1f} |" in next(line for line in page.splitlines()
                                       if line.startswith("| `logprop_content` | bf16 | "))
