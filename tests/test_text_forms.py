"""The text form a classifier was trained on: detected at fit, saved in the manifest (under its integrity hash),
and every scored text put into it (issue 42)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tsteval.classifiers.base import MANIFEST, load_classifier, make_classifier
from tsteval.classifiers.text_forms import all_lowercase, in_form, training_form
from tsteval.core.errors import InputError

LOWER = ["the food was awful .", "i did n't like it , sorry .", "terrible service !", "cold and bland .",
         "the food was great .", "i 'm coming back !", "lovely staff .", "warm and tasty ."]
CASED = ["The food was awful.", "I didn't like it, sorry.", "Terrible service!", "Cold and bland.",
         "The food was great.", "I'm coming back!", "Lovely staff.", "Warm and tasty."]
LABELS = ["neg"] * 4 + ["pos"] * 4


def test_the_training_form_follows_the_corpus() -> None:
    assert training_form(LOWER) == "tokenised-lowercase"
    assert training_form(CASED) == "as-written"
    assert training_form(["the food was awful", "i loved it"]) == "lowercase"
    assert training_form([*LOWER * 20, "Paris is nice ."]) == "tokenised-lowercase"  # one stray capital in 161


def test_texts_in_the_form_are_left_as_they_are_and_cased_text_is_converted() -> None:
    assert in_form(LOWER, "tokenised-lowercase") == LOWER
    assert in_form(CASED, "tokenised-lowercase") == LOWER
    assert in_form(CASED, "lowercase") == [t.lower() for t in CASED]
    assert in_form(CASED, "as-written") == CASED
    assert in_form(["by far the `` best '' prime rib !"], "tokenised-lowercase") == [
        "by far the `` best '' prime rib !"]
    with pytest.raises(ValueError, match="unknown text form"):
        in_form(CASED, "upper")


def test_all_lowercase_counts_texts_with_letters() -> None:
    flags = all_lowercase(["ok .", "OK.", "?!", "a B"])
    assert flags == [True, False, None, False]


@pytest.mark.parametrize("backend", ["tfidf-lr", "fasttext"])
def test_a_classifier_scores_texts_in_its_training_form(backend: str, tmp_path: Path) -> None:
    model = make_classifier(backend).fit(LOWER * 3, LABELS * 3)
    assert model.text_form_ == "tokenised-lowercase"
    np.testing.assert_allclose(model.predict_proba(CASED), model.predict_proba(LOWER))
    loaded = load_classifier(model.save(tmp_path / "m"))
    assert loaded.text_form_ == "tokenised-lowercase"
    np.testing.assert_allclose(loaded.predict_proba(CASED), model.predict_proba(LOWER))
    cased = make_classifier(backend).fit(CASED * 3, LABELS * 3)
    assert cased.text_form_ == "as-written"
    assert load_classifier(cased.save(tmp_path / "c")).text_form_ == "as-written"


def test_the_text_form_file_is_hashed_in_the_manifest_and_checked(tmp_path: Path) -> None:
    from tsteval.classifiers.text_forms import TEXT_FORM
    from tsteval.core.errors import TstevalError

    directory = make_classifier("tfidf-lr").fit(LOWER, LABELS).save(tmp_path / "m")
    assert TEXT_FORM in json.loads((directory / MANIFEST).read_text())["files"]
    (directory / TEXT_FORM).write_text(json.dumps({"text_form": "as-written"}))
    with pytest.raises(TstevalError, match="text-form.json is damaged or was altered"):
        load_classifier(directory)


def test_a_malformed_text_form_is_one_error_naming_the_file(tmp_path: Path) -> None:
    from tsteval.classifiers.text_forms import TEXT_FORM, read_text_form

    (tmp_path / TEXT_FORM).write_text(json.dumps({"text_form": "shouting"}))
    with pytest.raises(InputError, match="text-form.json.*'shouting' is not one of"):
        read_text_form(tmp_path)


def test_a_model_saved_without_a_form_scores_texts_as_given(tmp_path: Path) -> None:
    """A model from before the form was recorded: no ``text-form.json`` in its folder or its manifest."""
    from tsteval.classifiers.text_forms import TEXT_FORM
    from tsteval.core.integrity import integrity_hash

    directory = make_classifier("tfidf-lr").fit(LOWER, LABELS).save(tmp_path / "m")
    manifest = json.loads((directory / MANIFEST).read_text())
    del manifest["files"][TEXT_FORM]
    (directory / TEXT_FORM).unlink()
    manifest["integrity"] = integrity_hash({k: manifest[k] for k in ("backend", "params", "classes", "files")})
    (directory / MANIFEST).write_text(json.dumps(manifest))
    assert load_classifier(directory).text_form_ == "as-written"
