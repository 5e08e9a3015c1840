"""An import attaches ratings only to the texts raters were shown (the texts a results row carries, or the study's
signature in the batch), answers every question or says it missing, counts changed ratings, and reads the platforms'
own formats: MTurk's batch results (``tests/data/mturk_batch_results.csv``: the columns of MTurk's "Download CSV",
``${...}`` cells filled from the batch as MTurk fills them) with every answer in the crowd-form's
``Answer.taskAnswers`` JSON, from the HIT layout the export writes."""

from __future__ import annotations

import csv
import json
import math
import string
from html.parser import HTMLParser
from pathlib import Path

import pytest
from annotate_study import make_study
from badinput import expect_error, run_cli

from tsteval.annotate.study import Study, plan_study
from tsteval.core.errors import quote

FIXTURE = Path(__file__).with_name("data") / "mturk_batch_results.csv"
QUESTIONS = ["content", "fluency"]
ANSWERS = {1: {"content": 4, "fluency": 5}, 2: {"content": 3, "fluency": 2}}  # what the fixture's worker answers


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _export(study: Path, out: Path, capsys: pytest.CaptureFixture, per_hit: int = 2) -> tuple[list[dict], str]:
    outcome = run_cli(["annotate", "export", study, "--format", "mturk", "--per-hit", str(per_hit), "--out", out],
                      capsys)
    assert outcome.code == 0, outcome.err
    return _read(out), outcome.out


def _results(hits: list[dict[str, str]], path: Path, flat: bool = False, drop: tuple[str, ...] = ()) -> Path:
    """MTurk's batch results of ``hits`` (one assignment each) from the fixture; a short HIT's empty slot has no
    answer (the layout removed it); ``flat``: answers in ``Answer.FIELD`` columns instead of ``Answer.taskAnswers``
    (an HTML layout without crowd-form); ``drop``: leave out these columns and answer fields."""
    with FIXTURE.open(newline="", encoding="utf-8") as handle:
        header, template = list(csv.reader(handle))
    rows = []
    for n, hit in enumerate(hits):
        row = dict(zip(header, (string.Template(c).safe_substitute(hit, hit=n) for c in template), strict=True))
        answers = json.loads(row.pop("Answer.taskAnswers"))[0]
        answers = {k: v for k, v in answers.items() if hit[f"pair_id_{k.rsplit('-', 1)[1]}"] and k not in drop}
        if flat:
            row.update({f"Answer.{k}": next(o for o, on in v.items() if on) if isinstance(v, dict) else v
                        for k, v in answers.items()})
        else:
            row["Answer.taskAnswers"] = json.dumps([answers])
        rows.append({k: v for k, v in row.items() if k not in drop})
    columns = list(dict.fromkeys(c for row in rows for c in row))
    return _write(path, columns, [[row.get(c, "") for c in columns] for row in rows])


def _stored(study: Path) -> dict[tuple[str, str], float]:
    store = Study.open(study).store()
    try:
        return {(r.pair_id, r.question): r.value for r in store.ratings().itertuples()}
    finally:
        store.close()


@pytest.fixture()
def study(tmp_path: Path) -> Path:
    """A study of 5 inputs x 3 systems, a repeat and a check: 17 pairs, 9 HITs of 2, the last holding 1."""
    make_study(tmp_path, items=5, questions=QUESTIONS)
    return tmp_path / "study"


def test_crowd_form_results_import_as_mturk_writes_them(study: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    hits, said = _export(study, tmp_path / "batch.csv", capsys)
    assert "1 row short of 2 pairs (row 9 holds 1)" in said and not hits[-1]["pair_id_2"]
    outcome = run_cli(["annotate", "import", study, _results(hits, tmp_path / "results.csv")], capsys)
    assert outcome.code == 0, outcome.err
    expected = {(hit[f"pair_id_{k}"], q): v for hit in hits for k, qs in ANSWERS.items() if hit[f"pair_id_{k}"]
                for q, v in qs.items()}
    assert _stored(study) == expected and len(expected) == 2 * 17
    assert "content 17 of 17, fluency 17 of 17" in outcome.out


class _Fields(HTMLParser):
    """The radio fields (name -> values) and ``${...}`` placeholders of a HIT layout."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, list[str]] = {}
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "input" and attributes.get("type") == "radio":
            assert "required" in attributes
            self.fields.setdefault(str(attributes["name"]), []).append(str(attributes["value"]))
        self.text += " ".join(str(v) for v in attributes.values())

    def handle_data(self, data: str) -> None:
        self.text += data


def test_the_layout_asks_every_question_in_the_fields_import_reads(study: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    hits, said = _export(study, tmp_path / "batch.csv", capsys, per_hit=3)
    assert "row 6 holds 2" in said
    parser = _Fields()
    parser.feed((tmp_path / "batch.layout.html").read_text(encoding="utf-8"))
    assert parser.fields == {f"{q}-{k}": ["1", "2", "3", "4", "5", "cant_judge"] for k in (1, 2, 3) for q in QUESTIONS}
    assert all(f"${{{c}_{k}}}" in parser.text for c in ("pair_id", "original", "rewrite", "target") for k in (1, 2, 3))
    # a worker who answers 3 on every field the layout shows (a short HIT's empty slot removed) is read back whole
    rows = [[f"W{n}", json.dumps([{f: {v: v == "3" for v in values} for f, values in parser.fields.items()
                                   if hit[f"pair_id_{f.rsplit('-', 1)[1]}"]}]), *hit.values()]
            for n, hit in enumerate(hits)]
    path = _write(tmp_path / "results.csv", ["WorkerId", "Answer.taskAnswers", *(f"Input.{c}" for c in hits[0])], rows)
    assert run_cli(["annotate", "import", study, path], capsys).code == 0
    assert set(_stored(study).values()) == {3.0} and len(_stored(study)) == 2 * 17
    # the layout's "can't judge" (value cant_judge) is an answer without a value, counted per question
    rows[0][1] = json.dumps([{**json.loads(rows[0][1])[0], "fluency-1": {v: v == "cant_judge"
                                                                         for v in parser.fields["fluency-1"]}}])
    path = _write(tmp_path / "judged.csv", ["WorkerId", "Answer.taskAnswers", *(f"Input.{c}" for c in hits[0])], rows)
    outcome = run_cli(["annotate", "import", study, path], capsys)
    assert outcome.code == 0, outcome.err
    assert "1 changed" in outcome.out and "fluency 17 of 17 (1 can't judge)" in outcome.out
    assert math.isnan(_stored(study)[(hits[0]["pair_id_1"], "fluency")])
    again = run_cli(["annotate", "import", study, path], capsys)  # a held "can't judge" is held, not new
    assert again.code == 0 and "0 new, 0 changed, 34 unchanged" in again.out, again.out


def test_results_of_another_study_of_the_same_run_are_refused(study: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    """Another seed plans as many pairs with the same ids from the same run: its ordinary HITs name only pairs that
    exist here, with other texts."""
    other = plan_study(tmp_path / "run", tmp_path / "other", items=5, seed=1, questions=QUESTIONS)
    this = Study.open(study)
    here = this.pairs.set_index("pair_id").assign(input=lambda f: f["input"].map(this.display),
                                                  output=lambda f: f["output"].map(this.display))  # as shown
    hits, _ = _export(tmp_path / "other", tmp_path / "other.csv", capsys)
    hits = [h for h in hits if all(h[f"pair_id_{k}"] in here.index for k in (1, 2))]
    first = next((n, k) for n, h in enumerate(hits) for k in (1, 2)
                 if (h[f"original_{k}"], h[f"rewrite_{k}"]) != tuple(here.loc[h[f"pair_id_{k}"], ["input", "output"]]))
    hit, k = hits[first[0]], first[1]
    name, column = ("original", "input") if hit[f"original_{k}"] != here.loc[hit[f"pair_id_{k}"], "input"] else \
        ("rewrite", "output")
    outcome = expect_error(["annotate", "import", study, _results(hits, tmp_path / "texts.csv",
                                                                  drop=("Input.study_signature",))],
                           capsys, f"texts.csv:{first[0] + 2}", f"Input.{name}_{k}", hit[f"pair_id_{k}"])
    assert quote(hit[f"{name}_{k}"]) in outcome.error and quote(here.loc[hit[f"pair_id_{k}"], column]) in outcome.error
    texts = tuple(f"Input.{c}_{k}" for c in ("original", "rewrite", "target") for k in (1, 2))
    expect_error(["annotate", "import", study, _results(hits, tmp_path / "signed.csv", drop=texts)], capsys,
                 "signed.csv:2", "Input.study_signature", repr(other.info["signature"]), "another study")
    expect_error(["annotate", "import", study, _results(hits, tmp_path / "bare.csv",
                                                        drop=(*texts, "Input.study_signature"))],
                 capsys, "bare.csv", "Input.pair_id_1", "study_signature", this.info["signature"])
    assert _stored(study) == {}


def test_a_question_without_answer_columns_is_refused_or_said_missing(study: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    hits, _ = _export(study, tmp_path / "batch.csv", capsys)
    path = _results(hits, tmp_path / "results.csv", flat=True, drop=("fluency-1", "fluency-2"))
    expect_error(["annotate", "import", study, path], capsys, "results.csv", "no fluency answer", "Input.pair_id_1",
                 "--partial")
    assert _stored(study) == {}
    outcome = run_cli(["annotate", "import", study, path, "--partial"], capsys)
    assert outcome.code == 0 and "content 17 of 17, fluency 0 of 17 (17 missing)" in outcome.out
    assert {q for _, q in _stored(study)} == {"content"} and len(_stored(study)) == 17


def test_a_blank_answer_of_a_long_file_is_said_missing(study: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture) -> None:
    opened = Study.open(study)
    rated = opened.pairs.loc[opened.pairs["kind"] == "rated", "pair_id"]
    rows = [["w1", p, q, "4", opened.info["signature"]] for p in rated for q in QUESTIONS][:-1]
    path = _write(tmp_path / "long.csv", ["annotator", "pair_id", "question", "value", "study_signature"], rows)
    outcome = run_cli(["annotate", "import", study, path], capsys)
    assert outcome.code == 0 and "content 15 of 15, fluency 14 of 15 (1 missing)" in outcome.out


def test_reimporting_changed_ratings_counts_the_changes(study: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    hits, _ = _export(study, tmp_path / "batch.csv", capsys)
    path = _results(hits, tmp_path / "results.csv", flat=True)
    assert "34 new, 0 changed, 0 unchanged" in run_cli(["annotate", "import", study, path], capsys).out
    header, *rows = list(csv.reader(path.open(newline="", encoding="utf-8")))
    for row in rows[:3]:
        row[header.index("Answer.content-1")] = "1"
    _write(path, header, rows)
    outcome = run_cli(["annotate", "import", study, path], capsys)
    assert outcome.code == 0 and "0 new, 3 changed (their earlier values stay in the history), 31 unchanged" in \
        outcome.out
    stored = _stored(study)
    assert [stored[(hit["pair_id_1"], "content")] for hit in hits[:4]] == [1.0, 1.0, 1.0, 4.0]
    store = Study.open(study).store()
    try:
        assert store.history_count() == 34 + 3
    finally:
        store.close()


@pytest.mark.parametrize("fmt", ["mturk", "prolific", "csv"])
def test_every_export_carries_the_study_signature(fmt: str, study: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    assert run_cli(["annotate", "export", study, "--format", fmt, "--out", tmp_path / "batch.csv"], capsys).code == 0
    rows = _read(tmp_path / "batch.csv")
    assert rows and {r["study_signature"] for r in rows} == {Study.open(study).info["signature"]}


def test_a_radio_group_with_two_options_chosen_is_refused(study: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    hits, _ = _export(study, tmp_path / "batch.csv", capsys)
    path = _results(hits, tmp_path / "results.csv")
    text = path.read_text(encoding="utf-8").replace('""4"": true, ""5"": false', '""4"": true, ""5"": true', 1)
    path.write_text(text, encoding="utf-8")
    expect_error(["annotate", "import", study, path], capsys, "results.csv:2", "Answer.taskAnswers", "content-1",
                 "2 options")
    assert _stored(study) == {}


def test_a_long_file_carrying_the_texts_is_checked_against_them(study: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    """A survey of one's own built from ``export --format csv``, its long results carrying the texts shown (and no
    signature): one rewrite other than the study's refuses the file; the texts as exported import."""
    assert run_cli(["annotate", "export", study, "--format", "csv", "--out", tmp_path / "pairs.csv"], capsys).code == 0
    shown = _read(tmp_path / "pairs.csv")
    header = ["annotator", "pair_id", "question", "value", "original", "rewrite"]
    rows = [["w1", p["pair_id"], q, "3", p["original"], p["rewrite"]] for p in shown for q in QUESTIONS]
    rows[9][5] = "a rewrite nobody was shown ."
    expect_error(["annotate", "import", study, _write(tmp_path / "long.csv", header, rows)], capsys, "long.csv:11",
                 "column rewrite", rows[9][1], "'a rewrite nobody was shown .'", quote(shown[4]["rewrite"]))
    assert _stored(study) == {}
    rows[9][5] = shown[4]["rewrite"]
    assert run_cli(["annotate", "import", study, _write(tmp_path / "long.csv", header, rows)], capsys).code == 0
    assert len(_stored(study)) == 2 * 17


def test_map_names_the_fields_of_a_crowd_form_of_ones_own(study: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    """A layout of one's own, one pair a HIT (a batch made from the csv export), with fields ``sense`` and ``flow``:
    MTurk writes them into ``Answer.taskAnswers``, and ``--map Answer.sense=...`` reads them."""
    assert run_cli(["annotate", "export", study, "--format", "csv", "--out", tmp_path / "batch.csv"], capsys).code == 0
    hits = [{"pair_id_1": p["pair_id"], **p} for p in _read(tmp_path / "batch.csv")]
    header = ["WorkerId", "Input.pair_id_1", "Input.original_1", "Input.rewrite_1", "Answer.taskAnswers"]
    rows = [["W1", h["pair_id_1"], h["original"], h["rewrite"],
             json.dumps([{"sense": {"1": False, "2": True}, "flow": "5"}])] for h in hits]
    path = _write(tmp_path / "results.csv", header, rows)
    argv = ["annotate", "import", study, path, "--map", "Answer.sense=Input.pair_id_1:content", "--map",
            "Answer.flow=Input.pair_id_1:fluency"]
    assert run_cli(argv, capsys).code == 0
    assert set(_stored(study).items()) == {((h["pair_id_1"], q), v) for h in hits for q, v in (("content", 2.0),
                                                                                                ("fluency", 5.0))}
