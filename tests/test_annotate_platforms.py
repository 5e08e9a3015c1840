"""Crowdsourcing platforms: export a study's pairs as MTurk batch input, read MTurk-style results back (without and
with --map), and refuse a bad file whole with one line naming file, row and column."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from annotate_study import make_study

from tsteval.annotate.study import Study
from tsteval.cli.main import main


def _write(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def _results(batch: Path, workers: list[str], value: int = 4) -> tuple[list[str], list[list[object]]]:
    """An MTurk batch results file for ``batch``: every worker does every HIT, all answers ``value``."""
    with batch.open(newline="", encoding="utf-8") as handle:
        hits = list(csv.DictReader(handle))
    per_hit = sum(1 for c in hits[0] if c.startswith("pair_id_"))
    header = ["HITId", "WorkerId", *(f"Input.{c}" for c in hits[0]),
              *(f"Answer.{q}-{k}" for k in range(1, per_hit + 1) for q in ("content", "fluency"))]
    rows = []
    for h, hit in enumerate(hits):
        for worker in workers:
            answers = [value if hit[f"pair_id_{k}"] else "" for k in range(1, per_hit + 1) for _ in range(2)]
            rows.append([f"HIT{h}", worker, *hit.values(), *answers])
    return header, rows


def _ratings(study_dir: Path) -> int:
    store = Study.open(study_dir).store()
    try:
        return len(store.ratings())
    finally:
        store.close()


@pytest.fixture()
def exported(tmp_path: Path) -> tuple[Path, Path, int]:
    study = make_study(tmp_path, items=4, questions=["content", "fluency"])
    assert main(["annotate", "export", str(tmp_path / "study"), "--format", "mturk", "--out",
                 str(tmp_path / "batch.csv")]) == 0
    return tmp_path / "study", tmp_path / "batch.csv", len(study.pair_ids)


def test_export_hides_systems_and_covers_every_pair(exported: tuple[Path, Path, int]) -> None:
    study, batch, n = exported
    text = batch.read_text(encoding="utf-8")
    with batch.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    ids = [r[f"pair_id_{k}"] for r in rows for k in range(1, 6) if r[f"pair_id_{k}"]]
    assert len(ids) == len(set(ids)) == n and len(rows) == -(-n // 5)
    assert "hostile" not in text and "good" not in text.replace("goodbye", "")


def test_mturk_results_import_without_a_map(exported: tuple[Path, Path, int], tmp_path: Path) -> None:
    study, batch, n = exported
    header, rows = _results(batch, ["W1", "W2"])
    _write(tmp_path / "results.csv", header, rows)
    assert main(["annotate", "import", str(study), str(tmp_path / "results.csv"), "--source", "mturk"]) == 0
    assert _ratings(study) == 2 * n * 2
    assert main(["annotate", "status", str(study)]) == 0


@pytest.mark.parametrize("damage, column", [("7", "Answer.content-2"), ("x", "Answer.content-2"),
                                            ("3.5", "Answer.content-2")])
def test_a_bad_cell_refuses_the_whole_file(exported: tuple[Path, Path, int], tmp_path: Path, damage: str,
                                           column: str, capsys: pytest.CaptureFixture) -> None:
    study, batch, _ = exported
    header, rows = _results(batch, ["W1"])
    rows[1][header.index(column)] = damage
    _write(tmp_path / "results.csv", header, rows)
    assert main(["annotate", "import", str(study), str(tmp_path / "results.csv")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and f"results.csv:3: column {column}" in error
    assert _ratings(study) == 0


def test_unknown_pairs_and_duplicates_are_refused(exported: tuple[Path, Path, int], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    study, batch, _ = exported
    header, rows = _results(batch, ["W1"])
    rows[0][header.index("Input.pair_id_1")] = "p9999"
    _write(tmp_path / "unknown.csv", header, rows)
    assert main(["annotate", "import", str(study), str(tmp_path / "unknown.csv")]) == 2
    assert "no pair 'p9999'" in capsys.readouterr().err
    header, rows = _results(batch, ["W1"])
    _write(tmp_path / "twice.csv", header, rows + rows[:1])
    assert main(["annotate", "import", str(study), str(tmp_path / "twice.csv")]) == 2
    assert "again (first on line 2)" in capsys.readouterr().err
    assert _ratings(study) == 0


def test_a_foreign_file_imports_with_a_map(exported: tuple[Path, Path, int], tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    study, _, _ = exported
    sign = Study.open(study).info["signature"]
    _write(tmp_path / "survey.csv", ["participant_id", "item", "q_meaning", "q_fluent", "study_signature"],
           [["P1", "p0001", 5, 4, sign], ["P1", "p0002", 2, 3, sign], ["P2", "p0001", 4, "", sign]])
    argv = ["annotate", "import", str(study), str(tmp_path / "survey.csv"), "--map", "q_meaning=item:content",
            "--map", "q_fluent=item:fluency"]
    assert main(argv) == 0
    assert _ratings(study) == 5
    assert "fluency 2 of 3 (1 missing)" in capsys.readouterr().out
    assert main(["annotate", "import", str(study), str(tmp_path / "survey.csv"), "--map", "nonsense"]) == 2


def test_a_missing_pair_column_is_named_as_a_column(exported: tuple[Path, Path, int], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    """An MTurk file without ``Input.pair_id_2`` says the column is missing, not that no pair has that name."""
    study, batch, _ = exported
    header, rows = _results(batch, ["W1"])
    drop = header.index("Input.pair_id_2")
    _write(tmp_path / "results.csv", [c for i, c in enumerate(header) if i != drop],
           [[c for i, c in enumerate(row) if i != drop] for row in rows])
    assert main(["annotate", "import", str(study), str(tmp_path / "results.csv")]) == 2
    error = capsys.readouterr().err.strip()
    assert "no column 'Input.pair_id_2'" in error and "Answer.content-2" in error and "no pair" not in error
    _write(tmp_path / "survey.csv", ["participant_id", "q_meaning"], [["P1", 5]])
    argv = ["annotate", "import", str(study), str(tmp_path / "survey.csv"), "--map", "q_meaning=item:content"]
    assert main(argv) == 2
    assert "'item' is neither a column of the file nor a pair of this study" in capsys.readouterr().err
    assert _ratings(study) == 0


def test_a_cant_judge_cell_imports_as_no_rating(exported: tuple[Path, Path, int], tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    """``cant_judge`` in an answer cell is the answer "can't judge": stored without a value, not a rating."""
    from tsteval.annotate.reliability import collect
    from tsteval.annotate.study import Study

    study, batch, n = exported
    header, rows = _results(batch, ["W1"])
    rows[0][header.index("Answer.content-1")] = "cant_judge"
    _write(tmp_path / "results.csv", header, rows)
    assert main(["annotate", "import", str(study), str(tmp_path / "results.csv")]) == 0
    collected = collect(Study.open(study))
    assert len(collected.ratings) == 2 * n - 1 and collected.cant_judge == {"content": 1}
    rows[0][header.index("Answer.content-1")] = "n/a"
    _write(tmp_path / "bad.csv", header, rows)
    assert main(["annotate", "import", str(study), str(tmp_path / "bad.csv")]) == 2
    assert "'n/a' is not a number (nor cant_judge" in capsys.readouterr().err
