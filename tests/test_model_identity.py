"""One identity per model (issue 56 item 1): a saved classifier is named in signatures by the content hash of its
files, whichever way it came (``train-classifier``, a manifest, the training cache, a copy, a fitted object), so
``tsteval compare`` takes two runs with byte-identical models, and two different models never share a name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from badinput import run_cli
from conftest import read_slice

import tsteval
from tsteval.classifiers.base import fitted_identity, load_classifier, saved_identity
from tsteval.classifiers.training import train_classifier
from tsteval.core.records import Corpus

PARAMS = {"dim": 16, "bucket": 10000}  # a small fastText: seconds, a 0.7 MB model
TRAIN = ["--param", "dim=16", "--param", "bucket=10000", "--threads", "1", "--quiet"]
STYLE = "sti@ft"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> Path:
    """300 real Yelp dev sentences per sentiment, and 40 real DualRL Yelp transfers (negative -> positive)."""
    root = tmp_path_factory.mktemp("identity")
    for style in ("0", "1"):
        lines = read_slice(data_root / "yelp" / f"sentiment.dev.{style}", 300)
        (root / f"{style}.txt").write_text("\n".join(lines) + "\n")
    pairs = read_slice(data_root / "dualrl" / "outputs" / "yelp" / "DualRL" / "test.0-1.tsf", 40)
    (root / "pairs.tsv").write_text("\n".join(pairs) + "\n")
    return root


def _train_cli(data: Path, out: Path, capsys: pytest.CaptureFixture, seed: int = 0) -> Path:
    outcome = run_cli(["train-classifier", "fasttext", "--style", f"0={data / '0.txt'}", "--style",
                       f"1={data / '1.txt'}", "--seed", seed, *TRAIN, "--out", out], capsys)
    assert outcome.code == 0, outcome.err
    return out


def _score_cli(data: Path, clf: Path, out: Path, capsys: pytest.CaptureFixture) -> str:
    outcome = run_cli(["score", "--tsv", data / "pairs.tsv", "--source-style", "0", "--target-style", "1",
                       "--classifier", f"ft={clf}", "--metrics", "sti", "--out", out, "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    return json.loads((out / "signatures.json").read_text())[STYLE]


def _manifest(data: Path, path: Path) -> Path:
    """The same classifier trained by a manifest on the same files, scoring the same transfers."""
    manifest = {
        "name": "identity", "seed": 0, "output": str(path.parent / "run"),
        "transfers": {"systems": [{"name": "system", "source_style": "0", "target_style": "1",
                                   "settings": [{"label": "default", "files": [{"tsv": str(data / "pairs.tsv")}]}]}]},
        "corpus": {"style": {"0": str(data / "0.txt"), "1": str(data / "1.txt")}, "exclude_inputs": False},
        "classifiers": {"ft": {"backend": "fasttext", "params": PARAMS}},
        "metrics": {"style": {"classifiers": ["ft"]}}, "joint": "none",
    }
    path.write_text(yaml.safe_dump(manifest))
    return path


@pytest.fixture(scope="module")
def cli_model(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The classifier trained by ``tsteval train-classifier`` (module-wide: trained once)."""
    from tsteval.cli.main import main

    out = tmp_path_factory.mktemp("cli") / "clf"
    assert main(["train-classifier", "fasttext", "--style", f"0={data / '0.txt'}", "--style",
                 f"1={data / '1.txt'}", *TRAIN, "--out", str(out)]) == 0
    return out


def test_train_classifier_and_a_manifest_give_one_signature_and_compare_passes(
        data: Path, cli_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    by_cli = _score_cli(data, cli_model, tmp_path / "cli_run", capsys)
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path / "fresh-cache"))  # the manifest trains its own model
    outcome = run_cli(["run", _manifest(data, tmp_path / "m.yaml"), "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    trained = json.loads((tmp_path / "run" / "run.json").read_text())["classifiers"]["ft"]
    assert not trained["cached"]
    cached = next((tmp_path / "fresh-cache" / "classifiers").glob("*/model"))
    assert (cached / "fasttext.bin").read_bytes() == (cli_model / "fasttext.bin").read_bytes()
    by_manifest = json.loads((tmp_path / "run" / "signatures.json").read_text())[STYLE]
    assert by_manifest == by_cli
    assert f"clf:ft-{saved_identity(cli_model)}" in by_cli.split("|")
    assert trained["identity"] == saved_identity(cli_model)
    outcome = run_cli(["compare", tmp_path / "cli_run", tmp_path / "run", "--format", "json"], capsys)
    assert outcome.code == 0, outcome.err
    compared = {row["metric"]: row for row in json.loads(outcome.out)["directions"][0]["metrics"]}
    assert STYLE in compared and all(row["difference"] == 0 for row in compared.values())


def test_cache_copy_and_fitted_object_share_the_identity(data: Path, cli_model: Path, tmp_path: Path) -> None:
    corpus = Corpus([*read_slice(data / "0.txt", 300), *read_slice(data / "1.txt", 300)], ["0"] * 300 + ["1"] * 300,
                    "slice")
    identity = saved_identity(cli_model)
    from_cache = train_classifier("fasttext", corpus, {**PARAMS, "threads": 1}, heldout=0.1)
    assert from_cache.cached  # train-classifier put it in the cache
    assert from_cache.identity == identity
    copy = shutil.copytree(cli_model, tmp_path / "elsewhere" / "renamed")
    assert saved_identity(copy) == identity
    assert fitted_identity(load_classifier(copy)) == identity
    pairs = [line.split("\t") for line in read_slice(data / "pairs.tsv", 40)]
    inputs, outputs = [p[0] for p in pairs], [p[1] for p in pairs]
    cards = [tsteval.evaluate(inputs, outputs, source_style="0", target_style="1", metrics=["sti"],
                              classifier={"ft": given}) for given in (str(copy), load_classifier(copy))]
    assert cards[0].signatures[STYLE] == cards[1].signatures[STYLE]
    assert f"clf:ft-{identity}" in cards[0].signatures[STYLE].split("|")


def test_two_different_models_never_share_an_identity(data: Path, cli_model: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    other = _train_cli(data, tmp_path / "seed1", capsys, seed=1)
    assert (other / "fasttext.bin").read_bytes() != (cli_model / "fasttext.bin").read_bytes()
    assert saved_identity(other) != saved_identity(cli_model)
    assert _score_cli(data, other, tmp_path / "r1", capsys) != _score_cli(data, cli_model, tmp_path / "r0", capsys)


def _tiny_lm(directory: Path, seed: int) -> Path:
    """A randomly initialised one-layer GPT-2 (width 16) with the all-MiniLM-L6-v2 tokenizer ([SEP] as its end token),
    saved by save_pretrained: a local causal LM folder that loads in a second."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from tsteval.classifiers.transformer import default_model_path

    tokenizer = AutoTokenizer.from_pretrained(default_model_path(), eos_token="[SEP]")
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2, n_positions=64,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_a_language_model_folder_is_named_by_its_files_not_its_path(tmp_path: Path) -> None:
    lm = _tiny_lm(tmp_path / "a" / "tiny-lm", seed=0)
    copy = shutil.copytree(lm, tmp_path / "b" / "tiny-lm")
    other = _tiny_lm(tmp_path / "c" / "tiny-lm", seed=1)
    signatures = [tsteval.evaluate(["the food was bad ."], ["the food was good ."], source_style="0",
                                   target_style="1", metrics=["smollm2"], language_model=str(folder),
                                   threads=1).signatures["lp_mean@tiny-lm"] for folder in (lm, copy, other)]
    fields = [dict(part.split(":", 1) for part in s.split("|"))["lm"] for s in signatures]
    assert fields[0] == fields[1] != fields[2]
    assert fields[0].startswith("tiny-lm@") and str(tmp_path) not in signatures[0]


def test_word_vectors_that_differ_anywhere_have_different_identities() -> None:
    import numpy as np

    from tsteval.metrics.content.word_vectors import WordVectors

    vocab = {f"w{i}": i for i in range(600)}
    first = np.arange(1200, dtype=np.float32).reshape(600, 2)
    second = first.copy()
    second[-1] = second[-1, ::-1]  # the last row's two values swapped: same sum, same first 2 KB
    assert WordVectors(vocab, first).hash != WordVectors(vocab, second).hash
    assert WordVectors(vocab, first).hash == WordVectors(dict(vocab), first.copy()).hash


def test_the_encoder_is_named_by_its_files_wherever_they_lie(tmp_path: Path) -> None:
    from tsteval.metrics.content.sentence_embedding import default_model
    from tsteval.metrics.resources import ResourceOptions, Resources

    copies = [shutil.copytree(default_model(), tmp_path / where) for where in ("a/minilm", "b/renamed")]
    named = [Resources(ResourceOptions(encoder=str(c), precision="fp32")).get("sentence_encoder").identity
             for c in copies]
    default = Resources(ResourceOptions(precision="fp32")).get("sentence_encoder").identity
    assert named == [default, default] and str(tmp_path) not in default  # the packaged files, wherever, renamed
    other = shutil.copytree(default_model(), tmp_path / "c" / "minilm")
    (other / "config.json").write_text((other / "config.json").read_text().replace("\"hidden_act\"",
                                                                                  "\"_edited\": 1, \"hidden_act\""))
    for where in ("d/one", "e/two"):  # another model: named by its own files, one name wherever it lies
        shutil.copytree(other, tmp_path / where)
    edited = {Resources(ResourceOptions(encoder=str(tmp_path / w), precision="fp32")).get("sentence_encoder").identity
              for w in ("c/minilm", "d/one", "e/two")}
    assert len(edited) == 1 and edited.pop().startswith("local@") and default.startswith("all-MiniLM-L6-v2@")
