"""One rater per item, the commonest crowdsourcing design: ``agreement`` says why alpha, split-half and the ceiling
are unavailable; the profile rule may still choose on enough rated pairs and a significant gain, marked "reliability
unknown" (both sides of that gate); and ``annotate plan --overlap SHARE`` gives a share of the pairs a second
annotator through an exported MTurk batch, which makes the reliability known."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from annotate_study import scorecard
from badinput import run_cli

from tsteval.annotate.study import Study
from tsteval.metaeval.rated.loop import MIN_PAIRS, MIN_PAIRS_UNKNOWN, study_ratings


def _write(path: Path, rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _study(tmp: Path, capsys: pytest.CaptureFixture, items: int, *options: str) -> tuple[Study, dict[str, float]]:
    """A run of 40 inputs whose ``bleu@none`` is each row's true quality exactly (``sbert@none``, the default, is
    noisy), a study of ``items`` inputs planned from it, and each rated pair's quality."""
    card, quality = scorecard(inputs=20)
    card.frame["bleu@none"] = 50 + 10 * quality
    card.save(tmp / "run")
    assert run_cli(["annotate", "plan", tmp / "run", "--out", tmp / "study", "--items", items,
                    "--aspects", "content", "--repeats", "0", "--checks", "1", *options], capsys).code == 0
    study = Study.open(tmp / "study")
    keyed = card.frame.assign(q=quality).astype({"item": str}).set_index(["system", "item", "source_style"])["q"]
    return study, {p.pair_id: keyed[(p.system, p.item, p.source_style)] for p in study.pairs.itertuples()
                   if p.kind in ("rated", "overlap")}


def _rating(quality: float, rng: np.random.Generator) -> int:
    return int(np.clip(round(3 + 1.2 * quality + rng.normal(scale=0.5)), 1, 5))


def _one_rater_each(tmp: Path, study: Study, quality: dict[str, float], capsys: pytest.CaptureFixture) -> None:
    """Every rated pair rated once, each by a worker of its own (as one assignment per HIT gives)."""
    rng = np.random.default_rng(3)
    rows = [[f"worker{i}", p, "content", _rating(quality[p], rng), study.info["signature"]]
            for i, p in enumerate(study.pairs.loc[study.pairs["kind"] == "rated", "pair_id"])]
    _write(tmp / "long.csv", [["annotator", "pair_id", "question", "value", "study_signature"], *rows])
    assert run_cli(["annotate", "import", tmp / "study", tmp / "long.csv"], capsys).code == 0


def _choose(tmp: Path, capsys: pytest.CaptureFixture) -> tuple[dict, str]:
    outcome = run_cli(["meta-eval", tmp / "run", "--ratings", tmp / "study", "--resamples", "200",
                       "--choose-profile", tmp / "profile.json", "--out", tmp / "meta", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    return json.loads((tmp / "profile.json").read_text(encoding="utf-8")), outcome.out


def test_agreement_says_why_each_statistic_is_unavailable(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study, quality = _study(tmp_path, capsys, 12)
    _one_rater_each(tmp_path, study, quality, capsys)
    out = run_cli(["annotate", "agreement", tmp_path / "study", "--resamples", "10"], capsys).out
    lines = [line for line in out.splitlines() if line.startswith("- content:")]
    assert len(lines) == 1, out
    assert "every one of the 36 rated pairs has one rating" in lines[0]
    assert "alpha" in lines[0] and "split-half" in lines[0] and "--overlap 0.2" in lines[0]


def test_unknown_reliability_chooses_on_enough_pairs_and_a_significant_gain(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    study, quality = _study(tmp_path, capsys, 36)
    _one_rater_each(tmp_path, study, quality, capsys)
    profile, out = _choose(tmp_path, capsys)
    assert len(study.pairs.query("kind == 'rated'")) >= MIN_PAIRS_UNKNOWN
    assert profile["profile"] == {"content": "bleu@none"} and profile["default"] == {"content": "sbert@none"}
    assert profile["reliability_unknown"] == ["content"]
    reason = profile["reasons"]["content"]
    assert reason.startswith("bleu@none gains +") and "over sbert@none" in reason
    assert reason.endswith("worse on no question); reliability unknown (one rating per pair: the gain's interval is "
                           "the evidence)")
    assert profile["evidence"]["content"]["interval"][0] > 0
    assert "reliability unknown" in out


def test_unknown_reliability_with_too_few_pairs_keeps_the_default(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    study, quality = _study(tmp_path, capsys, 12)
    _one_rater_each(tmp_path, study, quality, capsys)
    rated = len(study.pairs.query("kind == 'rated'"))
    assert MIN_PAIRS <= rated < MIN_PAIRS_UNKNOWN
    profile, _ = _choose(tmp_path, capsys)
    assert profile["profile"] == profile["default"] == {"content": "sbert@none"}
    assert profile["reliability_unknown"] == ["content"]
    reason = profile["reasons"]["content"]
    assert f"{rated} rated pairs" in reason and f"{MIN_PAIRS_UNKNOWN} rated pairs" in reason and "kept" in reason
    assert "Noise ceiling unknown: 0 pairs are rated twice" in (tmp_path / "meta" / "metaeval.md").read_text()


def _batch(tmp: Path, capsys: pytest.CaptureFixture) -> list[dict[str, str]]:
    assert run_cli(["annotate", "export", tmp / "study", "--format", "mturk", "--per-hit", "4", "--out",
                    tmp / "batch.csv"], capsys).code == 0
    with (tmp / "batch.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_overlap_gives_a_share_of_the_pairs_a_second_annotator(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study, quality = _study(tmp_path, capsys, 12, "--overlap", "0.2")
    pairs = study.pairs
    rated, second = pairs[pairs["kind"] == "rated"], pairs[pairs["kind"] == "overlap"]
    assert len(second) == round(0.2 * len(rated)) == 7 and study.info["overlaps"] == 7
    assert (second["pair_id"] == "o:" + second["of"]).all() and set(second["of"]) <= set(rated["pair_id"])
    assert (second.set_index("of")["output"] == rated.set_index("pair_id").loc[second["of"], "output"]).all()
    hits = _batch(tmp_path, capsys)
    ids = [[hit[f"pair_id_{k}"] for k in range(1, 5) if hit[f"pair_id_{k}"]] for hit in hits]
    assert sorted(p for hit in ids for p in hit) == sorted(study.pair_ids)
    assert not [hit for hit in ids for p in hit if f"o:{p}" in hit], "a pair and its copy share a HIT"
    # one assignment per HIT: every HIT its own worker, and an MTurk results file read back without a map
    rng = np.random.default_rng(4)
    header = ["WorkerId", "Input.study_signature", *(f"Input.pair_id_{k}" for k in range(1, 5)),
              *(f"Answer.content-{k}" for k in range(1, 5))]
    rows = [[f"W{h}", study.info["signature"], *(hit + [""] * (4 - len(hit))),
             *([_rating(quality[p], rng) if p in quality else 5 for p in hit] + [""] * (4 - len(hit)))]
            for h, hit in enumerate(ids)]
    assert run_cli(["annotate", "import", tmp_path / "study", _write(tmp_path / "results.csv", [header, *rows])],
                   capsys).code == 0
    out = run_cli(["annotate", "agreement", tmp_path / "study", "--resamples", "10"], capsys).out
    assert "- content:" not in out.partition("## What the figures rest on")[0]  # every statistic available
    assert "7 of 7 overlap copies counted as a second rating" in out
    frame, _ = study_ratings(study)
    assert len(frame) == len(rated)  # a copy's rating is a second rating of its pair, not a row of its own
    from tsteval.metaeval.rated.loop import ceilings

    row = ceilings(study).iloc[0]
    assert row["pairs_2_raters"] == 7 and np.isfinite(row["split_half"])


def test_an_annotator_who_rates_a_pair_and_its_copy_is_not_a_second_annotator(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    study, _ = _study(tmp_path, capsys, 12, "--overlap", "0.2")
    rows = [["W1", p, "content", 3, study.info["signature"]]
            for p in study.pairs.loc[study.pairs["kind"] != "check", "pair_id"]]
    _write(tmp_path / "long.csv", [["annotator", "pair_id", "question", "value", "study_signature"], *rows])
    assert run_cli(["annotate", "import", tmp_path / "study", tmp_path / "long.csv"], capsys).code == 0
    from tsteval.metaeval.rated.loop import ceilings

    assert ceilings(study).iloc[0]["pairs_2_raters"] == 0


def test_invited_annotators_rate_every_pair_but_the_copies(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study, _ = _study(tmp_path, capsys, 12, "--overlap", "0.2")
    assert run_cli(["annotate", "invite", tmp_path / "study", "--annotators", "1"], capsys).code == 0
    store = study.store()
    try:
        assigned = store.assignment(store.find("a1"))
    finally:
        store.close()
    assert sorted(assigned) == sorted(study.pairs.loc[study.pairs["kind"] != "overlap", "pair_id"])


@pytest.mark.parametrize("share", ["1.5", "-0.1", "x"])
def test_a_bad_overlap_is_one_line(share: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    card, _ = scorecard(inputs=4)
    card.save(tmp_path / "run")
    outcome = run_cli(["annotate", "plan", tmp_path / "run", "--out", tmp_path / "study", "--items", "4",
                       "--overlap", share], capsys)
    assert outcome.code == 2 and "--overlap" in outcome.err.strip().splitlines()[-1]  # after argparse's usage line
    assert not (tmp_path / "study").exists()
