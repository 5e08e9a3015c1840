"""CLI conventions: ``-`` for standard input, ``--format json`` / ``--signature``, ``score --hf``, hints that name
flags, rounded printed numbers and one ``--quiet`` on every subcommand (issue 13, items 4 and 5)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from badinput import NEGATIVE, POSITIVE, expect_error, run_cli, sentences

from tsteval.cli.main import build_parser
from tsteval.core import progress

PAIRS = "the food was bad\tthe food was good\nthe staff was rude\tthe staff was friendly\n"
STYLES = ["--source-style", "0", "--target-style", "1"]


@pytest.fixture(scope="module")
def clf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tfidf-lr style classifier (styles 0 and 1) on synthetic reviews."""
    root = tmp_path_factory.mktemp("conventions")
    (root / "neg.txt").write_text("\n".join(sentences(NEGATIVE, 1)) + "\n")
    (root / "pos.txt").write_text("\n".join(sentences(POSITIVE, 2)) + "\n")
    from tsteval.cli.main import main

    assert main(["train-classifier", "tfidf-lr", "--style", f"0={root / 'neg.txt'}", "--style",
                 f"1={root / 'pos.txt'}", "--out", str(root / "clf"), "--quiet"]) == 0
    return root / "clf"


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))


def _expected_json(out: Path) -> dict:
    summary = pd.read_csv(out / "summary.csv", dtype=str).astype({"mean": float, "ci_low": float, "ci_high": float,
                                                                  "n": int, "n_empty": int})
    return {"rows": 2, "out": str(out), "notices": json.loads((out / "notices.json").read_text()),
            "summary": [{"system": r.system, "setting": r.setting, "source_style": r.source_style,
                         "target_style": r.target_style, "direction": f"{r.source_name} → {r.target_name}",
                         "metric": r.metric, "mean": r.mean,
                         "low": r.ci_low, "high": r.ci_high, "n": r.n, "n_empty": r.n_empty}
                        for r in summary.itertuples()],
            "signatures": json.loads((out / "signatures.json").read_text())}


def test_tsv_from_stdin_as_json(clf: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    _stdin(monkeypatch, PAIRS)
    out = tmp_path / "run"
    outcome = run_cli(["score", "--tsv", "-", *STYLES, "--classifier", f"x={clf}", "--out", out, "--format", "json"],
                      capsys)
    assert outcome.code == 0, outcome.err
    assert json.loads(outcome.out) == _expected_json(out)
    assert outcome.err.splitlines()[-1] == f"scorecard: 2 rows x 5 metrics written to {out}"
    card = pd.read_csv(out / "scorecard.csv")
    assert card["input"].tolist() == ["the food was bad", "the staff was rude"]


def test_pipeline_through_the_installed_script(clf: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "tsteval"
    out = tmp_path / "run"
    done = subprocess.run(f"echo -e {PAIRS.strip()!r} | {script} score --tsv - --source-style 0 --target-style 1 "
                          f"--classifier x={clf} --out {out} --format json", shell=True, executable="/bin/bash",
                          capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == _expected_json(out)


def test_signature_lines(clf: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    _stdin(monkeypatch, PAIRS)
    out = tmp_path / "run"
    outcome = run_cli(["score", "--tsv", "-", *STYLES, "--classifier", f"x={clf}", "--out", out, "--signature"],
                      capsys)
    assert outcome.code == 0, outcome.err
    summary = pd.read_csv(out / "summary.csv")
    expected = [f"{r.metric} = {r.mean:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] n=2 {r.signature}"
                for r in summary.itertuples()]
    assert outcome.out.splitlines() == [*expected, f"scorecard: 2 rows x 5 metrics written to {out}"]
    assert outcome.out.splitlines()[0].startswith("sti@x = ")


def test_one_of_pairs_from_stdin(clf: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    (tmp_path / "in.txt").write_text("the food was bad\nthe staff was rude\n")
    _stdin(monkeypatch, "the food was good\nthe staff was friendly\n")
    out = tmp_path / "run"
    outcome = run_cli(["score", "--pairs", tmp_path / "in.txt", "-", *STYLES, "--classifier", f"x={clf}",
                       "--out", out, "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert pd.read_csv(out / "scorecard.csv")["output"].tolist() == ["the food was good", "the staff was friendly"]


def test_stdin_errors_name_stdin_and_line(clf: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    _stdin(monkeypatch, "a b\tc d\nno tab here\n")
    expect_error(["score", "--tsv", "-", *STYLES, "--classifier", f"x={clf}", "--out", tmp_path / "r"], capsys,
                 "<stdin>:2: expected input<TAB>output but found 0 TABs")
    expect_error(["score", "--pairs", "-", "-", *STYLES, "--classifier", f"x={clf}", "--out", tmp_path / "r"],
                 capsys, "<stdin>: the inputs and the outputs cannot both be read from standard input")
    _stdin(monkeypatch, "input,output\na,b\n")
    expect_error(["score", "--table", "-", "--classifier", f"x={clf}", "--out", tmp_path / "r"], capsys,
                 "<stdin>: a table read from standard input needs its format", "--table-format")
    _stdin(monkeypatch, '{"input": "a b", "output": "c d"}\n{"input": "a b"\n')
    expect_error(["score", "--table", "-", "--table-format", "jsonl", "--classifier", f"x={clf}", "--out",
                  tmp_path / "r"], capsys, "<stdin>:2: invalid JSON")
    assert not (tmp_path / "r").exists()


def test_table_from_stdin_with_style_flags(clf: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    _stdin(monkeypatch, "input,output\nthe food was bad,the food was good\n")
    expect_error(["score", "--table", "-", "--table-format", "csv", "--classifier", f"x={clf}", "--out",
                  tmp_path / "r"], capsys,
                 "<stdin>: no column 'source_style' for the source_style; the columns are ['input', 'output'] "
                 "(fix: add a column 'source_style', or give one value for every row with --source-style)")
    _stdin(monkeypatch, "input,output\nthe food was bad,the food was good\n")
    outcome = run_cli(["score", "--table", "-", "--table-format", "csv", *STYLES, "--classifier", f"x={clf}",
                       "--out", tmp_path / "r", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err


def test_out_dash_is_refused(clf: Path, capsys, monkeypatch) -> None:
    _stdin(monkeypatch, PAIRS)
    outcome = run_cli(["score", "--tsv", "-", *STYLES, "--classifier", f"x={clf}", "--out", "-"], capsys)
    assert outcome.code == 2 and "-" in outcome.error
    assert not Path("-").exists()


def test_score_from_a_saved_hf_dataset(clf: Path, tmp_path: Path, capsys) -> None:
    import datasets

    rows = {"input": ["the food was bad", "the staff was rude"], "output": ["the food was good", "the staff was nice"],
            "source_style": ["0", "0"], "target_style": ["1", "1"]}
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows),
                          "dev": datasets.Dataset.from_dict(rows)}).save_to_disk(tmp_path / "ds")
    expect_error(["score", "--hf", tmp_path / "ds", "--classifier", f"x={clf}", "--out", tmp_path / "r"], capsys,
                 "split None not found; the splits are ['dev', 'test'] (fix: pass --split with one of them)")
    outcome = run_cli(["score", "--hf", tmp_path / "ds", "--split", "test", "--classifier", f"x={clf}",
                       "--out", tmp_path / "r", "--format", "json"], capsys)
    assert outcome.code == 0, outcome.err
    document = json.loads(outcome.out)
    assert document["rows"] == 2 and [r["metric"] for r in document["summary"]] == [
        "sti@x", "sti_norm@x", "target_prob@x", "style_strength@x", "target_acc@x"]
    assert pd.read_csv(tmp_path / "r" / "scorecard.csv")["output"].tolist() == rows["output"]


def test_training_hints_name_flags(tmp_path: Path, capsys) -> None:
    (tmp_path / "corpus.csv").write_text("sentence,style\na b,0\nc d,1\n")
    expect_error(["build-lexicon", "--table", tmp_path / "corpus.csv", "--out", tmp_path / "lex.json"], capsys,
                 "no column 'text' for the text", "(fix: name the text column with --text-col)")


def test_python_api_hints_keep_keywords(tmp_path: Path) -> None:
    from tsteval.core.errors import InputError
    from tsteval.readers.tables import load_table_corpus, load_table_transfers

    (tmp_path / "t.csv").write_text("input,output\na,b\n")
    with pytest.raises(InputError, match=r"name the column with source_col=\.\.\., or give one value for every "
                                         r"row with source_style=\.\.\."):
        load_table_transfers(tmp_path / "t.csv")
    with pytest.raises(InputError, match=r"name the text column with text_col=\.\.\."):
        load_table_corpus(tmp_path / "t.csv")


def test_every_subcommand_has_quiet() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    quiet = {}
    for name, parser in sub.choices.items():
        steps = next((a for a in parser._actions if a.dest == "step"), None)  # a group: annotate plan, serve, ...
        for step, command in (steps.choices.items() if steps else [("", parser)]):
            quiet[f"{name} {step}".strip()] = "quiet" in {a.dest for a in command._actions}
    annotate = [f"annotate {s}" for s in ("plan", "invite", "serve", "status", "export", "import", "agreement",
                                      "export-ratings")]
    assert quiet == dict.fromkeys(["train-classifier", "train-metric", "build-lexicon", "score", "run", "train-pairs",
                                   "compliancy", "compare", "explore", "meta-eval", *annotate], True)


def test_quiet_silences_library_bars(capsys) -> None:
    from huggingface_hub.utils import are_progress_bars_disabled
    from transformers.utils import logging as hf_logging

    with progress.quieted():
        assert progress.is_quiet() and not hf_logging.is_progress_bar_enabled() and are_progress_bars_disabled()
        assert os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] == "1"
        assert list(progress.progress(range(3), "step")) == [0, 1, 2]
    assert not progress.is_quiet() and hf_logging.is_progress_bar_enabled() and not are_progress_bars_disabled()
    assert capsys.readouterr().err == ""


def test_libraries_first_imported_while_quiet_leave_without_a_warning() -> None:
    """huggingface_hub and datasets imported inside the quiet block: leaving it re-enables their bars and prints
    nothing (huggingface_hub's "Cannot enable progress bars" warning came from an environment switch)."""
    code = ("from tsteval.core.progress import quieted\n"
            "with quieted():\n    import huggingface_hub.utils as hub, datasets\n"
            "print(hub.are_progress_bars_disabled(), datasets.is_progress_bar_enabled())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "False True\n", "")


def test_plan_log_rounds_accuracy() -> None:
    from tsteval.experiment.plan.models import rounded as _rounded

    assert _rounded(0.8991596638655462) == "0.899"
    assert _rounded(None) == "none"
