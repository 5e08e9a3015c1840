"""Learned metrics (issue 57): the rated pairs and their groups, a seeded deterministic fine-tune saved as a verified
folder, its score recomputed independently, the leakage guard of a run, and the refusal to meta-evaluate a learned
model on a set it was trained on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tsteval.core.errors import InputError, TstevalError
from tsteval.metrics.learned.folder import MANIFEST, load
from tsteval.metrics.learned.learn import train_metric, training_sets
from tsteval.metrics.learned.rated_pairs import groups, rated_pairs
from tsteval.metrics.learned.training import Recipe, batches, heldout_split

TINY = Recipe(per_set=48, batch_size=16, evaluations=1)


@pytest.fixture(scope="module")
def lai_model(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    return train_metric("content", tmp_path_factory.mktemp("learned") / "bi", recipe=TINY, sets=["lai"],
                        log=lambda _m: None)


def test_groups_join_the_sets_that_share_a_text(data_root: Path) -> None:
    found = groups(rated_pairs("content").frame)
    assert ["cae_t5", "content_cae"] in found and ["tox600", "content_tox600"] in found
    assert ["mir", "content_pg_yelp", "content_yamsh_yelp"] in found and ["lai", "content_yamsh_gyafc"] in found
    assert training_sets("content", exclude=["content_yamsh_yelp"]) == [
        "lai", "tox600", "cae_t5", "content_yamsh_bible", "content_yamsh_gyafc", "content_yamsh_para"]
    with pytest.raises(TstevalError, match="no content ratings in rated set 'content_cea'.*content_cae"):
        training_sets("content", exclude=["content_cea"])


def test_heldout_split_keeps_every_output_of_an_input_together(data_root: Path) -> None:
    pairs = rated_pairs("content", ["lai"]).frame
    held = heldout_split(pairs, 0.1, seed=0)
    assert pairs["item"][held].nunique() == 8  # a tenth of Lai's 80 inputs
    assert set(pairs["item"][held]).isdisjoint(pairs["item"][~held])
    rng = np.random.default_rng(0)
    order = batches(rated_pairs("content", ["lai", "tox600"]).frame, TINY, rng)
    frame = rated_pairs("content", ["lai", "tox600"]).frame
    assert all(frame["set"].iloc[rows].nunique() == 1 for rows in order)  # a batch ranks pairs of one set
    assert sum(len(rows) for rows in order) == 2 * TINY.per_set


def test_training_is_seeded_and_the_folder_is_verified(lai_model: Path, tmp_path: Path) -> None:
    again = train_metric("content", tmp_path / "again", recipe=TINY, sets=["lai"], log=lambda _m: None)
    first, second = load(lai_model), load(again)
    assert first.identity == second.identity and first.identity.startswith("learned-bi@")
    manifest = json.loads((lai_model / MANIFEST).read_text())
    assert manifest["sets"]["lai"]["rows"] == 720 and set(manifest["sets"]["lai"]["files"]) == {
        "style.json", "content.src.json", "content.ref.json", "fluency.json"}
    assert manifest["report"]["history"][0]["epoch"] == 0.0  # the base encoder's held-out figure first
    weights = again / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8] + b"\x00" * 8)
    with pytest.raises(InputError, match="do not match its manifest .model.safetensors: sha256 mismatch"):
        load(again)


def test_score_is_the_cosine_of_the_fine_tuned_embeddings(lai_model: Path) -> None:
    import torch
    from transformers import AutoModel, AutoTokenizer

    from tsteval import evaluate

    inputs, outputs = ["the food was cold .", "i loved it"], ["the meal was warm .", "i loved it !"]
    card = evaluate(inputs, outputs, source_style="a", target_style="b", metrics=["learned"], learned=str(lai_model))
    tokenizer, model = AutoTokenizer.from_pretrained(lai_model), AutoModel.from_pretrained(lai_model).eval()
    with torch.inference_mode():
        batch = tokenizer(inputs + outputs, padding=True, return_tensors="pt")
        hidden, mask = model(**batch).last_hidden_state, batch["attention_mask"].unsqueeze(-1).float()
        vectors = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
    expected = (vectors[:2] * vectors[2:]).sum(-1).numpy()
    assert np.allclose(card.frame["learned@none"], expected, atol=1e-5)
    assert card.signatures["learned@none"].count(load(lai_model).identity) == 1


def test_a_run_flags_pairs_the_metric_was_trained_on(lai_model: Path, data_root: Path) -> None:
    from tsteval.experiment.run.leakage import leakage
    from tsteval.scorecard import Scorecard

    pairs = rated_pairs("content", ["lai"]).frame.head(9)
    frame = pairs.assign(system="s", source_style="a", target_style="b")
    frame.loc[0, "input"], frame.loc[0, "output"] = "a text nobody rated", "another one"
    found = leakage(Scorecard(frame), {}, learned=load(lai_model))
    assert found.counts["learned"]["pairs_in_training"] == 8 and found.counts["learned"]["pairs"] == 9
    assert found.warnings[0].startswith("leakage: 8 of 9 scored pairs have their input or output in the training")


def test_meta_evaluation_refuses_a_learned_model_on_its_training_set(lai_model: Path, tmp_path: Path) -> None:
    from tsteval.metaeval.study.runner import run_study

    study = tmp_path / "s.yaml"
    study.write_text(f"kind: tsteval-study\ntitle: T\nsets: [lai]\nresamples: 10\n"
                     f"columns: [{{metrics: [learned], options: {{learned: {lai_model}}}}}]\n")
    with pytest.raises(InputError, match="trained on 720 of its 720 pairs.*--exclude-set lai"):
        run_study(study, cache=tmp_path / "cache", log=lambda _m: None)


def test_cli_trains_and_refuses_an_unknown_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tsteval.cli.main import main

    assert main(["train-metric", "content", "--sets", "lia", "--out", str(tmp_path / "m"), "--quiet"]) == 2
    assert "no content ratings in rated set 'lia'" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_training_that_never_beats_the_base_saves_the_base_encoder(tmp_path: Path, data_root: Path) -> None:
    """A learning rate that wrecks the encoder: no held-out evaluation beats the state it came in, so that state is
    what is saved (not the last one), and its held-out history says so."""
    from safetensors.numpy import load_file

    from tsteval.metrics.content.sentence_embedding import default_model

    wrecked = train_metric("content", tmp_path / "m", recipe=Recipe(per_set=48, batch_size=16, evaluations=1,
                                                                   learning_rate=1.0), sets=["lai"],
                           log=lambda _m: None)
    report = json.loads((wrecked / MANIFEST).read_text())["report"]
    assert report["kept"]["epoch"] == 0.0 and report["history"][1]["mean"] < report["history"][0]["mean"]
    saved, base = load_file(wrecked / "model.safetensors"), load_file(Path(default_model()) / "model.safetensors")
    key = next(k for k in base if k.endswith("encoder.layer.5.output.dense.weight"))
    assert np.array_equal(saved[next(k for k in saved if k.endswith("encoder.layer.5.output.dense.weight"))], base[key])


def test_a_naturalness_model_reads_the_output_alone(tmp_path: Path, data_root: Path) -> None:
    """The ``single`` shape: the four naturalness sets share no text (four groups), the score is the sigmoid of
    the head on the output alone (recomputed with transformers; the input changes nothing), a content shape is
    refused for naturalness, and --learned refuses a naturalness model."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tsteval import evaluate
    from tsteval.metrics.learned.folder import LearnedScorer

    assert sorted(map(sorted, groups(rated_pairs("naturalness").frame))) == [["cae_t5"], ["lai"], ["mir"],
                                                                            ["tox600"]]
    with pytest.raises(TstevalError, match="a learned naturalness metric has the shape single, not 'bi'"):
        train_metric("naturalness", tmp_path / "bi", recipe=TINY, sets=["tox600"], log=lambda _m: None)
    folder = load(train_metric("naturalness", tmp_path / "m", recipe=Recipe(shape="single", per_set=48,
                                                                           batch_size=16, evaluations=1),
                               sets=["tox600"], log=lambda _m: None))
    assert folder.identity.startswith("learned-single@") and folder.sets == ["tox600"]
    outputs = ["the food was warm .", "food warm the was"]
    got = LearnedScorer(folder).scores(["any input", "another"], outputs)[0]
    assert np.array_equal(got, LearnedScorer(folder).scores(["x", "y"], outputs)[0])
    tokenizer = AutoTokenizer.from_pretrained(folder.path)
    model = AutoModelForSequenceClassification.from_pretrained(folder.path).eval()
    with torch.inference_mode():
        expected = torch.sigmoid(model(**tokenizer(outputs, padding=True, return_tensors="pt")).logits[:, 0])
    assert np.allclose(got, expected.numpy(), atol=1e-6)
    with pytest.raises(TstevalError, match="scores naturalness, not content"):
        evaluate(["a"], ["b"], source_style="a", target_style="b", metrics=["learned"], learned=str(folder.path))
