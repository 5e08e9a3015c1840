"""Catalogue: command-line options that used to be a traceback or a silently wrong result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from badinput import expect_error, run_cli
from test_outputs import argv, data  # noqa: F401  (data is a fixture)


def test_a_classifier_name_given_twice_is_refused(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    command = argv("score", data, tmp_path / "run")
    command[1:1] = ["--classifier", f"a={data / 'hh'}"]
    expect_error(command, capsys, "--classifier names 'a' twice", "give each --classifier a different NAME")
    assert not (tmp_path / "run").exists()


def test_a_style_given_twice_joins_the_files_not_silently_dropped(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    extra = tmp_path / "extra.txt"
    extra.write_text("the place was pos9000 pos9001 .\nthe food was pos9002 pos9003 .\n")
    command = ["train-classifier", "tfidf-lr", "--style", f"pos={data / 'pos.txt'}", "--style",
               f"pos={extra}", "--style", f"neg={data / 'neg.txt'}", "--out", tmp_path / "m", "--quiet"]
    outcome = run_cli(command, capsys)
    assert outcome.code == 0, outcome.err
    assert outcome.out.splitlines()[:2] == [
        "--style pos: 2 files joined, 42 texts (40 + 2)",
        f"tfidf-lr: 82 texts, 2 styles; held-out accuracy 1.000, macro-F1 1.000 (n=9); saved to {tmp_path / 'm'}"]


@pytest.mark.parametrize("name", ["a@b", "a|b", "a b", "sti=1"])
def test_a_classifier_name_must_make_a_clean_column(name: str, data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    command = argv("score", data, tmp_path / "run")
    command[command.index("--classifier") + 1] = f"{name}={data / 'style'}"
    if "=" in name:  # everything after the first '=' is the directory
        expect_error(command, capsys, f"the style classifier folder 1={data / 'style'} does not exist")
    else:
        expect_error(command, capsys, f"--classifier name {name!r} may hold only letters, digits")


@pytest.mark.parametrize(("seed", "fragment"), [("-3", "seed must be an integer in [0, 2**32), not '-3'"),
                                                 ("x", "seed must be an integer in [0, 2**32), not 'x'")])
def test_a_bad_seed_is_a_usage_error(seed: str, fragment: str, data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    outcome = run_cli(argv("score", data, tmp_path / "run") + ["--seed", seed], capsys)
    assert outcome.code == 2 and "invalid seed_type value" not in outcome.err
    assert fragment in outcome.err


def test_missing_word_vectors_are_one_line(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    missing = tmp_path / "nowhere"
    command = argv("score", data, tmp_path / "run") + ["--content", "wmd", "--vectors", missing]
    # the line names the folder, cut to 80 characters where the temporary folder is long (a worker's adds popen-gwN)
    expect_error(command, capsys, str(missing)[:60])
    assert not (tmp_path / "run").exists()


def test_a_damaged_second_model_stops_the_run_before_any_scoring(data: Path, tmp_path: Path, capsys,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """All models are loaded (and verified) first: no minutes of scoring before a damaged model is noticed."""
    import tsteval.metrics.style.scorer

    def must_not_score(*_args, **_kwargs):
        raise AssertionError("scored before every model was verified")

    monkeypatch.setattr(tsteval.metrics.style.scorer, "score_style", must_not_score)
    command = argv("score", data, tmp_path / "run") + ["--hh", f"h={tmp_path / 'no-such-model'}"]
    expect_error(command, capsys, "no-such-model")


def test_empty_rating_cells_are_counted_by_score(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    table = tmp_path / "t.csv"
    table.write_text("input,output,source_style,target_style,human_style\n"
                     "bad food,good food,neg,pos,4\nrude staff,friendly staff,neg,pos,\n")
    outcome = run_cli(["score", "--classifier", f"a={data / 'style'}", "--table", table, "--out", tmp_path / "run",
                       "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert "human_style 1 of 2" in outcome.err
    assert np.isnan(pd.read_parquet(tmp_path / "run" / "scorecard.parquet")["human_style"][1])


@pytest.mark.parametrize("column", ["input", "output"])
@pytest.mark.parametrize(("cell", "shown"), [('["a", "b"]', "a list ['a', 'b']"), ("7", "a number 7"),
                                             ("2.5", "a number 2.5"), ('{"x": 1}', "an object {'x': 1}")])
def test_a_jsonl_cell_that_is_not_text_names_file_line_and_column(column: str, cell: str, shown: str,
                                                                   data: Path, tmp_path: Path,  # noqa: F811
                                                                   capsys) -> None:
    """A JSON list or object in a text column was ``internal error: TypeError: unhashable type: 'list'`` (exit 70)."""
    rows = [{"input": '"the food was bad ."', "output": '"the food was good ."'} for _ in range(3)]
    rows[1][column] = cell
    table = tmp_path / "t.jsonl"
    table.write_text("".join(f'{{"input": {r["input"]}, "output": {r["output"]}}}\n' for r in rows))
    outcome = expect_error(["score", "--classifier", f"a={data / 'style'}", "--table", table, "--source-style",
                            "neg", "--target-style", "pos", "--out", tmp_path / "run", "--quiet"], capsys,
                           f"{table}:2: row 2: the {column} (column '{column}') is {shown}, not text",
                           f"write each {column} as one string")
    assert len(outcome.err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_list_as_a_style_label_is_refused(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    table = tmp_path / "t.jsonl"
    table.write_text('{"input": "bad food", "output": "good food", "source_style": "neg", "target_style": "pos"}\n'
                     '{"input": "rude staff", "output": "nice staff", "source_style": ["neg"], '
                     '"target_style": "pos"}\n')
    expect_error(["score", "--classifier", f"a={data / 'style'}", "--table", table, "--out", tmp_path / "run",
                  "--quiet"], capsys, f"{table}:2: row 2: the source_style (column 'source_style') is a list ['neg'], "
                  "not a label")
