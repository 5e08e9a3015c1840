"""Ready-made classifiers (``--classifier NAME=hf:ID_OR_DIR``, :mod:`tsteval.classifiers.hub`): a Hugging Face
sequence-classification model scores the style columns as it is.

The model is made here: the packaged MiniLM with a two-way head fine-tuned for a few steps on real Yelp sentences
and saved by ``save_pretrained`` with the labels ``negative``/``positive``, which are not the run's styles ``0``/``1``.
Its ``target_prob`` must be the softmax of its logits computed directly with transformers; its texts reach the
tokenizer as written; its labels map to the styles by ``--classifier-labels`` (or by the styles' names), a bad
mapping being one line; its signature holds the sha256 of its weights; its columns go through ``compare`` and
``meta-eval`` like any other.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from badinput import expect_error, run_cli
from conftest import read_slice
from transformers import AutoModelForSequenceClassification, AutoTokenizer

import tsteval
from tsteval.classifiers.base import load_classifier, make_classifier
from tsteval.classifiers.hub import HubClassifier, hub_identity
from tsteval.classifiers.transformer import default_model_path
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import load_manifest
from tsteval.experiment.manifest.reader import ManifestError
from tsteval.experiment.manifest.specs import is_ready_made

LABELS = {"negative": "0", "positive": "1"}
CASED = ["The Food was GREAT, I'll be back!", "Worst. Service. Ever.", "i did n't like the pizza .",
         "Our waiter, Tom, was lovely and quick.", "Cold fries; rude staff."]


@pytest.fixture(scope="module")
def model_dir(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM with a negative/positive head, fine-tuned for 12 steps on 192 real Yelp sentences, saved."""
    out = tmp_path_factory.getbasetemp() / "hf-model" / "sentiment-minilm"
    if (out / "model.safetensors").is_file():
        return out
    neg = read_slice(data_root / "yelp" / "sentiment.dev.0", 96)
    pos = read_slice(data_root / "yelp" / "sentiment.dev.1", 96)
    texts, targets = neg + pos, torch.tensor([0] * len(neg) + [1] * len(pos))
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(
            default_model_path(), num_labels=2, id2label={0: "negative", 1: "positive"},
            label2id={"negative": 0, "positive": 1})
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model.train()
        for _ in range(12):
            rows = torch.randperm(len(texts))[:16].tolist()
            batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=24,
                              return_tensors="pt")
            loss = model(**batch, labels=targets[rows]).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval().save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def _softmax(model_dir: Path, texts: list[str]) -> np.ndarray:
    """P(label) of each text, computed directly with transformers, one text at a time (no padding)."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    with torch.inference_mode():
        logits = torch.cat([model(**tokenizer(t, truncation=True, return_tensors="pt")).logits for t in texts])
    return torch.softmax(logits.double(), dim=1).numpy()


def test_target_prob_is_the_models_softmax_and_the_signature_names_it(model_dir: Path, data_root: Path) -> None:
    inputs = read_slice(data_root / "yelp" / "sentiment.test.0", 20)
    outputs = [*CASED, *read_slice(data_root / "yelp" / "sentiment.test.1", 15)]
    card = tsteval.evaluate(inputs, outputs, source_style="0", target_style="1", metrics=["target_prob"],
                            classifier={"snt": f"hf:{model_dir}"}, classifier_labels={"snt": LABELS})
    expected = _softmax(model_dir, outputs)[:, 1]
    np.testing.assert_allclose(card.frame["target_prob@snt"], expected, atol=1e-5)
    assert {f"{m}@snt" for m in ("sti", "sti_norm", "style_strength", "target_acc")} <= set(card.metrics)
    weights = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    digest = hashlib.sha256(f"model.safetensors:{weights}".encode()).hexdigest()[:16]
    signature = card.signatures["target_prob@snt"]
    assert f"hf:sentiment-minilm@{digest}/negative:0,positive:1" in signature
    assert str(model_dir.parent) not in signature  # the folder's base name, never its path
    # The labels are the styles' names: no mapping needed, the same scores.
    named = tsteval.evaluate(inputs, outputs, source_style="0", target_style="1", metrics=["target_prob"],
                             classifier={"snt": f"hf:{model_dir}"}, style_labels={"0": "Negative", "1": "Positive"})
    np.testing.assert_allclose(named.frame["target_prob@snt"], card.frame["target_prob@snt"], atol=1e-12)


def test_texts_reach_the_tokenizer_as_written(model_dir: Path) -> None:
    model = HubClassifier(model=str(model_dir), labels=LABELS, verbose=False).ready(["0", "1"], {}, "snt")
    seen: list[str] = []
    tokenizer = model.tokenizer_

    def recording(texts: list[str], **kwargs: object) -> object:
        seen.extend(texts)
        return tokenizer(texts, **kwargs)

    model.tokenizer_ = recording
    proba = model.predict_proba(CASED)
    assert sorted(seen) == sorted(CASED)  # not lower-cased, not re-tokenised
    assert model.text_form_ == "as-written" and model.training_texts_ is None
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(model.classes_) == ["0", "1"]


def test_the_weight_hash_follows_the_weights(model_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "sentiment-minilm"
    shutil.copytree(model_dir, copy)
    assert hub_identity(str(copy), LABELS, "fp32") == hub_identity(str(model_dir), LABELS, "fp32")
    model = AutoModelForSequenceClassification.from_pretrained(copy)
    with torch.no_grad():
        model.classifier.bias += 0.5
    model.save_pretrained(copy)  # the same folder: its new size or time is hashed again
    changed = hub_identity(str(copy), LABELS, "fp32")
    assert changed != hub_identity(str(model_dir), LABELS, "fp32")
    assert changed.split("@")[0] == "hf:sentiment-minilm"
    assert hub_identity(str(copy), LABELS, "bf16") == f"{changed}+bf16"


@pytest.mark.parametrize(("labels", "fragment"), [
    (None, "the model's labels ['negative', 'positive'] are not the run's styles ['0', '1']; map them with "
           "--classifier-labels snt=negative:0,positive:1"),
    ({"snt": {"neg": "0", "positive": "1"}}, "--classifier-labels snt: the model has no label 'neg'; its labels "
                                             "are ['negative', 'positive']"),
    ({"snt": {"negative": "2", "positive": "1"}}, "--classifier-labels snt: '2' is not a style of the run"),
    ({"snt": {"positive": "1"}}, "no label of the model is mapped to the style '0'"),
    ({"other": LABELS}, "classifier_labels maps the labels of 'other', which is not a ready-made classifier"),
    ("snt=negative", "classifier_labels: 'snt=negative' must look like NAME=LABEL:STYLE"),
])
def test_a_bad_mapping_is_one_line(model_dir: Path, labels: object, fragment: str) -> None:
    with pytest.raises(TstevalError) as caught:
        tsteval.evaluate(["bad food ."], ["good food ."], source_style="0", target_style="1",
                         metrics=["target_prob"], classifier={"snt": f"hf:{model_dir}"}, classifier_labels=labels)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("model", ["s-nlp/roberta-base-formality-ranker", "/no/such/folder"])
def test_a_model_that_cannot_load_is_one_line_with_the_fix(model: str) -> None:
    with pytest.raises(TstevalError) as caught:
        HubClassifier(model=model).ready(["0", "1"], {}, "formality")
    message = str(caught.value)
    assert f"cannot load the transformer {model!r}" in message and "give a local model directory" in message
    assert "unset HF_HUB_OFFLINE" in message and "\n" not in message


def test_an_ensemble_member_and_a_saved_copy_score_the_same(model_dir: Path, data_root: Path, tmp_path: Path) -> None:
    neg = read_slice(data_root / "yelp" / "sentiment.dev.0", 60, start=500)
    pos = read_slice(data_root / "yelp" / "sentiment.dev.1", 60, start=500)
    ensemble = make_classifier("ensemble", members="tfidf-lr,hf", verbose=False,
                               member_params={"hf": {"model": str(model_dir), "labels": LABELS}})
    ensemble.fit(neg + pos, ["0"] * 60 + ["1"] * 60)
    loaded = load_classifier(ensemble.save(tmp_path / "ensemble"))
    np.testing.assert_allclose(loaded.predict_proba(CASED), ensemble.predict_proba(CASED), atol=1e-6)


@pytest.fixture(scope="module")
def scored(model_dir: Path, data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three Mir et al. systems on 40 items with human style ratings, scored by the ready-made classifier."""
    root = tmp_path_factory.mktemp("hf-run")
    frame = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    frame = frame[frame["item"] < 40].assign(system=lambda f: f["model"] + "-" + f["value"].astype(str))
    frame = frame[frame["system"].isin(["CAAE-0.5", "ARAE-1.0", "DAR-15.0"])]
    frame[["system", "item", "source_style", "target_style", "input", "output",
           "human_style_intensity"]].to_csv(root / "transfers.csv", index=False)
    return root


def test_the_columns_are_compared_and_meta_evaluated(scored: Path, model_dir: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    run = scored / "run"
    outcome = run_cli(["score", "--table", scored / "transfers.csv", "--classifier", f"snt=hf:{model_dir}",
                       "--classifier-labels", "snt=negative:0,positive:1", "--out", run, "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    assert "leakage: classifier snt is ready-made (trained elsewhere" in outcome.err
    outcome = run_cli(["compare", run, "--json", "--resamples", "50", "--metrics", "target_prob@snt,sti@snt"],
                      capsys)
    assert outcome.code == 0, outcome.err
    assert "target_prob@snt" in outcome.out
    outcome = run_cli(["meta-eval", run, "--rating", "style=human_style_intensity", "--baseline",
                       "style=sti@snt", "--resamples", "50", "--out", scored / "meta", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    table = pd.read_csv(scored / "meta" / "metaeval.csv")
    assert {"target_prob@snt", "sti_norm@snt"} <= set(table["metric"])


def test_the_cli_and_a_manifest_take_it(scored: Path, model_dir: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = run_cli(["score", "--table", scored / "transfers.csv", "--classifier", f"snt=hf:{model_dir}",
                       "--classifier-labels", "snt=negative:0", "--out", scored / "bad", "--quiet"], capsys)
    assert outcome.code == 2 and "no label of the model is mapped to the style '1'" in outcome.err
    manifest = {"transfers": {"table": "transfers.csv"}, "classifiers": {"snt": {"hf": str(model_dir)}},
                "classifier_labels": {"snt": LABELS}, "metrics": {"style": {"classifiers": ["snt"]}}}
    path = scored / "hf.yaml"
    path.write_text(yaml.safe_dump(manifest))
    loaded = load_manifest(path)
    assert loaded.classifiers["snt"].params["model"] == str(model_dir) and not loaded.needs_corpus()
    assert json.loads(json.dumps(dict(loaded.options.classifier_labels["snt"]))) == LABELS
    plan = tsteval.Plan.from_manifest(loaded)
    assert is_ready_made(plan.classifiers["snt"]) and plan.style_names == ("snt",)
    path.write_text(yaml.safe_dump({**manifest, "classifier_labels": {"snt2": LABELS}}))
    with pytest.raises(ManifestError, match=r"hf\.yaml.*classifier_labels\.snt2.*not a ready-made classifier"):
        load_manifest(path)


def test_probabilities_are_renormalised_over_the_mapped_labels(model_dir: Path) -> None:
    """Two labels mapped to one style add up (it reads 1); a label mapped to no style is dropped and each row
    renormalised over the mapped ones (the other style reads 1)."""
    from tsteval.classifiers.hub import HubClassifier

    clf = HubClassifier(str(model_dir), labels={"negative": "a", "positive": "a"}, verbose=False)
    clf.classes_ = np.array(["a", "b"], dtype=object)
    clf._load(str(model_dir), {}, "x", mapping={"negative": "a", "positive": "a"})
    proba = clf._predict_proba(["The food was great.", "awful service"])
    np.testing.assert_allclose(proba, [[1.0, 0.0], [1.0, 0.0]], atol=1e-12)
    clf._load(str(model_dir), {}, "x", mapping={"positive": "b"})  # negative dropped: b alone, renormalised
    np.testing.assert_allclose(clf._predict_proba(["The food was great."]), [[0.0, 1.0]], atol=1e-12)


def test_a_checkpoint_without_its_trained_head_is_refused(model_dir: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """The packaged MiniLM (a sentence-transformers folder: a bare encoder) with a label mapping, through the CLI:
    one line naming the folder and the head transformers would initialise, exit 2, no scorecard; a fine-tuned head
    whose config.json names three labels for its two outputs: one line naming both counts."""
    (tmp_path / "in.txt").write_text("bad food .\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("good food .\n", encoding="utf-8")
    encoder = str(default_model_path())
    expect_error(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "0",
                  "--target-style", "1", "--metrics", "target_prob", "--classifier", f"bare=hf:{encoder}",
                  "--classifier-labels", "bare=LABEL_0:0,LABEL_1:1",
                  "--out", str(tmp_path / "run"), "--quiet"], capsys,
                 f"{encoder} has no trained classification head (classifier.bias, classifier.weight not in")
    assert not (tmp_path / "run").exists()
    relabelled = tmp_path / "relabelled"
    shutil.copytree(model_dir, relabelled)
    config = json.loads((relabelled / "config.json").read_text(encoding="utf-8"))
    config["id2label"], config["label2id"] = {"0": "negative", "1": "neutral", "2": "positive"}, None
    (relabelled / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(TstevalError) as caught:
        HubClassifier(model=str(relabelled), labels=LABELS, verbose=False).ready(["0", "1"], {}, "snt")
    assert "\n" not in str(caught.value)
    assert f"{relabelled}'s classification head has 2 labels" in str(caught.value) and "config.json 3" in str(
        caught.value)
    with pytest.raises(TstevalError, match="the model's head has 2 labels .* the mapping gives 3"):
        HubClassifier(model=str(model_dir), labels={**LABELS, "neutral": "0"}, verbose=False).ready(["0", "1"], {},
                                                                                                 "snt")
