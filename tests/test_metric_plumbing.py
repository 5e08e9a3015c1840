"""The plumbing every metric goes through: resources declared and built once, parameters that reach the
computation from the command line, a manifest and ``tsteval.evaluate`` alike, every registered metric scored or
refused by name in all three, and the uniform ``METRICS[name].compute`` call."""

from __future__ import annotations

import dataclasses
import pickle
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import yaml
from badinput import run_cli

import tsteval
from tsteval.classifiers.base import make_classifier
from tsteval.classifiers.pairs import MATCH, NO_MATCH, make_pair_classifier
from tsteval.core.errors import TstevalError
from tsteval.core.tokenize import tokenize
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.plan.plan import Plan
from tsteval.metrics.registry import METRICS
from tsteval.metrics.resources import RESOURCES, ResourceOptions, Resources
from tsteval.scorecard import Scorecard

INPUTS = ["the food was cold and the staff was rude .", "i hated the slow service !", "worst pizza in town ."]
OUTPUTS = ["the food was warm and the staff was friendly .", "i loved the quick service !", "best pizza in town ."]
CORPUS = {"neg": ["the food was awful", "terrible service", "i hated it", "bad and cold", "rude staff", "slow"],
          "pos": ["the food was great", "lovely service", "i loved it", "good and warm", "friendly staff", "quick"]}


def _joined(text: str) -> str:
    return " ".join(tokenize(text))


def _pair_classifier() -> object:
    pairs = list(zip(INPUTS, OUTPUTS, strict=True))
    shuffled = list(zip(INPUTS, np.roll(OUTPUTS, 1), strict=True))
    return make_pair_classifier("features", seed=0).fit(pairs + shuffled, [MATCH] * 3 + [NO_MATCH] * 3)


# --- 1. resources ------------------------------------------------------------------------------------------------

def test_every_need_is_a_declared_resource() -> None:
    for metric in METRICS.values():
        assert set(metric.needs) <= set(RESOURCES), metric.name
    with pytest.raises(ValueError, match="unknown needs"):
        dataclasses.replace(METRICS["sbert"], needs=frozenset({"telepathy"}))


def test_resources_are_built_once_and_handed_to_the_scorer() -> None:
    resources = Resources()
    encoder = resources.get("sentence_encoder")
    assert resources.get("sentence_encoder", "mask") is encoder  # one encoder for every modification
    assert resources.get("word_vectors", "mask") is resources.get("word_vectors", "none")  # GloVe: one for all
    kwargs, fields = resources.scorer_arguments(METRICS["sbert"])
    assert kwargs == {"encoder": encoder.value}
    assert fields == {"model": f"all-MiniLM-L6-v2@{encoder.value.cache.identity}"}  # named by its files' hash
    kwargs, fields = resources.scorer_arguments(METRICS["wmd"])
    assert fields["vectors"].startswith("glove") and kwargs["word_vectors"] is resources.get("word_vectors").value


def test_ray_shipping_drops_per_worker_resources_and_pickles() -> None:
    resources = Resources(ResourceOptions(classifiers={"lr": make_classifier("tfidf-lr")}))
    resources.get("sentence_encoder")
    resources.get("word_vectors")
    shipped = pickle.loads(pickle.dumps(resources.shipped()))
    assert set(shipped.built) == {("word_vectors", "")}  # the encoder is built again in each worker
    assert shipped.options.classifiers == {}  # classifiers travel as their saved files


def test_a_missing_resource_is_one_line_before_any_score() -> None:
    with pytest.raises(TstevalError, match="word2vec vectors are trained on the corpus"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["wmd"],
                         vectors="word2vec")


# --- 3. parameters -----------------------------------------------------------------------------------------------

def _sacrebleu(method: str) -> list[float]:
    return [sacrebleu.sentence_bleu(_joined(o), [_joined(i)], smooth_method=method, tokenize="none",
                                    use_effective_order=True).score for i, o in zip(INPUTS, OUTPUTS, strict=True)]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plumbing")
    (root / "in.txt").write_text("\n".join(INPUTS) + "\n")
    (root / "out.txt").write_text("\n".join(OUTPUTS) + "\n")
    pd.DataFrame({"input": INPUTS, "output": OUTPUTS, "source_style": "neg", "target_style": "pos"}).to_csv(
        root / "table.csv", index=False)
    for style, texts in CORPUS.items():
        (root / f"{style}.txt").write_text("\n".join(texts) + "\n")
    return root


def _manifest(root: Path, metrics: dict, name: str) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "transfers": {"table": str(root / "table.csv")},
        "corpus": {"style": {s: str(root / f"{s}.txt") for s in CORPUS}},
        "classifiers": {"lr": {"backend": "tfidf-lr"}},
        "metrics": metrics}))
    return path


def _three_ways(root: Path, entry: str, capsys: pytest.CaptureFixture, tag: str) -> list[Scorecard]:
    """The same content metric entry through evaluate, the command line and a manifest."""
    cards = [tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=[entry])]
    out = root / f"cli-{tag}"
    outcome = run_cli(["score", "--pairs", str(root / "in.txt"), str(root / "out.txt"), "--source-style", "neg",
                       "--target-style", "pos", "--content", entry, "--out", str(out), "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    cards.append(Scorecard.load(out))
    manifest = load_manifest(_manifest(root, {"content": {"metrics": [entry]}}, tag))
    cards.append(tsteval.run(Plan.from_manifest(manifest)))
    return cards


@pytest.mark.parametrize("method", ["exp", "floor", "add-k", "none"])
def test_bleu_smoothing_reaches_the_computation_three_ways(method: str, files: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    expected = _sacrebleu(method)
    for card in _three_ways(files, f"bleu:smooth_method={method}", capsys, method):
        np.testing.assert_allclose(card.frame["bleu@none"].to_numpy(float), expected, atol=1e-9)
        assert f"smooth_method:{method}" in card.signatures["bleu@none"].split("|")


def test_chrf_parameters_reach_the_computation() -> None:
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos",
                            metrics=["chrf:char_order=4:beta=1"])
    expected = [sacrebleu.sentence_chrf(_joined(o), [_joined(i)], char_order=4, beta=1).score
                for i, o in zip(INPUTS, OUTPUTS, strict=True)]
    np.testing.assert_allclose(card.frame["chrf@none"].to_numpy(float), expected, atol=1e-9)
    assert {"char_order:4", "beta:1"} <= set(card.signatures["chrf@none"].split("|"))


def test_a_declared_default_is_the_computation_s_default() -> None:
    floored = dataclasses.replace(METRICS["bleu"], params={**METRICS["bleu"].params, "smooth_method": "floor"})
    np.testing.assert_allclose(floored.compute(INPUTS, OUTPUTS).values, _sacrebleu("floor"), atol=1e-9)


def test_a_bad_parameter_is_the_same_line_three_ways(files: Path, capsys: pytest.CaptureFixture) -> None:
    entry = "bleu:smooth_method=magic"
    message = "metric 'bleu': parameter smooth_method='magic' is not one of ['exp', 'floor', 'add-k', 'none']"
    with pytest.raises(TstevalError) as error:
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=[entry])
    assert str(error.value) == message
    outcome = run_cli(["score", "--pairs", str(files / "in.txt"), str(files / "out.txt"), "--source-style", "neg",
                       "--target-style", "pos", "--content", entry, "--out", str(files / "bad"), "--quiet"], capsys)
    assert outcome.code == 2 and outcome.error == message
    with pytest.raises(ManifestError) as error:
        load_manifest(_manifest(files, {"content": {"metrics": [entry]}}, "bad"))
    assert message in str(error.value) and "metrics.content.metrics[0]" in str(error.value)


# --- 4. every registered metric, by name -------------------------------------------------------------------------

@cache
def _outcome(name: str, equipped: bool) -> tuple[str, object]:
    """``("scored", columns)`` or ``("refused", message)`` for ``evaluate(metrics=[name])``: computed once per session
    (three tests ask for the same verdicts; evaluate on the same data and options is deterministic)."""
    extra = {"classifier": "tfidf-lr", "corpus": CORPUS, "hh": {"pc": _pair_classifier()}} if equipped else {}
    try:
        card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=[name], folds=2,
                                **extra)
    except TstevalError as error:
        return "refused", str(error)
    return "scored", tuple(card.metrics)


@pytest.mark.parametrize("equipped", [False, True])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_evaluate_scores_or_refuses_every_registered_metric(name: str, equipped: bool) -> None:
    outcome, detail = _outcome(name, equipped)
    if outcome == "refused":
        assert "\n" not in detail and "needs" in detail and (name in detail or "joint" in detail), detail
        return
    assert any(c.split("@")[0] == name for c in detail), (name, detail)


def test_what_is_refused_and_what_is_scored() -> None:
    refused = {n for n in METRICS if _outcome(n, False)[0] == "refused"}
    assert refused == {"sti", "sti_norm", "target_prob", "style_strength", "target_acc", "hh", "ah", "hh_content",
                       "joint", "learned"}
    # with a classifier and a pair classifier: AH still needs source documents, J its content and fluency columns,
    # the learned metric its trained folder (tests/test_learned_metric.py scores one)
    assert {n for n in METRICS if _outcome(n, True)[0] == "refused"} == {"ah", "joint", "learned"}
    assert "a content column" in _outcome("joint", True)[1]
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", folds=2, classifier="tfidf-lr",
                            corpus=CORPUS, metrics=["joint", "sbert", "naturalness"])
    assert "joint@strap" in card.metrics


@pytest.mark.parametrize("name", sorted(METRICS))
def test_cli_and_manifest_route_or_refuse_every_registered_metric(name: str, files: Path,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """The command line and a manifest give the same verdict as evaluate, and the same refusal line."""
    verdict, detail = _outcome(name, False)
    outcome = run_cli(["score", "--pairs", str(files / "in.txt"), str(files / "out.txt"), "--source-style", "neg",
                       "--target-style", "pos", "--metrics", name, "--folds", "2", "--out", str(files / f"m-{name}"),
                       "--quiet"],
                      capsys)
    if verdict == "refused":
        assert outcome.code == 2 and outcome.error == detail
    else:
        assert outcome.code == 0, outcome.err
        assert any(c.split("@")[0] == name for c in Scorecard.load(files / f"m-{name}").metrics)
    manifest = _manifest(files, {"names": [name], "folds": 2}, f"names-{name}")
    try:
        plan = Plan.from_manifest(load_manifest(manifest))
    except TstevalError as error:
        assert name in ("hh", "hh_content", "ah") and "needs" in str(error), str(error)
        return
    planned = {*plan.content, *plan.judges, *(f"{m}@{s}" for s in plan.naturalness for m in METRICS),
               *([f"{m}@lr" for m in METRICS] if plan.style_names else []), *(["joint"] if plan.joint == "strap"
                                                                                  else [])}
    assert any(p.split("@")[0] == name for p in planned), (name, planned)


# --- 7. one call per metric --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n, m in METRICS.items() if m.aspect == "content" and m.scorer
                                  and not {"pair_classifier", "language_model", "learned_metric"} & m.needs])
def test_compute_gives_values_and_a_corpus_figure(name: str) -> None:
    result = METRICS[name].compute(INPUTS, OUTPUTS)
    assert len(result.values) == 3 and np.isfinite(result.values).all() and np.isfinite(result.corpus)
    if name == "bleu":
        hyps, refs = [_joined(o) for o in OUTPUTS], [[_joined(i) for i in INPUTS]]
        assert result.corpus == pytest.approx(sacrebleu.corpus_bleu(hyps, refs, tokenize="none",
                                                                    use_effective_order=True).score, abs=1e-9)
    elif name == "chrf":
        hyps, refs = [_joined(o) for o in OUTPUTS], [[_joined(i) for i in INPUTS]]
        assert result.corpus == pytest.approx(sacrebleu.corpus_chrf(hyps, refs).score, abs=1e-9)
    elif METRICS[name].corpus_scorer is None:
        assert result.corpus == pytest.approx(float(np.mean(result.values)))


def test_compute_refuses_what_is_not_a_pair_metric() -> None:
    with pytest.raises(TstevalError, match="not scored pair by pair"):
        METRICS["sti"].compute(INPUTS, OUTPUTS)
    with pytest.raises(TstevalError, match="aligned lists"):
        METRICS["bleu"].compute("one text", OUTPUTS)
    with pytest.raises(TstevalError, match="reads the target style"):
        METRICS["cond_lp"].compute(INPUTS, OUTPUTS)
