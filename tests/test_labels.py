"""Labels (issue 56 item 7): every tradeoff axis, plot title and report heading names the metric it shows (a
``target_acc`` axis is not "style transfer intensity"), the explorer opens on the report's axes, ``score --dualrl``
takes the systems to score (checked, with the nearest names), and a manifest's ``sample:`` says what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badinput import run_cli
from test_outputs import data  # noqa: F401  (data is a fixture)

from tsteval.core.errors import TstevalError
from tsteval.experiment.report.explorer import read_explorer_data


def _manifest(folder: Path, data: Path, tradeoff: str) -> Path:  # noqa: F811
    """Six transfers pos -> neg by two systems, a tfidf-lr classifier ``lr``, bleu and chrf; ``tradeoff`` as given."""
    pos, neg = (Path(data / f"{style}.txt").read_text().splitlines() for style in ("pos", "neg"))
    rows = "".join(f"{system},{a},{b},pos,neg\n" for system, k in (("s1", 0), ("s2", 3)) for a, b in
                   zip(pos[k:k + 3], neg[k:k + 3], strict=True))
    (folder / "t.csv").write_text("system,input,output,source_style,target_style\n" + rows)
    path = folder / "m.yaml"
    path.write_text(f"transfers: {{table: {folder / 't.csv'}}}\n"
                    f"corpus: {{style: {{pos: {data / 'pos.txt'}, neg: {data / 'neg.txt'}}}, exclude_inputs: false}}\n"
                    "classifiers: {lr: {backend: tfidf-lr}}\n"
                    "metrics: {style: {classifiers: [lr]}, content: {metrics: [bleu, chrf]}}\n" + tradeoff)
    return path


@pytest.fixture(scope="module")
def runs(data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:  # noqa: F811
    """One run with the tradeoff axes target_acc@lr x chrf@none, one with none given (the run's defaults)."""
    from tsteval.cli.main import main

    out = {}
    for name, tradeoff in (("given", "tradeoff: {style: target_acc@lr, content: chrf@none}\n"), ("default", "")):
        folder = tmp_path_factory.mktemp(name)
        assert main(["run", str(_manifest(folder, data, tradeoff)), "--out", str(folder / "run"), "--quiet"]) == 0
        out[name] = folder / "run"
    return out


def test_the_tradeoff_headings_and_axes_name_the_metric_they_show(runs: dict[str, Path]) -> None:
    run = runs["given"]
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "style transfer intensity" not in report.lower()  # target_acc is target-style accuracy, not STI
    assert "### Style (`target_acc@lr`) vs Content preservation (`chrf@none`), pos → neg" in report
    assert "### weakest style transfer: `target_acc@lr`" in report
    svg = (run / "plots" / "tradeoff_content.svg").read_text(encoding="utf-8")
    assert "Style: target_acc@lr" in svg and "Content preservation: chrf@none" in svg
    assert "Style transfer intensity" not in svg
    assert "Style (target_acc@lr) vs Content preservation (chrf@none)" in svg  # the plot's title


@pytest.mark.parametrize("name, axes", [("given", ("target_acc@lr", "chrf@none")),
                                        ("default", ("sti@lr", "bleu@none"))])
def test_the_explorer_opens_on_the_reports_axes(name: str, axes: tuple[str, str], runs: dict[str, Path],
                                                tmp_path: Path, capsys) -> None:
    run = runs[name]
    spec = json.loads((run / "run.json").read_text())["tradeoff"]
    assert (spec["style"], spec["content"]) == axes
    report = (run / "report.md").read_text(encoding="utf-8")
    assert f"### Style (`{axes[0]}`) vs Content preservation (`{axes[1]}`)" in report
    # the recommended style metric (style_strength@lr) is scored too: the report's axes come first
    page = read_explorer_data(run / "explorer.html")
    assert "style_strength@lr" in page["rows"] and page["tradeoff"] == dict(zip("xy", axes, strict=True))
    outcome = run_cli(["explore", run, "--out", tmp_path / "again.html", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert read_explorer_data(tmp_path / "again.html")["tradeoff"] == dict(zip("xy", axes, strict=True))


def test_score_dualrl_takes_the_systems_to_score(data_root: Path, tmp_path: Path, capsys) -> None:
    import pandas as pd

    command = ["score", "--dualrl", "GYAFC", "--content", "bleu", "--quiet", "--out", tmp_path / "run"]
    outcome = run_cli([*command, "--systems", "DualRL,Human0"], capsys)
    assert outcome.code == 0, outcome.err
    card = pd.read_parquet(tmp_path / "run" / "scorecard.parquet")
    assert sorted(card["system"].unique()) == ["DualRL", "Human0"] and len(card) == 2 * 1000
    outcome = run_cli([*command[:-1], tmp_path / "bad", "--systems", "DualRl,human0"], capsys)
    assert outcome.code == 2 and not (tmp_path / "bad").exists()
    assert outcome.error.endswith("'DualRl': did you mean 'DualRL'? (only the case differs); 'human0': did you "
                                  "mean 'Human0'? (only the case differs)")
    outcome = run_cli(["score", "--mir", "--content", "bleu", "--systems", "CAE", "--out", tmp_path / "m"], capsys)
    assert outcome.code == 2 and "the systems ['CAE'] are not among the systems ['ARAE', 'CAAE', 'DAR']" in \
        outcome.error and outcome.error.endswith("did you mean 'CAAE'?")


def test_a_manifests_systems_of_a_rated_set_are_checked(data_root: Path, tmp_path: Path) -> None:
    from tsteval.experiment.manifest.files import load_transfers
    from tsteval.experiment.manifest.loader import load_manifest

    path = tmp_path / "m.yaml"
    path.write_text("transfers: {published: mir, systems: [CAAE, dar]}\nmetrics: {content: {metrics: [bleu]}}\n")
    with pytest.raises(TstevalError, match=r"the systems \['dar'\] .*'dar': did you mean 'DAR'\? \(only the case"):
        load_transfers(load_manifest(path).transfers, seed=0)


def test_a_manifests_sample_says_what_it_is(data_root: Path, tmp_path: Path, capsys) -> None:
    """``sample: 100`` is 100 items over both directions (46 and 54 on DualRL's Yelp test set, seed 0), not 100 per
    direction: the log and run.json say so."""
    path = tmp_path / "m.yaml"
    path.write_text("transfers: {published: dualrl, dataset: yelp, systems: [DualRL], sample: 100}\n"
                    "metrics: {content: {metrics: [bleu]}}\n")
    outcome = run_cli(["run", path, "--out", tmp_path / "run"], capsys)
    assert outcome.code == 0, outcome.err
    said = ("sample: 100 items drawn from the 1000 of all directions together, not 100 per direction "
            "(0 → 1: 46 of 500, 1 → 0: 54 of 500)")
    assert f"[tsteval] {said}" in outcome.err.splitlines()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["sample"] == {
        "items": 100, "kept": 100, "of": 1000, "per_direction": {"0 → 1": [46, 500], "1 → 0": [54, 500]},
        "text": said}
