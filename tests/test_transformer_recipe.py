"""The transformer classifier's fast recipe on a tiny randomly initialised BERT (seconds): the sample, the frozen
layers, the length-sorted batches, transformers' load report kept quiet and the one line said instead (issue 42)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from conftest import tiny_bert, torch_threads

from tsteval.classifiers.transformer import BUCKET_BATCHES, TransformerClassifier, epoch_batches, freeze_lower
from tsteval.cli.main import main

NOUNS = ("food", "staff", "room", "bar")
TEXTS = [f"the {n} was {w} ." for w in ("awful", "cold", "bland", "terrible", "bad", "sad") for n in NOUNS] + \
        [f"the {n} was {w} ." for w in ("great", "warm", "tasty", "lovely", "good", "fine") for n in NOUNS]
LABELS = ["neg"] * 24 + ["pos"] * 24


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("tinybert"))


def test_the_sample_is_what_the_model_is_said_to_have_seen(bert: Path) -> None:
    model = TransformerClassifier(str(bert), max_train=20, batch_size=8, verbose=False).fit(TEXTS, LABELS)
    assert len(model.training_texts_) == 20 < len(set(TEXTS))
    assert model.predict_proba(TEXTS[:3]).shape == (3, 2)


def test_freezing_stops_the_embeddings_and_lowest_layers_and_keeps_the_top_one(bert: Path) -> None:
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(str(bert), num_labels=2)
    assert freeze_lower(model, 5) == 1  # two layers: all but the top one
    trainable = {name.split(".")[1] if name.startswith("bert.") else name.split(".")[0]
                 for name, p in model.named_parameters() if p.requires_grad}
    assert "embeddings" not in trainable and "classifier" in trainable
    assert not any(p.requires_grad for p in model.bert.encoder.layer[0].parameters())
    assert all(p.requires_grad for p in model.bert.encoder.layer[1].parameters())


def test_epoch_batches_hold_similar_lengths_and_every_example_once() -> None:
    lengths = [int(x) for x in torch.randint(3, 40, (8 * BUCKET_BATCHES,), generator=torch.Generator().manual_seed(1))]
    batches = epoch_batches(lengths, 8, torch.Generator().manual_seed(0))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 3  # random batches of 8 from 3..39 spread about 28


def test_quiet_training_prints_no_load_report_and_verbose_says_one_line_and_the_expected_time(
        bert: Path, tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    (tmp_path / "neg.txt").write_text("\n".join(TEXTS[:24]) + "\n")
    (tmp_path / "pos.txt").write_text("\n".join(TEXTS[24:]) + "\n")
    base = ["train-classifier", "transformer", "--style", f"neg={tmp_path / 'neg.txt'}", "--style",
            f"pos={tmp_path / 'pos.txt'}", "--param", f"model_name_or_path={bert}"]
    assert main([*base, "--param", "batch_size=8", "--quiet", "--out", str(tmp_path / "q")]) == 0
    out, err = capfd.readouterr()
    assert "MISSING" not in out + err and "LOAD REPORT" not in out + err
    assert "Loading weights" not in err and "Writing model shards" not in err
    assert "classification head" not in err and out.count("\n") == 1  # the result line only
    assert json.loads((tmp_path / "q" / "report.json").read_text())["text_form"] == "tokenised-lowercase"
    assert main([*base, "--param", "batch_size=4", "--out", str(tmp_path / "v")]) == 0  # 11 batches
    out, err = capfd.readouterr()
    assert "MISSING" not in out + err and "11 batches of 4, expected to take about" in err
    said = [line for line in err.splitlines() if "classification head" in line]
    assert len(said) == 1 and "new 2-way classification head" in said[0], err


def test_an_ensembles_calibration_and_held_out_scoring_show_progress_and_are_quiet_under_quiet(
        bert: Path, tmp_path: Path, capfd: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 56 item 7: after its transformer's training bar, the ensemble scored the calibration and held-out texts
    without a word (about five minutes on 189k Yelp sentences): now one line per step, and the transformer's scoring
    has the progress helper's bar; --quiet silences both."""
    import tsteval.classifiers.transformer as transformer
    from tsteval.core.progress import is_quiet

    bars = []

    def recorded(iterable, desc, total=None, unit="it"):
        bars.append((desc, is_quiet()))
        return iter(iterable)

    monkeypatch.setattr(transformer, "progress", recorded)
    (tmp_path / "neg.txt").write_text("\n".join(TEXTS[:24]) + "\n")
    (tmp_path / "pos.txt").write_text("\n".join(TEXTS[24:]) + "\n")
    members = json.dumps({"transformer": {"model_name_or_path": str(bert), "batch_size": 8}})
    base = ["train-classifier", "ensemble", "--style", f"neg={tmp_path / 'neg.txt'}", "--style",
            f"pos={tmp_path / 'pos.txt'}", "--param", "members=tfidf-lr,transformer", "--param",
            f"member_params={members}"]
    assert main([*base, "--out", str(tmp_path / "v")]) == 0
    err = capfd.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("ensemble: ")]
    assert said == [f"ensemble: {step} member {name} on {n}" for name in ("tfidf-lr", "transformer")
                    for step, n in (("training", "34 texts"), ("calibrating", "the 9 held-out calibration texts"))]
    assert bars == [("transformer: scoring", False)] * 2  # the calibration texts, then the held-out ones
    bars.clear()
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path / "cache"))  # trained again, not read from the cache
    assert main([*base, "--quiet", "--out", str(tmp_path / "q")]) == 0
    assert any((tmp_path / "cache").rglob("temperatures.json"))  # trained into the new cache
    assert "ensemble: " not in capfd.readouterr().err and bars == []


def test_the_curve_checkpoints_every_eighth_epoch_and_the_verdict_finds_the_first_point_near_the_best(
        bert: Path) -> None:
    from benchmarks.speed import transformer_recipe as bench

    split = (TEXTS * 3, LABELS * 3, TEXTS[::4], LABELS[::4])  # 144 texts: 18 batches of 8, a checkpoint every 2
    row = bench.curve_row("tiny", {"batch_size": 8, "epochs": 2}, split, str(bert), "cpu", 0)
    points = row["checkpoints"]
    assert [p["batches"] for p in points] == list(range(2, 37, 2))
    assert points[-1]["epochs"] == 2 and row["n_train"] == 144
    assert all(a["train_seconds"] <= b["train_seconds"] for a, b in zip(points, points[1:], strict=False))
    run = {"curve": [row]}
    verdict = bench.curve_verdict(run)
    best = max(p["heldout_accuracy"] for p in points)
    first = next(p for p in points if 100 * (best - p["heldout_accuracy"]) <= bench.WITHIN)
    assert verdict["best_accuracy"] == best and verdict["settings"][0]["first_within"]["epochs"] == first["epochs"]
    run["machine"] = {"torch_threads": 1}
    assert "first within 1 point of best" in "\n".join(bench.curve_markdown("tiny run", run))


def test_the_cache_key_records_the_resolved_precision_and_the_report_the_sample_trained_on(bert: Path) -> None:
    from tsteval.classifiers.training import train_classifier
    from tsteval.core.devices import native_bf16
    from tsteval.core.records import Corpus

    model = TransformerClassifier(str(bert), device="cpu")
    assert model.cache_params()["precision"] == ("bf16" if native_bf16("cpu") else "fp32")
    assert model.get_params()["precision"] == "auto"
    corpus = Corpus(TEXTS, LABELS)
    trained = train_classifier("transformer", corpus, {"model_name_or_path": str(bert), "max_train": 20,
                                                       "batch_size": 8, "verbose": False}, heldout=0.25,
                               use_cache=False)
    assert trained.report["params"]["precision"] in ("bf16", "fp32")
    assert trained.report["n_train"] == 20 and trained.report["n_split"] == 36
    assert trained.report["n_train"] == trained.model.n_train_ == len(trained.model.training_texts_)
