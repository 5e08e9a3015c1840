"""The committed content benchmark (benchmarks/results/content_benchmark.{json,md}): the page is its JSON rendered,
and one figure of each table is recomputed independently (sacrebleu and scipy on the set's CSV; the LM tables from
the committed per-pair scores)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU, CHRF
from scipy.stats import spearmanr

from benchmarks.studies import content_benchmark as cb
from benchmarks.studies.content_benchmark_page import markdown
from tsteval.core.datapaths import dataset_dir
from tsteval.metaeval.recommended import RECOMMENDED

REPORT = json.loads((cb.RESULTS / "content_benchmark.json").read_text())


def _set(name: str) -> pd.DataFrame:
    return pd.read_csv(dataset_dir("mis_benchmark") / "datasets" / f"{name}.csv")


def test_page_is_its_json_rendered() -> None:
    assert (cb.RESULTS / "content_benchmark.md").read_text() == markdown(REPORT)


def test_recommended_is_the_profiles_content_column_and_its_mean_is_over_the_six_sets() -> None:
    content = next(r for r in RECOMMENDED if r.aspect == "content").column()
    assert REPORT["recommended"]["column"] == content
    per_set = REPORT["columns"][content]["per_set"]
    assert sorted(per_set) == sorted(cb.ALL_SETS)
    mean = np.mean([per_set[s]["spearman"] for s in cb.SETS])
    assert REPORT["recommended"]["mean_spearman"] == pytest.approx(mean, abs=1e-3)
    best = REPORT["columns"][REPORT["best"]["column"]]["mean_spearman"]
    assert best == max(c["mean_spearman"] for c in REPORT["columns"].values() if c["sets"] == len(cb.SETS))


def test_chrf_spearman_on_tox600_recomputed_with_sacrebleu_and_scipy() -> None:
    """tsteval's chrF is sacrebleu's on its tokens, which are lower-cased (chrF ignores the spaces between them)."""
    table = _set("tox600")
    chrf = CHRF()
    ours = [chrf.sentence_score(out.lower(), [inp.lower()]).score
            for inp, out in zip(table["text1"], table["text2"], strict=True)]
    entry = REPORT["columns"]["chrf@none"]["per_set"]["tox600"]
    assert entry["n"] == len(table) == 600
    assert entry["spearman"] == pytest.approx(spearmanr(ours, table["human"]).statistic, abs=1e-3)
    assert entry["spearman_lo"] < entry["spearman"] < entry["spearman_hi"]


def test_upstream_bleu_on_upstreams_sample_recomputed() -> None:
    """Upstream's own computation (text1 the hypothesis, a one-pair corpus score) on their sample of CAE."""
    sample = _set("CAE").sample(100, random_state=1)
    bleu = BLEU()
    upstream = [bleu.corpus_score([a], [[b]]).score for a, b in zip(sample["text1"], sample["text2"], strict=True)]
    entry = REPORT["published_comparison"]["CAE"]["bleu"]
    assert entry["upstream_recomputed"] == pytest.approx(spearmanr(upstream, sample["human"]).statistic, abs=1e-3)
    assert entry["published"] == cb.PUBLISHED["BLEU"][cb.SETS.index("CAE")]


@pytest.mark.parametrize("stage", ["lm", "compare"])
def test_lm_tables_recomputed_from_the_committed_scores(stage: str) -> None:
    if stage not in REPORT:
        pytest.skip(f"the {stage} stage is not in the committed results")
    scores = pd.read_csv(cb.RESULTS / "content_benchmark_lm.csv")
    columns = REPORT[stage]["columns"]
    checked = ["judge_content@smollm2-t1", "cond_lp@smollm2-t3"] if stage == "lm" else [
        "judge_content@qwen2.5-coder-1.5b-t1"]
    for column in checked:
        for name, n in REPORT[stage]["pairs"].items():
            part = scores[(scores["set"] == name) & scores[column].notna()]
            assert len(part) == n
            expected = spearmanr(part[column], part["human_content"]).statistic
            assert columns[column]["per_set"][name]["spearman"] == pytest.approx(expected, abs=1e-3), (column, name)


def test_published_means_are_the_means_of_the_published_sets() -> None:
    published = REPORT["published"]
    for measure, values in published["sets"].items():
        assert published["means"][measure] == pytest.approx(np.mean(values), abs=1e-3), measure
