"""Readers and manifests speak styles (issue 56 item 6): DualRL's GYAFC is labelled formal/informal, as a formality
corpus is, so a classifier trained on ``{formal: ..., informal: ...}`` scores it through a manifest, ``score
--dualrl`` and the Python API; a manifest takes a classifier saved by ``train-classifier`` by ``path: DIR``, and
``hf:`` given such a folder says to write that instead."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from badinput import expect_error, run_cli

import tsteval
from tsteval.classifiers.base import saved_identity
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.readers.dualrl import load_dualrl

GYAFC = {"published": "dualrl", "dataset": "GYAFC", "systems": ["DualRL"], "sample": 20}
STYLE = {"style": {"classifiers": ["f"]}}


@pytest.fixture(scope="module")
def formality(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TF-IDF formality classifier from ``tsteval train-classifier`` on DualRL's GYAFC references (formal:
    reference0.1, the formal rewrites of the informal inputs; informal: reference0.0), styles named formal/informal."""
    from tsteval.cli.main import main

    refs = data_root / "dualrl" / "references" / "GYAFC"
    out = tmp_path_factory.mktemp("formality") / "models" / "gyafc-lr"
    assert main(["train-classifier", "tfidf-lr", "--style", f"formal={refs / 'reference0.1'}", "--style",
                 f"informal={refs / 'reference0.0'}", "--out", str(out), "--quiet"]) == 0
    return out


def _manifest(folder: Path, **entries: object) -> Path:
    path = folder / "m.yaml"
    path.write_text(yaml.safe_dump({"name": "styles", "transfers": GYAFC, "metrics": STYLE, "joint": "none",
                                    **entries}))
    return path


def test_published_gyafc_is_scored_by_a_formal_informal_classifier_trained_in_the_manifest(tmp_path: Path) -> None:
    corpus = {"style": {"formal": "${TSTEVAL_DATA}/dualrl/references/GYAFC/reference1.1",
                        "informal": "${TSTEVAL_DATA}/dualrl/references/GYAFC/reference1.0"}}
    manifest = _manifest(tmp_path, corpus=corpus, classifiers={"f": {"backend": "tfidf-lr"}})
    card = tsteval.run(tsteval.Plan.from_manifest(load_manifest(manifest)))
    frame = card.frame
    assert set(frame["target_style"]) == {"formal", "informal"} and len(frame) == 20
    assert frame["target_acc@f"].mean() > 0.5  # DualRL's outputs are mostly read as the style they aimed at
    assert "classes:formal,informal" in card.signatures["sti@f"].split("|")


def test_score_dualrl_gyafc_and_the_python_api_take_a_trained_formality_classifier(
        formality: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["score", "--dualrl", "GYAFC", "--classifier", f"f={formality}", "--metrics", "target_acc",
                       "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert "formal → informal" in summary and "informal → formal" in summary
    card = tsteval.run(tsteval.Plan(load_dualrl("GYAFC", ["DualRL"]), classifiers={"f": formality}))
    assert card.frame.groupby("target_style")["target_acc@f"].mean().gt(0.5).all()


def test_a_manifest_takes_a_saved_classifier_by_path(formality: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "m").mkdir()
    relative = os.path.relpath(formality, tmp_path / "m")
    manifest = _manifest(tmp_path / "m", classifiers={"f": {"path": relative}})  # relative to the manifest
    loaded = load_manifest(manifest)
    assert loaded.classifiers["f"].path == formality.resolve() and loaded.classifiers["f"].backend == "tfidf-lr"
    assert not loaded.needs_corpus()  # a saved classifier trains nothing
    outcome = run_cli(["run", manifest, "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    signature = json.loads((tmp_path / "run" / "signatures.json").read_text())["sti@f"]
    assert f"clf:f-{saved_identity(formality)}" in signature.split("|")
    card = tsteval.run(tsteval.Plan.from_manifest(loaded))  # the Python API reads the same manifest
    assert card.signatures["sti@f"] == signature


def test_a_bad_path_is_one_line_naming_the_manifest_and_key(formality: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "plain").mkdir()
    for given, message in (("nowhere", "no such directory"),
                           ("plain", "is not a saved tsteval classifier (no tsteval-classifier.json in it)")):
        manifest = _manifest(tmp_path, classifiers={"f": {"path": given}})
        with pytest.raises(ManifestError, match="classifiers.f.path") as info:
            load_manifest(manifest)
        assert message in str(info.value) and str(manifest) in str(info.value)
        expect_error(["run", manifest, "--out", tmp_path / "run", "--quiet"], capsys, "classifiers.f.path", message)
        assert not (tmp_path / "run").exists()
    manifest = _manifest(tmp_path, classifiers={"f": {"path": "plain", "backend": "tfidf-lr"}})
    with pytest.raises(ManifestError, match="classifiers.f.backend: unknown key"):
        load_manifest(manifest)


def test_hf_given_a_tsteval_folder_says_to_write_path(formality: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    manifest = _manifest(tmp_path, classifiers={"f": {"hf": str(formality)}})
    with pytest.raises(ManifestError, match="classifiers.f.hf") as info:
        load_manifest(manifest)
    assert f"f: {{path: {formality}}} in a manifest" in str(info.value)
    expect_error(["score", "--dualrl", "GYAFC", "--classifier", f"f=hf:{formality}", "--metrics", "sti",
                  "--out", tmp_path / "run"], capsys, "holds a classifier saved by tsteval",
                 f"--classifier f={formality}")
    with pytest.raises(TstevalError, match="not a Hugging Face model"):
        tsteval.evaluate(["a b"], ["c d"], source_style="formal", target_style="informal",
                         classifier={"f": f"hf:{formality}"})
