"""Contract tests over the metric registry: every declared metric says what it measures, scores a real slice of
Mir et al.'s transfers inside its declared range, follows the empty/OOV policy and signs what it was built with.
Also the seams that read the registry: the tradeoff frontier and the worst examples of a lower-is-better metric,
and ``tsteval.evaluate`` against ``tsteval score``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import tsteval
from tsteval.classifiers.base import make_classifier
from tsteval.classifiers.pairs import MATCH, NO_MATCH, make_pair_classifier
from tsteval.core.records import Transfers
from tsteval.experiment.compare.tradeoff import axis_label, tradeoff_curves
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.report.report import worst_examples
from tsteval.experiment.run.execute import execute
from tsteval.metrics.content.policy import MAX_DISTANCE
from tsteval.metrics.judges.declarations import JUDGES
from tsteval.metrics.learned.training import Recipe
from tsteval.metrics.registry import METRICS, metric_of
from tsteval.scorecard import Scorecard

N = 12
# The LM metrics (a causal LM reading input, output and target style) have their contract in tests/test_judges.py.
SCORED = [n for n, m in METRICS.items() if m not in JUDGES]


@pytest.fixture(scope="module")
def mir() -> Transfers:
    from tsteval.readers.mir import load_mir

    frame = load_mir().frame.groupby("system", sort=False).head(N // 3).reset_index(drop=True)
    return Transfers(frame.assign(document=frame["input"]), "<mir slice>")


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A learned content metric: the packaged encoder saved as one (no epoch: the contract is not its quality)."""
    return str(tsteval.train_metric("content", tmp_path_factory.mktemp("learned") / "m", sets=["lai"],
                                    recipe=Recipe(epochs=0), log=lambda _m: None))


@pytest.fixture(scope="module")
def scored(mir: Transfers, learned: str) -> Scorecard:
    """Every metric on the slice with cheap resources; smollm2 perplexity is left out of this per-row run (a
    135M-parameter LM on CPU is too slow for the suite); ``ppl``, ``lp_mean`` and ``slor`` are covered by ``kn3``."""
    frame = mir.frame
    style = make_classifier("tfidf-lr").fit(list(frame["input"]) + list(frame["output"]),
                                            list(frame["source_style"]) + list(frame["target_style"]))
    pairs = [(i, o) for i, o in zip(frame["input"], frame["output"], strict=True)]
    shuffled = [(i, o) for i, o in zip(frame["input"], np.roll(frame["output"], 3), strict=True)]
    pair = make_pair_classifier("features", seed=0).fit(pairs + shuffled, [MATCH] * len(pairs) +
                                                        [NO_MATCH] * len(shuffled))
    plan = Plan(mir, classifiers={"lr": style}, content=tuple(n for n in SCORED if METRICS[n].aspect == "content"),
                naturalness=("unigram", "unigram-pooled", "kn3"), folds=2, hh={"pc": pair}, ah={"pc": pair},
                learned=learned)
    return execute(plan).card


@pytest.mark.parametrize("name", list(METRICS))
def test_declares_aspect_direction_range(name: str) -> None:
    metric = METRICS[name]
    assert metric.name == name and metric.aspect in ("style", "content", "naturalness", "compatibility", "joint")
    assert isinstance(metric.higher_is_better, bool) and metric.description
    low, high = metric.range
    assert low < high and not math.isnan(low) and not math.isnan(high)


@pytest.mark.parametrize("name", SCORED)
def test_scores_in_range_and_signs_its_parameters(name: str, scored: Scorecard) -> None:
    metric = METRICS[name]
    columns = [c for c in scored.metrics if c.split("@")[0] == name]
    assert columns, f"{name} produced no column"
    low, high = metric.range
    for column in columns:
        values = scored.frame[column].to_numpy(float)
        assert np.isfinite(values).all() or metric.range[1] == math.inf
        tol = 1e-6  # float32 vectors: a cosine of identical texts can come out 1 + 1.2e-7
        assert (values >= low - tol).all() and (values <= high + tol).all(), (column, values.min(), values.max())
        signature = scored.signatures[column]
        assert metric_of(column, signature) is metric
        fields = signature.split("|")
        assert fields[0] == f"metric:{metric.signature_name or name}"
        for key, value in {**metric.settings, **metric.params}.items():
            if not (key == "ground" and "ground:" in signature):
                assert f"{key}:{value}" in fields, (key, signature)
        for library in metric.libraries:
            assert any(f.startswith(f"{library}:") for f in fields)


def test_signature_names_parameters_and_identities() -> None:
    for metric in METRICS.values():
        text = str(metric.signature(model="abc123", data="def456"))
        for key, value in {**metric.settings, **metric.params, "model": "abc123", "data": "def456"}.items():
            assert f"|{key}:{value}|" in text


@pytest.mark.parametrize("name", [n for n in SCORED
                                  if METRICS[n].aspect == "content" and "pair_classifier" not in METRICS[n].needs])
def test_content_metric_follows_empty_policy(name: str, learned: str) -> None:
    from tsteval.metrics.content.word_vectors import WordVectors
    from tsteval.metrics.resources import ResourceOptions, Resources

    metric = METRICS[name]
    toy = WordVectors({"a": 0, "b": 1}, np.eye(2, dtype=np.float32), "toy")
    kwargs, _ = Resources(ResourceOptions(vectors=toy, learned=learned)).scorer_arguments(metric)
    result = metric.function()(["", "", "a b"], ["", "a", ""], **kwargs)
    best, worst = (metric.range[0], MAX_DISTANCE) if not metric.higher_is_better else (metric.range[1], 0.0)
    if name in ("embed_avg", "greedy", "extrema", "sbert"):
        best = 1.0
    assert result.values.tolist() == [best, worst, worst]


def _settings_card(ppl: list[float]) -> Scorecard:
    """Two systems x settings with the same style score and the given perplexity per setting."""
    rows = []
    for k, value in enumerate(ppl):
        for item in range(3):
            rows.append({"system": f"s{k % 2}", "setting": f"t{k}", "item": item, "input": f"in {item}",
                         "output": f"out {k} {item}", "source_style": "0", "target_style": "1",
                         "sti@lr": 0.5, "ppl@kn3": value + item})
    frame = pd.DataFrame(rows)
    card = Scorecard.from_transfers(Transfers(frame.drop(columns=["sti@lr", "ppl@kn3"])))
    card.add("sti@lr", frame["sti@lr"].to_numpy(), "metric:sti|ground:nominal")
    card.add("ppl@kn3", frame["ppl@kn3"].to_numpy(), "metric:ppl|lm:kn3")
    return card


def test_lowest_perplexity_is_on_the_frontier_and_worst_examples_are_highest() -> None:
    card = _settings_card([50.0, 20.0, 80.0, 35.0])
    t = tradeoff_curves(card.frame, "sti@lr", "ppl@kn3", "Naturalness", n_resamples=50)
    frontier = t.points[t.points["pareto"]]
    assert frontier["setting"].tolist() == ["t1"]  # lowest perplexity; the old code picked t2 (highest)
    assert "axis inverted" in axis_label("ppl@kn3", "Naturalness")
    worst = worst_examples(card.frame, "ppl@kn3", 1, [])
    assert worst.set_index("system")["ppl@kn3"].to_dict() == {"s0": 82.0, "s1": 37.0}


def test_manifest_tradeoff_on_perplexity(tmp_path) -> None:
    """A manifest with tradeoff.naturalness: ppl@kn3 runs and marks the lowest-perplexity setting."""
    from tsteval.experiment.run.runner import run_experiment

    for label, outputs in {"a": ["the food is great", "service was lovely"],
                           "b": ["zq xv great", "pl ok lovely"]}.items():
        (tmp_path / f"out.{label}").write_text("\n".join(outputs) + "\n")
    (tmp_path / "in.txt").write_text("the food is bad\nservice was rude\n")
    (tmp_path / "human.txt").write_text("the food is great\nservice was lovely\nthe food is bad\nit was fine\n")
    (tmp_path / "m.yaml").write_text(
        "transfers:\n  systems:\n    - name: S\n      source_style: '0'\n      target_style: '1'\n"
        "      settings:\n"
        "        - {label: a, hyperparameters: {w: 1}, files: [{inputs: in.txt, outputs: out.a}]}\n"
        "        - {label: b, hyperparameters: {w: 2}, files: [{inputs: in.txt, outputs: out.b}]}\n"
        "classifiers:\n  lr: {backend: tfidf-lr, heldout: 0, corpus: {style: {'0': in.txt, '1': human.txt},"
        " exclude_inputs: false}}\n"
        "metrics:\n  style: {classifiers: [lr]}\n  naturalness: [kn3]\n  human: human.txt\n"
        "tradeoff: {naturalness: ppl@kn3}\nreport: {bootstrap_resamples: 20}\n")
    card = run_experiment(tmp_path / "m.yaml", out=tmp_path / "run", quiet=True)
    means = card.frame.groupby("setting")["ppl@kn3"].mean()
    points = pd.read_csv(tmp_path / "run" / "tradeoff_naturalness_points.csv")
    best = means.idxmin()
    assert bool(points.set_index("setting").loc[best, "pareto"])


def test_evaluate_equals_score(tmp_path) -> None:
    """``tsteval.evaluate`` and ``tsteval score`` give the same values and signatures on the same pairs."""
    from tsteval.cli.main import main

    inputs = ["the food was awful", "terrible service", "i hated it", "the staff was rude"]
    outputs = ["the food was great", "lovely service", "i hated it", "the staff was kind"]
    corpus = {"neg": ["the food was awful", "terrible service", "i hated it", "bad and cold", "rude staff"],
              "pos": ["the food was great", "lovely service", "i loved it", "good and warm", "kind staff"]}
    model = make_classifier("tfidf-lr").fit([t for s in corpus for t in corpus[s]],
                                            [s for s in corpus for _ in corpus[s]])
    model.save(tmp_path / "clf")
    (tmp_path / "in.txt").write_text("\n".join(inputs) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(outputs) + "\n")
    assert main(["score", "--classifier", f"lr={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
                 str(tmp_path / "out.txt"), "--source-style", "neg", "--target-style", "pos",
                 "--content", "bleu,chrf,rougeL", "--naturalness", "kn3", "--out", str(tmp_path / "run"),
                 "--quiet"]) == 0
    cli = Scorecard.load(tmp_path / "run")
    frame = cli.frame
    card = tsteval.evaluate(inputs, outputs, source_style="neg", target_style="pos",
                            metrics=["sti", "bleu", "chrf", "rougeL", "kn3"], classifier={"lr": tmp_path / "clf"})
    assert card.metrics == [c for c in frame.columns if "@" in c]
    for column in card.metrics:
        np.testing.assert_allclose(card.frame[column].to_numpy(float), frame[column].to_numpy(float), rtol=1e-9)
    assert card.signatures == cli.signatures
    in_memory = tsteval.evaluate(inputs, outputs, source_style="neg", target_style="pos", metrics=["sti"],
                                 classifier={"lr": model})
    assert in_memory.signatures["sti@lr"] == card.signatures["sti@lr"]  # same model, same identity


@pytest.mark.parametrize(("metrics", "fragment"), [
    ("{naturalness: [unigram], folds: 1}", "metrics.folds: folds must be an integer of at least 2, not '1'"),
    ("{compatibility: {ah: {pc: .}}}", "ah and documents go together"),
    ("{content: {metrics: [bleu], modifications: [attribution-mask]}}", "need an attribution classifier"),
    ("{content: {metrics: [bleu], modifications: [attr-mask]}}", "attr-mask is now attribution-mask"),
])
def test_manifest_plan_keys_are_validated(tmp_path, metrics: str, fragment: str) -> None:
    from tsteval.experiment.manifest.loader import ManifestError, load_manifest

    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\na b,c d,0,1\n")
    (tmp_path / "m.yaml").write_text(f"transfers: {{table: t.csv}}\nmetrics: {metrics}\n")
    with pytest.raises(ManifestError, match=fragment):
        load_manifest(tmp_path / "m.yaml")


@pytest.fixture(scope="module")
def failed_run(mir: Transfers, learned: str) -> tuple[Scorecard, object]:
    """The ``scored`` run with three outputs a system's failure (empty, spaces, a newline), and its classifier."""
    frame = mir.frame.copy()
    frame.loc[[0, 5, 9], "output"] = ["", "   ", "\n"]
    style = make_classifier("tfidf-lr").fit(list(mir.frame["input"]) + list(mir.frame["output"]),
                                            list(frame["source_style"]) + list(frame["target_style"]))
    pairs = [(i, o) for i, o in zip(mir.frame["input"], mir.frame["output"], strict=True)]
    shuffled = [(i, o) for i, o in zip(mir.frame["input"], np.roll(mir.frame["output"], 3), strict=True)]
    pair = make_pair_classifier("features", seed=0).fit(pairs + shuffled, [MATCH] * len(pairs) +
                                                        [NO_MATCH] * len(shuffled))
    plan = Plan(Transfers(frame, "<mir slice, 3 failed>"), classifiers={"lr": style},
                content=tuple(n for n in SCORED if METRICS[n].aspect == "content"),
                naturalness=("unigram", "unigram-pooled", "kn3"), folds=2, hh={"pc": pair}, ah={"pc": pair},
                learned=learned)
    return execute(plan).card, style


@pytest.mark.parametrize("name", SCORED)
def test_every_metric_scores_a_failed_output_by_the_one_policy(name: str, failed_run: tuple) -> None:
    """tsteval.failures, recomputed per metric: style as the classifier reads the input, content 0 (WMD its
    largest distance), every other metric the worse end of its range or, unbounded, the worst answered value."""
    from tsteval.metrics.style.intensity import target_probability

    card, style = failed_run
    bad = card.frame["output"].str.strip() == ""
    assert bad.sum() == 3
    columns = [c for c in card.metrics if c.split("@")[0] == name]
    assert columns, f"{name} produced no column"
    metric = METRICS[name]
    for column in columns:
        values = card.frame[column].to_numpy(float)
        failed, answered = values[bad.to_numpy()], values[~bad.to_numpy()]
        assert np.isfinite(failed).all(), column
        if metric.aspect == "style":
            p_input = style.predict_proba(card.frame.loc[bad, "input"].tolist())
            target = [list(style.classes_).index(t) for t in card.frame.loc[bad, "target_style"]]
            if name == "target_prob":
                assert failed == pytest.approx(target_probability(p_input, np.array(target)))
            if name in ("sti", "sti_norm"):
                assert (failed == 0).all()
        elif metric.aspect == "content" and math.isfinite(metric.range[0]):
            assert (failed == (MAX_DISTANCE if not metric.higher_is_better else max(metric.range[0], 0.0))).all()
        else:
            low, high = metric.range
            end = low if metric.higher_is_better else high
            expected = end if math.isfinite(end) else (answered.min() if metric.higher_is_better else answered.max())
            assert (failed == expected).all(), (column, failed, expected)
