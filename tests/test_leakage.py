"""Leakage guards (issue 23, item 3): a saved classifier records the hash set of its training texts, and a run
counts the scored outputs and references it was trained on and the references equal to a system's own output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tsteval.classifiers.base import load_classifier, make_classifier
from tsteval.classifiers.training_texts import TRAINING_TEXTS, text_digests
from tsteval.cli.main import main
from tsteval.core.errors import TstevalError
from tsteval.core.integrity import integrity_hash
from tsteval.core.records import Transfers
from tsteval.experiment.run.leakage import leakage
from tsteval.scorecard import Scorecard

NEGATIVE = [f"the {w} was bad and rude" for w in ("food", "service", "room", "staff", "bread", "wine")]
POSITIVE = [f"the {w} was great and kind" for w in ("food", "service", "room", "staff", "bread", "wine")]


@pytest.fixture()
def saved(tmp_path: Path) -> Path:
    return make_classifier("tfidf-lr").fit(NEGATIVE + POSITIVE, ["0"] * 6 + ["1"] * 6).save(tmp_path / "clf")


def _as_older_tsteval(directory: Path) -> None:
    """Rewrite a saved classifier as a tsteval without hash sets saved it: no file, no manifest entry."""
    path = directory / "tsteval-classifier.json"
    manifest = json.loads(path.read_text())
    (directory / TRAINING_TEXTS).unlink()
    del manifest["files"][TRAINING_TEXTS], manifest["training_texts"]
    manifest["integrity"] = integrity_hash({k: manifest[k] for k in ("backend", "params", "classes", "files")})
    path.write_text(json.dumps(manifest))


def test_saved_classifier_records_and_verifies_its_training_texts(saved: Path) -> None:
    manifest = json.loads((saved / "tsteval-classifier.json").read_text())
    assert manifest["training_texts"] == {"file": TRAINING_TEXTS, "count": 12}
    assert TRAINING_TEXTS in manifest["files"]  # its sha256 is verified before it is read
    assert (saved / TRAINING_TEXTS).stat().st_size < 12 * 16 + 200  # compact: 8 bytes a text, base64
    assert load_classifier(saved).training_texts_ == text_digests(NEGATIVE + POSITIVE)
    assert text_digests(["THE  food was BAD and rude"]) <= load_classifier(saved).training_texts_
    body = json.loads((saved / TRAINING_TEXTS).read_text())
    (saved / TRAINING_TEXTS).write_text(json.dumps({**body, "count": 3}))
    with pytest.raises(TstevalError, match="training-texts.json is damaged or was altered"):
        load_classifier(saved)


def test_older_classifier_loads_and_its_overlap_is_unknown(saved: Path) -> None:
    _as_older_tsteval(saved)
    model = load_classifier(saved)
    assert model.training_texts_ is None and model.predict(["the food was great"]).tolist() == ["1"]
    card = Scorecard.from_transfers(Transfers.from_pairs(["a"], [NEGATIVE[0]], source_style="0", target_style="1"))
    found = leakage(card, {"ft": model})
    assert found.counts["classifiers"]["ft"]["outputs_in_training"] == "unknown"
    assert found.warnings == ["leakage: classifier ft records no hash set of its training texts (saved by an older "
                              "tsteval): how many scored outputs it was trained on is unknown"]


def test_leakage_counts_outputs_references_and_self_references(saved: Path) -> None:
    model = load_classifier(saved)
    rows = pd.concat([
        Transfers.from_pairs(["x one", "x two", "x three"], [POSITIVE[0], "ref b", POSITIVE[1]],
                             source_style="0", target_style="1", system="sys").frame,
        Transfers.from_pairs(["x one", "x two", "x three"], ["ref a", "ref b", "ref c"], source_style="0",
                             target_style="1", system="Human1").frame,
        Transfers.from_pairs(["x one", "x two", "x three"], ["x one", "x two", "x three"], source_style="0",
                             target_style="1", system="baseline:copy").frame,
    ], ignore_index=True)
    card = Scorecard.from_transfers(Transfers(rows))
    references = [("ref a", "ref b", "ref c", "ref a", "ref b", "ref c", "x one", "x two", "x three"),  # Human1's
                  (NEGATIVE[2], "z", "z", NEGATIVE[2], "z", "z", "x one", "x two", "x three")]
    found = leakage(card, {"ft": model}, references)
    assert found.counts == {"rows": 6, "classifiers": {"ft": {"outputs": 6, "outputs_in_training": 2,
                                                              "references": 5, "references_in_training": 1}},
                            "reference_is_output": {"Human1": 3, "sys": 1}, "own_reference": {"Human1": [0]}}
    assert found.warnings == [
        "leakage: 2 of 6 scored outputs are in the training texts of classifier ft (its target_acc there is training "
        "accuracy)",
        "leakage: 1 of 5 references are in the training texts of classifier ft",
        "leakage: system Human1's outputs equal its own reference (set 0) on 3 rows: its @ref scores compare a text "
        "with itself"]


def test_score_warns_and_writes_leakage_json(saved: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "in.txt").write_text("the soup was bad\nthe tea was rude\nthe cake was bad\n")
    (tmp_path / "out.txt").write_text(f"{POSITIVE[0]}\n{POSITIVE[3]}\nthe cake was fine\n")
    args = ["score", "--classifier", f"ft={saved}", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"),
            "--source-style", "0", "--target-style", "1", "--out", str(tmp_path / "run"), "--quiet"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert ("leakage: 2 of 3 scored outputs are in the training texts of classifier ft (its target_acc there is "
            "training accuracy)") in err
    counts = json.loads((tmp_path / "run" / "leakage.json").read_text())
    assert counts["classifiers"]["ft"] == {"outputs": 3, "outputs_in_training": 2}
