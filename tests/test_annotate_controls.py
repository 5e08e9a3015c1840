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
def crowd(tmp_path: Path) -> dict:
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
    _write(tmp_path / "long.csv", rows)
    assert main(["annotate", "import", str(tmp_path / "study"), str(tmp_path / "long.csv")]) == 0
    return {"tmp": tmp_path, "study": Study.open(tmp_path / "study")}


def test_agreement_says_how_many_copies_and_repeats_it_rests_on(crowd: dict, capsys: pytest.CaptureFixture) -> None:
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
