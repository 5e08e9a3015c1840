"""Human ratings are numbers, whatever the file format (bad-input catalogue).

A rating written ``3,5`` or ``good`` is an error naming the file, the row and the column; an empty cell is
"no rating", counted and reported; CSV, JSONL and Parquet give the same scorecard and the same report.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from badinput import expect_error, run_cli

RATINGS = ("human_content_preservation", "human_style_intensity")
MANIFEST = """name: ratings
transfers:
  table: {table}
metrics:
  content:
    metrics: [chrf]
report:
  worst_examples: 1
  bootstrap_resamples: 20
"""


def _frame() -> pd.DataFrame:
    """2 systems x 2 settings x 6 items with varied outputs and ratings on a 1-5 scale (halves included)."""
    rng = np.random.default_rng(0)
    rows = []
    for system in ("A", "B"):
        for setting in ("x=1", "x=2"):
            for item in range(6):
                rows.append({"system": system, "setting": setting, "item": item,
                             "input": f"the food here was good and cheap {item}",
                             "output": f"the {'food ' * (item % 3)}here was {'bad ' * (item % 2)}today",
                             "source_style": "0", "target_style": "1",
                             **{h: float(rng.integers(2, 11)) / 2 for h in RATINGS}})
    return pd.DataFrame(rows)


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps({k: (None if isinstance(v, float) and np.isnan(v) else v)
                                            for k, v in row.items()}) + "\n" for row in frame.to_dict("records")))
    else:
        frame.to_parquet(path, index=False)
    return path


def _manifest(tmp_path: Path, table: Path) -> Path:
    path = tmp_path / f"{table.stem}.yaml"
    path.write_text(MANIFEST.format(table=table.name))
    return path


def _run(tmp_path: Path, table: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[Path, str]:
    out = tmp_path / f"run_{table.suffix[1:]}"
    outcome = run_cli(["run", _manifest(tmp_path, table), "--out", out, *extra], capsys)
    assert outcome.code == 0, outcome.err
    return out, outcome.err


def _with_empty_cells(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[[1, 7, 20], "human_content_preservation"] = np.nan
    frame.loc[[3], "human_style_intensity"] = np.nan
    return frame


def test_csv_jsonl_and_parquet_give_the_same_scorecard_and_report(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    frame = _with_empty_cells(_frame())
    reports, dtypes = {}, {}
    for suffix in (".csv", ".jsonl", ".parquet"):
        out, _ = _run(tmp_path, _write(frame, tmp_path / f"transfers{suffix}"), capsys, "--quiet")
        card = pd.read_parquet(out / "scorecard.parquet")
        dtypes[suffix] = card.dtypes[list(RATINGS)].astype(str).tolist()
        report = (out / "report.md").read_text()
        reports[suffix] = report[report.index("## Corpus aggregates"):]
    assert dtypes[".csv"] == dtypes[".jsonl"] == dtypes[".parquet"] == ["float64", "float64"]
    assert "### Human ratings" in reports[".csv"]
    assert "### content: `human_content_preservation` (n = 21 rated transfers)" in reports[".csv"]
    assert reports[".csv"] == reports[".parquet"] == reports[".jsonl"]


def test_empty_ratings_are_counted_printed_and_recorded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out, err = _run(tmp_path, _write(_with_empty_cells(_frame()), tmp_path / "transfers.csv"), capsys, "--quiet")
    lines = [line for line in err.splitlines() if "human ratings" in line]
    assert lines == ["[tsteval] human ratings: 4 empty cells are no rating and are left out of the agreement "
                     "statistics (human_content_preservation 3 of 24, human_style_intensity 1 of 24)"]
    run = json.loads((out / "run.json").read_text())
    assert run["human_ratings"] == {"columns": list(RATINGS),
                                    "empty": {"human_content_preservation": 3, "human_style_intensity": 1}}
    agreement = pd.read_csv(out / "meta_eval" / "metaeval.csv")
    assert set(agreement["rating"]) == {"human_content_preservation"}  # no style metric was scored
    assert set(agreement.query("level == 'sentence'")["n"]) == {21}
    counts = pd.read_csv(out / "meta_eval" / "counts.csv").set_index("rating")
    assert counts.loc["human_content_preservation", ["rated", "unrated", "used"]].tolist() == [21, 3, 21]
    assert counts.loc["human_style_intensity", ["rated", "unrated", "metrics"]].tolist() == [23, 1, 0]


def _bad_cell(frame: pd.DataFrame, row: int, column: str, value: object) -> pd.DataFrame:
    """The rating column as text, as a spreadsheet exports it (Parquet stores a string column), with one bad cell."""
    frame = frame.copy()
    frame[column] = [value if i == row else f"{v:g}" for i, v in enumerate(frame[column])]
    return frame


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_decimal_comma_is_an_error_with_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture, suffix: str) -> None:
    table = _write(_bad_cell(_frame(), 4, "human_style_intensity", "3,5"), tmp_path / f"transfers{suffix}")
    line = {".csv": ":6", ".jsonl": ":5", ".parquet": ""}[suffix]
    expect_error(["run", _manifest(tmp_path, table), "--out", tmp_path / "out"], capsys,
                 f"{table}{line}: row 5: the rating 'human_style_intensity' is '3,5', not a number "
                 "(fix: use a decimal point: 3.5)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["good", "NA", "nan", "inf", "4/5", True])
def test_text_in_a_rating_column_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture, value: object) -> None:
    table = _write(_bad_cell(_frame(), 9, "human_content_preservation", value), tmp_path / "transfers.jsonl")
    expect_error(["score", "--table", table, "--content", "chrf", "--out", tmp_path / "out"], capsys,
                 f"{table}:10: row 10: the rating 'human_content_preservation' is {value!r}, not a number",
                 "leave the cell empty for no rating")


def test_published_mir_ratings_are_parsed_strictly(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                   data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mir et al.'s ratings file with one decimal comma: the published loader reports it like a table."""
    root = tmp_path / "data" / "mir2019"
    root.mkdir(parents=True)
    for name in ("data", "transfer_model_outputs"):
        (root / name).symlink_to(data_root / "mir2019" / name)
    lines = (data_root / "mir2019" / "human_ratings.csv").read_text().splitlines(keepends=True)
    header, row = next(csv.reader([lines[0]])), next(csv.reader([lines[3]]))
    row[header.index("human_content_preservation")] = "4,5"
    cell = io.StringIO()
    csv.writer(cell, lineterminator="\n").writerow(row)
    (root / "human_ratings.csv").write_text("".join([*lines[:3], cell.getvalue(), *lines[4:]]))
    monkeypatch.setenv("TSTEVAL_DATA", str(tmp_path / "data"))
    manifest = tmp_path / "mir.yaml"
    manifest.write_text("transfers: {published: mir}\nmetrics: {content: {metrics: [chrf]}}\n")
    expect_error(["run", manifest, "--out", tmp_path / "out"], capsys,
                 f"{root / 'human_ratings.csv'}:4: the rating 'human_content_preservation' is '4,5', "
                 "not a number (fix: use a decimal point: 4.5)")
