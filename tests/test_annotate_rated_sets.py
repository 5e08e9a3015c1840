"""Mir's and Lai's rated sets imported as studies reproduce, through ``tsteval meta-eval RUN --ratings STUDY``, the
correlations of the committed meta-evaluation tables (``benchmarks/results/meta_eval/``) for the columns both hold
(BLEU and chrF, cheap to score; every level and method)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tsteval.cli.main import main

COMMITTED = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "meta_eval"


@pytest.mark.parametrize("name", ["mir", "lai"])
def test_rated_set_study_reproduces_the_committed_correlations(name: str, data_root: Path, tmp_path: Path) -> None:
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    if name == "mir":
        from tsteval.readers.mir import load_mir as load
    else:
        from tsteval.readers.lai import load_lai as load
    run(Plan(load(), content=("bleu", "chrf"), modifications=("none",))).save(tmp_path / "run")
    assert main(["annotate", "plan", "--dataset", name, "--out", str(tmp_path / "study")]) == 0
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "study"), "--resamples", "10",
                 "--out", str(tmp_path / "meta"), "--quiet"]) == 0
    ours = pd.read_csv(tmp_path / "meta" / "metaeval.csv")
    committed = pd.read_csv(COMMITTED / name / "metaeval.csv")
    both = ours.merge(committed, on=["metric", "rating", "level", "method"], suffixes=("", "_committed"))
    ratings = {"mir": {"human_content_preservation"}, "lai": {"human_content_src", "human_content_ref"}}[name]
    metrics = {"bleu@none", "chrf@none"} | ({"bleu@ref", "chrf@ref"} if name == "lai" else set())  # its references
    assert set(both["metric"]) == metrics and set(both["rating"]) == ratings
    assert len(both) == len(ours) == len(metrics) * len(ratings) * 9
    assert (both["r"] - both["r_committed"]).abs().max() < 1e-12
    assert (both["n"] == both["n_committed"]).all()


@pytest.mark.parametrize(("name", "shown"), [("lai", ("lai:human_1", "lai:human_2", "content_src")),
                                           ("tox600", ("tox600:David", "tox600:Varvara", "meaning"))])
def test_a_rated_set_study_has_its_raters_as_annotators(name: str, shown: tuple[str, ...], data_root: Path,
                                                        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["annotate", "plan", "--dataset", name, "--out", str(tmp_path / "study")]) == 0
    assert main(["annotate", "agreement", str(tmp_path / "study"), "--resamples", "20"]) == 0
    text = capsys.readouterr().out
    assert all(s in text for s in shown)
