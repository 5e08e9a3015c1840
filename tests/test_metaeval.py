"""Meta-evaluation: the clustered bootstrap, the three levels, Williams' t, the Lai reader, counts and bad input,
each against an independent computation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsteval.cli.main import main
from tsteval.core.errors import InputError, TstevalError
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.statistics import (
    LEVELS,
    bootstrap_statistics,
    cluster_resamples,
    clustered_bootstrap,
    percentile_interval,
    resample_rows,
)
from tsteval.scorecard import Scorecard

SIGNATURES = {"bleu@none": "metric:bleu", "chrf@none": "metric:chrf", "wmd@none": "metric:wmd",
              "target_prob@clf": "metric:target_prob", "sti@clf": "metric:sti"}


def make_card(n_inputs: int = 30, systems: tuple[str, ...] = ("a", "b", "c", "d"), seed: int = 0) -> Scorecard:
    """Transfers of ``systems`` on shared inputs, with content/style ratings and metrics that track them noisily;
    each input has its own offset (rows sharing an input are correlated, as in real ratings)."""
    rng = np.random.default_rng(seed)
    rows = []
    offset = rng.normal(0, 1, n_inputs)
    for k, system in enumerate(systems):
        for i in range(n_inputs):
            content = offset[i] + 0.3 * k + rng.normal(0, 1)
            style = rng.normal(0, 1) + 0.2 * k
            rows.append({"system": system, "setting": "default", "item": i, "input": f"input {i}",
                         "output": f"out {system} {i}", "source_style": "0", "target_style": "1",
                         "human_content": content, "human_style": style,
                         "bleu@none": content + rng.normal(0, 1), "chrf@none": content + rng.normal(0, 0.5),
                         "wmd@none": -content + rng.normal(0, 1.5), "target_prob@clf": style + rng.normal(0, 1),
                         "sti@clf": style + rng.normal(0, 0.7)})
    return Scorecard(pd.DataFrame(rows), dict(SIGNATURES))


RATINGS = {"human_content": "content", "human_style": "style"}


def test_resample_rows_takes_whole_clusters() -> None:
    clusters = np.array([2, 0, 1, 0, 2, 2])
    rows = resample_rows(clusters, np.array([2, 2, 1]))
    # by hand: cluster 2 is rows 0, 4, 5 (twice), cluster 1 is row 2
    assert sorted(rows.tolist()) == sorted([0, 4, 5, 0, 4, 5, 2])
    assert resample_rows(np.array([0, 1, 2]), np.array([1, 1, 0])).tolist() == [1, 1, 0]


def test_clustered_bootstrap_matches_a_hand_rolled_loop() -> None:
    card = make_card(n_inputs=12, systems=("a", "b", "c"))
    frame = card.frame
    x = frame[["bleu@none", "chrf@none"]].to_numpy()
    y = frame["human_content"].to_numpy()
    clusters = pd.factorize(frame["input"], sort=True)[0]
    groups = pd.factorize(frame["system"], sort=True)[0]
    draws = cluster_resamples(clusters, 25, seed=3)
    boot = bootstrap_statistics(x, y, groups, clusters, draws, ("pearson", "kendall"))
    for b, draw in enumerate(draws):
        names = sorted(frame["input"].unique())
        picked = pd.concat([frame[frame["input"] == names[c]] for c in draw])  # every row of each drawn input
        for j, col in enumerate(["bleu@none", "chrf@none"]):
            assert boot[b, 0, 0, j] == pytest.approx(stats.pearsonr(picked[col], picked["human_content"])[0])
            assert boot[b, 0, 1, j] == pytest.approx(stats.kendalltau(picked[col], picked["human_content"])[0])
            per_system = [stats.pearsonr(g[col], g["human_content"])[0] for _, g in picked.groupby("system")]
            assert boot[b, 1, 0, j] == pytest.approx(np.mean(per_system))
            means = picked.groupby("system")[[col, "human_content"]].mean()
            assert boot[b, 2, 0, j] == pytest.approx(stats.pearsonr(means[col], means["human_content"])[0])
    low, high = percentile_interval(boot)
    assert low[0, 0, 0] == pytest.approx(np.percentile(boot[:, 0, 0, 0], 2.5))
    assert high[0, 0, 0] == pytest.approx(np.percentile(boot[:, 0, 0, 0], 97.5))


def test_singleton_clusters_are_the_plain_bootstrap() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 1)), rng.normal(size=40)
    clusters = np.arange(40)
    draws = cluster_resamples(clusters, 50, seed=7)
    plain = np.random.default_rng(7).integers(0, 40, size=(50, 40))  # the same generator, one row index per draw
    boot = bootstrap_statistics(x, y, np.zeros(40, dtype=int), clusters, draws, ("pearson",))
    expected = [stats.pearsonr(x[idx, 0], y[idx])[0] for idx in plain]
    assert boot[:, 0, 0, 0] == pytest.approx(expected)


def test_a_statistic_beside_the_tables_gets_the_tables_interval() -> None:
    """:func:`clustered_bootstrap` of a Pearson statistic, with the engine's seed, is the engine's sentence-level
    interval of that column: the same clustered draws, the same percentiles (one resampler for both)."""
    card = make_card(n_inputs=25)
    table = meta_evaluate(card, RATINGS, n_resamples=200, seed=4, methods=("pearson",)).table
    row = table.query("metric == 'bleu@none' and level == 'sentence' and rating == 'human_content'").iloc[0]
    x, y = card.frame["bleu@none"].to_numpy(float), card.frame["human_content"].to_numpy(float)
    pearson = {"r": lambda rows: stats.pearsonr(x[rows], y[rows])[0]}
    value, low, high = clustered_bootstrap(card.frame["input"], pearson, 200, seed=4)["r"]
    assert (value, low, high) == pytest.approx((row["r"], row["lo"], row["hi"]), abs=1e-12)


def test_duplicated_rows_leave_clustered_intervals_unchanged() -> None:
    """Doubling every input's rows changes no correlation and, clustered, no interval; a row bootstrap would
    narrow it (it takes the copies for independent evidence)."""
    card = make_card(n_inputs=25)
    once = meta_evaluate(card, RATINGS, n_resamples=200, seed=1, methods=("pearson",))
    twice = meta_evaluate(Scorecard(pd.concat([card.frame, card.frame], ignore_index=True), card.signatures),
                          RATINGS, n_resamples=200, seed=1, methods=("pearson",))
    for column in ("r", "lo", "hi"):
        assert twice.table[column].to_numpy() == pytest.approx(once.table[column].to_numpy())
    frame = card.frame
    doubled = pd.concat([frame, frame], ignore_index=True)
    rows = np.random.default_rng(1).integers(0, len(doubled), size=(200, len(doubled)))
    naive = [stats.pearsonr(doubled["bleu@none"].to_numpy()[r], doubled["human_content"].to_numpy()[r])[0]
             for r in rows]
    row = once.table.query("metric == 'bleu@none' and level == 'sentence'").iloc[0]
    assert np.percentile(naive, 97.5) - np.percentile(naive, 2.5) < row["hi"] - row["lo"]


def test_point_estimates_match_scipy_at_every_level() -> None:
    card = make_card()
    result = meta_evaluate(card, RATINGS, n_resamples=20)
    frame = card.frame
    for method, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        rows = result.table[(result.table["metric"] == "wmd@none") & (result.table["method"] == method)]
        got = dict(zip(rows["level"], rows["r"], strict=True))
        # wmd is lower-is-better: its correlations are sign-flipped
        assert got["sentence"] == pytest.approx(-fn(frame["wmd@none"], frame["human_content"])[0])
        within = [fn(g["wmd@none"], g["human_content"])[0] for _, g in frame.groupby("system")]
        assert got["within_system"] == pytest.approx(-np.mean(within))
        means = frame.groupby("system")[["wmd@none", "human_content"]].mean()
        assert got["system"] == pytest.approx(-fn(means["wmd@none"], means["human_content"])[0])
    assert set(result.table["level"]) == set(LEVELS)


def test_correlate_pairs_any_column_with_any_rating_and_flips_the_lower_is_better() -> None:
    """A content column against the style rating (no aspect pairs them) and a lower-is-better one: scipy's r, the
    sign flipped for ``wmd``, and the same interval as the meta-evaluation gives the same column and rating."""
    from tsteval.metaeval.engine import correlate

    frame = make_card().frame
    table = correlate(frame, ["chrf@none", "wmd@none"], ["human_style", "human_content"], lower_is_better=["wmd@none"],
                      methods=("pearson", "spearman"), n_resamples=50)
    rows = table[table["level"] == "sentence"].set_index(["metric", "rating", "method"])
    assert rows.loc[("chrf@none", "human_style", "pearson"), "r"] == pytest.approx(
        stats.pearsonr(frame["chrf@none"], frame["human_style"])[0])
    assert rows.loc[("wmd@none", "human_content", "spearman"), "r"] == pytest.approx(
        -stats.spearmanr(frame["wmd@none"], frame["human_content"])[0])
    full = meta_evaluate(make_card(), RATINGS, n_resamples=50, methods=("pearson", "spearman")).table
    same = full[(full["metric"] == "wmd@none") & (full["rating"] == "human_content") & (full["level"] == "sentence")
                & (full["method"] == "spearman")].iloc[0]
    assert (same["lo"], same["hi"]) == pytest.approx((rows.loc[("wmd@none", "human_content", "spearman"), "lo"],
                                                      rows.loc[("wmd@none", "human_content", "spearman"), "hi"]))


def williams_by_formula(r12: float, r13: float, r23: float, n: int) -> float:
    """Williams' t (Steiger 1980 eq. 7; Graham & Baldwin 2014) with |R| as the determinant of the 3x3 matrix."""
    det = np.linalg.det(np.array([[1, r12, r13], [r12, 1, r23], [r13, r23, 1]]))
    rbar = (r12 + r13) / 2
    return (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(
        2 * det * (n - 1) / (n - 3) + rbar ** 2 * (1 - r23) ** 3)


def test_williams_rows_match_the_formula() -> None:
    card = make_card()
    result = meta_evaluate(card, RATINGS, n_resamples=50)
    frame = card.frame
    row = result.baseline.query("metric == 'chrf@none' and level == 'sentence' and method == 'pearson'").iloc[0]
    assert row["baseline"] == "bleu@none"
    r1 = stats.pearsonr(frame["chrf@none"], frame["human_content"])[0]
    r2 = stats.pearsonr(frame["bleu@none"], frame["human_content"])[0]
    r12 = stats.pearsonr(frame["chrf@none"], frame["bleu@none"])[0]
    t = williams_by_formula(r1, r2, r12, len(frame))
    assert row["williams_t"] == pytest.approx(t)
    assert row["p"] == pytest.approx(2 * stats.t.sf(abs(t), len(frame) - 3))
    assert row["diff"] == pytest.approx(r1 - r2)
    assert row["lo"] < row["diff"] < row["hi"]
    assert row["verdict"] == ("yes" if row["lo"] > 0 else "no" if row["hi"] < 0 else "not significant")
    style = result.baseline[result.baseline["rating"] == "human_style"]
    assert set(style["baseline"]) == {"target_prob@clf"}
    assert style.query("method == 'kendall'")["williams_t"].isna().all()  # Williams is for product-moment r


def test_unrated_rows_are_counted_not_dropped_silently() -> None:
    card = make_card()
    card.frame.loc[[0, 5, 9], "human_content"] = np.nan
    result = meta_evaluate(card, RATINGS, n_resamples=20)
    counts = result.counts.set_index("rating")
    assert counts.loc["human_content", "unrated"] == 3
    assert counts.loc["human_content", "used"] == len(card.frame) - 3
    assert counts.loc["human_style", "unrated"] == 0
    row = result.table.query("rating == 'human_content' and level == 'sentence'").iloc[0]
    assert row["n"] == len(card.frame) - 3


def test_duplicate_outputs_are_counted() -> None:
    card = make_card(n_inputs=10)
    card.frame.loc[card.frame["system"] == "b", "output"] = card.frame.loc[card.frame["system"] == "a", "output"].values
    result = meta_evaluate(card, RATINGS, n_resamples=10)
    assert result.info["duplicate_outputs"] == 10
    assert (result.counts["duplicate_outputs"] == 10).all()


def test_metaeval_csv_seam_and_ratings_join(tmp_path: Path) -> None:
    card = make_card()
    ratings = card.frame[["item", "system", "human_content"]].sample(frac=1.0, random_state=0)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    scored = Scorecard(card.frame.drop(columns=["human_content", "human_style"]), card.signatures)
    scored.save(tmp_path / "run")
    code = main(["meta-eval", "--quiet", "--scorecard", str(tmp_path / "run"), "--ratings",
                 str(tmp_path / "ratings.csv"), "--rating", "content=human_content", "--key", "item,system",
                 "--resamples", "30", "--out", str(tmp_path / "meta")])
    assert code == 0
    out = tmp_path / "meta"
    for name in ("metaeval.csv", "baseline.csv", "counts.csv", "metaeval.md", "metaeval.png", "metaeval.svg"):
        assert (out / name).is_file(), name
    table = pd.read_csv(out / "metaeval.csv")
    row = table.query("metric == 'chrf@none' and level == 'sentence' and method == 'spearman'").iloc[0]
    assert row["r"] == pytest.approx(stats.spearmanr(card.frame["chrf@none"], card.frame["human_content"])[0])
    assert row["n"] == len(card.frame) and row["n_inputs"] == 30
    assert "(best)" in (out / "metaeval.md").read_text()
    from tsteval.metaeval.pages import markdown, read

    again = read(out)  # the folder read back renders the same page
    assert markdown(again, "Meta-evaluation") + "\n" == (out / "metaeval.md").read_text()


def test_markdown_escapes_untrusted_names() -> None:
    card = make_card(n_inputs=10, systems=("<script>x</script>", "b|c", "d"))
    text = meta_evaluate(card, RATINGS, n_resamples=10).markdown("a <b> title")
    assert "<script>" not in text and "<b>" not in text


def test_unknown_rating_column_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    card = make_card()
    card.save(tmp_path / "run")
    card.frame[["item", "system", "human_content"]].to_csv(tmp_path / "ratings.csv", index=False)
    code = main(["meta-eval", "--scorecard", str(tmp_path / "run"), "--ratings", str(tmp_path / "ratings.csv"),
                 "--rating", "content=human_contnet", "--out", str(tmp_path / "meta")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "ratings.csv" in err and "human_contnet" in err and "fix:" in err
    assert not (tmp_path / "meta").exists()


def test_keys_that_do_not_join(tmp_path: Path) -> None:
    card = make_card()
    ratings = card.frame[["item", "system", "human_content"]].assign(system=lambda f: f["system"] + "-renamed")
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    with pytest.raises(InputError, match=r"ratings\.csv.*no rating row joins.*fix: check the --key"):
        meta_evaluate(card, {"human_content": "content"}, tmp_path / "ratings.csv", ("item", "system"))
    with pytest.raises(InputError, match=r"ratings\.csv.*lacks the key columns \['setting'\]"):
        meta_evaluate(card, {"human_content": "content"}, tmp_path / "ratings.csv", ("item", "setting"))


def test_lai_reader_counts_and_one_row_by_hand(data_root: Path) -> None:
    from tsteval.readers.lai import load_lai

    transfers = load_lai()
    frame = transfers.frame
    assert len(frame) == 720 and frame["item"].nunique() == 80 and frame["system"].nunique() == 9
    assert (frame.groupby("item")["system"].nunique() == 9).all()
    with open(data_root / "lai2022" / "content.src.json", encoding="utf-8") as handle:
        record = [json.loads(line) for line in handle][7]
    scores = record["sys"]["luo"]
    row = frame[(frame["system"] == "luo") & (frame["item"] == 7)].iloc[0]
    assert row["input"] == record["src"] and row["output"] == scores["out"] and row["reference"] == record["ref"]
    assert row["human_content_src"] == pytest.approx((scores["human_1"] + scores["human_2"]) / 2)
    assert row["lai.bleu@src"] == pytest.approx(scores["bleu"])
    assert transfers.extra["published"]["lai.wmd@src"] == ("content", False)
    assert transfers.extra["published"]["lai.gpt2_ppl@fluency"] == ("naturalness", False)


def test_pairwise_kendall_matches_scipy() -> None:
    from tsteval.metaeval.statistics import PAIRWISE_KENDALL_ROWS, correlations

    rng = np.random.default_rng(0)
    for n in (5, 60, PAIRWISE_KENDALL_ROWS + 20):  # all pairs at once, then scipy per column
        x = rng.integers(0, 5, size=(n, 3)).astype(float)  # many ties
        y = rng.integers(0, 4, size=n).astype(float)
        expected = [stats.kendalltau(x[:, c], y).statistic for c in range(3)]
        assert correlations(x, y, "kendall") == pytest.approx(expected)
    assert np.isnan(correlations(np.ones((6, 1)), np.arange(6.0), "kendall")).all()


def test_manifest_meta_eval_key(tmp_path: Path, data_root: Path) -> None:
    import yaml

    from tsteval.experiment.manifest.loader import ManifestError, load_manifest

    tiny = Path(__file__).resolve().parent / "data" / "tiny_manifest.yaml"
    spec = load_manifest(tiny).meta_eval
    assert spec.ratings == (("human_style_intensity", "style"), ("human_content_preservation", "content"),
                            ("human_naturalness_output", "naturalness"))
    assert spec.resamples == 100
    data = yaml.safe_load(tiny.read_text())
    data["meta_eval"]["ratings"] = {"fluency": "human_naturalness_output"}
    data["output"] = str(tmp_path / "out")
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ManifestError, match=r"meta_eval\.ratings\.fluency.*unknown key"):
        load_manifest(tmp_path / "m.yaml")


def test_score_metrics_recommended_expands(tmp_path: Path) -> None:
    from tsteval.metaeval.recommended import RECOMMENDED, apply_recommended
    from tsteval.metrics.registry import METRICS
    from tsteval.metrics.selection import select

    for r in RECOMMENDED:  # every recommendation is a registered metric of its aspect
        assert METRICS[r.metric].aspect == r.aspect

    def fresh(**changes: str) -> dict[str, str]:  # a run's options: apply_recommended sets its language model
        return {"joint": "none", "language": "en", "language_model": "smollm2", **changes}

    options = fresh()
    chosen = select(["recommended", "bleu"], classifiers=True)
    assert apply_recommended(chosen, ["mask"], 1, options) == ["mask", "none"]
    assert chosen.content == ["bleu", "sbert"] and chosen.naturalness == ["smollm2"] and chosen.style
    # the naturalness column is Gemma 3's mean log-probability (rule v2): the run's LM becomes Gemma, no judge
    assert chosen.judges == [] and options["language_model"] == "gemma3-270m"
    for joint in ("auto", "strap"):  # J's factors (STRAP's) come with the profile unless J is off
        chosen = select(["recommended", "kn3"], classifiers=True)
        apply_recommended(chosen, [], 1, fresh(joint=joint))
        assert chosen.naturalness == ["smollm2", "kn3", "unigram"] and chosen.content == ["sbert"]
    sentiment = fresh()  # the sentiment family's naturalness: the trigram, no causal LM
    chosen = select(["recommended:sentiment"], classifiers=True)
    apply_recommended(chosen, [], 1, sentiment)
    assert chosen.naturalness == ["kn3"] and sentiment["language_model"] == "smollm2"
    toxicity = fresh()  # the toxicity family's: SmolLM2's mean log-probability
    chosen = select(["recommended:toxicity"], classifiers=True)
    apply_recommended(chosen, [], 1, toxicity)
    assert chosen.naturalness == ["smollm2"] and toxicity["language_model"] == "smollm2"
    chosen = select(["recommended:formality"], classifiers=True)  # the family's naturalness: Gemma's SLOR
    formality = fresh(joint="auto")
    apply_recommended(chosen, [], 1, formality)
    assert chosen.naturalness == ["smollm2", "unigram"] and not chosen.judges
    assert formality["language_model"] == "gemma3-270m"
    hindi = fresh(language="hi", joint="auto")  # J's content factor beyond English is chrF; naturalness Gemma's
    chosen = select(["recommended"], classifiers=True)
    apply_recommended(chosen, [], 1, hindi)
    assert chosen.content == ["e5", "chrf"] and chosen.naturalness == ["smollm2", "unigram"] and not chosen.judges
    assert hindi["language_model"] == "gemma3-270m"
    with pytest.raises(TstevalError, match="give --language-model gemma3-270m"):
        apply_recommended(select(["recommended", "cond_lp"], classifiers=True), [], 1, fresh())
    qwen = fresh(language_model="qwen2.5-coder-1.5b")  # another run LM than the column's: one line
    with pytest.raises(TstevalError, match="not 'qwen2.5-coder-1.5b'"):
        apply_recommended(select(["recommended"], classifiers=True), [], 1, qwen)
    with pytest.raises(TstevalError, match="train-classifier transformer"):
        apply_recommended(select(["recommended"], classifiers=False), [], 0, fresh())
    (tmp_path / "in.txt").write_text("the food was awful\n")
    (tmp_path / "out.txt").write_text("the food was great\n")
    code = main(["score", "--metrics", "recommended", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"),
                 "--source-style", "0", "--target-style", "1", "--out", str(tmp_path / "run")])
    assert code == 2  # the recommended style metric needs --classifier


def test_a_study_compares_with_the_profile_else_the_earlier_recommendation() -> None:
    """``meta-eval RUN --ratings STUDY`` compares each column with the profile's column of its aspect where the run
    has it, else with the recommendation before the three-LM tables (an older run, or one scored without the LM)."""
    from tsteval.metaeval.rated.loop import current_profile

    full = ["style_strength@ft", "sbert@none", "bertscore_f1@none", "lp_mean@kn3", "lp_mean@gemma3-270m"]
    assert current_profile(full) == {"style": "style_strength@ft", "content": "sbert@none",
                                     "naturalness": "lp_mean@gemma3-270m"}
    assert current_profile(["bleu@none", "sbert@none", "lp_mean@kn3"]) == {"content": "sbert@none",
                                                                          "naturalness": "lp_mean@kn3"}


def test_committed_evidence_backs_the_recommended_profile() -> None:
    """The profile's claim (README, docs/meta-evaluation.md), checked on the committed three-LM tables of the rule's
    four rated sets: on each, each recommended metric is at least as good as its aspect's naive baseline at sentence
    level (never significantly worse), recomputed from metaeval.csv rather than read from the verdict column."""
    import pandas as pd

    from tsteval.metaeval.recommended import RECOMMENDED

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "meta_eval_lm"
    for dataset in ("mir", "lai", "tox600", "cae_t5"):
        table = pd.read_csv(results / dataset / "metaeval.csv")
        table = table[(table["level"] == "sentence") & (table["method"] == "pearson")]
        baselines = pd.read_csv(results / dataset / "baseline.csv")
        for rec in RECOMMENDED:
            column = rec.evidence_column()  # style: the backend it was chosen with; a judge: its template
            ratings = table[(table["aspect"] == rec.aspect) & (table["metric"] == column)]["rating"]
            assert len(ratings), (dataset, column)
            for rating in ratings:
                base = baselines[baselines["rating"] == rating]["baseline"].iloc[0]
                ours = table[(table["rating"] == rating) & (table["metric"] == column)]["r"].iloc[0]
                theirs = table[(table["rating"] == rating) & (table["metric"] == base)]["r"].iloc[0]
                row = baselines[(baselines["rating"] == rating) & (baselines["metric"] == column)
                                & (baselines["level"] == "sentence") & (baselines["method"] == "pearson")]
                assert row["hi"].iloc[0] >= 0, (dataset, rating, column, ours, theirs)
                assert abs(row["diff"].iloc[0] - (ours - theirs)) < 1e-9


def test_recommended_takes_a_task_family_and_the_language(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``--metrics recommended:FAMILY`` with ``--language``: the content column follows the language (e5 for the
    Indic sets, chrF for Russian and for a language without a rated set, never the English encoder), a family takes
    its own picks where the rule offered them, and an unknown family is one error line (exit 2, no output)."""
    from tsteval.cli.main import build_parser
    from tsteval.experiment.plan.plan_of_args import plan_of_args
    from tsteval.metaeval.recommended import RECOMMENDED, TASK_FAMILIES, recommended_profile

    (tmp_path / "in.txt").write_text("the food was awful\n")
    (tmp_path / "out.txt").write_text("the food was great\n")
    base = ["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "0",
            "--target-style", "1", "--classifier", f"clf={tmp_path}", "--out", str(tmp_path / "run")]
    expected = {"en": "sbert", "hi": "e5", "bn": "e5", "ru": "chrf", "de": "chrf"}
    for language, content in expected.items():
        plan = plan_of_args(build_parser().parse_args([*base, "--metrics", "recommended:toxicity",
                                                       "--language", language]))
        assert content in plan.content and (language == "en" or "sbert" not in plan.content), (language, plan.content)
        assert plan.language_model == ("smollm2" if language == "en" else "gemma3-270m")
    said = capsys.readouterr().err  # a family without a pick of its own in force says it scores the pooled profile
    assert ("recommended:toxicity: no column of its own is in force" in said) == (not TASK_FAMILIES["toxicity"])
    for family, own in TASK_FAMILIES.items():
        profile = {r.aspect: r for r in recommended_profile(family)}
        assert all(profile[r.aspect] == own.get(r.aspect, r) for r in RECOMMENDED)
    code = main([*base, "--metrics", "recommended:poetry"])
    assert code == 2 and not (tmp_path / "run").exists()


def test_a_rated_sets_scores_are_cached_for_the_same_rows_and_key_only(tmp_path: Path) -> None:
    """``make meta-eval`` reruns from the cache: a scorecard kept with its notes reads back equal for the same input
    and output rows and key, and not at all for other rows (a changed data root) or another key (other templates,
    another LM, another seed)."""
    from tsteval.core.records import TRANSFER_COLUMNS
    from tsteval.metaeval.rated.card_cache import load_cached, save_cached

    frame = pd.DataFrame({c: ["a", "b"] for c in TRANSFER_COLUMNS}).astype(object).assign(output=["c", "d"])
    card = Scorecard(frame.assign(human=[1.0, 2.0]))
    card.add("bleu@none", [10.0, 20.0], "bleu|sig")
    key = {"set": "mir", "templates": {"cond_lp": 3}, "seed": 0}
    save_cached(tmp_path / "c", card, key, {"scoring_seconds": 3.5})
    read, notes = load_cached(tmp_path / "c", frame, key)
    assert read.signatures == {"bleu@none": "bleu|sig"} and read.frame["bleu@none"].tolist() == [10.0, 20.0]
    assert notes == {"scoring_seconds": 3.5}
    assert load_cached(tmp_path / "c", frame.assign(output=["c", "e"]), key) is None
    assert load_cached(tmp_path / "c", frame, {**key, "templates": {"cond_lp": 1}}) is None
    assert load_cached(tmp_path / "missing", frame, key) is None


def test_an_lm_stage_is_scored_once_and_read_back_for_the_same_rows(tmp_path: Path) -> None:
    """The three-LM tables keep each LM's columns (``runs/meta_eval_lm/SET/MODEL``): the second run reads them
    instead of scoring, and rows or a key (model, precision, seed, templates) that differ are scored again."""
    from tsteval.metaeval.rated.lm_subset import _cached_columns

    calls = []

    def card_of(outputs: list[str]) -> tuple[Scorecard, object]:
        card = Scorecard(pd.DataFrame({"input": ["a", "b"], "output": outputs, "system": "s", "setting": "",
                                       "item": [0, 1], "source_style": "0", "target_style": "1"}))

        def score() -> None:
            calls.append(list(outputs))
            card.add("lp_mean@m", [-1.5, -2.25], "lp|m")
        return card, score

    seconds = []
    for outputs, precision in ((["c", "d"], "fp32"), (["c", "d"], "fp32"), (["c", "x"], "fp32"), (["c", "x"], "bf16")):
        card, score = card_of(outputs)
        card.frame["input"] = card.frame["input"].astype(object)  # as a rated set's frame holds them
        seconds.append(_cached_columns(card, tmp_path / "m", {"model": "m", "precision": precision}, score,
                                       lambda _: None))
        assert card.frame["lp_mean@m"].tolist() == [-1.5, -2.25] and card.signatures == {"lp_mean@m": "lp|m"}
    assert calls == [["c", "d"], ["c", "x"], ["c", "x"]]  # other rows, then another precision: scored again
    assert seconds[0] == seconds[1] >= 0  # the seconds the scoring took, kept with the cached columns
