"""Outputs never destroy what tsteval did not create: the one ``--out`` rule of ``tsteval.core.atomic``, through
the CLI.

Every command that writes is refused, before any work and with one line, when ``--out`` is a file, standard
output, under a file, a folder tsteval did not write, an output of another kind, or (without ``--overwrite``) an
output of the same kind; the user's files survive byte for byte and no temporary folder is left behind.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from badinput import expect_error, run_cli
from conftest import run_cache

from tsteval.core.atomic import MARKER, remove_stale_temporaries
from tsteval.scorecard import Scorecard

TINY = Path(__file__).resolve().parent / "data" / "tiny_manifest.yaml"
DIRECTORY_COMMANDS = ("train-classifier", "train-pairs", "score", "compliancy", "run")
WORDS = {"pos": ("good", "great", "lovely", "tasty", "friendly"), "neg": ("bad", "awful", "rude", "cold", "slow")}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny synthetic style files, transfers and a style and a pair classifier trained on them through the CLI."""
    root = tmp_path_factory.mktemp("outputs")
    for style, words in WORDS.items():
        lines = [f"{words[i % 5]} {style}{3 * i} {style}{3 * i + 1} {style}{3 * i + 2} {words[(i + 2) % 5]}"
                 for i in range(40)]
        (root / f"{style}.txt").write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        from tsteval.cli.main import main

        assert main(["train-classifier", "tfidf-lr", "--style", f"pos={root / 'pos.txt'}",
                     "--style", f"neg={root / 'neg.txt'}", "--out", str(root / "style"), "--quiet"]) == 0
        assert main(["train-pairs", "features", "--left", str(root / "pos.txt"), "--right", str(root / "pos.txt"),
                     "--out", str(root / "hh")]) == 0
    return root


def argv(command: str, data: Path, out: Path | str) -> list[str]:
    """A working command line for ``command`` writing to ``out``."""
    style = ["--style", f"pos={data / 'pos.txt'}", "--style", f"neg={data / 'neg.txt'}"]
    return {
        "train-classifier": ["train-classifier", "tfidf-lr", *style, "--quiet"],
        "build-lexicon": ["build-lexicon", *style, "--D", "0.5"],
        "train-pairs": ["train-pairs", "features", "--left", data / "pos.txt", "--right", data / "pos.txt"],
        "score": ["score", "--classifier", f"a={data / 'style'}", "--pairs", data / "pos.txt", data / "neg.txt",
                  "--source-style", "pos", "--target-style", "neg", "--quiet"],
        "compliancy": ["compliancy", "--transfers", data / "transfers.csv", "--style-classifier", data / "style",
                       "--hh", data / "hh"],
        "run": ["run", TINY, "--quiet"],
    }[command] + ["--out", out]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (hidden ones included) with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def temporaries(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".tsteval-tmp-" in p.name]


def user_folder(parent: Path) -> Path:
    """A folder of the user's own files, as the reviewer had it."""
    folder = parent / "mine"
    (folder / "data").mkdir(parents=True)
    (folder / "thesis.tex").write_text("\\section{Results}\n")
    (folder / "data" / "ratings.csv").write_bytes(b"item,rating\n1,4\n")
    return folder


def test_train_classifier_into_a_folder_of_user_files_is_refused(data: Path, tmp_path: Path, capsys) -> None:
    folder = user_folder(tmp_path)
    before = snapshot(folder)
    expect_error(argv("train-classifier", data, folder), capsys, f"{folder} exists and was not written by tsteval",
                 "choose a new --out")
    assert snapshot(folder) == before and temporaries(tmp_path) == []


@pytest.mark.parametrize("command", [*DIRECTORY_COMMANDS, "build-lexicon"])
def test_foreign_folder_is_refused_for_every_command(command: str, data: Path, tmp_path: Path, request,
                                                      capsys) -> None:
    if command == "run":
        request.getfixturevalue("data_root")
    folder = user_folder(tmp_path)
    before = snapshot(folder)
    if command == "build-lexicon":
        expect_error(argv(command, data, folder), capsys, f"{folder} is a directory; --out takes a file name")
    else:
        expect_error(argv(command, data, folder), capsys, "exists and was not written by tsteval")
    assert snapshot(folder) == before and temporaries(tmp_path) == []


@pytest.mark.parametrize("command", [*DIRECTORY_COMMANDS, "build-lexicon"])
def test_out_at_a_file_under_a_file_or_stdout_is_refused(command: str, data: Path, tmp_path: Path, request,
                                                          capsys) -> None:
    if command == "run":
        request.getfixturevalue("data_root")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    if command == "build-lexicon":
        expect_error(argv(command, data, notes) + ["--overwrite"], capsys, f"{notes} exists and is not a style lexicon")
    else:
        expect_error(argv(command, data, notes) + ["--overwrite"], capsys, f"{notes} is a file, not a directory")
    expect_error(argv(command, data, notes / "sub"), capsys, f"cannot write {notes / 'sub'}",
                 f"{notes} is a file, not a directory")
    expect_error(argv(command, data, "-"), capsys, "standard output is not supported for --out")
    assert notes.read_text() == "my notes\n" and temporaries(tmp_path) == []
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_run_never_replaces_a_users_subfolder(data_root: Path, tmp_path: Path, capsys) -> None:
    """The reviewer's plots/figure1.pdf, through --out and through the manifest's own output."""
    out = tmp_path / "runs" / "tiny"
    (out / "plots").mkdir(parents=True)
    (out / "plots" / "figure1.pdf").write_bytes(b"%PDF-1.4 my figure")
    before = snapshot(out)
    expect_error(["run", TINY, "--out", out, "--quiet", "--overwrite"], capsys,
                 f"{out} exists and was not written by tsteval")
    manifest = yaml.safe_load(TINY.read_text()) | {"output": str(out)}
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(manifest))
    expect_error(["run", tmp_path / "tiny.yaml", "--quiet"], capsys, f"{out} exists and was not written by tsteval")
    assert snapshot(out) == before and temporaries(out.parent) == []


def test_run_over_a_run_needs_overwrite_and_never_another_kind(data: Path, data_root: Path, tmp_path: Path,
                                                               capsys) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.md").write_text("# an earlier run\n")
    (run / MARKER).write_text(json.dumps({"kind": "run", "tsteval": "0", "files": ["report.md"]}))
    expect_error(["run", TINY, "--out", run, "--quiet"], capsys, f"{run} already holds an experiment run",
                 "pass --overwrite")
    expect_error(["run", TINY, "--out", data / "style", "--quiet", "--overwrite"], capsys,
                 "holds a style classifier, not an experiment run")


def test_train_pairs_never_writes_into_a_style_model(data: Path, tmp_path: Path, capsys) -> None:
    model = data / "style"
    before = snapshot(model)
    expect_error(argv("train-pairs", data, model) + ["--overwrite"], capsys,
                 f"{model} holds a style classifier, not a pair classifier")
    assert snapshot(model) == before
    assert run_cli(argv("score", data, tmp_path / "scored"), capsys).code == 0, "the style model still scores"
    expect_error(argv("score", data, data / "hh"), capsys, "holds a pair classifier, not a scorecard")
    expect_error(argv("train-classifier", data, tmp_path / "scored") + ["--overwrite"], capsys,
                 "holds a scorecard, not a style classifier")


def test_same_kind_needs_overwrite_and_is_replaced_whole(data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "scored"
    assert run_cli(argv("score", data, out), capsys).code == 0
    marker = json.loads((out / MARKER).read_text())
    assert marker["kind"] == "scorecard" and marker["tsteval"]
    assert marker["files"] == sorted(p for p in snapshot(out) if p != MARKER)
    expect_error(argv("score", data, out), capsys, f"{out} already holds a scorecard", "pass --overwrite")
    (out / "summary.md").write_text("edited by hand\n")  # a file tsteval wrote may be edited: it is replaced
    (out / "summary.csv").unlink()  # and one may be missing
    assert run_cli(argv("score", data, out) + ["--overwrite"], capsys).code == 0
    assert "edited by hand" not in (out / "summary.md").read_text() and (out / "summary.csv").is_file()
    assert temporaries(tmp_path) == []


def test_overwrite_refuses_an_output_holding_foreign_files(data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "scored"
    assert run_cli(argv("score", data, out), capsys).code == 0
    (out / "my notes.txt").write_text("keep me\n")
    (out / "extra" / "deep").mkdir(parents=True)
    (out / "extra" / "deep" / "figure.pdf").write_bytes(b"%PDF")
    before = snapshot(out)
    expect_error(argv("score", data, out) + ["--overwrite"], capsys,
                 f"{out} holds files tsteval did not write (extra/, my notes.txt)", "move them away")
    assert snapshot(out) == before


def test_an_empty_existing_folder_is_fine(data: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    assert run_cli(argv("train-pairs", data, tmp_path / "empty"), capsys).code == 0
    assert json.loads((tmp_path / "empty" / MARKER).read_text())["kind"] == "pair-classifier"


def test_lexicon_replaces_only_a_lexicon_and_only_with_overwrite(data: Path, tmp_path: Path, capsys) -> None:
    thesis = tmp_path / "thesis.tex"
    thesis.write_text("\\section{Results}\n")
    expect_error(argv("build-lexicon", data, thesis) + ["--overwrite"], capsys,
                 f"{thesis} exists and is not a style lexicon", "choose a new --out")
    assert thesis.read_text() == "\\section{Results}\n"
    lexicon = tmp_path / "lexicon.json"
    lexicon.write_text(json.dumps({"binary sentiment": [["good", 1.5], ["bad", -2.0]]}))
    expect_error(argv("build-lexicon", data, lexicon), capsys, f"{lexicon} already holds a style lexicon",
                 "pass --overwrite")
    assert run_cli(argv("build-lexicon", data, lexicon) + ["--overwrite"], capsys).code == 0
    entries = json.loads(lexicon.read_text())  # Mir et al.'s format {style: [[word, weight], ...]}
    assert set(entries) == {"pos", "neg"} and entries["pos"] and {w for w, _ in entries["pos"]} <= set(WORDS["pos"])
    assert all(isinstance(word, str) and isinstance(weight, float) for pairs in entries.values()
               for word, weight in pairs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lexicon.json", "thesis.tex"]


def test_missing_parents_are_created_and_removed_again_on_a_user_error(data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "a" / "b" / "model"
    expect_error(["train-classifier", "tfidf-lr", "--style", f"pos={data / 'pos.txt'}", "--out", out], capsys,
                 "single")
    assert list(tmp_path.iterdir()) == []
    assert run_cli(argv("train-classifier", data, out), capsys).code == 0 and (out / MARKER).is_file()


def test_stale_temporaries_of_dead_runs_are_removed(data: Path, tmp_path: Path, capsys) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    stale = tmp_path / f".model.tsteval-tmp-{int(dead.stdout)}-0123abcd"
    (stale / "half").mkdir(parents=True)
    (stale / "half" / "weights.bin").write_bytes(b"\0" * 10)
    stale_file = tmp_path / f".lexicon.json.tsteval-tmp-{int(dead.stdout)}-89abcdef"
    stale_file.write_text("{")
    live = tmp_path / f".model.tsteval-tmp-{os.getpid()}-fedcba98"
    live.mkdir()
    lookalike = tmp_path / ".model.tsteval-tmp-mine"
    lookalike.mkdir()
    assert run_cli(argv("train-classifier", data, tmp_path / "model"), capsys).code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["model", live.name, lookalike.name])
    assert remove_stale_temporaries(tmp_path) == []


@pytest.fixture
def scored(data: Path, tmp_path: Path, capsys) -> Path:
    """A scorecard folder written by tsteval, to be overwritten by runs that fail halfway through writing."""
    out = tmp_path / "scored"
    assert run_cli(argv("score", data, out), capsys).code == 0
    return out


def _fail_while_writing(monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """Make the scorecard writer write one file, then fail: a bug, Ctrl-C, SIGTERM or a full disk."""
    def write(self: Scorecard, directory: Path, summary: object = None) -> None:
        (Path(directory) / "scorecard.csv").write_text("half\n")
        if failure == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)  # the handler raises in here
        if failure == "disk-full":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(Path(directory) / "summary.csv"))
        raise KeyboardInterrupt if failure == "ctrl-c" else RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(Scorecard, "write", write)


def _without_leakage(err: str) -> str:
    """Standard error without the leakage guard's lines: these tests score the texts their classifier was trained
    on, which the guard rightly reports before scoring; the lines checked here come after it."""
    return "\n".join(line for line in err.strip().splitlines() if not line.startswith("tsteval: warning: leakage:"))


@pytest.mark.parametrize(("failure", "code", "line"), [
    ("bug", 70, "tsteval: internal error: RuntimeError: disk on fire (a bug; rerun with TSTEVAL_DEBUG=1 for the "
                "traceback)"),
    ("ctrl-c", 130, "tsteval: interrupted"),
    ("sigterm", 143, "tsteval: terminated"),
    ("disk-full", 2, "tsteval: error: could not write {out}: No space left on device; choose another --out"),
])
def test_failure_while_writing_leaves_the_old_output_and_no_temporary(
        failure: str, code: int, line: str, scored: Path, data: Path, monkeypatch, capsys) -> None:
    before, handler = snapshot(scored), signal.getsignal(signal.SIGTERM)
    _fail_while_writing(monkeypatch, failure)
    outcome = run_cli(argv("score", data, scored) + ["--overwrite"], capsys)
    assert outcome.code == code and _without_leakage(outcome.err) == line.format(out=scored)
    assert snapshot(scored) == before and temporaries(scored.parent) == []
    assert signal.getsignal(signal.SIGTERM) == handler, "main restores the SIGTERM handler"


def test_debug_reraises_internal_errors(scored: Path, data: Path, monkeypatch, capsys) -> None:
    from tsteval.cli.main import main

    _fail_while_writing(monkeypatch, "bug")
    monkeypatch.setenv("TSTEVAL_DEBUG", "1")
    with pytest.raises(RuntimeError, match="disk on fire"):
        main([str(a) for a in argv("score", data, scored) + ["--overwrite"]])
    assert temporaries(scored.parent) == []


def test_sigterm_from_outside_removes_the_temporary(data: Path, tmp_path: Path) -> None:
    """A real ``tsteval`` process, terminated while its output folder is being written."""
    script = (
        "import sys, time\n"
        "from tsteval.cli.main import main\n"
        "from tsteval.scorecard import Scorecard\n"
        "def write(self, directory, summary=None):\n"
        "    (directory / 'scorecard.csv').write_text('half')\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "Scorecard.write = write\n"
        "sys.exit(main(sys.argv[1:]))\n")
    process = subprocess.Popen([sys.executable, "-c", script, *map(str, argv("score", data, tmp_path / "run"))],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=Path(__file__).resolve().parents[1])
    assert process.stdout.readline() == "writing\n"
    assert len(temporaries(tmp_path)) == 1
    process.terminate()
    _, err = process.communicate(timeout=30)
    assert process.returncode == 143 and _without_leakage(err) == "tsteval: terminated"
    assert list(tmp_path.iterdir()) == []


NOBODY = 65534


def _as_user(command: list[str]) -> list[str]:
    """``command`` run as a user who may not write where root may: ``nobody`` when the tests run as root (root
    ignores folder permissions), the current user otherwise."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]


@pytest.mark.parametrize("mode", [0o555, 0o444], ids=["read-only", "read-only-unsearchable"])
def test_score_into_a_read_only_folder_is_one_line_every_time(mode: int, data: Path) -> None:
    """``--out`` inside a read-only folder, as a non-root user: exit 2 and one line on every run (it was exit 70,
    ``internal error: PermissionError``, when the folder could not be entered), and nothing written."""
    base = Path(tempfile.mkdtemp(prefix="tsteval-readonly-"))  # pytest's tmp_path is closed to other users
    try:
        for name in ("pos.txt", "neg.txt"):
            shutil.copy(data / name, base / name)
        (base / "home").mkdir()
        (base / "ro").mkdir()
        if os.geteuid() == 0:
            for path in (base, base / "home", base / "ro", base / "pos.txt", base / "neg.txt"):
                os.chown(path, NOBODY, NOBODY)
        os.chmod(base, 0o755)
        os.chmod(base / "ro", mode)
        home = str(base / "home")
        env = {**os.environ, "HOME": home, "TSTEVAL_CACHE": f"{home}/cache", "XDG_CACHE_HOME": home,
               "MPLCONFIGDIR": home, "HF_HOME": f"{home}/hf", "PYTHONWARNINGS": "ignore"}
        env.pop("TSTEVAL_DEBUG", None)
        python = [sys.executable, "-c", "import sys; from tsteval.cli.main import main; sys.exit(main(sys.argv[1:]))"]
        probe = subprocess.run(_as_user([*python, "--version"]), env=env, capture_output=True, text=True, timeout=120)
        assert probe.returncode == 0, f"the test user cannot run tsteval from this checkout: {probe.stderr[-500:]}"
        for out in (base / "ro" / "run", base / "ro" / "run", base / "ro" / "sub" / "run"):  # 3 runs each mode
            command = [*python, "score", "--pairs", base / "pos.txt", base / "neg.txt", "--source-style", "pos",
                       "--target-style", "neg", "--content", "bleu", "--out", out, "--quiet"]
            result = subprocess.run(_as_user([str(c) for c in command]), env=env, capture_output=True,
                                    text=True, timeout=300)
            assert result.returncode == 2, (result.returncode, result.stderr)
            assert result.stdout == "" and len(result.stderr.splitlines()) == 1, result.stderr
            assert result.stderr.startswith(f"tsteval: error: cannot write {out}: "), result.stderr
            assert "Permission denied" in result.stderr and result.stderr.rstrip().endswith("choose another --out")
        os.chmod(base / "ro", 0o755)
        assert list((base / "ro").iterdir()) == [] and temporaries(base) == []
    finally:
        os.chmod(base / "ro", 0o755)
        shutil.rmtree(base)
