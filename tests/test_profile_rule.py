"""The rule that picks the recommended profile: pooled by hand with numpy on constructed tables, and the committed
profile recomputed from the committed three-LM tables (``benchmarks/results/meta_eval_lm``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.metaeval.profile_rule import Z, choose, pooled_differences
from tsteval.metaeval.recommended import RECOMMENDED

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "meta_eval_lm"
PAGE = RESULTS.parents[2] / "docs" / "meta-evaluation.md"  # where the evidence tables are quoted


def _row(metric: str, diff: float, lo: float, hi: float, aspect: str = "content",
         baseline: str = "sbert@none") -> dict:
    return dict(metric=metric, baseline=baseline, aspect=aspect, rating="r", level="sentence", method="pearson",
                source="tsteval", diff=diff, lo=lo, hi=hi)


def _by_hand(rows: list[tuple[float, float, float]]) -> tuple[float, float]:
    se = np.array([(hi - lo) / (2 * 1.959964) for _, lo, hi in rows])
    w = 1 / se ** 2
    return float(np.sum(w * np.array([d for d, _, _ in rows])) / np.sum(w)), float(np.sum(w) ** -0.5)


def test_the_rule_pools_by_inverse_variance_and_refuses_a_loss_on_either_dataset() -> None:
    mir = pd.DataFrame([_row("a@lm", .05, .01, .09), _row("b@lm", .03, -.05, .11), _row("c@lm", .20, .15, .25),
                        _row("sbert@none", 0, 0, 0)])
    lai = pd.DataFrame([_row("a@lm", .02, -.03, .07), _row("b@lm", .01, -.07, .09), _row("c@lm", -.06, -.10, -.02),
                        _row("sbert@none", 0, 0, 0)])
    pooled = {p.metric: p for p in pooled_differences({"mir": mir, "lai": lai})}
    assert set(pooled) == {"a@lm", "b@lm", "c@lm"}  # the recommendation is not its own candidate
    for metric, rows in (("a@lm", [(.05, .01, .09), (.02, -.03, .07)]), ("b@lm", [(.03, -.05, .11), (.01, -.07, .09)])):
        diff, se = _by_hand(rows)
        assert (pooled[metric].diff, pooled[metric].se) == pytest.approx((diff, se), abs=1e-6)
    assert pooled["a@lm"].qualifies  # .0374 - 1.96 x .0155 > 0
    assert not pooled["b@lm"].qualifies  # positive, but its pooled interval holds 0
    assert pooled["c@lm"].diff - Z * pooled["c@lm"].se > 0 and pooled["c@lm"].worse_on == ["lai"]
    assert not pooled["c@lm"].qualifies  # significantly worse on Lai
    assert choose({"mir": mir, "lai": lai}, {"content": "sbert@none"}) == {"content": "a@lm"}


def test_the_committed_profile_is_the_rule_on_the_committed_tables() -> None:
    tables = {name: pd.read_csv(RESULTS / name / "recommendation.csv") for name in ("mir", "lai")}
    profile = json.loads((RESULTS / "profile.json").read_text())
    chosen = dict(profile["current"])
    for aspect, column in profile["current"].items():  # recomputed here with numpy, not by profile_rule
        best = None
        parts = {name: t[(t["aspect"] == aspect) & (t["baseline"] == column) & (t["metric"] != column)
                         & (t["level"] == "sentence") & (t["method"] == "pearson")] for name, t in tables.items()}
        for metric in sorted(set(parts["mir"]["metric"]) & set(parts["lai"]["metric"])):
            rows = [tuple(parts[n][parts[n]["metric"] == metric][["diff", "lo", "hi"]].iloc[0]) for n in parts]
            diff, se = _by_hand(rows)
            if diff - 1.959964 * se > 0 and all(hi >= 0 for _, _, hi in rows) and (best is None or diff > best[0]):
                best = (diff, metric)
        chosen[aspect] = best[1] if best else column
    assert profile["chosen"] == chosen
    # --metrics recommended follows the rule (the style column with the backend it was chosen with)
    assert {r.aspect: r.column(r.variant if r.aspect == "style" else "") for r in RECOMMENDED} == chosen


def test_the_comparison_with_the_recommendation_is_the_difference_of_the_committed_correlations() -> None:
    for name in ("mir", "lai"):
        against = pd.read_csv(RESULTS / name / "recommendation.csv")
        r = pd.read_csv(RESULTS / name / "metaeval.csv").set_index(["metric", "rating", "level", "method"])["r"]
        rows = against[(against["level"] == "sentence") & (against["method"] == "pearson")]
        assert len(rows) > 10
        for row in rows.itertuples():
            expected = r[(row.metric, row.rating, "sentence", "pearson")] - r[(row.baseline, row.rating, "sentence",
                                                                                "pearson")]
            assert row.diff == pytest.approx(expected, abs=1e-9)


def _sentence_r(folder: Path, rating: str) -> pd.Series:
    """metric -> sentence-level Pearson r with ``rating`` in ``folder``'s metaeval.csv."""
    table = pd.read_csv(folder / "metaeval.csv")
    return table[(table["level"] == "sentence") & (table["method"] == "pearson")
                 & (table["rating"] == rating)].set_index("metric")["r"]


def test_the_docs_evidence_table_is_the_committed_tables() -> None:
    """Every LM column's figures in docs/meta-evaluation.md are the committed baseline.csv and metaeval.csv, and one
    of them is recomputed here from metaeval.csv (the difference of two correlations)."""
    from benchmarks.studies.meta_eval_lm import evidence_rows, readme_table
    from tsteval.metaeval.rated.lm_subset import LANGUAGE_MODELS

    rows = evidence_rows(RESULTS, list(LANGUAGE_MODELS))
    assert readme_table(rows) in PAGE.read_text(encoding="utf-8")
    sentence = _sentence_r(RESULTS / "lai", "human_fluency")
    qwen = next(r for r in rows if r["metric"] == "judge_fluency@qwen2.5-coder-1.5b-t2" and r["dataset"] == "lai")
    assert qwen["diff"] == pytest.approx(sentence["judge_fluency@qwen2.5-coder-1.5b-t2"] - sentence["lp_mean@kn3"])


def test_the_full_tables_hold_logprop_of_the_three_lms_on_every_row() -> None:
    """``benchmarks/results/meta_eval/{mir,lai}`` carry ``logprop_content`` and ``logprop_style`` of each packaged LM,
    judged on as many rows as the aspect's baseline (BLEU, the fastText classifier); the docs' LogProp table is
    theirs, one difference recomputed."""
    from benchmarks.studies.meta_eval_lm import FULL, evidence_rows, readme_table
    from tsteval.metaeval.rated.lm_subset import LANGUAGE_MODELS, LM_METRICS

    for name in ("mir", "lai"):
        table = pd.read_csv(FULL / name / "metaeval.csv")
        sentence = table[(table["level"] == "sentence") & (table["method"] == "pearson")]
        assert json.loads((FULL / name / "notes.json").read_text())["logprop_precision"] == "bf16"
        for model in LANGUAGE_MODELS:
            for metric, baseline in zip(LM_METRICS[:2], ("bleu@none", "target_prob@fasttext"), strict=True):
                rows = sentence[sentence["metric"] == f"{metric}@{model}"].set_index("rating")["n"]
                base = sentence[sentence["metric"] == baseline].set_index("rating")["n"]
                assert len(rows) and rows.to_dict() == base.to_dict(), (name, model, metric)
    rows = evidence_rows(FULL, list(LANGUAGE_MODELS), LM_METRICS[:2])
    assert len(rows) == 2 * 2 * len(LANGUAGE_MODELS)
    assert readme_table(rows) in PAGE.read_text(encoding="utf-8")
    r = _sentence_r(FULL / "mir", "human_content_preservation")
    qwen = next(x for x in rows if x["metric"] == "logprop_content@qwen2.5-coder-1.5b" and x["dataset"] == "mir")
    assert qwen["diff"] == pytest.approx(r["logprop_content@qwen2.5-coder-1.5b"] - r["bleu@none"])


def test_the_readme_profile_table_is_the_rule_on_the_committed_tables() -> None:
    """The README's profile table is :func:`benchmarks.studies.meta_eval_lm.profile_table` of the committed tables,
    its rows the profile :data:`RECOMMENDED` scores, and one r in it is recomputed here from metaeval.csv."""
    from benchmarks.studies.meta_eval_lm import profile_table

    table = profile_table(RESULTS)
    assert table in (RESULTS.parents[2] / "README.md").read_text(encoding="utf-8")
    assert [line.split(" | ")[1].strip("`") for line in table.splitlines()[2:]] == [
        r.column(r.variant if r.aspect == "style" else "") for r in RECOMMENDED]
    r = _sentence_r(RESULTS / "lai", "human_fluency")["lp_mean@gemma3-270m"]
    assert "| naturalness | `lp_mean@gemma3-270m` | " in table and f" | {r:.3f} [" in table
