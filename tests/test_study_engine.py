"""The study engine on a researcher's own rated table: a declaration read (errors naming file and line), scored
through the plan, its figures equal to scipy's on the same rows, its aggregates and rule recomputed by hand, and
the same run through ``tsteval meta-eval --study`` and the Python API."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import tsteval
from tsteval.core.errors import InputError
from tsteval.metaeval.statistics import cluster_resamples, resample_rows
from tsteval.metaeval.study.page import render
from tsteval.metaeval.study.rule import choose

ROWS = 40


def _rated(folder: Path, name: str, seed: int) -> Path:
    """A rated table: 10 inputs x 2 systems x 2 settings, content ratings that follow the overlap, with noise."""
    rng = np.random.default_rng(seed)
    words = "the food was good and the staff were kind to us all night".split()
    rows = []
    for item in range(10):
        source = " ".join(rng.choice(words, 8))
        for system in ("a", "b"):
            for setting in ("s1", "s2"):
                keep = rng.integers(2, 9)
                output = " ".join(source.split()[:keep] + list(rng.choice(words, 8 - keep)))
                rows.append({"input": source, "output": output, "source_style": "neg", "target_style": "pos",
                             "system": system, "setting": setting, "item": item,
                             "human_content": float(keep + rng.normal(0, 1.5))})
    path = folder / f"{name}.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _declaration(folder: Path, extra: str = "") -> Path:
    _rated(folder, "first", 0)
    _rated(folder, "second", 1)
    (folder / "costs.json").write_text(json.dumps({"columns": {"bleu@none": {"cpu_s_per_1000": 0.2},
                                                               "chrf@none": {"cpu_s_per_1000": 0.1},
                                                               "meteor@none": {"cpu_s_per_1000": 3.0}}}))
    path = folder / "mine.yaml"
    path.write_text(f"""kind: tsteval-study
title: My ratings
sets:
  - {{table: first.csv, label: first, ratings: {{human_content: content}}}}
  - {{table: second.csv, label: second, ratings: {{human_content: content}}}}
columns:
  - {{metrics: [bleu, chrf, meteor]}}
baselines: {{content: bleu@none}}
comparisons: [baseline, pairwise]
statistics: [pearson, spearman, pairwise_accuracy]
resamples: 200
aggregates: [mean, pooled]
rule: {{reference: {{content: bleu@none}}, costs: costs.json}}
out: out
{extra}""")
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tsteval.metaeval.study.runner.StudyResult]:
    folder = tmp_path_factory.mktemp("study")
    path = _declaration(folder)
    return folder, tsteval.run_study(path, log=lambda _m: None, cache=folder / "cache")


def _figure(data: dict, **where: object) -> dict:
    rows = [r for r in data["figures"] + data["aggregates"] if all(r.get(k) == v for k, v in where.items())]
    assert len(rows) == 1, where
    return rows[0]


def test_a_set_figure_is_scipys_on_the_same_rows(study: tuple) -> None:
    folder, result = study
    table = pd.read_csv(folder / "first.csv")
    scores = result.scores[result.scores["set"] == "first"]
    assert len(scores) == ROWS
    figure = _figure(result.data, set="first", column="chrf@none", level="sentence", statistic="pearson")
    expected = stats.pearsonr(scores["chrf@none"], table["human_content"]).statistic
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    assert figure["lo"] < figure["r"] < figure["hi"]
    spearman = _figure(result.data, set="first", column="chrf@none", level="sentence", statistic="spearman")
    assert spearman["r"] == pytest.approx(stats.spearmanr(scores["chrf@none"], table["human_content"]).statistic)


def test_pairwise_accuracy_counts_pairs_by_hand(study: tuple) -> None:
    folder, result = study
    table = pd.read_csv(folder / "second.csv")
    x = result.scores.loc[result.scores["set"] == "second", "bleu@none"].to_numpy()
    y = table["human_content"].to_numpy()
    agree = total = 0.0
    for i in range(len(y)):
        for j in range(i + 1, len(y)):
            if y[i] != y[j]:
                total += 1
                agree += 0.5 if x[i] == x[j] else float((x[i] - x[j]) * (y[i] - y[j]) > 0)
    figure = _figure(result.data, set="second", column="bleu@none", level="sentence", statistic="pairwise_accuracy")
    assert figure["r"] == pytest.approx(agree / total)


def test_the_mean_over_sets_is_the_mean_of_the_sets(study: tuple) -> None:
    _, result = study
    per_set = [_figure(result.data, set=s, column="meteor@none", level="system", statistic="pearson")["r"]
               for s in ("first", "second")]
    mean = _figure(result.data, set="mean", column="meteor@none", level="system", statistic="pearson")
    assert mean["r"] == pytest.approx(np.mean(per_set))
    assert mean["sets"] == ["first", "second"]


def test_a_named_group_aggregates_its_own_sets(tmp_path: Path) -> None:
    """``groups:`` puts a mean over the named sets in place of the mean over all; a label that is no set's is an
    error naming the line."""
    path = _declaration(tmp_path, "groups: {the first two: [first, second]}")
    _rated(tmp_path, "third", 2)
    path.write_text(path.read_text().replace("  - {table: second.csv", "  - {table: third.csv, label: third, "
                                             "ratings: {human_content: content}}\n  - {table: second.csv"))
    data = tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache").data
    assert {r["set"] for r in data["aggregates"]} == {"mean over the first two", "pooled over the first two"}
    mean = _figure(data, set="mean over the first two", column="chrf@none", level="sentence", statistic="pearson")
    assert mean["sets"] == ["first", "second"]
    assert mean["r"] == pytest.approx(np.mean([_figure(data, set=s, column="chrf@none", level="sentence",
                                                       statistic="pearson")["r"] for s in ("first", "second")]))
    assert "## Mean over the first two: content" in render(data)
    path.write_text(path.read_text().replace("[first, second]}", "[first, secnd]}"))
    with pytest.raises(InputError, match=r"mine.yaml:\d+: groups.*unknown .*'secnd'.*did you mean 'second'"):
        tsteval.load_study(path)


def test_the_pooled_figure_reads_every_row(study: tuple) -> None:
    folder, result = study
    ratings = pd.concat([pd.read_csv(folder / f"{s}.csv") for s in ("first", "second")])["human_content"]
    pooled = _figure(result.data, set="pooled", column="chrf@none", level="sentence", statistic="pearson")
    assert pooled["r"] == pytest.approx(stats.pearsonr(result.scores["chrf@none"], ratings).statistic)


def test_the_rule_gain_is_the_mean_of_per_set_differences(study: tuple) -> None:
    _, result = study
    pick = result.data["rule"]["groups"][0]["picks"][0]
    assert pick["reference"] == "bleu@none"
    for row in pick["columns"]:
        per_set = [_figure(result.data, set=s, column=row["column"], level="sentence", statistic="pearson")["r"]
                   - _figure(result.data, set=s, column="bleu@none", level="sentence", statistic="pearson")["r"]
                   for s in ("first", "second")]
        assert row["gain"] == pytest.approx(np.mean(per_set))
        assert row["candidate"] == (row["gain"] >= 0.02 and row["lo"] > 0 and not row["worse_on"])
    candidates = [r for r in pick["columns"] if r["candidate"]]
    expected = min((r for r in candidates if r["tied"]), key=lambda r: r["cost"])["column"] if candidates \
        else "bleu@none"
    assert pick["chosen"] == expected


def test_ties_go_to_the_cheapest_and_no_candidate_keeps_the_reference() -> None:
    gain, low = np.array([0.05, 0.06]), np.array([0.01, 0.02])
    ok = np.array([True, True])
    assert choose(gain, low, ok, np.array([-0.02, 0.0]), np.array([0.01, 0.0]), np.array([1.0, 9.0])) == 0
    assert choose(gain, low, ok, np.array([-0.02, 0.0]), np.array([-0.01, 0.0]), np.array([1.0, 9.0])) == 1
    assert choose(np.array([0.01, 0.015]), low, ok, low, low, np.array([1.0, 1.0])) is None
    assert choose(gain, np.array([-0.01, -0.001]), ok, low, low, np.array([1.0, 1.0])) is None


def test_the_page_renders_the_json_with_a_signature_under_every_table(study: tuple) -> None:
    folder, result = study
    target = result.write()
    assert target == folder / "out"
    data = json.loads((target / "study.json").read_text())
    page = (target / "study.md").read_text()
    assert render(data) == page
    tables = [i for i, line in enumerate(page.splitlines()) if line.startswith("|---")]
    lines = page.splitlines()
    with_intervals = 0
    for start in tables:
        end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
        if any(" \\[" in line for line in lines[start:end]):  # a table of figures with intervals
            with_intervals += 1
            assert lines[end + 1].startswith("*") and "resamples clustered by input" in lines[end + 1]
    assert with_intervals >= 10
    assert pd.read_parquet(target / "scores.parquet").shape[0] == 2 * ROWS


def test_the_command_line_writes_the_same_page(study: tuple, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tsteval.cli.main import main

    folder, result = study
    out = tmp_path / "cli"
    assert main(["meta-eval", "--study", str(folder / "mine.yaml"), "--out", str(out), "--quiet"]) == 0
    cli = json.loads((out / "study.json").read_text())
    assert cli["figures"] == result.data["figures"]


@pytest.mark.parametrize(("extra", "message"), [
    ("resampels: 10", "mine.yaml:15: resampels: unknown key 'resampels' (fix: did you mean 'resamples'?)"),
    ("statistics: [pearson, spearmen]", "unknown statistics 'spearmen'"),
    ("include: [mine.yaml]", "includes itself"),
    ("describe: no_colon", "describe: expected MODULE:FUNCTION, not 'no_colon'"),
])
def test_a_bad_declaration_names_the_file_and_line(tmp_path: Path, extra: str, message: str) -> None:
    path = _declaration(tmp_path, extra)
    text = path.read_text()
    if extra.startswith("statistics"):
        path.write_text(text.replace("statistics: [pearson, spearman, pairwise_accuracy]\n", ""))
    with pytest.raises(InputError) as error:
        tsteval.load_study(path)
    assert message in str(error.value)


def test_named_pairs_are_the_only_pairwise_comparisons_and_a_set_over_the_same_inputs_shares_the_draws(
        tmp_path: Path) -> None:
    """``pairs:`` compares those pairs only (first minus second, on the same draws); a pair no set judges, or pairs
    without ``pairwise``, is an error naming the file; a second set of the same table over the same inputs is
    resampled by the first one's draws (the same intervals), and pooled with its clusters, while another table's draws
    differ."""
    path = _declaration(tmp_path, "pairs: [[meteor@none, chrf@none]]")
    path.write_text(path.read_text().replace("  - {table: second.csv", "  - {table: first.csv, label: again, ratings: "
                                             "{human_content: content}}\n  - {table: second.csv"))
    result = tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")
    data, scores = result.data, result.scores
    pairwise = [r for r in data["comparisons"] if r["comparison"] == "pairwise"]
    assert {(r["column"], r["against"]) for r in pairwise} == {("meteor@none", "chrf@none")}
    first, again, second = ({(r["column"], r["level"], r["statistic"]): r for r in data["figures"] if r["set"] == s}
                            for s in ("first", "again", "second"))
    key = ("meteor@none", "sentence", "pearson")
    assert (first[key]["lo"], first[key]["hi"]) == (again[key]["lo"], again[key]["hi"])
    assert (first[key]["lo"], first[key]["hi"]) != (second[key]["lo"], second[key]["hi"])
    diff = next(r for r in pairwise if r["set"] == "again" and r["level"] == "sentence" and r["statistic"] ==
                "pearson")
    assert diff["diff"] == pytest.approx(again[key]["r"] - again[("chrf@none", "sentence", "pearson")]["r"])
    # pooled, "again" is clustered with "first" by input: numpy's Pearson on the engine's draws of those clusters

    ratings = pd.concat([pd.read_csv(tmp_path / f"{s}.csv") for s in ("first", "first", "second")])
    label = scores["set"].replace({"again": "first"})
    codes = pd.factorize(pd.Index(label + "\x00" + scores["input"].astype(str)), sort=True)[0]
    x, y = scores["meteor@none"].to_numpy(), ratings["human_content"].to_numpy()
    boot = [np.corrcoef(x[rows], y[rows])[0, 1] for rows in (resample_rows(codes, d) for d in
                                                              cluster_resamples(codes, 200, [0, 3]))]
    pooled = _figure(data, set="pooled", column="meteor@none", level="sentence", statistic="pearson")
    assert (pooled["lo"], pooled["hi"]) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])), abs=1e-12)
    text = path.read_text()
    path.write_text(text.replace("[[meteor@none, chrf@none]]", "[[meteor@none, rouge@none]]"))
    with pytest.raises(InputError, match="mine.yaml: pairs: meteor@none minus rouge@none: no set has both"):
        tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")
    path.write_text(text.replace("comparisons: [baseline, pairwise]", "comparisons: [baseline]"))
    with pytest.raises(InputError, match=r"mine.yaml:\d+: pairs: names pairs, and comparisons has no pairwise"):
        tsteval.load_study(path)


def test_a_missing_rating_column_is_named(tmp_path: Path) -> None:
    path = _declaration(tmp_path)
    path.write_text(path.read_text().replace("first.csv, label: first, ratings: {human_content: content}",
                                             "first.csv, label: first, ratings: {human_contnet: content}"))
    with pytest.raises(InputError, match="no rating column 'human_contnet'.*did you mean 'human_content'"):
        tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")


def system_a(data: object) -> np.ndarray:
    """A ``rows:`` hook: system a's rows."""
    return (data.frame["system"] == "a").to_numpy()


def one_row(data: object) -> list[bool]:
    """A ``rows:`` hook that keeps the wrong number of rows."""
    return [True]


def mean_bleu(scores: pd.DataFrame, sets: dict) -> list[dict]:
    """A ``describe:`` hook: the mean BLEU over every set's rows."""
    return [{"column": "bleu@none", "sets": ", ".join(sets), "mean": float(scores["bleu@none"].mean())}]


def test_a_set_keeps_the_rows_a_hook_names_and_a_hook_describes_the_scores(tmp_path: Path) -> None:
    """``rows:`` keeps system a's 20 rows of the second table (its figure scipy's on those rows of the raw file);
    ``describe:``'s rows are in the JSON and in a table on the page; a hook that keeps the wrong rows is named."""
    path = _declaration(tmp_path, 'describe: "test_study_engine:mean_bleu"')
    text = path.read_text().replace("label: second, ratings: {human_content: content}}",
                                    'label: second, ratings: {human_content: content}, rows: "test_study_engine:'
                                    'system_a"}')
    path.write_text(text)
    result = tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")
    second = result.scores[result.scores["set"] == "second"].astype({"item": int})
    raw = pd.read_csv(tmp_path / "second.csv")
    rows = second.merge(raw[raw["system"] == "a"], on=["system", "setting", "item"], validate="1:1")
    assert len(rows) == len(second) == 20
    figure = _figure(result.data, set="second", column="bleu@none", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(stats.pearsonr(rows["bleu@none"], rows["human_content"]).statistic)
    mean = float(result.scores["bleu@none"].mean())
    assert result.data["describe"] == [{"column": "bleu@none", "sets": "first, second", "mean": pytest.approx(mean)}]
    assert f"## Description\n\n| column | sets | mean |\n|---|---|---|\n| bleu@none | first, second | {mean:.3f} |" \
        in result.markdown()
    path.write_text(text.replace("system_a", "one_row"))
    with pytest.raises(tsteval.core.errors.TstevalError, match="one_row' gave bool .1,., not a bool per row of set "
                       "second .40."):
        tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")


def test_an_annotate_study_folder_is_a_set(tmp_path: Path) -> None:
    """A study planned and rated with tsteval annotate is a set of a declaration: its mean ratings per pair, the
    pairs' texts scored through the plan; the figure equals scipy's on the study's own ratings."""
    from test_annotate_loop import _planned, _rate

    from tsteval.metaeval.rated.loop import study_ratings

    _, study, by_pair = _planned(tmp_path, "content,fluency", 3)
    _rate(study, by_pair, noise=0.6, seed=1)
    path = tmp_path / "s.yaml"
    path.write_text("kind: tsteval-study\ntitle: My study\nsets: [{study: study, label: mine}]\n"
                    "columns: [{metrics: [chrf]}]\nresamples: 100\n")
    result = tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")
    means, aspects = study_ratings(study)
    assert aspects == {"human_content": "content", "human_fluency": "naturalness"}
    scores = result.scores.astype({"item": str}).merge(means.astype({"item": str}),
                                                       on=["system", "setting", "item"])
    assert len(scores) == len(means) == 48
    figure = _figure(result.data, set="mine", column="chrf@none", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(stats.pearsonr(scores["chrf@none"], scores["human_content"]).statistic)


def test_a_column_without_a_measured_cost_is_an_error_on_a_page_and_last_in_the_loop(study: tuple,
                                                                                    tmp_path: Path) -> None:
    """A page's candidate needs a measured cost; ``measured_only=False`` (the study loop) prices it above every
    measured column, so a tie never goes to it."""
    from dataclasses import replace

    from tsteval.core.errors import InputError
    from tsteval.metaeval.study.rule import apply_rule

    _, result = study
    sets = {s["label"]: s for s in result.data["sets"]}
    (tmp_path / "costs.json").write_text(json.dumps({"columns": {"meteor@none": {"cpu_s_per_1000": 3.0}}}))
    rule = replace(result.study.rule, reference={"content": "meteor@none"}, costs=tmp_path / "costs.json")
    unmeasured = replace(result.study, rule=rule)  # meteor, the reference, is the worst column here
    with pytest.raises(InputError, match="no cost for the candidate"):
        apply_rule(unmeasured, result.evidence, sets)
    pick = apply_rule(unmeasured, result.evidence, sets, measured_only=False)["groups"][0]["picks"][0]
    tied = [r for r in pick["columns"] if r["candidate"] and r["tied"]]
    assert tied and all(r["cost"] is None for r in pick["columns"]) and pick["reference_cost"] == 3.0
    assert pick["chosen"] == max(tied, key=lambda r: r["gain"])["column"]  # all unmeasured: the larger gain
    gain, low, ok = np.array([0.05, 0.06]), np.array([0.01, 0.02]), np.array([True, True])
    assert choose(gain, low, ok, np.array([-0.02, 0.0]), np.array([0.01, 0.0]), np.array([np.inf, 9.0])) == 1


def test_the_rule_weighs_no_published_score(tmp_path: Path) -> None:
    """A set's published column is no candidate, however well it does, and needs no cost (RUSSE's and InFormal's
    authors' scores beside ours on the multilingual page)."""
    from tsteval.metaeval.study.declaration import Rule
    from tsteval.metaeval.study.rule import _apply
    from tsteval.metaeval.study.runner import SetEvidence
    from tsteval.metaeval.tables import MetricColumn

    columns = [MetricColumn("chrf@none", "content", True), MetricColumn("e5@none", "content", True),
               MetricColumn("labse@authors", "content", True, source="published:InFormal")]
    rng = np.random.default_rng(0)
    point = np.zeros((3, 4, 3))
    point[0, 0] = [0.30, 0.40, 0.60]  # sentence-level Pearson of chrF, e5, the authors' LaBSE
    boot = point[None] + rng.normal(0, 0.005, (200, 3, 4, 3))
    evidence = [SetEvidence("InFormal-hi", "content", "content", columns, point, boot, {}, True)]
    (tmp_path / "costs.json").write_text(json.dumps({"columns": {"chrf@none": {"cpu_s_per_1000": 0.2},
                                                                 "e5@none": {"cpu_s_per_1000": 99.0}}}))
    rule = Rule(reference={"content": "chrf@none"}, costs=tmp_path / "costs.json")
    pick = _apply(rule, "content", "chrf@none", evidence, 0, {"chrf@none": 0.2, "e5@none": 99.0},
                  str(rule.costs), True)
    assert pick["chosen"] == "e5@none" and [r["column"] for r in pick["columns"]] == ["e5@none"]


def test_a_metric_past_its_first_version_is_scored_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The column cache's key holds the versions of a group's metrics past the first: a bumped metric misses the
    cache, a group without one keeps its key."""
    import dataclasses
    from types import MappingProxyType, SimpleNamespace

    from tsteval.metaeval.study.declaration import ColumnGroup
    from tsteval.metaeval.study.scoring import _key
    from tsteval.metrics import registry

    data = SimpleNamespace(frame=pd.DataFrame({"input": ["a b"], "output": ["a c"]}), language="en",
                           entry=SimpleNamespace(name="mine", style_corpus=None))
    neural, lexical = ColumnGroup(metrics=("sbert", "bleu")), ColumnGroup(metrics=("bleu",))
    before = _key(data, neural, 0), _key(data, lexical, 0)
    sbert = registry.METRICS["sbert"]
    bumped = MappingProxyType({**registry.METRICS, "sbert": dataclasses.replace(sbert, version=sbert.version + 1)})
    monkeypatch.setattr(registry, "METRICS", bumped)
    assert _key(data, neural, 0) != before[0] and _key(data, lexical, 0) == before[1]


def test_the_scoring_warnings_reach_the_page_and_survive_the_cache(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty output in the first table: the run's warning about it is in that set's JSON and on the page, and a
    rerun that reads every column from the cache (scoring would fail) keeps it."""
    from tsteval.metaeval.study import scoring

    path = _declaration(tmp_path)
    first = pd.read_csv(tmp_path / "first.csv")
    first.loc[3, "output"] = ""
    first.to_csv(tmp_path / "first.csv", index=False)
    runs = [tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache")]
    monkeypatch.setattr(scoring, "_evaluate", lambda *a, **k: pytest.fail("scored again"))
    runs.append(tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache"))
    for result in runs:
        notices = {s["label"]: s.get("notices", []) for s in result.data["sets"]}
        assert notices["second"] == [] and any("empty" in n for n in notices["first"]), notices
        page = result.markdown()
        assert "Warnings of the scoring runs:" in page
        assert all(f"- first: {tsteval.core.markdown.escape(n)}" in page for n in notices["first"])
    assert runs[0].data["sets"][0]["notices"] == runs[1].data["sets"][0]["notices"]


def test_a_column_masks_with_the_authors_lexicon_only_where_the_set_has_one(tmp_path: Path, data_root: Path) -> None:
    """``options: {lexicon: published}`` reads the file Mir et al. published (their set carries it); on a set without
    one, or with a value other than fitted or published, the error names the set and the fix."""
    from tsteval.metaeval.study.declaration import ColumnGroup, StudySet
    from tsteval.metaeval.study.scoring import _lexicon, load_set, score_group

    mir = load_set(StudySet(name="mir", label="Mir"))
    assert _lexicon(mir, "published") == data_root / "mir2019" / "style_lexicon" / "style_words_and_weights.json"
    assert type(_lexicon(mir, "fitted")).__name__ == "LexiconSpec"
    mine = load_set(StudySet(name="mine", label="mine", table=_rated(tmp_path, "mine", 0),
                             ratings={"human_content": "content"}))
    with pytest.raises(InputError, match="set mine: lexicon: published, and the set has no published lexicon"):
        _lexicon(mine, "published")
    with pytest.raises(InputError, match="lexicon 'ours' is neither fitted nor published"):
        score_group(mine, ColumnGroup(metrics=("bleu",), options={"lexicon": "ours"}), 0, cache=tmp_path / "cache")


def test_a_rating_named_in_baselines_is_compared_with_its_own_baseline(tmp_path: Path) -> None:
    """``baselines`` keyed by a rating column wins over its aspect's: every comparison of ``human_content`` in a set
    is against chrF, the difference the two figures' difference."""
    path = _declaration(tmp_path)
    path.write_text(path.read_text().replace("baselines: {content: bleu@none}",
                                             "baselines: {content: bleu@none, human_content: chrf@none}"))
    data = tsteval.run_study(path, log=lambda _m: None, cache=tmp_path / "cache").data
    base = [r for r in data["comparisons"] if r["comparison"] == "baseline" and r["rating"] == "human_content"]
    assert base and {r["against"] for r in base} == {"chrf@none"}  # the sets' rows; the aspect means keep bleu
    row = next(r for r in base if r["set"] == "first" and r["column"] == "bleu@none" and r["level"] == "sentence"
               and r["statistic"] == "pearson")
    r = {c: _figure(data, set="first", column=c, rating="human_content", level="sentence",
                    statistic="pearson")["r"] for c in ("bleu@none", "chrf@none")}
    assert row["diff"] == pytest.approx(r["bleu@none"] - r["chrf@none"], abs=1e-12)


def test_an_unknown_lexicon_is_refused_when_the_declaration_is_read(tmp_path: Path) -> None:
    path = _declaration(tmp_path)
    path.write_text(path.read_text().replace("  - {metrics: [bleu, chrf, meteor]}",
                                             "  - {metrics: [bleu], modifications: [mask], options: {lexicon: ours}}"))
    with pytest.raises(InputError, match=r"mine\.yaml:\d+: .*lexicon 'ours' is neither fitted nor published"):
        tsteval.load_study(path)
