"""Ratings are only ever read against what was rated: every command that reads a study refuses a study folder whose
sample or questions changed after planning, meta-evaluation refuses a run whose texts differ from the rated pairs',
and an import refuses a malformed row (a missing question, value or pair; a cut-off last line) instead of skipping
it, while a blank answer cell of a platform's wide file stays "not rated"."""

from __future__ import annotations

import csv
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from annotate_study import make_study
from badinput import expect_error, run_cli

from tsteval.annotate.study import Study
from tsteval.scorecard import Scorecard

READERS = {"agreement": ["annotate", "agreement", "{study}", "--resamples", "10"],
           "status": ["annotate", "status", "{study}"],
           "serve": ["annotate", "serve", "{study}"],
           "invite": ["annotate", "invite", "{study}", "--annotators", "1"],
           "export": ["annotate", "export", "{study}", "--format", "mturk", "--out", "{tmp}/batch.csv"],
           "import": ["annotate", "import", "{study}", "{tmp}/long.csv"],
           "meta-eval": ["meta-eval", "{run}", "--ratings", "{study}", "--out", "{tmp}/meta", "--resamples", "10"],
           "choose-profile": ["meta-eval", "{run}", "--ratings", "{study}", "--choose-profile", "{tmp}/p.json",
                              "--resamples", "10"]}
WRITTEN = ("batch.csv", "meta", "p.json")


def _write(path: Path, rows: list[list[object]], cut: int = 0) -> Path:
    """``rows`` as a CSV file, its last ``cut`` characters cut off."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    if cut:
        path.write_bytes(path.read_bytes()[:-cut])
    return path


def _long(study: Study) -> list[list[object]]:
    """A long results file: every rated pair rated once on each question by one of three workers (and the study's
    signature, which ties a file without texts to the study)."""
    rated = study.pairs.loc[study.pairs["kind"] == "rated", "pair_id"]
    sign = study.info["signature"]
    return [["study_signature", "annotator", "pair_id", "question", "value"],
            *([sign, f"w{i % 3}", p, q, 1 + i % 5] for i, p in enumerate(rated) for q in study.template.names)]


def _count(folder: Path) -> int:
    """How many current ratings the study folder's database holds (read without opening the study)."""
    with sqlite3.connect(folder / "ratings.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]


@pytest.fixture()
def rated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> dict:
    """A run, a study of it with every rated pair rated, and ``annotate serve`` recording what it would serve."""
    study = make_study(tmp_path, items=6, questions=["content", "fluency"])
    _write(tmp_path / "long.csv", _long(study))
    assert run_cli(["annotate", "import", tmp_path / "study", tmp_path / "long.csv"], capsys).code == 0
    served: list[object] = []
    monkeypatch.setattr("tsteval.annotate.server.serve", lambda study, *a, **k: served.append(study))
    return {"tmp": tmp_path, "study": study, "served": served}


def _argv(name: str, tmp: Path, run: str = "run") -> list[str]:
    return [a.format(study=tmp / "study", run=tmp / run, tmp=tmp) for a in READERS[name]]


@pytest.mark.parametrize("name", READERS)
def test_an_intact_study_is_read_by_every_command(name: str, rated: dict, capsys: pytest.CaptureFixture) -> None:
    assert run_cli(_argv(name, rated["tmp"]), capsys).code == 0
    assert len(rated["served"]) == (name == "serve")


@pytest.mark.parametrize("name", READERS)
def test_an_edited_sample_is_refused_by_every_command(name: str, rated: dict, capsys: pytest.CaptureFixture) -> None:
    tmp = rated["tmp"]
    pairs = pd.read_csv(tmp / "study" / "pairs.csv", dtype=str, keep_default_na=False)
    pairs.loc[0, "output"] = "a rewrite nobody rated ."
    pairs.to_csv(tmp / "study" / "pairs.csv", index=False)
    before = _count(tmp / "study")
    expect_error(_argv(name, tmp), capsys, "pairs.csv", "planned")
    assert not rated["served"] and not [n for n in WRITTEN if (tmp / n).exists()]
    assert _count(tmp / "study") == before


@pytest.mark.parametrize("name", ["agreement", "serve", "choose-profile"])
def test_edited_questions_are_refused(name: str, rated: dict, capsys: pytest.CaptureFixture) -> None:
    template = rated["tmp"] / "study" / "template.yaml"
    template.write_text(template.read_text(encoding="utf-8").replace("How", "Rate how", 1), encoding="utf-8")
    expect_error(_argv(name, rated["tmp"]), capsys, "template.yaml", "planned")
    assert not rated["served"] and not (rated["tmp"] / "p.json").exists()


def _other_run(tmp: Path, change: object) -> None:
    card = Scorecard.load(tmp / "run")
    Scorecard(change(card.frame.copy()), dict(card.signatures)).save(tmp / "other", overwrite=True)


@pytest.mark.parametrize("name", ["meta-eval", "choose-profile"])
def test_a_run_with_other_texts_is_refused(name: str, rated: dict, capsys: pytest.CaptureFixture) -> None:
    tmp, pair = rated["tmp"], rated["study"].pairs.iloc[0]
    _other_run(tmp, lambda f: f.assign(output=f["output"].where(f["output"] != pair.output, "another rewrite .")))
    expect_error(_argv(name, tmp, "other"), capsys, pair.pair_id, "output", "rated")
    _other_run(tmp, lambda f: f[f["output"] != pair.output])
    expect_error(_argv(name, tmp, "other"), capsys, pair.pair_id, "no row")
    assert not [n for n in WRITTEN if (tmp / n).exists()]


def test_a_run_with_the_same_texts_is_accepted(rated: dict, capsys: pytest.CaptureFixture) -> None:
    shutil.copytree(rated["tmp"] / "run", rated["tmp"] / "copied")
    assert run_cli(_argv("choose-profile", rated["tmp"], "copied"), capsys).code == 0


@pytest.mark.parametrize("column, fix", [("question", "question"), ("value", "value"), ("pair_id", "pair")])
def test_a_long_row_missing_a_cell_is_refused(column: str, fix: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture) -> None:
    study = make_study(tmp_path, items=4, questions=["content", "fluency"])
    rows = _long(study)
    rows[3][rows[0].index(column)] = ""
    _write(tmp_path / "long.csv", rows)
    outcome = expect_error(["annotate", "import", tmp_path / "study", tmp_path / "long.csv"], capsys,
                           "long.csv:4", column)
    assert fix in outcome.error and _count(tmp_path / "study") == 0


@pytest.mark.parametrize("cut", [1, 2, 4])
def test_a_cut_off_long_file_is_refused(cut: int, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The last line ``...,fluency,5`` cut by 1 leaves ``...,fluency,`` (an empty value), by 2 ``...,fluency`` (a
    cell short), by 4 ``...,fluen`` (a cell short, the question cut)."""
    study = make_study(tmp_path, items=4, questions=["content", "fluency"])
    rows = _long(study)
    _write(tmp_path / "long.csv", rows, cut=cut + 2)  # the line end, then ``cut`` characters
    expect_error(["annotate", "import", tmp_path / "study", tmp_path / "long.csv"], capsys, f"long.csv:{len(rows)}")
    assert _count(tmp_path / "study") == 0


def _wide(study: Study) -> list[list[object]]:
    """A wide results file: one row per worker, an answer column per pair and question (``--map``)."""
    rated = study.pairs.loc[study.pairs["kind"] == "rated", "pair_id"].tolist()
    header = ["study_signature", "WorkerId", *(f"{p}_{q}" for p in rated for q in study.template.names)]
    return [header, *([study.info["signature"], w, *(3 for _ in header[2:])] for w in ("W1", "W2"))]


def _map(study: Study) -> list[str]:
    rated = study.pairs.loc[study.pairs["kind"] == "rated", "pair_id"].tolist()
    return [a for p in rated for q in study.template.names for a in ("--map", f"{p}_{q}={p}:{q}")]


def test_a_cut_off_wide_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = make_study(tmp_path, items=4, questions=["content", "fluency"])
    path = _write(tmp_path / "wide.csv", _wide(study), cut=2 + 4)  # the line end and the last two answers
    expect_error(["annotate", "import", tmp_path / "study", path, *_map(study)], capsys, "wide.csv:3", "cut off")
    assert _count(tmp_path / "study") == 0


def test_a_blank_wide_cell_stays_not_rated(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    study = make_study(tmp_path, items=4, questions=["content", "fluency"])
    rows = _wide(study)
    rows[2][5] = ""
    _write(tmp_path / "wide.csv", rows)
    assert run_cli(["annotate", "import", tmp_path / "study", tmp_path / "wide.csv", *_map(study)], capsys).code == 0
    assert _count(tmp_path / "study") == 2 * (len(rows[0]) - 2) - 1


@pytest.mark.parametrize("name", ["agreement", "invite", "choose-profile"])
def test_an_edited_study_json_is_blamed_on_study_json(name: str, rated: dict, capsys: pytest.CaptureFixture) -> None:
    """The settings edited, the sample intact: the error names study.json, not pairs.csv (issue 59, Messages)."""
    path = rated["tmp"] / "study" / "study.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"seed": 0', '"seed": 1'), encoding="utf-8")
    outcome = expect_error(_argv(name, rated["tmp"]), capsys, "study.json", "settings", "planned")
    assert "pairs.csv" not in outcome.error.partition(" (fix:")[0]
