"""The loop, through the command line: plan -> invite -> ratings -> agreement -> meta-eval --ratings STUDY ->
--choose-profile -> score --metrics profile:FILE.  Every number checked here is recomputed from the raw ratings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from annotate_study import scorecard
from scipy import stats

from tsteval.annotate.reliability import alpha, split_half
from tsteval.annotate.study import Study
from tsteval.cli.main import main
from tsteval.metaeval.rated.loop import MIN_PAIRS, study_ratings

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units, values 1-5,
# None = not rated; his published alphas: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_EXAMPLE = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
                        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
                        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
                        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]


def test_alpha_matches_krippendorffs_worked_example() -> None:
    data = np.array([[np.nan if v is None else v for v in row] for row in KRIPPENDORFF_EXAMPLE], dtype=float)
    domain = np.arange(1, 6, dtype=float)
    assert round(alpha(data, "nominal"), 3) == 0.743
    assert round(alpha(data, "ordinal", domain), 3) == 0.815
    assert round(alpha(data, "interval"), 3) == 0.849


def test_split_half_is_the_mean_spearman_brown_r_over_random_splits() -> None:
    """Two raters, 8 pairs: each split sends one of a pair's two ratings to each half, so the exact expectation is
    the mean over all 2^8 assignments of 2r / (1 + r)."""
    import itertools

    rng = np.random.default_rng(0)
    truth = rng.normal(size=8)
    m = np.vstack([truth + rng.normal(size=8), truth + rng.normal(size=8)])
    exact = []
    for swap in itertools.product((0, 1), repeat=8):
        a = np.array([m[s, u] for u, s in enumerate(swap)])
        b = np.array([m[1 - s, u] for u, s in enumerate(swap)])
        r = stats.pearsonr(a, b).statistic
        exact.append(2 * r / (1 + r))
    assert split_half(m, splits=4000)[0] == pytest.approx(np.mean(exact), abs=0.01)
    same = np.vstack([truth, truth, truth])
    assert split_half(same, splits=10) == (pytest.approx(1.0), 8)


def _rate(study: Study, quality: dict[str, float], noise: float, seed: int) -> None:
    """Every invited annotator rates every pair: the pair's quality plus noise, on the 1-5 scale."""
    rng = np.random.default_rng(seed)
    store = study.store()
    try:
        for name in store.progress(3)["annotator"]:
            who = store.find(name)
            for pair in store.assignment(who):
                base = 5.0 if pair.startswith("c:") else 3 + 1.2 * quality[pair.removeprefix("r:")]
                values = {q: int(np.clip(round(base + rng.normal(scale=noise)), 1, 5)) for q in study.template.names}
                store.submit(who, pair, values, "web")
    finally:
        store.close()


def _planned(tmp: Path, aspects: str, annotators: int) -> tuple[object, Study, dict[str, float]]:
    """A scored run of 12 inputs under ``tmp``, a study of 16 of them planned on ``aspects`` with ``annotators``
    invited, and each rated pair's known quality."""
    card, quality = scorecard(inputs=12)
    card.save(tmp / "run")
    assert main(["annotate", "plan", str(tmp / "run"), "--out", str(tmp / "study"), "--items", "16",
                 "--aspects", aspects]) == 0
    assert main(["annotate", "invite", str(tmp / "study"), "--annotators", str(annotators)]) == 0
    study = Study.open(tmp / "study")
    keyed = card.frame.assign(q=quality).astype({"item": str}).set_index(["system", "item", "source_style"])["q"]
    by_pair = {p.pair_id: keyed[(p.system, p.item, p.source_style)] for p in study.pairs.itertuples()
               if p.kind != "check"}
    return card, study, by_pair


@pytest.fixture(scope="module")
def looped(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("loop")
    card, study, by_pair = _planned(tmp, "content,fluency", 3)
    _rate(study, by_pair, noise=0.6, seed=1)
    return {"tmp": tmp, "study": study, "card": card}


def test_plan_samples_stratified_blind_pairs_with_controls(looped: dict) -> None:
    pairs = looped["study"].pairs
    rated = pairs[pairs["kind"] == "rated"]
    assert len(rated) == 16 * 3 and rated.groupby("source_style")["item"].nunique().tolist() == [8, 8]
    assert (pairs["kind"] == "repeat").sum() == 2 and (pairs["kind"] == "check").sum() == 2
    checks = pairs[pairs["kind"] == "check"]
    assert (checks["output"] == checks["input"]).all()


def test_agreement_reports_alpha_ceiling_repeats_and_checks(looped: dict, capsys: pytest.CaptureFixture) -> None:
    assert main(["annotate", "agreement", str(looped["tmp"] / "study"), "--resamples", "50"]) == 0
    text = capsys.readouterr().out
    assert "Krippendorff's alpha" in text and "noise ceiling" in text and "Check pairs" in text
    from tsteval.annotate.reliability import agreement

    result = agreement(looped["study"], n_resamples=50)
    store = looped["study"].store()
    ratings = store.ratings()
    store.close()
    rated = looped["study"].pairs.query("kind == 'rated'")["pair_id"]
    table = ratings[ratings["pair_id"].isin(rated) & (ratings["question"] == "content")].pivot(
        index="annotator", columns="pair_id", values="value").to_numpy()
    import krippendorff

    row = result.alpha.query("question == 'content' and level == 'interval'").iloc[0]
    assert row["alpha"] == pytest.approx(krippendorff.alpha(table, level_of_measurement="interval"))
    assert row["lo"] <= row["alpha"] <= row["hi"]
    assert (result.checks["passed"] == 1.0).all() and set(result.repeats["repeated"]) == {2}


def test_meta_eval_reads_the_studys_mean_ratings(looped: dict, capsys: pytest.CaptureFixture) -> None:
    tmp = looped["tmp"]
    assert main(["meta-eval", str(tmp / "run"), "--ratings", str(tmp / "study"), "--out", str(tmp / "meta"),
                 "--resamples", "100", "--choose-profile", str(tmp / "profile.json")]) == 0
    out = capsys.readouterr().out
    assert "ceiling" in out and "human_content (content)" in out
    table = pd.read_csv(tmp / "meta" / "metaeval.csv")
    frame, aspects = study_ratings(looped["study"])
    assert aspects == {"human_content": "content", "human_fluency": "naturalness"}
    card = looped["card"].frame.astype({"item": str})
    joined = card.merge(frame, on=["system", "setting", "item", "source_style", "target_style"])
    assert len(joined) == 48
    for metric in ("bleu@none", "sbert@none"):
        got = table.query(f"metric == '{metric}' and rating == 'human_content' and level == 'sentence' and "
                          "method == 'pearson'")["r"].iloc[0]
        assert got == pytest.approx(stats.pearsonr(joined[metric], joined["human_content"]).statistic)
    profile = json.loads((tmp / "profile.json").read_text())
    assert profile["kind"] == "tsteval-profile" and profile["default"] == {"content": "sbert@none"}
    assert profile["profile"]["content"] in ("sbert@none", "bleu@none", "chrf@none")
    assert "content" in profile["reasons"]


def test_too_few_pairs_keep_the_default_and_say_why(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    card, quality = scorecard(inputs=4)
    card.save(tmp_path / "run")
    assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "study"), "--items", "4"]) == 0
    main(["annotate", "invite", str(tmp_path / "study"), "--annotators", "2"])
    study = Study.open(tmp_path / "study")
    _rate(study, {p: 0.0 for p in study.pair_ids}, noise=1.0, seed=2)
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "study"), "--resamples", "20",
                 "--choose-profile", str(tmp_path / "p.json"), "--quiet"]) == 0
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["profile"] == profile["default"] == {"content": "sbert@none"}
    assert f"the rule needs {MIN_PAIRS} pairs" in profile["reasons"]["content"]
    assert "kept sbert@none" in capsys.readouterr().out


def test_score_with_a_chosen_profile(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text(json.dumps({"kind": "tsteval-profile", "profile": {"content": "chrf@mask"}}))
    card, _ = scorecard(inputs=3)
    card.frame[["system", "item", "input", "output", "source_style", "target_style"]].to_csv(tmp_path / "t.csv",
                                                                                           index=False)
    lexicon = tmp_path / "lexicon.json"
    lexicon.write_text(json.dumps({"0": [["fine", 1.0]], "1": [["great", 1.0]]}))
    assert main(["score", "--table", str(tmp_path / "t.csv"), "--metrics", f"profile:{tmp_path / 'p.json'}",
                 "--lexicon", str(lexicon), "--out", str(tmp_path / "scored"), "--quiet"]) == 0
    scored = pd.read_csv(tmp_path / "scored" / "scorecard.csv")
    assert "chrf@mask" in scored.columns
    (tmp_path / "bad.json").write_text("{}")
    assert main(["score", "--table", str(tmp_path / "t.csv"), "--metrics", f"profile:{tmp_path / 'bad.json'}",
                 "--out", str(tmp_path / "x")]) == 2


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_batched_bootstrap_alpha_equals_the_package(level: str) -> None:
    """:func:`alpha_resamples` against ``krippendorff.alpha`` on resampled data, whole numbers and reals, with
    missing ratings and units rated once."""
    import krippendorff

    from tsteval.annotate.reliability import alpha_resamples

    rng = np.random.default_rng(3)
    for values in (rng.integers(1, 6, size=(4, 30)).astype(float), np.round(rng.uniform(0, 100, size=(3, 25)), 1)):
        values[rng.random(values.shape) < 0.2] = np.nan
        draws = rng.integers(0, values.shape[1], size=(5, values.shape[1]))
        weights = np.stack([np.bincount(d, minlength=values.shape[1]) for d in draws]).astype(float)
        batched = alpha_resamples(values, weights, level)
        for d, got in zip(draws, batched, strict=True):
            sample = values[:, d]
            sample = sample[:, np.isfinite(sample).sum(axis=0) >= 2]
            domain = np.unique(sample[np.isfinite(sample)])
            want = krippendorff.alpha(reliability_data=sample, level_of_measurement=level, value_domain=domain)
            assert got == pytest.approx(want, abs=1e-9)


def test_alpha_of_many_distinct_values_equals_the_package() -> None:
    """Past 101 distinct values :func:`alpha` computes without the package (its tensor grows with values^2)."""
    import krippendorff

    rng = np.random.default_rng(5)
    truth = rng.uniform(0, 100, 150)
    values = np.round(np.vstack([truth + rng.normal(scale=15, size=150), truth + rng.normal(scale=15, size=150)]), 2)
    assert np.unique(values).size > 101
    for level in ("interval", "ordinal"):
        want = krippendorff.alpha(reliability_data=values, level_of_measurement=level)
        assert alpha(values, level) == pytest.approx(want, abs=1e-9)


def test_bad_plans_and_empty_studies_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    card, _ = scorecard(inputs=3)
    card.save(tmp_path / "run")
    (tmp_path / "bad.yaml").write_text("questions:\n  - {name: q, aspect: colour, prompt: hi}\n")
    cases = [(["--items", "99"], "the run has only 6 inputs"), (["--systems", "nobody"], "no system 'nobody'"),
             (["--aspects", "mood"], "no question 'mood'"),
             (["--template", str(tmp_path / "bad.yaml")], "aspect one of")]
    for extra, message in cases:
        assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "s"), *extra]) == 2
        error = capsys.readouterr().err.strip()
        assert len(error.splitlines()) == 1 and message in error, error
        assert not (tmp_path / "s").exists()
    assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "s"), "--items", "2"]) == 0
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "s")]) == 2
    assert "the study has no ratings yet" in capsys.readouterr().err
    assert main(["annotate", "status", str(tmp_path / "run")]) == 2
    assert "not a study folder" in capsys.readouterr().err


def test_references_become_pairs_and_are_rated_apart(tmp_path: Path) -> None:
    card, _ = scorecard(inputs=4)
    card.frame["reference"] = "a human rewrite of " + card.frame["input"]
    card.save(tmp_path / "run")
    from tsteval.annotate.reliability import agreement
    from tsteval.annotate.study import plan_study

    study = plan_study(tmp_path / "run", tmp_path / "study", items=4)
    refs = study.pairs[study.pairs["kind"] == "reference"]
    assert len(refs) == 4 and refs["output"].str.startswith("a human rewrite").all()
    assert set(refs["system"]) == {"reference"} and study.info["references"] == 4
    store = study.store()
    (who, _), = store.add_annotators(study.pair_ids, seed=0, count=1)
    for pair in study.pair_ids:
        store.submit(who, pair, {"content": 5 if pair.startswith("h:") else 2}, "web")
    store.close()
    kinds = agreement(study, n_resamples=10).kinds.set_index(["question", "kind"])["mean"]
    assert kinds[("content", "reference")] == 5 and kinds[("content", "system output")] == 2
    frame, _ = study_ratings(study)
    assert len(frame) == len(study.pairs.query("kind == 'rated'"))  # references never reach meta-evaluation


def test_evaluate_scores_a_profile_with_its_modification(tmp_path: Path) -> None:
    import tsteval
    from tsteval.lexicons.lexicon import Lexicon

    (tmp_path / "p.json").write_text(json.dumps({"kind": "tsteval-profile", "profile": {"content": "chrf@mask"}}))
    card = tsteval.evaluate(["the food was fine"], ["the food was great"], source_style="0", target_style="1",
                            metrics=[f"profile:{tmp_path / 'p.json'}"], lexicon=Lexicon(
                                {"0": [["fine", 1.0]], "1": [["great", 1.0]]}))
    assert "chrf@mask" in card.metrics


def test_an_annotator_far_below_the_others_is_flagged(tmp_path: Path) -> None:
    """Three annotators rate by the pairs' quality, a fourth at random: only the fourth is flagged, and each r is
    the annotator's Pearson r with the mean of the others on the pairs both rated (recomputed here)."""
    from scipy import stats

    from tsteval.annotate.reliability import agreement

    _, study, by_pair = _planned(tmp_path, "content", 4)
    _rate(study, by_pair, noise=0.5, seed=2)
    store = study.store()
    names = list(store.progress(3)["annotator"])
    rng = np.random.default_rng(3)
    random_one = store.find(names[-1])
    for pair in store.assignment(random_one):  # re-rated at random: the history keeps the first ratings
        store.submit(random_one, pair, {"content": int(rng.integers(1, 6))}, "web")
    ratings = store.ratings()
    store.close()
    result = agreement(study, n_resamples=20)
    flagged = result.annotators.query("flagged")["annotator"].tolist()
    assert flagged == [names[-1]]
    rated = study.pairs.query("kind == 'rated'")["pair_id"]
    table = ratings[ratings["pair_id"].isin(rated)].pivot(index="pair_id", columns="annotator", values="value")
    for name in names:
        others = table.drop(columns=name).mean(axis=1)
        row = result.annotators.query("annotator == @name").iloc[0]
        assert row["r"] == pytest.approx(stats.pearsonr(table[name], others).statistic)


def test_printed_reports_carry_no_markdown_escapes(looped: dict, capsys: pytest.CaptureFixture) -> None:
    """The terminal gets ``mean_abs_diff`` and ``human_content``, not ``mean\\_abs\\_diff``; the Markdown file
    written with --out keeps its escapes (issue 59, Messages)."""
    tmp = looped["tmp"]
    assert main(["annotate", "agreement", str(tmp / "study"), "--resamples", "20", "--out", str(tmp / "a.md"),
                 "--overwrite"]) == 0
    printed = capsys.readouterr().out
    assert "mean_abs_diff" in printed and "\\_" not in printed
    assert "mean\\_abs\\_diff" in (tmp / "a.md").read_text(encoding="utf-8")
    assert main(["meta-eval", str(tmp / "run"), "--ratings", str(tmp / "study"), "--resamples", "20"]) == 0
    printed = capsys.readouterr().out
    assert "| human_content |" in printed and "\\_" not in printed


TWO_CONTENT_QUESTIONS = """title: Rate rewritten sentences
instructions: Answer each question on the 1-5 scale.
scale: [1, 5]
cant_judge: "can't judge"
questions:
  - {name: content, aspect: content, prompt: "How much of the meaning does the rewrite keep?"}
  - {name: meaning, aspect: content, prompt: "Does the rewrite say the same thing?"}
"""


def test_the_profile_is_rule_v2_recomputed_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Two content questions (each weighs the same), the default sbert@none noisy, bleu@none, chrf@none and
    meteor@none the same values (the true quality plus a little noise: their differences are 0, so tied): the gain is
    the mean over questions of each column's Pearson r minus sbert's, recomputed here with scipy; the tie goes to the
    cheapest by the committed costs, and meteor@none, which has none, is never preferred (the reason says so)."""
    from tsteval.metaeval.study.rule import COSTS

    card, quality = scorecard(inputs=12)
    rng = np.random.default_rng(5)
    close = 50 + 10 * quality + rng.normal(scale=2, size=len(quality))
    card.frame["bleu@none"], card.frame["chrf@none"], card.frame["meteor@none"] = close, close, close
    card.frame["sbert@none"] = 0.5 + 0.1 * quality + rng.normal(scale=0.15, size=len(quality))
    card.signatures["meteor@none"] = "metric:meteor"
    card.save(tmp_path / "run")
    (tmp_path / "questions.yaml").write_text(TWO_CONTENT_QUESTIONS, encoding="utf-8")
    assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "study"), "--items", "16",
                 "--template", str(tmp_path / "questions.yaml")]) == 0
    assert main(["annotate", "invite", str(tmp_path / "study"), "--annotators", "3"]) == 0
    study = Study.open(tmp_path / "study")
    keyed = card.frame.assign(q=quality).astype({"item": str}).set_index(["system", "item", "source_style"])["q"]
    _rate(study, {p.pair_id: keyed[(p.system, p.item, p.source_style)] for p in study.pairs.itertuples()
                  if p.kind != "check"}, noise=0.6, seed=6)
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "study"), "--resamples", "200",
                 "--choose-profile", str(tmp_path / "p.json"), "--quiet"]) == 0
    profile = json.loads((tmp_path / "p.json").read_text())
    evidence = profile["evidence"]["content"]
    assert profile["rule"] == {"version": 2, "min_gain": 0.02, "statistic": "pearson", "level": "sentence",
                               "costs": "column_costs.json"}
    assert evidence["reference"] == "sbert@none" and evidence["questions"] == ["human_content", "human_meaning"]

    frame, _ = study_ratings(study)
    joined = card.frame.astype({"item": str}).merge(frame, on=["system", "setting", "item", "source_style",
                                                               "target_style"])
    r = {(c, q): stats.pearsonr(joined[c], joined[q]).statistic for c in ("bleu@none", "chrf@none", "meteor@none",
                                                                          "sbert@none")
         for q in ("human_content", "human_meaning")}
    rows = {row["column"]: row for row in evidence["columns"]}
    for column in ("bleu@none", "chrf@none", "meteor@none"):
        by_hand = np.mean([r[column, q] - r["sbert@none", q] for q in ("human_content", "human_meaning")])
        assert rows[column]["gain"] == pytest.approx(by_hand, abs=1e-9)
        assert rows[column]["candidate"] == (by_hand >= 0.02 and rows[column]["lo"] > 0
                                             and not rows[column]["worse_on"]) is True
        assert rows[column]["tied"]
    costs = {c: row["cpu_s_per_1000"] for c, row in json.loads(COSTS.read_text())["columns"].items()}
    assert "meteor@none" not in costs and evidence["costs"]["meteor@none"] is None
    cheapest = min(("bleu@none", "chrf@none"), key=lambda c: costs[c])
    assert profile["profile"] == {"content": cheapest} and evidence["chosen"] == cheapest
    assert evidence["gain"] == rows[cheapest]["gain"] and evidence["interval"] == [rows[cheapest]["lo"],
                                                                                   rows[cheapest]["hi"]]
    assert sorted(evidence["tied"]) == ["bleu@none", "chrf@none", "meteor@none"]
    reason = profile["reasons"]["content"]
    assert reason.startswith(f"{cheapest} gains {rows[cheapest]['gain']:+.3f}") and "tied with" in reason
    assert f"the cheapest ({costs[cheapest]:g} CPU s per 1,000 pairs)" in reason
    assert "meteor@none has no measured cost" in reason and "never preferred in a tie" in reason
