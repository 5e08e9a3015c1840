"""Bad-input catalogue: backend parameters are checked against each backend's ``_parameter_constraints``
(scikit-learn's convention) before any work, wherever they come from: ``--param``, a manifest's ``params``, a
pair classifier's arguments or a saved model's manifest.  A bad one is one line naming the backend, the
parameter, the rule and a value that works; never a library traceback, never a model trained on nonsense.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from badinput import NEGATIVE, POSITIVE, expect_error, run_cli, sentences

from tsteval.classifiers.base import BACKENDS, MANIFEST, ParameterError, backend_class, make_classifier
from tsteval.classifiers.pairs import (
    MATCH,
    NO_MATCH,
    PAIR_BACKENDS,
    PAIR_MANIFEST,
    FeaturePairClassifier,
    load_pair_classifier,
    make_pair_classifier,
    pair_backend_class,
)
from tsteval.core.errors import InputError
from tsteval.core.integrity import integrity_hash

TINY = Path(__file__).resolve().parent / "data" / "tiny_manifest.yaml"



@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two style files and aligned input/output files."""
    root = tmp_path_factory.mktemp("parameters")
    neg, pos = sentences(NEGATIVE, 0, 40), sentences(POSITIVE, 1, 40)
    (root / "neg.txt").write_text("\n".join(neg) + "\n")
    (root / "pos.txt").write_text("\n".join(pos) + "\n")
    (root / "in.txt").write_text("the food was cold and the staff was rude .\n")
    (root / "out.txt").write_text("the food was warm and the staff was friendly .\n")
    return root


def _corpus(data: Path) -> tuple[list[str], list[str]]:
    neg = (data / "neg.txt").read_text().splitlines()
    pos = (data / "pos.txt").read_text().splitlines()
    return neg + pos, ["neg"] * len(neg) + ["pos"] * len(pos)


def _train(data: Path, out: Path, backend: str, *options: str) -> list[str]:
    return ["train-classifier", backend, "--style", f"neg={data / 'neg.txt'}", "--style",
            f"pos={data / 'pos.txt'}", *options, "--out", out, "--quiet"]


@pytest.mark.parametrize(("backend", "param", "fragments"), [
    ("tfidf-lr", "C=abc", ("bad parameter for backend 'tfidf-lr': C='abc' must be a float in the range (0.0, inf)",
                           "(fix: --param C=1.0)")),
    ("tfidf-lr", "C=0", ("C=0 must be a float in the range (0.0, inf)", "(fix: --param C=1.0)")),
    ("tfidf-lr", "max_iter=true", ("max_iter=True must be an int in the range [1, inf)",)),
    ("tfidf-lr", "ngram_range=[2,1]", ("ngram_range=[2, 1] must be [low, high] with low <= high",
                                       "(fix: --param ngram_range=[1,2])")),
    ("tfidf-lr", "ngram_range=2", ("ngram_range=2 must be a list of 2 ints, each at least 1",)),
    ("tfidf-lr", "tokenizer=bpe", ("tokenizer='bpe' is not one of its parameters ['C', 'max_iter', 'min_df', "
                                   "'ngram_range', 'seed']", "(fix: leave out --param tokenizer)")),
    ("fasttext", "epoch=-1", ("bad parameter for backend 'fasttext': epoch=-1 must be an int in the range [1, inf)",
                              "(fix: --param epoch=10)")),
    ("fasttext", "lr=fast", ("lr='fast' must be a float in the range (0.0, inf)", "(fix: --param lr=0.1)")),
    ("fasttext", "bucket=0", ("bucket=0 must be an int in the range [1, inf)",)),
    ("textcnn", "epochs=1.5", ("bad parameter for backend 'textcnn': epochs=1.5 must be an int in the range [1, inf)",
                               "(fix: --param epochs=3)")),
    ("textcnn", "max_len=2", ("max_len=2 must be at least the widest filter size (5)", "(fix: --param max_len=5)")),
    ("textcnn", "dropout=1", ("dropout=1 must be a float in the range [0.0, 1.0)", "(fix: --param dropout=0.5)")),
    ("transformer", "batch_size=0", ("bad parameter for backend 'transformer': batch_size=0 must be an int in the "
                                     "range [1, inf)", "(fix: --param batch_size=32)")),
    ("transformer", "max_length=long", ("max_length='long' must be an int in the range [8, inf)",
                                        "(fix: --param max_length=32)")),
    ("transformer", "lr=0", ("lr=0 must be a float in the range (0.0, inf)", "(fix: --param lr=0.00005)")),
])
def test_bad_param_stops_training_before_any_work(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                  backend: str, param: str, fragments: tuple[str, ...]) -> None:
    out = tmp_path / "clf"
    expect_error(_train(data, out, backend, "--param", param), capsys, *fragments)
    assert not out.exists()


def test_list_for_a_tuple_parameter_and_no_heldout(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "clf"
    outcome = run_cli(_train(data, out, "tfidf-lr", "--param", "ngram_range=[1,3]", "--heldout", "0"), capsys)
    assert outcome.code == 0, outcome.err
    assert outcome.out == f"tfidf-lr: 80 texts, 2 styles; no held-out split (--heldout 0); saved to {out}\n"
    assert json.loads((out / MANIFEST).read_text())["params"]["ngram_range"] == [1, 3]


def _manifest(tmp_path: Path, classifier: dict) -> Path:
    """The tiny manifest with its classifier replaced by ``classifier``."""
    data = yaml.safe_load(TINY.read_text())
    data["classifiers"] = {"lr": classifier}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(("classifier", "key", "fragments"), [
    ({"backend": "tfidf-lr", "params": {"C": -1}}, "classifiers.lr.params.C",
     ("C=-1 must be a float in the range (0.0, inf) for backend 'tfidf-lr'", "(fix: C: 1.0)")),
    # YAML 1.1 reads 1e-1 (no dot) as a string; the fix is written so that YAML reads a number.
    ({"backend": "fasttext", "params": {"lr": "1e-1"}}, "classifiers.lr.params.lr",
     ("lr='1e-1' must be a float in the range (0.0, inf) for backend 'fasttext'", "(fix: lr: 0.1)")),
    ({"backend": "tfidf-lr", "params": {"ngram_range": [3, 1]}}, "classifiers.lr.params.ngram_range",
     ("ngram_range=[3, 1] must be [low, high] with low <= high", "(fix: ngram_range: [1,3])")),
])
def test_manifest_param_is_checked_when_the_manifest_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture, data_root: Path, classifier: dict, key: str,
        fragments: tuple[str, ...]) -> None:
    path = _manifest(tmp_path, classifier)
    out = tmp_path / "run"
    outcome = expect_error(["run", path, "--out", out, "--quiet"], capsys, f"{path}: {key}: ", *fragments)
    assert outcome.err.count("\n") == 1  # one line: nothing was loaded or trained before it
    assert not out.exists()


def _edit_saved(model: Path, manifest_name: str, **params: object) -> None:
    """Give a saved model's manifest other parameters and a matching integrity hash (as if another tsteval
    had saved it)."""
    manifest = json.loads((model / manifest_name).read_text())
    manifest["params"].update(params)
    manifest["integrity"] = integrity_hash({k: manifest[k] for k in ("backend", "params", "classes", "files")})
    (model / manifest_name).write_text(json.dumps(manifest))


def _score(data: Path, model: Path, out: Path) -> list[str]:
    return ["score", "--classifier", f"m={model}", "--pairs", data / "in.txt", data / "out.txt",
            "--source-style", "neg", "--target-style", "pos", "--out", out, "--quiet"]


def test_saved_model_with_a_bad_param(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = tmp_path / "model"
    make_classifier("tfidf-lr").fit(*_corpus(data)).save(model)
    manifest = json.loads((model / MANIFEST).read_text())
    manifest["params"]["C"] = -1.0  # edited by hand: the integrity hash refuses it first
    (model / MANIFEST).write_text(json.dumps(manifest))
    expect_error(_score(data, model, tmp_path / "run"), capsys, "the manifest was edited")
    _edit_saved(model, MANIFEST, C=-1.0)
    expect_error(_score(data, model, tmp_path / "run"), capsys,
                 f"{model / MANIFEST}: backend 'tfidf-lr' refuses the saved parameter C=-1.0 must be a float in "
                 "the range (0.0, inf) (fix: retrain the model with this version of tsteval)")
    assert not (tmp_path / "run").exists()


def test_pair_classifier_params(data: Path, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"^bad parameter for backend 'cross-encoder': stride=40 must be at "
                       r"most a quarter of max_length \(32\) \(fix: --param stride=32\)$"):
        make_pair_classifier("cross-encoder", stride=40)
    with pytest.raises(ParameterError, match=r"long_documents='chunks' must be a str among"):
        make_pair_classifier("cross-encoder", long_documents="chunks")
    with pytest.raises(ParameterError, match=r"max_length=4 must be an int in the range \[16, inf\)"):
        make_pair_classifier("cross-encoder", max_length=4)
    texts, _ = _corpus(data)
    pairs = list(zip(texts[:20], texts[20:40], strict=True))
    labels = [MATCH] * 10 + [NO_MATCH] * 10
    # Constructed directly, as scikit-learn allows: checked when fitting, before any work.
    with pytest.raises(ParameterError, match=r"'features': C=0 must be a float in the range \(0.0, inf\)"):
        FeaturePairClassifier(C=0).fit(pairs, labels)
    model = FeaturePairClassifier().fit(pairs, labels).save(tmp_path / "hh")
    _edit_saved(model, PAIR_MANIFEST, max_iter=0)
    with pytest.raises(InputError, match=r"backend 'features' refuses the saved parameter max_iter=0 must be"):
        load_pair_classifier(model)


@pytest.mark.parametrize("cls", [*map(backend_class, BACKENDS), *map(pair_backend_class, PAIR_BACKENDS)])
def test_every_parameter_has_a_constraint_and_the_defaults_pass(cls: type) -> None:
    assert sorted(cls._parameter_constraints) == cls._get_param_names()
    cls()._validate_params()


def test_max_length_beyond_the_encoder_is_refused() -> None:
    from tsteval.classifiers.transformer import check_max_length

    with pytest.raises(ParameterError, match=r"max_length=1000 must be at most 512, the longest input this encoder "
                                             r"takes \(fix: --param max_length=512\)$"):
        check_max_length(SimpleNamespace(model_max_length=512), 1000, "transformer")
    check_max_length(SimpleNamespace(model_max_length=512), 512, "transformer")
