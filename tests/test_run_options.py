"""Run options declared once (tsteval.experiment.options): every option walked through the command line, a
manifest and the Python API finds the same value, and a bad value the same one-line message."""

from __future__ import annotations

import ast
import dataclasses
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import yaml
from badinput import run_cli

import tsteval
from tsteval.cli.main import build_parser
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.manifest.specs import ready_made
from tsteval.experiment.options import OPTIONS
from tsteval.experiment.plan.plan import Plan, resource_options
from tsteval.metrics import resources
from tsteval.metrics.content.word_vectors import WordVectors
from tsteval.metrics.joint.score import JointRecipe
from tsteval.metrics.resources import ResourceOptions

INPUTS = ["the food was cold .", "rude staff !", "i hated it ."]
OUTPUTS = ["the food was warm .", "friendly staff !", "i loved it ."]

# option: (good value as text, as YAML/Python, what the plan holds; a bad value; extra settings it needs)
CASES: dict[str, tuple[str, object, object, object, dict[str, object]]] = {
    "device": ("cuda:1", "cuda:1", "cuda:1", "tpu", {}),
    "threads": ("3", 3, 3, 0, {}),
    "precision": ("bf16", "bf16", "bf16", "fp64", {}),  # read here; refused on the CPU when run (test_precision.py)
    "seed": ("7", 7, 7, -1, {}),
    "folds": ("3", 3, 3, 1, {}),
    "ground": ("ordinal", "ordinal", "ordinal", "circular", {}),
    "modifications": ("none,remove", ["none", "remove"], ("none", "remove"), ["shuffle"], {}),
    "placeholder": ("<x>", "<x>", "<x>", " ", {}),
    "vectors": ("VECTORS", "VECTORS", "VECTORS", "/no/such/folder", {}),
    "encoder": ("sentence-transformers/LaBSE", "sentence-transformers/LaBSE", "sentence-transformers/LaBSE", " ", {}),
    "learned": ("runs/learned", "runs/learned", "runs/learned", " ", {}),  # a folder, read when the run builds it
    "attribution_threshold": ("0.5", 0.5, 0.5, 1.5, {}),
    "baselines": ("copy", ["copy"], ("copy",), ["magic"], {}),
    "joint": ("none", "none", "none", "x", {}),
    "engine": ("ray", "ray", "ray", "spark", {}),
    "address": ("127.0.0.1:6379", "127.0.0.1:6379", "127.0.0.1:6379", " ", {"engine": "ray"}),
    "workers": ("2", 2, 2, 0, {"engine": "ray"}),
    "language_model": ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M",
                       "no such model", {}),
    "lm_endpoint": ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1",
                    "127.0.0.1:8000", {}),
    "api_key_env": ("LAB_KEY", "LAB_KEY", "LAB_KEY", "sk-not-a-variable name", {}),
    "max_concurrency": ("8", 8, 8, 0, {}),
    "lm_start_text": ("<s>", "<s>", "<s>", "two\nlines", {}),
    "lm_tokenizer": ("HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M", "HuggingFaceTB/SmolLM2-360M",
                     "two\nlines", {}),
    "dry_run": ("true", True, True, "maybe", {}),  # a switch on the command line: --dry-run
    "batch_tokens": ("512", 512, 512, 0, {}),
    "text_form": ("tokenised-lowercase", "tokenised-lowercase", "tokenised-lowercase", "shouting", {}),
    "language": ("ru", "ru", "ru", "Russian", {}),
    "style_labels": ("neg=negative,pos=positive", {"neg": "negative", "pos": "positive"},
                     {"neg": "negative", "pos": "positive"}, "neg=", {}),
    "classifier_labels": ("snt=NEGATIVE:neg,POSITIVE:pos", {"snt": {"NEGATIVE": "neg", "POSITIVE": "pos"}},
                          {"snt": {"NEGATIVE": "neg", "POSITIVE": "pos"}}, "snt=NEGATIVE", {}),
}
# A ready-made classifier, for the option that maps its labels (not loaded when a plan is made).
HUB_CLASSIFIER = ("snt", "hf:distilbert/distilbert-base-uncased-finetuned-sst-2-english")


def test_the_cases_cover_every_option() -> None:
    assert set(CASES) == set(OPTIONS)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("options")
    (root / "in.txt").write_text("\n".join(INPUTS) + "\n")
    (root / "out.txt").write_text("\n".join(OUTPUTS) + "\n")
    (root / "table.csv").write_text("input,output,source_style,target_style\n"
                                    + "".join(f"{i},{o},neg,pos\n" for i, o in zip(INPUTS, OUTPUTS, strict=True)))
    (root / "lexicon.json").write_text('{"neg": [["cold", 1.0], ["rude", 1.0]], "pos": [["warm", 1.0]]}')
    (root / "vectors").mkdir()
    WordVectors({"food": 0, "warm": 1}, np.eye(2, dtype=np.float32), "toy").save(root / "vectors")
    return root


def _value(value: object, files: Path) -> object:
    return str(files / "vectors") if value == "VECTORS" else value


def _expected(name: str, value: object, files: Path) -> object:
    if value == "VECTORS":
        return files / "vectors"
    return value


def _cli(files: Path, flags: list[str]) -> list[str]:
    if OPTIONS["classifier_labels"].flag in flags:
        flags = [*flags, "--classifier", "=".join(HUB_CLASSIFIER)]
    return ["score", "--pairs", str(files / "in.txt"), str(files / "out.txt"), "--source-style", "neg",
            "--target-style", "pos", "--content", "bleu", "--lexicon", str(files / "lexicon.json"), *flags,
            "--out", str(files / "never-written")]


def _flags(values: dict[str, object]) -> list[str]:
    flags = []
    for name, value in values.items():
        if isinstance(OPTIONS[name].default, bool):  # a switch: present or not
            flags += [OPTIONS[name].flag] if str(value).lower() == "true" else []
            continue
        text = ",".join(value) if isinstance(value, list) else str(value)
        flags += [OPTIONS[name].flag, text]
    return flags


def _manifest(files: Path, values: dict[str, object], tag: str) -> Path:
    data: dict[str, object] = {"transfers": {"table": str(files / "table.csv")},
                               "lexicon": {"file": str(files / "lexicon.json")},
                               "metrics": {"content": {"metrics": ["bleu"]}}}
    for name, value in values.items():
        *parents, last = OPTIONS[name].manifest.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    if "style" in data["metrics"]:  # the ground distance lives beside the style classifiers
        data["classifiers"] = {"lr": {"backend": "tfidf-lr"}}
        data["corpus"] = {"style": {"neg": str(files / "in.txt"), "pos": str(files / "out.txt")}}
        data["metrics"]["style"]["classifiers"] = ["lr"]
    if "classifier_labels" in data:  # the labels of a ready-made classifier
        data["classifiers"] = {HUB_CLASSIFIER[0]: {"hf": HUB_CLASSIFIER[1].removeprefix("hf:")}}
    if "attribution" in data["metrics"]["content"]:  # the threshold lives beside its classifier
        data["classifiers"] = {"bert": {"backend": "transformer"}}
        data["corpus"] = {"style": {"neg": str(files / "in.txt"), "pos": str(files / "out.txt")}}
        data["metrics"]["content"]["attribution"]["classifier"] = "bert"
        data["metrics"]["content"]["modifications"] = ["none", "attribution-mask"]
    path = files / f"{tag}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_a_good_value_is_the_same_in_every_front_end(name: str, files: Path) -> None:
    text, value, expected, _, extra = CASES[name]
    expected = _expected(name, expected, files)
    parser = build_parser()
    args = parser.parse_args(_cli(files, _flags({**extra, name: _value(text, files)})))
    plans = {"cli": Plan.from_args(args)}
    if name != "attribution_threshold":  # attribution needs a transformer classifier; read through the manifest
        manifest = load_manifest(_manifest(files, {**extra, name: _value(value, files)}, f"good-{name}"))
        plans["manifest"] = Plan.from_manifest(manifest)
    else:
        manifest = load_manifest(_manifest(files, {name: value}, f"good-{name}"))
        assert manifest.options.attribution_threshold == expected
    transfers = tsteval.Transfers.from_pairs(INPUTS, OUTPUTS, source_style="neg", target_style="pos")
    hub = {HUB_CLASSIFIER[0]: ready_made(*HUB_CLASSIFIER)} if name == "classifier_labels" else {}
    plans["python"] = Plan(transfers, content=("bleu",), lexicon=str(files / "lexicon.json"), classifiers=hub,
                           **{**extra, name: _value(value, files)})
    for front, plan in plans.items():
        held = getattr(plan, name)
        assert held == expected or (isinstance(held, JointRecipe) and str(held) == expected), (front, held)
        built_from = getattr(resource_options(plan), name)  # what the resources are built from: the same value
        assert built_from == held and pickle.loads(pickle.dumps(built_from)) == held, (front, built_from)


def test_resource_options_take_every_run_option_and_default_from_options() -> None:
    """:class:`ResourceOptions` declares no run option of its own: each field and default comes from OPTIONS (a
    mapping as a plain dict, which pickles for the workers), so a run option is declared in one place."""
    defaults = ResourceOptions()
    assert {f.name for f in dataclasses.fields(ResourceOptions)} >= set(OPTIONS)
    for name, option in OPTIONS.items():
        assert getattr(defaults, name) == option.default, name
    assert pickle.loads(pickle.dumps(defaults)) == defaults
    tree = ast.parse(Path(resources.__file__).read_text(encoding="utf-8"))
    declared = {node.target.id for node in ast.walk(tree) if isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)}
    assert declared and not declared & set(OPTIONS), sorted(declared & set(OPTIONS))


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_value_is_the_same_line_in_every_front_end(name: str, files: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    _, _, _, bad, extra = CASES[name]
    with pytest.raises(TstevalError) as error:
        OPTIONS[name].read(bad)
    message = str(error.value)
    assert "\n" not in message and name in message
    if not isinstance(OPTIONS[name].default, bool):  # a switch takes no value on the command line
        outcome = run_cli(_cli(files, _flags({**extra, name: bad})), capsys)
        assert outcome.code == 2 and outcome.error == message
    with pytest.raises(ManifestError) as error:
        load_manifest(_manifest(files, {**extra, name: bad}, f"bad-{name}"))
    assert f": {OPTIONS[name].manifest}: {message}" in str(error.value)
    with pytest.raises(TstevalError) as error:
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["bleu"],
                         **{**extra, name: bad})
    assert str(error.value) == message


def test_run_reads_its_machine_options_over_the_manifests(files: Path, capsys: pytest.CaptureFixture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``tsteval run --device/--threads`` replace the manifest's values, read by the same options."""
    from tsteval.cli.run import MACHINE_OPTIONS

    path = _manifest(files, {"threads": 2}, "machine")
    seen = []

    def stop(manifest: object, **_: object) -> None:
        seen.append(manifest)
        raise TstevalError("stopped before running")

    monkeypatch.setattr("tsteval.experiment.run.runner.run_experiment", stop)
    given = {name: CASES[name][0] for name in MACHINE_OPTIONS}
    assert run_cli(["run", str(path), *_flags(given)], capsys).error == "stopped before running"
    assert {name: getattr(seen[0].options, name) for name in given} == {n: CASES[n][2] for n in given}
    assert run_cli(["run", str(path)], capsys).error == "stopped before running"
    assert seen[1].options.threads == 2
    with pytest.raises(TstevalError) as error:
        OPTIONS["threads"].read(0)
    assert run_cli(["run", str(path), "--threads", "0"], capsys).error == str(error.value)


def test_evaluate_refuses_an_unknown_option() -> None:
    with pytest.raises(TstevalError, match="evaluate\\(\\) has no option 'fold'; its run options: device"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["bleu"], fold=3)


def test_score_and_run_write_the_same_files(files: Path, capsys: pytest.CaptureFixture) -> None:
    """A manifest run writes what tsteval score writes (scorecard, summary, references, policy counts)."""
    references = files / "refs.txt"
    references.write_text("\n".join(OUTPUTS) + "\n")
    out = files / "scored"
    outcome = run_cli(["score", "--pairs", str(files / "in.txt"), str(files / "out.txt"), "--source-style", "neg",
                       "--target-style", "pos", "--content", "bleu,chrf", "--references", str(references),
                       "--out", str(out), "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    path = files / "with-refs.yaml"
    path.write_text(yaml.safe_dump({"transfers": {"table": str(files / "table.csv")},
                                    "metrics": {"content": {"metrics": ["bleu", "chrf"],
                                                            "references": [str(references)]}}}))
    run = files / "run"
    assert run_cli(["run", str(path), "--out", str(run), "--quiet"], capsys).code == 0
    scored = {p.name for p in out.iterdir()}
    assert scored <= {p.name for p in run.iterdir()}
    assert {"references.csv", "references.md", "policy.json"} <= scored
    assert (out / "references.csv").read_text() == (run / "references.csv").read_text()
    assert (out / "policy.json").read_text() == (run / "policy.json").read_text()
    # the reference file is the outputs: the leakage guard counts every row, in both folders and in run.json
    leakage = json.loads((out / "leakage.json").read_text())
    assert leakage == {"rows": len(OUTPUTS), "classifiers": {}, "reference_is_output": {"system": len(OUTPUTS)},
                       "own_reference": {"system": [0]}}
    assert (run / "leakage.json").read_text() == (out / "leakage.json").read_text()
    assert json.loads((run / "run.json").read_text())["leakage"] == leakage
    assert f"leakage: system system's outputs equal its own reference (set 0) on {len(OUTPUTS)} rows" in outcome.err
