"""Experiment manifests end to end: validation errors, ``tsteval run`` on a tiny real manifest, cache reuse."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import run_cache
from scipy import stats

from tsteval.cli.main import main
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.report.explorer import read_explorer_data
from tsteval.experiment.run.runner import run_experiment
from tsteval.scorecard import Scorecard

TINY = Path(__file__).resolve().parent / "data" / "tiny_manifest.yaml"


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """The tiny manifest run once through the CLI, with the tests' cache (module fixtures run before the
    autouse cache fixture, so it is set here too)."""
    out = tmp_path_factory.mktemp("tiny") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        assert main(["run", str(TINY), "--out", str(out), "--quiet"]) == 0
    return out


def test_run_writes_scorecard_report_and_plots(first_run: Path) -> None:
    for name in ("scorecard.csv", "scorecard.parquet", "signatures.json", "summary.csv", "meta_eval/metaeval.csv",
                 "meta_eval/metaeval.md", "run.json", "manifest.yaml", "report.md", "report.html", "explorer.html"):
        assert (first_run / name).stat().st_size > 0, name
    directions = pd.read_csv(first_run / "tradeoff_content_points.csv")["direction"].unique().tolist()
    assert directions == ["negative → positive", "positive → negative"]  # Mir's Yelp labels, never pooled
    for stem in ("tradeoff_content", "tradeoff_naturalness"):
        for k, direction in enumerate(directions, 1):
            for suffix in (".png", ".svg"):
                name = f"{stem}_{k}-{direction.replace(' → ', '-')}{suffix}"
                assert (first_run / "plots" / name).stat().st_size > 1000
    html = (first_run / "report.html").read_text()
    assert 'src="http' not in html and "<link" not in html and "<script" not in html
    assert html.count("data:image/png;base64,") == 4
    md = (first_run / "report.md").read_text()
    for section in ("## Corpus aggregates", "## Tradeoff curves", "## Agreement with human ratings",
                    "## Worst-scoring examples", "Pareto frontier", "`sti@lr`"):
        assert section in md, section
    agreement = pd.read_csv(first_run / "meta_eval" / "metaeval.csv")  # the manifest's meta_eval key
    assert set(agreement["rating"]) == {"human_style_intensity", "human_content_preservation",
                                        "human_naturalness_output"}
    assert {"bleu_mir@mask", "sti@lr", "naturalness@unigram"} <= set(agreement["metric"])
    assert list(dict.fromkeys(agreement["level"])) == ["sentence", "within_system", "system"]
    assert not list(first_run.parent.glob(".run.*")), "no temporary folder is left behind"


def test_run_and_meta_eval_give_the_same_agreement(first_run: Path, tmp_path: Path) -> None:
    """``tsteval run`` and ``tsteval meta-eval`` on its scorecard, with the ratings read from the scorecard or joined
    from a file of their own, write the same tables; a sentence-level r is scipy's on the joined rows."""
    ratings = ["--rating", "style=human_style_intensity", "--rating", "content=human_content_preservation",
               "--rating", "naturalness=human_naturalness_output"]
    card = Scorecard.load(first_run).frame
    keys = ["item", "system", "setting"]
    humans = ["human_style_intensity", "human_content_preservation", "human_naturalness_output"]
    card[[*keys, *humans]].to_csv(tmp_path / "ratings.csv", index=False)
    for extra in ([], ["--ratings", str(tmp_path / "ratings.csv"), "--key", ",".join(keys)]):
        out = tmp_path / f"meta{len(extra)}"
        assert main(["meta-eval", "--scorecard", str(first_run), *ratings, *extra, "--resamples", "100",
                     "--seed", "0", "--out", str(out), "--quiet"]) == 0
        for name in ("metaeval.csv", "baseline.csv", "counts.csv"):
            pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(first_run / "meta_eval" / name))
    joined = card.drop(columns=humans).merge(pd.read_csv(tmp_path / "ratings.csv"), on=keys)
    rows = joined.dropna(subset=["human_content_preservation", "bleu_mir@mask", "bleu_mir@none", "chrf@mask",
                                 "chrf@none"])
    table = pd.read_csv(first_run / "meta_eval" / "metaeval.csv")
    assert sorted(set(table.query("rating == 'human_content_preservation'")["metric"])) == [
        "bleu_mir@mask", "bleu_mir@none", "chrf@mask", "chrf@none"]
    row = table.query("metric == 'chrf@mask' and rating == 'human_content_preservation' and level == 'sentence' "
                      "and method == 'pearson'").iloc[0]
    assert row["n"] == len(rows)
    assert row["r"] == pytest.approx(stats.pearsonr(rows["chrf@mask"], rows["human_content_preservation"])
                                     .statistic, abs=1e-12)


def test_run_explorer_embeds_the_scorecard_and_the_masked_text(first_run: Path) -> None:
    card = Scorecard.load(first_run)
    data = read_explorer_data(first_run / "explorer.html")
    rows = pd.DataFrame(data["rows"]).astype({"sti@lr": float})
    embedded = rows.groupby(["system", "setting"])["sti@lr"].mean()
    assert embedded.to_dict() == pytest.approx(card.frame.groupby(["system", "setting"])["sti@lr"].mean().to_dict(),
                                               rel=1e-12)
    assert data["tradeoff"] == {"x": "sti@lr", "y": "bleu_mir@mask"}  # the manifest's tradeoff: the report's axes
    assert data["masked"] and any("<masked>" in text for text in data["rows"]["output_masked"])
    assert "human_style_intensity" in [c["name"] for c in data["scores"]]


def test_second_run_reuses_the_classifier(first_run: Path, tmp_path: Path) -> None:
    first = json.loads((first_run / "run.json").read_text())
    card = run_experiment(load_manifest(TINY), out=tmp_path / "again", quiet=True)
    second = json.loads((tmp_path / "again" / "run.json").read_text())
    assert second["classifiers"]["lr"]["cached"] is True
    assert second["classifiers"]["lr"]["key"] == first["classifiers"]["lr"]["key"]
    assert {"sti@lr", "bleu_mir@mask", "chrf@none", "naturalness@unigram", "more_natural@unigram"} <= set(card.metrics)
    assert len(card.frame) == first["rows"] == 24 * 12


def _broken(tmp_path: Path, edit: dict) -> Path:
    """The tiny manifest with ``edit`` ({dotted.key: value}, value None deletes) written beside ``tmp_path``."""
    data = yaml.safe_load(TINY.read_text())
    for dotted, value in edit.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node[key]
        node[last] = value
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(("edit", "key", "words"), [
    ({"colour": "red"}, "colour", "unknown key"),
    ({"classifiers.lr.bakend": "x"}, "classifiers.lr.bakend", "unknown key"),
    ({"lexicon.file": "nowhere/lexicon.json"}, "lexicon.file", "no such file"),
    ({"corpus.style.0": "missing.txt"}, "corpus.style.0", "no such file"),
    ({"metrics.content.metrics": ["bleu_mir", "bleurt"]}, "metrics.content.metrics[1]", "unknown content metric"),
    ({"metrics.style.classifiers": ["lr", "cnn"]}, "metrics.style.classifiers[1]", "unknown classifier"),
    ({"tradeoff.content": "wmd@mask"}, "tradeoff.content", "unknown content column"),
    ({"classifiers.lr.backend": "svm"}, "classifiers.lr.backend", "unknown backend"),
])
def test_invalid_manifest_names_file_and_key_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture, data_root: Path, edit: dict, key: str, words: str) -> None:
    path = _broken(tmp_path, edit)
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and f"{key}:" in err and words in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["broken.yaml"]
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.key == key and info.value.path == path


def test_missing_source_and_unknown_variable(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="transfers: give exactly one source"):
        load_manifest(_broken(tmp_path, {"transfers": {"sample": 3}}))
    with pytest.raises(ManifestError, match=r"lexicon.file: unknown variable \$\{HOME\}"):
        load_manifest(_broken(tmp_path, {"lexicon.file": "${HOME}/x.json"}))
