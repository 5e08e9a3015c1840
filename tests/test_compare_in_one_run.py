"""``tsteval compare RUN --systems A B``: two systems of one scorecard, per transfer direction, checked against a
paired bootstrap written here with NumPy alone; the directions are never pooled (a fixture where pooling flips the
sign); the system x system matrices per direction; unknown names; ``compare --help``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from badinput import expect_error, run_cli

from tsteval.experiment.compare.significance import significance_matrix
from tsteval.scorecard import Scorecard

COLUMNS = {"chrf@none": "metric:chrf|toy", "target_acc@lr": "metric:target_acc|toy", "sti@lr": "metric:sti|toy"}
# direction -> (inputs, beta - alpha on every column): beta is worse on neg->pos, much better on pos->neg, and the
# pooled mean (30 x -0.1 + 10 x 0.5) / 40 = +0.05 has the sign of the smaller direction.
SHIFTS = {("neg", "pos"): (30, -0.1), ("pos", "neg"): (10, 0.5)}
SEED, RESAMPLES = 7, 400


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scorecard: alpha, beta, gamma/s1 in both directions and gamma/s2 in neg->pos only.  The same input texts
    occur in both directions; beta's rows are shuffled and numbered differently, so only pairing by input and
    direction finds the partners."""
    rng = np.random.default_rng(0)
    parts = []
    for (source, target), (n, shift) in SHIFTS.items():
        texts = [f"the food {i} ." for i in range(n)]
        base = {column: rng.uniform(0.2, 0.8, n) for column in COLUMNS}
        groups = {("alpha", "default"): 0.0, ("beta", "default"): shift, ("gamma", "s1"): 0.2}
        if source == "neg":
            groups[("gamma", "s2")] = -0.3
        for (system, setting), offset in groups.items():
            frame = pd.DataFrame({"system": system, "setting": setting, "item": [f"{source}-{i}" for i in range(n)],
                                  "input": texts, "output": [f"{system} {i}" for i in range(n)],
                                  "source_style": source, "target_style": target})
            for column, values in base.items():
                frame[column] = values + offset + rng.normal(0, 0.05, n)
            if system == "beta":
                frame = frame.sample(frac=1, random_state=1).assign(item=[f"b{i}" for i in range(n)])
            parts.append(frame)
    card = Scorecard(pd.concat(parts, ignore_index=True), dict(COLUMNS))
    return card.save(tmp_path_factory.mktemp("one-run") / "run")


def _paired(run: Path, direction: tuple[str, str], column: str) -> tuple[np.ndarray, np.ndarray]:
    """alpha's and beta's values of ``column`` in ``direction``, paired by input text, in alpha's item order."""
    frame = Scorecard.load(run).frame
    frame = frame[(frame["source_style"] == direction[0]) & (frame["target_style"] == direction[1])]
    alpha = frame[frame["system"] == "alpha"].sort_values("item", key=lambda s: s.astype(str))
    beta = frame[frame["system"] == "beta"].set_index("input")[column]
    return alpha[column].to_numpy(), beta.loc[alpha["input"]].to_numpy()


def _bootstrap(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """sacreBLEU's paired bootstrap on the mean: R resamples of the row indices, the 95% percentile interval of
    mean(B*) - mean(A*), p = (1 + #{|d*| - mean|d*| >= |d|}) / (R + 1)."""
    idx = np.random.default_rng(SEED).integers(0, len(a), size=(RESAMPLES, len(a)))
    diff = b[idx].mean(axis=1) - a[idx].mean(axis=1)
    centred = np.abs(diff) - np.abs(diff).mean()
    p = (1 + np.sum(centred >= abs(b.mean() - a.mean()))) / (RESAMPLES + 1)
    return p, np.percentile(diff, 2.5), np.percentile(diff, 97.5)


def _randomisation(a: np.ndarray, b: np.ndarray) -> float:
    swap = np.random.default_rng(SEED).integers(2, size=(RESAMPLES, len(a)), dtype=bool)
    null = np.abs(np.where(swap, a, b).mean(axis=1) - np.where(swap, b, a).mean(axis=1))
    return (1 + np.sum(null >= abs(b.mean() - a.mean()))) / (RESAMPLES + 1)


def _holm(p: list[float]) -> np.ndarray:
    order = np.argsort(p)
    adjusted = np.minimum(1, np.maximum.accumulate(np.asarray(p)[order] * (len(p) - np.arange(len(p)))))
    return adjusted[np.argsort(order)]


def test_two_systems_match_an_independent_paired_bootstrap(run: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["compare", run, "--systems", "alpha", "beta", "--json", "--resamples", RESAMPLES,
                       "--seed", SEED], capsys)
    assert outcome.code == 0, outcome.err
    document = json.loads(outcome.out)
    assert (document["a"], document["b"], document["resamples"]) == ("alpha", "beta", RESAMPLES)
    assert [(d["source_style"], d["target_style"]) for d in document["directions"]] == list(SHIFTS)
    for part in document["directions"]:
        direction = (part["source_style"], part["target_style"])
        n = SHIFTS[direction][0]
        assert (part["matched"], part["rows_a"], part["rows_b"]) == (n, n, n)
        metrics = {m["metric"]: m for m in part["metrics"]}
        assert list(metrics) == list(COLUMNS)
        p_values = []
        for column, row in metrics.items():
            a, b = _paired(run, direction, column)
            p, low, high = _bootstrap(a, b)
            assert row["mean_a"] == pytest.approx(a.mean(), rel=1e-12)
            assert row["mean_b"] == pytest.approx(b.mean(), rel=1e-12)
            assert row["difference"] == pytest.approx(b.mean() - a.mean(), rel=1e-12)
            assert row["p_bootstrap"] == p
            assert (row["low"], row["high"]) == pytest.approx((low, high), rel=1e-12)
            assert row["p_randomisation"] == _randomisation(a, b)
            p_values.append((row["p_bootstrap"], row["p_randomisation"]))
        for i, test in enumerate(("p_bootstrap", "p_randomisation")):  # Holm within the direction, across metrics
            expected = _holm([pair[i] for pair in p_values])
            np.testing.assert_allclose([metrics[c][f"{test}_holm"] for c in COLUMNS], expected)


def test_directions_are_not_pooled(run: Path, capsys: pytest.CaptureFixture) -> None:
    column = "chrf@none"
    pooled = [np.concatenate(x) for x in zip(*(_paired(run, d, column) for d in SHIFTS), strict=True)]
    assert pooled[1].mean() - pooled[0].mean() > 0, "the fixture: pooled, beta looks better"
    card = Scorecard.load(run)
    pooled_matrix = significance_matrix(card, [column], n_resamples=RESAMPLES, seed=SEED)
    assert pooled_matrix.set_index(["a", "b"]).loc[("alpha", "beta"), "difference"] > 0

    outcome = run_cli(["compare", run, "--systems", "alpha", "beta", "--json", "--resamples", RESAMPLES], capsys)
    by_direction = {(d["source_style"], d["target_style"]): {m["metric"]: m for m in d["metrics"]}
                    for d in json.loads(outcome.out)["directions"]}
    assert by_direction[("neg", "pos")][column]["difference"] < 0 < by_direction[("pos", "neg")][column]["difference"]
    assert by_direction[("neg", "pos")][column]["better"] == "A"
    assert by_direction[("pos", "neg")][column]["better"] == "B"

    outcome = run_cli(["compare", run, "--systems", "alpha", "beta", "--resamples", RESAMPLES], capsys)
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert "neg → pos: 30 rows matched (A has 30, B has 30)" in lines
    assert "pos → neg: 10 rows matched (A has 10, B has 10)" in lines
    assert "\\" not in outcome.out and "|" not in outcome.out, "plain text, not Markdown"
    rows = {line.split()[0]: line.split() for line in lines if line.startswith(tuple(COLUMNS))}
    assert set(rows) == set(COLUMNS)  # the last direction's table (a dict keeps the last row per metric)
    header = lines[lines.index("pos → neg: 10 rows matched (A has 10, B has 10)") + 2]
    assert header.split()[:4] == ["metric", "A", "B", "B-A"]
    assert float(rows[column][3]) == pytest.approx(by_direction[("pos", "neg")][column]["difference"], abs=5e-4)


def test_one_direction_and_unknown_names(run: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["compare", run, "--systems", "alpha", "beta", "--direction", "pos->neg", "--json"], capsys)
    assert [(d["source_style"], d["target_style"]) for d in json.loads(outcome.out)["directions"]] == [("pos", "neg")]
    outcome = run_cli(["compare", run, "--systems", "alpha", "gamma / s2", "--metrics", "sti@lr"], capsys)
    assert "neg → pos: 30 rows matched (A has 30, B has 30)" in outcome.out.splitlines()
    assert outcome.out.splitlines()[-1] == "pos → neg: no shared input (A has 10 rows, B has 0)"
    markdown = run_cli(["compare", run, "--systems", "alpha", "beta", "--format", "markdown"], capsys).out
    assert "| target\\_acc@lr |" in markdown  # Markdown only when asked for, escaped as Markdown
    outcome = expect_error(["compare", run, "--systems", "alpha", "delta"], capsys, "unknown system 'delta'; the "
                           "run's systems are: alpha, beta, gamma / s1, gamma / s2")
    assert len(outcome.err.splitlines()) == 1 and outcome.out == ""
    expect_error(["compare", run, "--systems", "gamma", "beta"], capsys, "unknown system 'gamma'", "gamma / s1")
    expect_error(["compare", run, "--systems", "alpha"], capsys, "give two systems or more")
    expect_error(["compare", run, "--direction", "neg->neutral"], capsys, "no direction 'neg->neutral'",
                 "neg->pos, pos->neg")
    expect_error(["compare", run, run, "--systems", "alpha", "beta"], capsys, "--systems compare the systems of "
                 "one run: give one RUN")


def test_matrix_per_direction(run: Path, capsys: pytest.CaptureFixture) -> None:
    column = "chrf@none"
    outcome = run_cli(["compare", run, "--metrics", column, "--json", "--resamples", RESAMPLES, "--seed", SEED],
                      capsys)
    assert outcome.code == 0, outcome.err
    document = json.loads(outcome.out)
    assert document["systems"] == ["alpha", "beta", "gamma / s1", "gamma / s2"]
    pairs = {(d["source_style"], d["target_style"]): d["pairs"] for d in document["directions"]}
    assert [len(p) for p in pairs.values()] == [6, 3]  # gamma / s2 has no pos->neg rows
    for direction, rows in pairs.items():
        row = next(r for r in rows if (r["a"], r["b"]) == ("alpha", "beta"))
        a, b = _paired(run, direction, column)
        assert row["n"] == len(a) and row["difference"] == pytest.approx(b.mean() - a.mean(), rel=1e-12)
        assert row["p_bootstrap"] == _bootstrap(a, b)[0]
        np.testing.assert_allclose([r["p_holm"] for r in rows], _holm([r["p_bootstrap"] for r in rows]))
    text = run_cli(["compare", run, "--systems", "all", "--metrics", column, "--resamples", RESAMPLES, "--seed",
                    SEED], capsys).out.splitlines()
    assert f"neg → pos, {column}: 6 pairs, {RESAMPLES} resamples" in text
    assert f"pos → neg, {column}: 3 pairs, {RESAMPLES} resamples" in text
    block = text[text.index(f"pos → neg, {column}: 3 pairs, {RESAMPLES} resamples") + 2:]
    assert block[0].split() == ["system", "alpha", "beta", "gamma", "/", "s1"]
    alpha_row = block[2].split()
    beta_alpha = next(r for r in pairs[("pos", "neg")] if (r["a"], r["b"]) == ("alpha", "beta"))
    assert alpha_row[:3] == ["alpha", "—", f"{-beta_alpha['difference']:+.3f}*"]


def test_help_prints_one_percent_sign(capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["compare", "--help"], capsys)
    assert outcome.code == 0
    assert "95% paired-bootstrap" in " ".join(outcome.out.split()) and "%%" not in outcome.out
