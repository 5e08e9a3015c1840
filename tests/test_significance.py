"""Paired significance (``tsteval compare``): the paired bootstrap against sacreBLEU's ``--paired-bs`` on BLEU,
approximate randomisation against sacreBLEU's ``--paired-ar`` and an exactly enumerated case, and the command end to
end on two DualRL Yelp systems."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from tests.badinput import expect_error, run_cli
from tests.conftest import read_slice
from tsteval.cli.main import main
from tsteval.experiment.compare.significance import approximate_randomisation, paired_bootstrap

N = 200


@pytest.fixture(scope="module")
def yelp_bleu(data_root: Path) -> tuple[list[str], list[str], list[str]]:
    """The first 200 negative-to-positive outputs of DualRL and DeleteOnly, and their first human reference."""
    root = data_root / "dualrl"
    return (read_slice(root / "outputs" / "yelp" / "DualRL" / "test.0.tsf", N),
            read_slice(root / "outputs" / "yelp" / "DeleteOnly_Li" / "test.0.tsf", N),
            read_slice(root / "references" / "yelp" / "reference0.0", N))


def _bleu_statistic(bleu: BLEU):
    """Corpus BLEU of each resample, re-aggregated from the sentences' sufficient statistics as sacreBLEU does."""
    return lambda stacked: np.array([bleu._compute_score_from_stats(s.sum(0)).score for s in stacked])


def _sacrebleu(test_type: str, a: list[str], b: list[str], refs: list[str]) -> float:
    _, scores = PairedTest([("a", a), ("b", b)], {"BLEU": BLEU()}, [refs], test_type=test_type, n_samples=1000)()
    return scores["BLEU"][1].p_value


@pytest.mark.parametrize("changed", [N, 2], ids=["two-systems", "near-null"])
def test_paired_bootstrap_reproduces_sacrebleu_paired_bs(yelp_bleu, changed: int) -> None:
    a, other, refs = yelp_bleu
    b = other[:changed] + a[changed:]  # near-null: B is A with 2 outputs replaced
    bleu = BLEU()
    stats_a, stats_b = (np.array(bleu._extract_corpus_statistics(h, [refs]), dtype=float) for h in (a, b))
    ours, low, high = paired_bootstrap(stats_a, stats_b, _bleu_statistic(bleu), n_resamples=1000, seed=12345)
    assert ours == _sacrebleu("bs", a, b, refs)
    difference = bleu.corpus_score(b, [refs]).score - bleu.corpus_score(a, [refs]).score
    assert low < difference < high
    if changed == N:
        assert ours < 0.01 and high < 0, "DeleteOnly's BLEU against the reference is clearly below DualRL's"
    else:
        assert ours > 0.05


def test_approximate_randomisation_reproduces_sacrebleu_paired_ar(yelp_bleu) -> None:
    a, b, refs = yelp_bleu
    bleu = BLEU()
    stats_a, stats_b = (np.array(bleu._extract_corpus_statistics(h, [refs]), dtype=float) for h in (a, b))
    ours = approximate_randomisation(stats_a, stats_b, _bleu_statistic(bleu), n_resamples=1000, seed=12345)
    assert ours == pytest.approx(_sacrebleu("ar", a, b, refs))


def test_approximate_randomisation_exact_on_four_pairs() -> None:
    # Differences B - A = (1, 2, 3, -1), observed |sum| = 5.  Of the 16 swap patterns (sign flips), |sum| >= 5
    # for the sums +-7 (the last flipped) and +-5 (the original and the first flipped, and their negations): 6.
    a, b = np.array([0.0, 1.0, 0.0, 2.0]), np.array([1.0, 3.0, 3.0, 1.0])
    assert approximate_randomisation(a, b, n_resamples=16) == 6 / 16
    sampled = approximate_randomisation(a, b, n_resamples=20000, seed=1)  # 2**4 < 20000: still enumerated
    assert sampled == 6 / 16
    a8, b8 = np.tile(a, 2), np.tile(b, 2)  # 256 patterns; 2000 random trials agree within Monte Carlo error
    exact = approximate_randomisation(a8, b8, n_resamples=256)
    assert abs(approximate_randomisation(a8, b8, n_resamples=2000, seed=3) - exact) < 0.04


def test_identical_systems_are_not_significant() -> None:
    values = np.linspace(0, 1, 50)
    assert paired_bootstrap(values, values)[0] == 1.0
    assert approximate_randomisation(values, values) == 1.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """A tfidf-lr classifier on DualRL's Yelp dev set and ``tsteval score`` runs of two systems' first 80 outputs,
    of DeleteOnly's outputs 40..119 (40 shared inputs) and of positive-to-negative outputs (no shared input)."""
    root, data = tmp_path_factory.mktemp("compare"), data_root / "dualrl"
    assert main(["train-classifier", "tfidf-lr", "--style", f"0={data / 'data' / 'yelp' / 'dev.0'}", "--style",
                 f"1={data / 'data' / 'yelp' / 'dev.1'}", "--out", str(root / "clf"), "--quiet"]) == 0
    cases = {"dualrl": ("DualRL", "0", 0), "deleteonly": ("DeleteOnly_Li", "0", 0),
             "shifted": ("DeleteOnly_Li", "0", 40), "positive": ("DualRL", "1", 0)}
    for name, (system, source, start) in cases.items():
        (root / f"{name}.in").write_text("\n".join(read_slice(data / "data" / "yelp" / f"test.{source}", 80, start)))
        (root / f"{name}.out").write_text("\n".join(
            read_slice(data / "outputs" / "yelp" / system / f"test.{source}.tsf", 80, start)))
        assert main(["score", "--classifier", f"lr={root / 'clf'}", "--pairs", str(root / f"{name}.in"),
                     str(root / f"{name}.out"), "--source-style", source, "--target-style", str(1 - int(source)),
                     "--system", name, "--content", "bleu", "--out", str(root / name), "--quiet"]) == 0
    return root


def test_compare_two_dualrl_systems(runs: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["compare", runs / "dualrl", runs / "deleteonly", "--resamples", "500", "--quiet",
                       "--format", "markdown"], capsys)
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert "80 rows matched" in lines[0] and lines[2] == "0 → 1: 80 rows matched (A has 80, B has 80)"
    header = [cell.strip() for cell in lines[4].strip("|").split("|")]
    assert header[:6] == ["metric", "A", "B", "B-A", "95% low", "95% high"]
    table = [[c.strip().replace("\\_", "_") for c in line.strip("|").split("|")] for line in lines[6:]]
    rows = {cells[0]: cells for cells in table}
    assert {"sti@lr", "target_acc@lr", "bleu@none"} <= set(rows)
    bleu = rows["bleu@none"]
    assert float(bleu[4]) <= float(bleu[3]) <= float(bleu[5]) and all(len(c.split(".")[-1]) == 3 for c in bleu[1:10])
    # the default: the same table as plain text (no Markdown escapes)
    text = run_cli(["compare", runs / "dualrl", runs / "deleteonly", "--resamples", "500"], capsys).out.splitlines()
    assert text[0] == lines[0] and text[4].split()[:4] == ["metric", "A", "B", "B-A"] and "\\" not in "".join(text)
    assert {line.split()[0]: line.split() for line in text[6:]}["target_acc@lr"][1:] == rows["target_acc@lr"][1:]

    outcome = run_cli(["compare", runs / "dualrl", runs / "deleteonly", "--json", "--resamples", "500"], capsys)
    document = json.loads(outcome.out)
    [direction] = document["directions"]
    assert (direction["source_style"], direction["target_style"], direction["matched"]) == ("0", "1", 80)
    by_metric = {m["metric"]: m for m in direction["metrics"]}
    bleu = by_metric["bleu@none"]
    assert document["matched"] == 80 and bleu["low"] <= bleu["difference"] <= bleu["high"]
    assert bleu["difference"] == pytest.approx(bleu["mean_b"] - bleu["mean_a"])
    assert all(0 < m[p] <= m[f"{p}_holm"] <= 1 for m in direction["metrics"]
               for p in ("p_bootstrap", "p_randomisation"))

    outcome = run_cli(["compare", runs / "dualrl", runs / "shifted", "--json", "--resamples", "200"], capsys)
    assert json.loads(outcome.out)["matched"] == 40


def test_compare_refuses_mismatched_signatures(runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    altered = tmp_path / "altered"
    shutil.copytree(runs / "deleteonly", altered)
    signatures = json.loads((altered / "signatures.json").read_text())
    signatures["sti@lr"] = signatures["sti@lr"].replace("ground:nominal", "ground:ordinal")
    (altered / "signatures.json").write_text(json.dumps(signatures))
    expect_error(["compare", runs / "dualrl", altered], capsys, "the signatures of 'sti@lr' differ in 'ground' "
                 "(A: nominal, B: ordinal)", "--ignore-signatures")
    outcome = run_cli(["compare", runs / "dualrl", altered, "--ignore-signatures", "--resamples", "100"], capsys)
    assert outcome.code == 0 and "sti@lr" in outcome.out


def test_compare_refuses_runs_without_shared_inputs(runs: Path, capsys: pytest.CaptureFixture) -> None:
    expect_error(["compare", runs / "dualrl", runs / "positive"], capsys, "share no input",
                 "compare two systems' outputs for the same inputs")
    expect_error(["compare", runs / "dualrl", runs / "missing"], capsys, "not a scorecard folder")
