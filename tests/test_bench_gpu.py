"""``make bench-gpu`` (benchmarks/speed/bench_gpu.py) in its smoke mode: every step it takes on the GPU, run on the
CPU on a few pairs, so a rename breaks here instead of on a lent GPU; the committed GPU page is its JSON rendered."""

from __future__ import annotations

import json

from benchmarks.speed import bench_gpu, speed_gpu


def test_smoke_run_measures_every_figure_on_the_cpu() -> None:
    report = bench_gpu.main(["--smoke"])
    assert report["device"] == "cpu (smoke run)"
    assert list(report["lm"]["metrics"]) == list(bench_gpu.LM_METRICS)
    lm, sizes = report["lm"]["metrics"], bench_gpu.SMOKE
    assert [x["pairs"] for x in lm.values()] == [sizes["lm"]] * len(lm)
    assert (report["bertscore"]["pairs"], report["score"]["pairs"]) == (sizes["bertscore"], sizes["score"])
    assert all(x["fp32"]["first_pairs_per_s"] > 0 and x["fp32"]["second_pairs_per_s"] > 0 for x in lm.values())
    assert report["bertscore"]["pairs_per_s"] > 0 and report["score"]["pairs_per_s"] > 0
    # The CPU against itself, fp32 only: equal up to summation order.  The LM metrics' batches are planned from
    # forward-pass costs timed on first use (judges.prefix_scoring), so on a busy machine the measured pass and the
    # check batch pairs differently (1.1e-6 seen for logprop_content beside another job): 1e-5, the GPU's fp32 bar.
    for part in [*lm.values(), report["bertscore"]]:
        assert part["max_abs_diff_vs_cpu"] < 1e-5 and part["deviation"] == {}
    for x in lm.values():  # every pair's tokens planned once in the first pass, none dropped
        positions = x["fp32"]["positions"]
        assert positions["computed"] >= positions["real"] > 0 and positions["sequences"] >= sizes["lm"]
    # a subset is encoded in other batches (other padded lengths, so other GEMM shapes): float32 summation order only
    # (1.2e-8 seen beside three other jobs)
    assert report["bertscore"]["max_abs_diff_subset_vs_whole"] < 1e-6
    gaps = report["score"]["max_abs_diff_vs_cpu"]  # the recommended profile's neural columns, CPU vs CPU (each run
    assert gaps["sbert@none"] < 1e-6 and gaps["lp_mean@gemma3-270m"] < 1e-5
    assert len(gaps) == 2  # (each run encodes anew)
    phases = report["score"]["runs"]["fp32"]["profile"]["host_phases_s"]
    assert {"run", "sentence encoder", "LM forward (host)", "writing"} <= set(phases)
    assert phases["LM forward (host)"] < phases["LM scores"] < phases["run"]  # nested phases inside parents
    page = bench_gpu.page(report)
    assert "# GPU figures on cpu (smoke run)" in page
    assert page.count("| judge\\_") == 6 and "BERTScore" in page  # the speed table and the values table
    row = next(line for line in page.splitlines() if line.startswith("| cond\\_lp |"))
    first, second = (sizes["lm"] / lm["cond_lp"]["fp32"][key] for key in ("first_s", "second_s"))
    assert row.startswith(f"| cond\\_lp | {first:,.0f} | {second:,.0f} |")  # pairs/s from the seconds


def test_the_committed_gpu_page_is_its_json_rendered() -> None:
    """results/bench_gpu.md from its JSON file, with one rate and one ratio recomputed from raw figures."""
    report = json.loads((speed_gpu.OUT / "bench_gpu.json").read_text())
    page = (speed_gpu.OUT / "bench_gpu.md").read_text()
    assert page == bench_gpu.page(report)
    row = report["lm"]["metrics"]["logprop_content"]
    rates = [row["pairs"] / row[run][key] for run, key in (("fp32", "first_s"), ("bf16", "first_s"),
                                                           ("bf16", "second_s"), ("bf16_before", "first_s"))]
    assert f"| logprop\\_content | {rates[0]:,.0f} | - | {' | '.join(f'{r:,.0f}' for r in rates[1:])} |" in page
    score = report["score"]["runs"]["bf16"]
    assert f"| bf16 | {report['score']['pairs'] / score['seconds']:,.0f} | {score['seconds']:.2f} |" in page


def test_every_clocked_phase_names_a_function_of_this_tree() -> None:
    """The phase clocks skip nothing by accident: each (module or class, function) ``score``'s clock wraps exists
    here, and each LM phase has at least one (PHASES also names functions of earlier trees)."""
    for module, name in bench_gpu.SCORE_PHASES:
        assert hasattr(bench_gpu._owner(module), name), (module, name)
    found = {phase for (module, name), phase in bench_gpu.PHASES.items() if hasattr(bench_gpu._owner(module), name)}
    assert found == set(bench_gpu.PHASES.values())
