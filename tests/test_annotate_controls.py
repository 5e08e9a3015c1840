"""Quality-control pairs that do their job and the researcher's controls (issue 59 items 4 and 7): repeats in the
HIT of their original and after it, overlap copies in HITs without it, and agreement and meta-evaluation saying how
many overlap copies and repeats each figure rests on."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from annotate_study import make_study

from tsteval.annotate.reliability import agreement, controls
from tsteval.annotate.study import Study
from tsteval.cli.main import main


def _write(path: Path, rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def _write_long(path: Path, study: Study, rows: list[list[object]]) -> Path:
    """A long results file of ``rows`` (header first) with ``study``'s signature in every row, which ties a file
    without texts to the study."""
    sign = study.info["signature"]
    return _write(path, [[*rows[0], "study_signature"], *([*row, sign] for row in rows[1:])])


def test_repeats_share_their_originals_hit_and_come_after_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = make_study(tmp_path, items=8, questions=["content"], repeats=6, overlap=0.5)
    assert main(["annotate", "export", str(tmp_path / "study"), "--format", "mturk", "--per-hit", "4", "--out",
                 str(tmp_path / "batch.csv")]) == 0
    out = capsys.readouterr().out
    assert "6 repeated pairs sit in the HIT of their original" in out and "12 overlap copies" in out
    with (tmp_path / "batch.csv").open(newline="", encoding="utf-8") as handle:
        hits = [[row[f"pair_id_{k}"] for k in range(1, 5)] for row in csv.DictReader(handle)]
    seen = [p for hit in hits for p in hit if p]
    assert sorted(seen) == sorted(study.pair_ids)
    repeats = [p for p in seen if p.startswith("r:")]
    assert len(repeats) == 6
    for hit in hits:
        for slot, pair in enumerate(hit):
            if pair.startswith("r:"):
                assert pair[2:] in hit[:slot], (pair, hit)
            if pair.startswith("o:"):
                assert pair[2:] not in hit and all(p.startswith("o:") or not p for p in hit)
    assert main(["annotate", "export", str(tmp_path / "study"), "--format", "mturk", "--per-hit", "1", "--out",
                 str(tmp_path / "one.csv")]) == 2
    assert "--per-hit 1 cannot hold a repeated pair beside its original" in capsys.readouterr().err


@pytest.fixture()
def crowd(tmp_path: Path, capsys: pytest.CaptureFixture) -> dict:
    """A study with 6 repeats and 12 overlap copies, rated as a crowd batch goes wrong: W1 rates every pair, 4
    copies and 2 repeats; W2 the other 8 copies and 4 repeats (of pairs W1 rated)."""
    study = make_study(tmp_path, items=8, questions=["content", "fluency"], repeats=6, overlap=0.5)
    kinds = study.pairs.set_index("pair_id")["kind"]
    copies, repeats = list(kinds.index[kinds == "overlap"]), list(kinds.index[kinds == "repeat"])
    rows = [["annotator", "pair_id", "question", "value"]]
    for i, pair in enumerate(study.pair_ids):
        kind = kinds[pair]
        worker = "W2" if (kind == "overlap" and pair in copies[4:]) or (kind == "repeat" and pair in repeats[2:]) \
            else "W1"
        rows += [[worker, pair, q, 1 + (i * 7 + len(q)) % 5] for q in ("content", "fluency")]
    _write_long(tmp_path / "long.csv", study, rows)
    assert main(["annotate", "import", str(tmp_path / "study"), str(tmp_path / "long.csv")]) == 0
    return {"tmp": tmp_path, "study": Study.open(tmp_path / "study"), "imported": capsys.readouterr().out}


def test_agreement_says_how_many_copies_and_repeats_it_rests_on(crowd: dict, capsys: pytest.CaptureFixture) -> None:
    assert "warning: content: 8 of 12 overlap copies counted as a second rating" in crowd["imported"]
    assert "warning: fluency: consistency rests on 2 of 6 repeated pairs" in crowd["imported"]
    result = agreement(crowd["study"], n_resamples=20)
    store = crowd["study"].store()
    table = controls(crowd["study"], store.ratings()).set_index("question")
    store.close()
    assert table.loc["content"].to_dict() == {"overlap_planned": 12, "overlap_rated": 12, "overlap_used": 8,
                                              "overlap_own": 4, "repeat_planned": 6, "repeat_rated": 6,
                                              "repeat_same": 2, "repeat_other": 4}
    assert result.ceiling.set_index("question").loc["content", "pairs"] == 8  # the 8 copies W2 rated
    assert result.repeats.groupby("annotator")["repeated"].max().to_dict() == {"W1": 2, "W2": 0}
    assert main(["annotate", "agreement", str(crowd["tmp"] / "study"), "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert ("content: 8 of 12 overlap copies counted as a second rating (12 rated; 4 left out, rated only by the "
            "annotator of the pair they copy)") in out
    assert ("content: consistency rests on 2 of 6 repeated pairs (6 rated; 4 left out, rated by another annotator "
            "than their original)") in out
    assert main(["meta-eval", str(crowd["tmp"] / "run"), "--ratings", str(crowd["tmp"] / "study"), "--resamples",
                 "20", "--quiet", "--out", str(crowd["tmp"] / "meta")]) == 0
    out = capsys.readouterr().out
    assert ("human_content (content): 24 pairs, 8 rated twice or more (8 of 12 overlap copies a second rating, 4 "
            "left out: rated only by their pair's own annotator)") in out
    assert "8 of 12 overlap copies a second rating" in (crowd["tmp"] / "meta" / "metaeval.md").read_text()


@pytest.fixture()
def careless(tmp_path: Path) -> dict:
    """Three workers rate every pair of a study with 2 check pairs: W1 and W2 by the pair, W3 the same but every
    check pair's content 1 (it is an unchanged copy: the answer is 5)."""
    study = make_study(tmp_path, items=6, questions=["content"], checks=2, repeats=2)
    rows = [["annotator", "pair_id", "question", "value"]]
    for worker, shift in (("W1", 0), ("W2", 1), ("W3", 2)):
        for i, pair in enumerate(study.pair_ids):
            if not pair.startswith("o:"):
                value = 5 if pair.startswith("c:") and worker != "W3" else 1 if pair.startswith("c:") else \
                    1 + (int(pair.lstrip("r:p")) * 3 + shift * (i % 2)) % 5
                rows.append([worker, pair, "content", value])
    _write_long(tmp_path / "long.csv", study, rows)
    assert main(["annotate", "import", str(tmp_path / "study"), str(tmp_path / "long.csv")]) == 0
    return {"tmp": tmp_path, "study": Study.open(tmp_path / "study"), "rows": rows}


def test_workers_are_excluded_by_name_or_failed_checks(careless: dict, capsys: pytest.CaptureFixture) -> None:
    import pandas as pd
    from scipy import stats

    tmp, study = careless["tmp"], careless["study"]
    assert main(["annotate", "agreement", str(tmp / "study"), "--resamples", "10", "--exclude-failed"]) == 0
    out = capsys.readouterr().out
    assert "2 annotators" in out and "excluded W3: failed the check pairs (0% of 2 content answers within a " \
        "point of 5)" in out
    assert main(["annotate", "agreement", str(tmp / "study"), "--resamples", "10", "--exclude", "W2,W3"]) == 0
    out = capsys.readouterr().out
    assert "1 annotators" in out and "excluded W2: named with --exclude" in out
    assert main(["annotate", "agreement", str(tmp / "study"), "--exclude", "W9"]) == 2
    assert "--exclude 'W9': no annotator of that name in the study (its annotators: W1, W2, W3)" in \
        capsys.readouterr().err
    assert main(["meta-eval", str(tmp / "run"), "--ratings", str(tmp / "study"), "--resamples", "10",
                 "--exclude-failed", "--out", str(tmp / "meta"), "--quiet"]) == 0
    assert "excluded W3: failed the check pairs" in capsys.readouterr().out
    long = pd.DataFrame(careless["rows"][1:], columns=careless["rows"][0])
    kept = long[(long["annotator"] != "W3") & long["pair_id"].isin(study.pairs.query("kind == 'rated'")["pair_id"])]
    means = kept.groupby("pair_id")["value"].mean()
    card = pd.read_csv(tmp / "run" / "scorecard.csv", dtype={k: str for k in ("item", "source_style", "target_style")})
    joined = study.pairs.set_index("pair_id").join(means, how="inner").merge(
        card, on=["system", "item", "source_style", "target_style"])
    table = pd.read_csv(tmp / "meta" / "metaeval.csv")
    got = table.query("metric == 'bleu@none' and level == 'sentence' and method == 'pearson'")["r"].iloc[0]
    assert got == pytest.approx(stats.pearsonr(joined["bleu@none"], joined["value"]).statistic)
    assert main(["meta-eval", str(tmp / "run"), "--exclude", "W3", "--out", str(tmp / "m2"),
                 "--rating", "content=bleu@none"]) == 2
    assert "--exclude needs --ratings STUDY" in capsys.readouterr().err


def test_the_ratings_export_is_one_tidy_row_per_rating(careless: dict, capsys: pytest.CaptureFixture) -> None:
    import pandas as pd

    tmp, study = careless["tmp"], careless["study"]
    assert main(["annotate", "export-ratings", str(tmp / "study"), "--out", str(tmp / "ratings.csv")]) == 0
    frame = pd.read_csv(tmp / "ratings.csv", dtype={"item": str})
    assert len(frame) == len(careless["rows"]) - 1 and frame["source"].eq("import").all()
    assert list(frame.columns[:6]) == ["annotator", "source", "pair_id", "kind", "of", "system"]
    row = frame.query("annotator == 'W1' and pair_id == 'p0001'").iloc[0]
    pair = study.pairs.set_index("pair_id").loc["p0001"]
    assert (row["system"], row["item"], row["aspect"], row["kind"]) == (pair["system"], pair["item"], "content",
                                                                        "rated")
    assert set(frame.query("kind == 'check'")["system"]) == {"check:copy"}
    assert main(["annotate", "export-ratings", str(tmp / "study"), "--out", str(tmp / "ratings.csv"),
                 "--exclude-failed"]) == 2  # an existing file is replaced only with --overwrite
    assert main(["annotate", "export-ratings", str(tmp / "study"), "--out", str(tmp / "ratings.csv"),
                 "--exclude-failed", "--overwrite"]) == 0
    assert "excluded W3" in capsys.readouterr().out
    assert set(pd.read_csv(tmp / "ratings.csv")["annotator"]) == {"W1", "W2"}


def test_identical_outputs_are_rated_once_and_counted_for_each_system(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """A system 'twin' gives 'good''s output on even items: those pairs are not shown (plan says how many), and the
    rating of 'good''s pair counts for 'twin' in meta-evaluation."""
    import pandas as pd
    from annotate_study import scorecard

    from tsteval.metaeval.rated.loop import study_ratings
    from tsteval.scorecard import Scorecard

    card, _ = scorecard(inputs=6)
    good = card.frame[card.frame["system"] == "good"]
    twin = good.assign(system="twin", output=good["output"].where(good["item"] % 2 == 0, good["output"] + " !"))
    Scorecard(pd.concat([card.frame, twin], ignore_index=True), dict(card.signatures)).save(tmp_path / "run")
    assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "study"), "--items", "12",
                 "--aspects", "content"]) == 0
    assert ("42 pairs to rate (12 inputs x 4 systems; 6 of 48 were identical to another system's output for the "
            "same input: rated once, counted for each system)") in capsys.readouterr().out
    study = Study.open(tmp_path / "study")
    same = study.pairs[study.pairs["kind"] == "identical"]
    assert len(same) == 6 and set(same["system"]) == {"twin"}
    of = study.pairs.set_index("pair_id").loc[same["of"]]
    assert (of["system"].to_numpy() == "good").all() and (of["output"].to_numpy() == same["output"].to_numpy()).all()
    assert not set(same["pair_id"]) & set(study.invited_pair_ids)
    assert main(["annotate", "export", str(tmp_path / "study"), "--format", "csv", "--out",
                 str(tmp_path / "batch.csv")]) == 0
    exported = pd.read_csv(tmp_path / "batch.csv")["pair_id"]
    assert len(exported) == len(study.pairs) - 6 and not set(same["pair_id"]) & set(exported)
    rated = study.pairs.query("kind == 'rated'")["pair_id"]
    _write_long(tmp_path / "long.csv", study, [["annotator", "pair_id", "question", "value"],
                                               *(["W1", p, "content", 1 + i % 5] for i, p in enumerate(rated))])
    assert main(["annotate", "import", str(tmp_path / "study"), str(tmp_path / "long.csv")]) == 0
    frame, _ = study_ratings(Study.open(tmp_path / "study"))
    assert len(frame) == 48
    value = dict(zip(rated, (1 + i % 5 for i in range(len(rated))), strict=True))
    keyed = frame.set_index(["system", "item", "source_style"])["human_content"]
    for pair in same.itertuples():
        assert keyed[("twin", pair.item, pair.source_style)] == value[pair.of]
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "study"), "--resamples", "10",
                 "--out", str(tmp_path / "meta"), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "meta" / "metaeval.csv")
    assert set(table.query("level == 'sentence'")["n"]) == {48}  # every system's row, the twin's included


def test_tokenised_texts_are_shown_as_written(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run of tokenised, lower-cased text: the page and the export show it detokenised and sentence-cased,
    pairs.csv keeps the run's text (meta-eval joins on it); --text-form as-is shows it as the run has it."""
    import pandas as pd
    from annotate_study import scorecard
    from starlette.testclient import TestClient

    from tsteval.annotate.server import make_app

    card, _ = scorecard(inputs=4)
    item = card.frame["item"].astype(str)
    frame = card.frame.assign(input="sir , the slip . i did n't " + item,
                              output="the slip , sir ? it 's " + card.frame["system"] + " " + item)
    type(card)(frame, dict(card.signatures)).save(tmp_path / "run")
    for folder, extra in (("study", []), ("raw", ["--text-form", "as-is"])):
        assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / folder), "--items", "4",
                     *extra]) == 0
        assert main(["annotate", "export", str(tmp_path / folder), "--format", "mturk", "--out",
                     str(tmp_path / f"{folder}.csv")]) == 0
    study = Study.open(tmp_path / "study")
    assert study.info["shown"] == "tokenised-lowercase" and Study.open(tmp_path / "raw").info["shown"] == "as-is"
    assert study.pairs["input"].str.startswith("sir , the slip .").all()  # the run's text, kept
    batch = pd.read_csv(tmp_path / "study.csv", dtype=str, keep_default_na=False)
    assert batch["original_1"].str.startswith("Sir, the slip. I didn't ").all()
    assert batch["rewrite_1"].str.match(r"^The slip, sir\? It's ").all()
    raw = pd.read_csv(tmp_path / "raw.csv", dtype=str, keep_default_na=False)
    assert raw["original_1"].str.startswith("sir , the slip . i did n't ").all()
    store = study.store()
    ((_, token),) = store.add_annotators(study.invited_pair_ids, seed=0, count=1)
    store.close()
    with TestClient(make_app(study), base_url="http://127.0.0.1:8765") as client:
        page = client.get(f"/a/{token}").text
    assert "Sir, the slip. I didn&#39;t " in page and "sir , the slip" not in page
    # MTurk's results carry the texts as the batch showed them: import compares them with the same (shown) texts
    slots = [k for k in range(1, 6) if f"pair_id_{k}" in batch]
    results = batch.rename(columns=lambda c: f"Input.{c}").assign(WorkerId=[f"W{n}" for n in range(len(batch))])
    for k in slots:
        for q in study.template.names:
            results[f"Answer.{q}-{k}"] = batch[f"pair_id_{k}"].map(lambda pair: "3" if pair else "")
    results.to_csv(tmp_path / "results.csv", index=False)
    assert main(["annotate", "import", str(tmp_path / "study"), str(tmp_path / "results.csv")]) == 0
    assert "unchanged; answers per question" in capsys.readouterr().out
