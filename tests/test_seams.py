"""Tests at the seams: every number a user reads in the output files of ``tsteval run`` and ``tsteval score`` is
recomputed here, independently, from the scorecard's own columns or from the raw texts.

Only public outputs are read (files written through the CLI), so these tests hold whatever the internals are.
Directions are this test's own knowledge: WMD and perplexity are lower-is-better, everything else higher.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml
from conftest import read_slice, run_cache
from scipy import stats

from tsteval.cli.main import main

TINY = Path(__file__).resolve().parent / "data" / "tiny_manifest.yaml"
LOWER_IS_BETTER = ("wmd", "ppl")  # metric names before "@"
STYLE, CONTENT, NATURALNESS = "sti@lr", "wmd@none", "naturalness@unigram"
HUMAN = {"style": "human_style_intensity", "content": "human_content_preservation",
         "naturalness": "human_naturalness_output"}
K_WORST = 2


def _lower_is_better(column: str) -> bool:
    return column.split("@")[0] in LOWER_IS_BETTER


def _md_unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")


def md_table(report: str, heading: str | None = None) -> pd.DataFrame:
    """The first Markdown table after the line ``heading`` (or at the top) of ``report``, as unescaped text cells."""
    lines = report.splitlines()
    start = lines.index(heading) + 1 if heading is not None else 0
    rows = []
    for line in lines[start:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([_md_unescape(c.strip()) for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        elif rows:
            break
    assert len(rows) > 2, f"no table after {heading!r}"
    return pd.DataFrame(rows[2:], columns=rows[0])


def ci_cell(cell: str) -> tuple[float, float, float]:
    """``mean [low, high]`` as three floats."""
    found = re.fullmatch(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", cell)
    assert found, cell
    return tuple(float(v) for v in found.groups())


# --- tsteval run on the tiny manifest (WMD, a lower-is-better metric, on the content axis) ---------------------

@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """The tiny manifest plus WMD (word2vec on the training corpus) as the content axis, without its ``meta_eval``
    key, run once via the CLI."""
    spec = yaml.safe_load(TINY.read_text())
    spec["metrics"]["content"].update(metrics=["bleu_mir", "chrf", "wmd"], vectors="word2vec")
    spec["tradeoff"]["content"] = CONTENT
    del spec["meta_eval"]  # agreement with the rating column of each aspect, report.bootstrap_resamples resamples
    folder = tmp_path_factory.mktemp("seams")
    manifest = folder / "seams.yaml"
    manifest.write_text(yaml.safe_dump(spec))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        assert main(["run", str(manifest), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def card(run: Path) -> pd.DataFrame:
    return pd.read_parquet(run / "scorecard.parquet")


def test_scorecard_csv_equals_parquet_and_chrf_is_recomputed_from_the_texts(run: Path, card: pd.DataFrame) -> None:
    csv = pd.read_csv(run / "scorecard.csv", keep_default_na=False, na_values=[""])
    for column in (STYLE, CONTENT, NATURALNESS, "chrf@none", HUMAN["style"]):
        np.testing.assert_allclose(csv[column].to_numpy(float), card[column].to_numpy(float), rtol=1e-12)
    assert csv["output"].tolist() == card["output"].tolist()
    for _, row in card.sample(20, random_state=0).iterrows():
        assert row["chrf@none"] == pytest.approx(sacrebleu.sentence_chrf(row["output"], [row["input"]]).score,
                                                 abs=1e-9)


def test_summary_means_and_intervals_match_the_scorecard(run: Path, card: pd.DataFrame) -> None:
    summary = pd.read_csv(run / "summary.csv", dtype={"source_style": str, "target_style": str})
    keys = ["system", "setting", "source_style", "target_style"]
    means = card.astype({"source_style": str, "target_style": str}).groupby(keys)[
        [STYLE, CONTENT, NATURALNESS]].agg(["mean", "count"])
    assert len(summary) == len(means) * len(set(summary["metric"]))
    for row in summary[summary["metric"].isin([STYLE, CONTENT, NATURALNESS])].itertuples():
        expected = means.loc[(row.system, row.setting, row.source_style, row.target_style), row.metric]
        assert row.mean == pytest.approx(expected["mean"], abs=1e-12)
        assert row.n == expected["count"]
        assert row.ci_low <= row.mean <= row.ci_high and row.ci_low < row.ci_high
    first = md_table((run / "summary.md").read_text()).iloc[0]
    source, target = first["direction"].split(" → ")  # named by style: Mir's Yelp labels 0 = negative, 1 = positive
    assert (source, target) in {("negative", "positive"), ("positive", "negative")}
    named = card.groupby(["system", "setting", "source_name", "target_name"])[STYLE].mean()
    expected = named.loc[(first["system"], first["setting"], source, target)]
    assert ci_cell(first[STYLE])[0] == pytest.approx(expected, abs=5e-4)


def test_signatures_name_every_metric_column_and_the_installed_versions(run: Path, card: pd.DataFrame) -> None:
    signatures = json.loads((run / "signatures.json").read_text())
    assert {STYLE, CONTENT, NATURALNESS, "chrf@none", "bleu_mir@mask"} <= set(signatures)
    assert set(signatures) <= set(card.columns)
    identity = json.loads((run / "run.json").read_text())["classifiers"]["lr"]["identity"]
    assert f"clf:lr-{identity}" in signatures[STYLE].split("|")
    assert f"numpy:{np.__version__}" in signatures[STYLE].split("|")
    summary = pd.read_csv(run / "summary.csv")
    assert dict(zip(summary["metric"], summary["signature"], strict=True)) == {
        m: s for m, s in signatures.items() if m in set(summary["metric"])}


@pytest.fixture(scope="module")
def agreement(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "meta_eval" / "metaeval.csv")


SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _judged_rows(agreement: pd.DataFrame, card: pd.DataFrame, human: str) -> pd.DataFrame:
    """The rows a rating's statistics use: rated, with every metric judged against it (as metaeval.csv names them)."""
    judged = sorted(set(agreement.loc[agreement["rating"] == human, "metric"]))
    return card.dropna(subset=[human, *judged])


def _statistic(fn: Callable, x: pd.Series, y: pd.Series) -> float:
    """The scipy correlation, NaN where a side is constant (as the table leaves it undefined)."""
    return np.nan if x.nunique() < 2 or y.nunique() < 2 else float(fn(x, y).statistic)


@pytest.mark.parametrize("aspect, metric", [("style", STYLE), ("content", CONTENT), ("content", "chrf@none"),
                                            ("naturalness", NATURALNESS)])
def test_agreement_rows_equal_scipy_on_the_scorecard(agreement: pd.DataFrame, card: pd.DataFrame, aspect: str,
                                                     metric: str) -> None:
    """Without ``meta_eval:`` the run judges each metric against the rating of its aspect: every level and method of
    ``meta_eval/metaeval.csv`` recomputed with scipy on the scorecard's rows (lower-is-better sign-flipped)."""
    human = HUMAN[aspect]
    rated = _judged_rows(agreement, card, human)
    rows = agreement[(agreement["metric"] == metric) & (agreement["rating"] == human)].set_index(["level", "method"])
    assert set(rows["aspect"]) == {aspect} and len(rows) == 3 * 3
    x = rated[metric] * (-1 if _lower_is_better(metric) else 1)
    y = rated[human]
    groups = rated.assign(x=x).groupby(["system", "setting"])
    means = groups[["x", human]].mean()
    for method, fn in SCIPY.items():
        within = [_statistic(fn, part["x"], part[human]) for _, part in groups]
        expected = {"sentence": _statistic(fn, x, y), "within_system": np.nanmean(within),
                    "system": _statistic(fn, means["x"], means[human])}
        for level, value in expected.items():
            row = rows.loc[(level, method)]
            assert row["r"] == pytest.approx(value, abs=1e-12), (level, method)
            assert row["n"] == (len(means) if level == "system" else len(rated))
            assert row["lo"] < row["hi"]
    assert rows["n_inputs"].iloc[0] == rated["input"].nunique() and rows["n_groups"].iloc[0] == len(means)
    # sign-flipped, a lower-is-better metric agrees positively; style and content track the raters
    if metric in (STYLE, CONTENT):
        assert rows.loc[("sentence", "pearson"), "r"] > 0.2


def test_report_agreement_tables_print_the_scipy_correlation(run: Path, card: pd.DataFrame,
                                                             agreement: pd.DataFrame) -> None:
    report = (run / "report.md").read_text()
    html = (run / "report.html").read_text()
    for aspect, metric in (("style", STYLE), ("content", CONTENT)):
        human = HUMAN[aspect]
        rated = _judged_rows(agreement, card, human)
        sign = -1 if _lower_is_better(metric) else 1
        r = stats.pearsonr(sign * rated[metric], rated[human]).statistic
        table = md_table(report, f"### {aspect}: `{human}` (n = {len(rated)} rated transfers)")
        table["metric"] = table["metric"].str.replace(r" \(best.*\)$", "", regex=True)
        cell = table.set_index("metric").loc[metric, "sentence r [95% CI]"]
        assert ci_cell(cell)[0] == pytest.approx(r, abs=5e-4)
        row = agreement.query("metric == @metric and rating == @human and method == 'pearson' "
                              "and level == 'sentence'").iloc[0]
        assert cell == f"{row['r']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}]"
        assert cell in html


def _heading(report: str, start: str) -> str:
    return next(line for line in report.splitlines() if line.startswith(start))


def test_report_human_ratings_are_the_setting_means(run: Path, card: pd.DataFrame) -> None:
    report = (run / "report.md").read_text()
    table = md_table(report, "### Human ratings")
    means = card.groupby(["system", "setting"])[HUMAN["style"]].mean()
    for row in table.itertuples(index=False):
        mean, low, high = ci_cell(getattr(row, HUMAN["style"]))
        assert mean == pytest.approx(means[(row.system, row.setting)], abs=5e-4)
        assert low <= mean <= high


@pytest.mark.parametrize("stem, y", [("tradeoff_content", CONTENT), ("tradeoff_naturalness", NATURALNESS)])
def test_tradeoff_points_are_setting_means_and_the_frontier_is_brute_forced(
        run: Path, card: pd.DataFrame, stem: str, y: str) -> None:
    """One curve set per direction, named by style (Mir's Yelp: 0 = negative): each point the mean of its own
    direction's rows, the frontier brute-forced within that direction, the report's table the same points."""
    all_points = pd.read_csv(run / f"{stem}_points.csv")
    named = card.assign(direction=card["source_name"] + " → " + card["target_name"])
    means = named.groupby(["direction", "system", "setting"])[[STYLE, y]].mean()
    assert len(all_points) == len(means)
    assert set(all_points["direction"]) == {"negative → positive", "positive → negative"}
    report = (run / "report.md").read_text()
    for direction, points in all_points.groupby("direction", sort=False):
        points = points.reset_index(drop=True)
        for row in points.itertuples():
            assert row.x == pytest.approx(means.loc[(direction, row.system, row.setting), STYLE], abs=1e-12)
            assert row.y == pytest.approx(means.loc[(direction, row.system, row.setting), y], abs=1e-12)
            assert row.x_low <= row.x <= row.x_high and row.y_low <= row.y <= row.y_high
        better = (lambda a, b: a <= b) if _lower_is_better(y) else (lambda a, b: a >= b)
        xs, ys = points["x"].to_numpy(), points["y"].to_numpy()
        expected = [not any(xs[j] >= xs[i] and better(ys[j], ys[i]) and (xs[j] > xs[i] or ys[j] != ys[i])
                            for j in range(len(points))) for i in range(len(points))]
        assert points["pareto"].tolist() == expected
        best_y = points.loc[points["y"].idxmin() if _lower_is_better(y) else points["y"].idxmax()]
        assert best_y["pareto"], "the setting with the best y is always on the frontier"
        title = f"### Style (`{STYLE}`) vs {stem.split('_')[1].capitalize()}"
        heading = next(line for line in report.splitlines() if line.startswith(title)
                       and line.endswith(f", {direction}"))
        table = md_table(report, heading)
        assert table["pareto"].tolist() == [str(p) for p in points["pareto"]]
        assert [ci_cell(c)[0] for c in table[y]] == pytest.approx(points["y"].round(3).tolist(), abs=5e-4)


@pytest.mark.parametrize("column", [CONTENT, STYLE])
def test_worst_examples_are_the_k_worst_rows_of_each_system(run: Path, card: pd.DataFrame, column: str) -> None:
    report = (run / "report.md").read_text()
    table = md_table(report, next(line for line in report.splitlines()
                                  if line.startswith("### ") and line.endswith(f"`{column}`")))
    assert sorted(table["system"].unique()) == sorted(card["system"].unique())
    for system, shown in table.groupby("system"):
        values = card.loc[card["system"] == system, column].to_numpy()
        worst = np.sort(values)[::-1][:K_WORST] if _lower_is_better(column) else np.sort(values)[:K_WORST]
        assert sorted(float(v) for v in shown[column]) == pytest.approx(sorted(worst), abs=5e-4), system
        for _, row in shown.iterrows():  # each shown row is the scorecard's row
            match = card[(card["system"] == system) & (card["setting"] == row["setting"])
                         & (card["item"] == int(row["item"]))]
            assert float(row[column]) == pytest.approx(match[column].iloc[0], abs=5e-4)


# --- tsteval score: naturalness of human-written vs scrambled text -----------------------------------------------

def _scramble(text: str, rng: random.Random) -> str:
    """Word order shuffled and every word spelt backwards: text no person writes (a bag-of-words classifier, such
    as the unigram one, cannot see word order alone)."""
    words = text.split()
    rng.shuffle(words)
    return " ".join(w[::-1] for w in words)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """``tsteval score --table`` on real Yelp sentences: system "human" outputs held-out human sentences, system
    "scrambled" the same sentences scrambled; the human corpus is other Yelp sentences."""
    folder = tmp_path_factory.mktemp("score")
    inputs = read_slice(data_root / "yelp" / "sentiment.dev.0", 80)
    outputs = read_slice(data_root / "yelp" / "sentiment.dev.1", 80)
    (folder / "human.txt").write_text("\n".join(read_slice(data_root / "yelp" / "sentiment.dev.1", 400, 100)) + "\n")
    rng = random.Random(0)
    rows = [{"input": i, "output": o if system == "human" else _scramble(o, rng), "source_style": "0",
             "target_style": "1", "system": system, "setting": "default"}
            for system in ("human", "scrambled") for i, o in zip(inputs, outputs, strict=True)]
    pd.DataFrame(rows).to_csv(folder / "transfers.csv", index=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        assert main(["score", "--table", str(folder / "transfers.csv"), "--naturalness", "unigram", "--human",
                     str(folder / "human.txt"), "--content", "chrf", "--out", str(folder / "out"), "--quiet"]) == 0
    return folder / "out"


def test_human_text_is_more_natural_than_scrambled_text(scored: Path) -> None:
    card = pd.read_csv(scored / "scorecard.csv")
    means = card.groupby("system")[NATURALNESS].mean()
    assert means["human"] > 0.3 and means["scrambled"] < 0.25 and means["human"] - means["scrambled"] > 0.15
    summary = pd.read_csv(scored / "summary.csv").set_index(["system", "metric"])
    for system, mean in means.items():
        row = summary.loc[(system, NATURALNESS)]
        assert row["mean"] == pytest.approx(mean, abs=1e-12) and row["ci_low"] <= mean <= row["ci_high"]
    # more_natural: 1 where the output looks more human than its own (human-written) input
    assert card.groupby("system")["more_natural@unigram"].mean()["scrambled"] < 0.2


def test_score_outputs_agree_with_each_other(scored: Path) -> None:
    card = pd.read_parquet(scored / "scorecard.parquet")
    csv = pd.read_csv(scored / "scorecard.csv")
    np.testing.assert_allclose(csv["chrf@none"], card["chrf@none"], rtol=1e-12)
    first = card.iloc[0]
    assert first["chrf@none"] == pytest.approx(sacrebleu.sentence_chrf(first["output"], [first["input"]]).score)
    signatures = json.loads((scored / "signatures.json").read_text())
    assert {"chrf@none", NATURALNESS} <= set(signatures)
    table = md_table((scored / "summary.md").read_text()).set_index("system")
    mean = card.loc[card["system"] == "scrambled", NATURALNESS].mean()
    assert ci_cell(table.loc["scrambled", NATURALNESS])[0] == pytest.approx(mean, abs=5e-4)


def test_run_json_and_report_name_no_absolute_path(run: Path, data_root: Path) -> None:
    """Paths in what a run writes are relative: $TSTEVAL_DATA/... or relative to the checkout."""
    metadata = json.loads((run / "run.json").read_text())
    assert metadata["transfers_origin"].startswith("$TSTEVAL_DATA/"), metadata["transfers_origin"]
    assert not Path(metadata["manifest"]).is_absolute(), metadata["manifest"]
    for name in ("run.json", "report.md", "report.html"):
        assert str(data_root.resolve()) not in (run / name).read_text(), name


def test_committed_results_name_no_absolute_path() -> None:
    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    pattern = re.compile(r"/work/|/tmp/|/home/|/root/")
    found = [f"{p.relative_to(results)}" for p in results.rglob("*")
             if p.is_file() and p.suffix in {".md", ".json", ".csv", ".html", ".svg"}
             and pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, found
