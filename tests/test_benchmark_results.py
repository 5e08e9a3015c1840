"""The committed speed benchmarks: the GPU page's ratios recomputed from the raw seconds and the page re-rendered
from its JSON; the end-to-end page's before/after ratios and pairs per CPU-second recomputed from its runs; the
10M-pair projection's GPU line from the encoder's measured rate."""

from __future__ import annotations

import json

import pytest

from benchmarks.speed import speed_end_to_end, speed_gpu

REPORT = json.loads((speed_gpu.OUT / "speed_gpu.json").read_text())
END_TO_END = json.loads((speed_end_to_end.OUT / "speed_end_to_end.json").read_text())


def test_gpu_page_is_its_json_rendered() -> None:
    assert (speed_gpu.OUT / "speed_gpu.md").read_text() == speed_gpu.markdown(REPORT)


def test_gpu_ratios_follow_from_the_seconds() -> None:
    encoder, lm = REPORT["encoder"], REPORT["smollm2"]
    default = encoder["sentence_encoder"][str(encoder["default_batch_size"])]
    assert default["texts_per_s"] == pytest.approx(encoder["texts"] / default["seconds"])
    assert encoder["speedup_vs_sentence_transformers_default"] == pytest.approx(
        encoder["sentence_transformers"]["32"]["seconds"] / default["seconds"])
    for size, row in encoder["exact_length"].items():
        assert row["fraction_of_roofline"] == pytest.approx(
            encoder["real_tokens"] * encoder["flops_per_token"] / row["seconds"] / 1e12
            / encoder["gemm_tflops"]["roofline"]), size
    budget = lm["budgets"][str(lm["default_budget"])]
    assert lm["speedup_vs_per_text"] == pytest.approx(
        (lm["texts"] / budget["seconds"]) / (lm["per_text"]["texts"] / lm["per_text"]["seconds"]))
    assert encoder["default_batch_size"] == 1024 and lm["default_budget"] == 16_384
    classifier = REPORT["classifier"]
    assert classifier["predict_texts_per_s"] == pytest.approx(classifier["texts"] / classifier["predict_s"])
    assert classifier["train_texts_per_s"] == pytest.approx(classifier["train_texts"] / classifier["fit_s"])


def test_projection_takes_the_measured_gpu_rate() -> None:
    rows = [{"pairs": 1000, "code": "after", "cache": "cold", "cpu_s": 10.0, "texts_encoded": 2000}]
    gpu = speed_end_to_end.gpu_encoder()
    p = speed_end_to_end.projection(rows, 400.0, gpu)
    rest = (10.0 - 2000 / 400.0) / 1000  # CPU-s per pair outside the encoder
    assert p["non_encoder_cpu_s_per_pair"] == pytest.approx(rest)
    assert p["gpu"]["texts_per_s"] == REPORT["encoder"]["sentence_encoder"]["1024"]["texts_per_s"]
    assert p["gpu"]["hours_one_core_beside_the_gpu"] == pytest.approx(
        (1e7 * rest + 4e7 / p["gpu"]["texts_per_s"]) / 3600)


def test_end_to_end_page_is_its_json_rendered() -> None:
    assert (speed_end_to_end.OUT / "speed_end_to_end.md").read_text() == speed_end_to_end.markdown(END_TO_END)


def test_end_to_end_ratios_follow_from_the_runs() -> None:
    rows, page = END_TO_END["rows"], (speed_end_to_end.OUT / "speed_end_to_end.md").read_text()
    for row in rows:
        assert row["pairs_per_cpu_s"] == pytest.approx(row["pairs"] / row["cpu_s"])
    conditions = set()
    for s in END_TO_END["speedups"]:
        before = [r for r in rows if r["code"] == "before" and r["commit"] == s["commit"]
                  and r["shared"] == s["shared"]]
        after = [r for r in rows if r["code"] == "after" and r["cache"] == "cold" and r["shared"] == s["shared"]
                 and r["pairs"] == s["pairs"]]
        assert len(before) == len(after) == 1
        assert s["ratio"] == pytest.approx(before[0]["cpu_s"] / after[0]["cpu_s"])
        assert f"{before[0]['cpu_s']:.1f} -> {after[0]['cpu_s']:.1f} CPU s, **{s['ratio']:.2f}x**" in page
        conditions.add((s["commit"], s["shared"]))
    assert conditions == {(commit, False) for commit in speed_end_to_end.BEFORE} | {("b2ec621", True)}
    assert speed_end_to_end.speedups(rows) == END_TO_END["speedups"]


def test_bertscore_page_is_its_json_rendered_and_its_ratios_follow_from_the_seconds() -> None:
    from benchmarks.speed import speed_bertscore

    report = json.loads((speed_bertscore.OUT / "speed_bertscore.json").read_text())
    page = (speed_bertscore.OUT / "speed_bertscore.md").read_text()
    assert page == speed_bertscore.markdown(report)
    cpu = report["cpu_s"]
    assert f"{cpu['bert-score'] / cpu['tsteval']:.2f}x faster in CPU time" in page
    assert f"| tsteval | {cpu['tsteval']:.2f} |" in page and f"{report['pairs'] / cpu['tsteval']:.0f} |" in page


@pytest.mark.parametrize(("name", "metrics"), [
    ("speed_lm_judges", ["cond_lp (template 1)", "judge_style (template 1)", "judge_content (template 1)",
                         "judge_fluency (template 1)"]),
    ("speed_lm_judges_qwen2.5-coder-1.5b", ["judge_fluency (template 2)"]),  # the recommended naturalness column
])
def test_lm_judges_speed_page_is_its_json_and_the_rates_follow_from_the_seconds(name: str, metrics: list[str]) -> None:
    from benchmarks.speed import speed_lm_judges

    report = json.loads((speed_lm_judges.RESULTS / f"{name}.json").read_text())
    assert (speed_lm_judges.RESULTS / f"{name}.md").read_text() == speed_lm_judges.markdown(report)
    assert [r["metric"] for r in report["rows"]] == metrics
    for r in report["rows"]:
        assert r["pairs_per_wall_s"] == pytest.approx(r["pairs"] / r["wall_s"], abs=0.06)
        assert r["pairs_per_cpu_s"] == pytest.approx(r["pairs"] / r["cpu_s"], abs=0.06)
        assert r["speedup_wall"] == pytest.approx(r["plain_wall_s"] / r["wall_s"], abs=0.006)
        assert r["max_abs_diff"] < 1e-3 and r["positions_computed"] < r["positions_whole"]


def test_dualrl_report_matrices_are_per_direction_and_the_docs_counts_follow_from_them() -> None:
    from pathlib import Path

    import pandas as pd

    root = Path(__file__).resolve().parent.parent
    folder = root / "benchmarks" / "results" / "dualrl_report"
    pairs = pd.read_csv(folder / "significance.csv", dtype={"source_style": str, "target_style": str})
    sti = pairs[pairs["metric"] == "sti@fasttext"]
    counts = {d: int((part["p_holm"] < 0.05).sum()) for d, part in sti.groupby("direction", sort=False)}
    assert list(counts) == ["negative → positive", "positive → negative"]
    page = " ".join((root / "docs" / "rankings.md").read_text().split())
    assert (f"find {counts['negative → positive']} pairs significant for negative → positive and "
            f"{counts['positive → negative']} for positive → negative") in page
    row = sti.iloc[0]  # its cell in the report: row a minus column b, starred when Holm-significant
    assert row["difference"] == pytest.approx(row["mean_b"] - row["mean_a"])
    cell = f"{-row['difference']:+.3f}" + ("\\*" if row["p_holm"] < 0.05 else "")
    name = row["a"].replace("_", "\\_")
    assert f"| {name} | — | {cell} |" in (folder / "report.md").read_text()


GEMMA = "gemma3-270m"
RATING_OF = {"cond_lp": "human_content_src", "judge_style": "human_style", "judge_content": "human_content_src",
             "judge_fluency": "human_fluency"}


def _sentence_pearson(folder: object, dataset: str) -> object:
    import pandas as pd

    table = pd.read_csv(folder / dataset / "metaeval.csv")
    return table[(table["level"] == "sentence") & (table["method"] == "pearson")]


def test_gemma_meta_evaluation_chose_its_mir_templates_on_lai_and_the_docs_quote_it() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    folder = root / "benchmarks" / "results" / f"meta_eval_{GEMMA}"
    lai, mir = _sentence_pearson(folder, "lai"), _sentence_pearson(folder, "mir")
    for dataset, table in (("lai", lai), ("mir", mir)):
        notes = json.loads((folder / dataset / "notes.json").read_text())
        assert notes["language_model"] == GEMMA
        assert not table["metric"].str.contains("smollm2").any() and table["metric"].str.contains(f"@{GEMMA}").any()
    # chosen on Lai (the best template per LM metric at sentence level), the only one scored on Mir
    chosen = {}
    for name, rating in RATING_OF.items():
        rows = lai[(lai["rating"] == rating) & lai["metric"].str.fullmatch(rf"{name}@{GEMMA}-t\d")]
        chosen[name] = int(rows.sort_values("r")["metric"].iloc[-1].rsplit("-t", 1)[1])
    assert json.loads((folder / "mir" / "notes.json").read_text())["templates"] == chosen
    page = " ".join((root / "docs" / "meta-evaluation.md").read_text().split())
    r = {dataset: f"{table[(table['metric'] == f'slor@{GEMMA}') & (table['rating'] == rating)]['r'].item():.3f}"[1:]
         for dataset, table, rating in (("lai", lai, "human_fluency"), ("mir", mir, "human_naturalness_output"))}
    assert f"`slor@{GEMMA}` {r['lai']} on Lai and {r['mir']} on Mir" in page  # as the page writes r (.550)


def test_meta_eval_mir_templates_name_every_lm_metric_once() -> None:
    import argparse

    from benchmarks.studies.meta_eval import templates_of

    assert templates_of("cond_lp=2,judge_style=2,judge_content=3,judge_fluency=1")["judge_content"] == 3
    for bad in ("cond_lp=2", "cond_lp=4,judge_style=2,judge_content=3,judge_fluency=1"):
        with pytest.raises(argparse.ArgumentTypeError, match="give NAME=K for each of"):
            templates_of(bad)


def test_logprop_speed_page_is_its_json_and_names_the_cpu_capability() -> None:
    """bf16's speed depends on the CPU (docs/precision.md): the page names torch's capability and whether bf16 was
    native, and its bf16 speed-ups follow from the rates."""
    from benchmarks.speed import speed_logprop

    report = json.loads((speed_logprop.RESULTS / "speed_logprop.json").read_text())
    page = (speed_logprop.RESULTS / "speed_logprop.md").read_text()
    assert page == speed_logprop.markdown(report)
    assert (report["meta"]["cpu_capability"], report["meta"]["native_bf16"]) == ("AVX512", True)
    assert "torch CPU capability AVX512, bf16 native" in page
    for r in report["rows"]:
        assert r["bf16"]["speedup_vs_fp32"] == pytest.approx(r["bf16"]["pairs_per_s"] / r["pairs_per_s"], rel=0.02)


def test_remote_agreement_page_is_its_json_and_its_tolerances_hold_the_tests_bounds() -> None:
    """results/remote_agreement.md from its JSON; the remote-LM tests' tolerances are above the largest measured
    differences of the metrics they compare (their constants name this page)."""
    from benchmarks.reproductions import remote_agreement

    rows = json.loads((remote_agreement.RESULTS / "remote_agreement.json").read_text())
    assert (remote_agreement.RESULTS / "remote_agreement.md").read_text() == remote_agreement.page(rows)
    import test_remote_lm as remote

    assert rows["judge_fluency"]["max_abs_diff"] < remote.RATING_TOLERANCE
    assert rows["lp_mean"]["max_abs_diff"] < remote.LP_TOLERANCE and rows["lp_mean"]["pearson_r"] > remote.LP_R
    for name in ("cond_lp", "logprop_content"):
        if name in rows:
            assert rows[name]["max_abs_diff"] < remote.CONTINUATION_TOLERANCE, name
    if "logprop_style" in rows:
        assert rows["logprop_style"]["max_abs_diff"] < remote.LOGPROP_STYLE_TOLERANCE


def test_remote_speed_page_is_its_json_and_its_rates_and_overheads_follow_from_the_times() -> None:
    from benchmarks.speed import speed_remote

    results = json.loads((speed_remote.RESULTS / "speed_remote.json").read_text())
    assert (speed_remote.RESULTS / "speed_remote.md").read_text() == speed_remote.page(results)
    assert {(r["metric"], r.get("concurrency")) for r in results["rows"]} >= {
        (m, c) for m in speed_remote.METRICS for c in (None, 1, 2, 4, 8)}
    for row in results["rows"]:
        assert row["pairs_per_s"] == pytest.approx(results["pairs"] / row["seconds"])
        if row["backend"] == "server":
            assert row["overhead_ms"] == pytest.approx(row["client_ms"] - row["http_ms"])
            assert 0 < row["server_ms"] < row["http_ms"]  # the server's own time is inside the HTTP call


@pytest.mark.parametrize(("module", "render", "name"), [
    ("speed.speed_content", "page", "speed_content"), ("speed.speed_ray", "page", "speed_ray"),
    ("speed.speed_pairs", "page", "speed_pairs"), ("speed.speed_sti", "page", "speed_sti"),
    ("speed.speed_naturalness", "unigram_markdown", "speed_naturalness"),
    ("speed.speed_naturalness", "smollm2_markdown", "speed_smollm2"),
    ("speed.speed_lexical", "markdown", "speed_lexical"),
    ("speed.speed_classifiers", "page", "speed_classifiers"),
    ("speed.speed_logprop", "markdown", "speed_logprop_issue40_before"),
    ("speed.speed_logprop", "markdown", "speed_logprop_issue40_after"),
    ("reproductions.cds_multiclass", "page", "cds_multiclass"),
    ("reproductions.lexicon_quality", "page", "lexicon_quality"),
    ("reproductions.mir_naturalness", "markdown", "mir_naturalness"),
    ("reproductions.cds_invariance", "page", "cds_invariance"),
])
def test_a_results_page_is_its_json_rendered(module: str, render: str, name: str) -> None:
    import importlib

    results = speed_gpu.OUT / name
    page = getattr(importlib.import_module(f"benchmarks.{module}"), render)
    assert results.with_suffix(".md").read_text() == page(json.loads(results.with_suffix(".json").read_text()))


def test_the_annotate_load_page_is_its_json_rendered() -> None:
    from benchmarks.speed import annotate_speed

    result = json.loads((annotate_speed.RESULTS / "annotate_speed.json").read_text())
    page = (annotate_speed.RESULTS / "annotate_speed.md").read_text()
    assert page == annotate_speed.page(result, annotate_speed.parser().get_default("seconds"))  # the run's --seconds
    # the seconds measured are rounded to 0.1 s: the rate agrees to 0.05 s in 60 s
    assert result["submissions_per_s"] == pytest.approx(result["submissions"] / result["seconds"], rel=1e-3)


def test_the_erasure_page_is_its_json_rendered_and_its_chance_share_follows_from_the_counts() -> None:
    """``cds_erasure.md`` is its JSON rendered; the between-style share's chance, (k - 1) / (n - 1) for the 11 CDS
    styles and the probe sentences, recomputed from the counts."""
    from benchmarks.studies import cds_erasure

    report = json.loads((cds_erasure.RESULTS / "cds_erasure.json").read_text())
    assert (cds_erasure.RESULTS / "cds_erasure.md").read_text() == cds_erasure.markdown(report)
    for row in report["rows"]:
        assert row["between_chance"] == pytest.approx((11 - 1) / (row["n"] - 1))
