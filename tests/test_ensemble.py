"""Temperature scaling, the expected calibration error and the ``ensemble`` backend (mean of calibrated members).

Temperatures are checked against a case with a known optimum, a NumPy grid search of the NLL and scikit-learn's
own temperature scaling; the ensemble's probabilities against the members' calibrated outputs computed by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from badinput import NEGATIVE, POSITIVE, expect_error, run_cli, sentences
from scipy.special import logsumexp
from sklearn.model_selection import train_test_split

from tsteval.classifiers.base import ParameterError, load_classifier, make_classifier
from tsteval.classifiers.calibration import (
    apply_temperature,
    expected_calibration_error,
    fit_temperature,
    temperature_nll,
)
from tsteval.classifiers.ensemble import EnsembleClassifier
from tsteval.core.errors import InputError, TstevalError

N_TRAIN = 2400  # Yelp dev sentences the ensemble trains on (interleaved negative/positive)


def _synthetic(seed: int, n: int = 400, k: int = 3, sharpness: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Over-confident probabilities (``sharpness`` times the log-odds the labels are drawn from) and labels."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k))
    truth = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=row) for row in truth])
    proba = np.exp(sharpness * logits)
    return proba / proba.sum(axis=1, keepdims=True), y


def grid_temperature(proba: np.ndarray, y: np.ndarray) -> float:
    """The NLL-minimising temperature by brute force: a grid over log T in [-3, 3], refined around its best point
    (final step 1e-5 in log T)."""
    logp, rows = np.log(np.clip(proba, 1e-12, 1)), np.arange(len(y))

    def best(log_t: np.ndarray) -> float:
        scaled = logp[None] / np.exp(log_t)[:, None, None]
        nll = np.mean(logsumexp(scaled, axis=2) - scaled[:, rows, y], axis=1)
        return float(log_t[int(np.argmin(nll))])

    coarse = best(np.linspace(-3, 3, 601))
    return float(np.exp(best(np.linspace(coarse - 0.01, coarse + 0.01, 2001))))


def test_temperature_with_a_known_optimum() -> None:
    # Every row says 0.9 for class 1 and 3 of 4 rows are class 1: softmax(log p / T) gives 0.75 at T = 2 exactly.
    proba, y = np.array([[0.1, 0.9]] * 8), np.array([1, 1, 1, 0] * 2)
    assert fit_temperature(proba, y) == pytest.approx(2.0, abs=1e-6)
    np.testing.assert_allclose(apply_temperature(proba, 2.0), [[0.25, 0.75]] * 8, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_temperature_matches_a_grid_search_and_scikit_learn(seed: int) -> None:
    proba, y = _synthetic(seed)
    fitted = fit_temperature(proba, y)
    assert fitted == pytest.approx(grid_temperature(proba, y), rel=2e-5)
    assert 2.5 < fitted < 3.5  # the probabilities were made 3 times too sharp
    assert temperature_nll(proba, y, fitted) <= temperature_nll(proba, y, grid_temperature(proba, y)) + 1e-12
    from sklearn.calibration import _TemperatureScaling  # scikit-learn's own (private) implementation

    beta = float(_TemperatureScaling().fit(proba, y).beta_)
    assert fitted == pytest.approx(1 / beta, rel=1e-5)


def test_expected_calibration_error_by_hand() -> None:
    proba = np.array([[0.9, 0.1], [0.8, 0.2], [0.35, 0.65], [0.4, 0.6], [0.45, 0.55]])
    y = np.array([0, 1, 1, 0, 1])
    # 15 bins of width 1/15: confidences 0.9 and 0.8 fall in (0.8667, 0.9333] and (0.7333, 0.8]; 0.65 and 0.6 in
    # (0.6, 0.6667] and (0.5333, 0.6]; 0.55 in (0.5333, 0.6] too.
    bins = {"0.9": [(1, 0.9)], "0.8": [(0, 0.8)], "0.65": [(1, 0.65)], "0.6": [(0, 0.6), (1, 0.55)]}
    expected = sum(abs(sum(c for c, _ in b) - sum(p for _, p in b)) for b in bins.values()) / 5
    assert expected_calibration_error(proba, y) == pytest.approx(expected, abs=1e-12)
    assert expected_calibration_error(proba, y, bins=1) == pytest.approx(abs(3 / 5 - np.mean([.9, .8, .65, .6, .55])))


def test_bad_calibration_input_is_a_user_error() -> None:
    with pytest.raises(InputError, match="class indices"):
        fit_temperature(np.array([[0.5, 0.5]]), np.array([2]))
    with pytest.raises(InputError, match=r"\(n, k\) array"):
        expected_calibration_error(np.array([0.5, 0.5]), np.array([0]))


@pytest.fixture(scope="module")
def ensemble(yelp_slice: tuple[list[str], list[str]]) -> EnsembleClassifier:
    texts, labels = yelp_slice
    return make_classifier("ensemble", member_params={"fasttext": {"epoch": 25}}).fit(texts[:N_TRAIN],
                                                                                    labels[:N_TRAIN])


@pytest.fixture(scope="module")
def probe(yelp_slice: tuple[list[str], list[str]]) -> tuple[list[str], np.ndarray]:
    texts, labels = yelp_slice
    return texts[-800:], np.array([int(label) for label in labels[-800:]])


def test_temperatures_are_the_nll_minimum_on_the_calibration_split(
        ensemble: EnsembleClassifier, yelp_slice: tuple[list[str], list[str]]) -> None:
    texts, labels = yelp_slice
    y = np.array([int(label) for label in labels[:N_TRAIN]])
    _, cal_x, _, cal_y = train_test_split(texts[:N_TRAIN], y, test_size=0.2, random_state=0, stratify=y)
    assert ensemble.calibration_report_["n_calibration"] == len(cal_x) == 480
    for name, model in ensemble.members_.items():
        expected = grid_temperature(model.predict_proba(cal_x), cal_y)
        assert ensemble.temperatures_[name] == pytest.approx(expected, rel=2e-5), name
        report = ensemble.calibration_report_["members"][name]
        assert report["nll_after"] <= report["nll_before"]


def test_probabilities_are_the_mean_of_the_calibrated_members(ensemble: EnsembleClassifier,
                                                              probe: tuple[list[str], np.ndarray]) -> None:
    texts, y = probe
    assert list(ensemble.members_) == ["fasttext", "tfidf-lr"] and list(ensemble.classes_) == ["0", "1"]
    by_hand = []
    for name, model in ensemble.members_.items():
        scaled = np.log(np.clip(model.predict_proba(texts), 1e-12, 1)) / ensemble.temperatures_[name]
        by_hand.append(np.exp(scaled) / np.exp(scaled).sum(axis=1, keepdims=True))
    proba = ensemble.predict_proba(texts)
    np.testing.assert_allclose(proba, np.mean(by_hand, axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.mean(proba.argmax(axis=1) == y) >= 0.85  # measured: 0.90
    # Held-out calibration: the ensemble's ECE is not above the worse member's uncalibrated ECE.
    raw = ensemble.member_probabilities(texts, calibrated=False)
    assert expected_calibration_error(proba, y) <= max(expected_calibration_error(p, y) for p in raw.values())


def test_save_load_round_trip_and_integrity(ensemble: EnsembleClassifier, probe: tuple[list[str], np.ndarray],
                                            tmp_path: Path) -> None:
    texts, _ = probe
    directory = ensemble.save(tmp_path / "ens")
    manifest = json.loads((directory / "tsteval-classifier.json").read_text())
    assert {"members/fasttext/fasttext.bin", "members/tfidf-lr/logreg.safetensors", "temperatures.json",
            "members/fasttext/tsteval-classifier.json"} <= set(manifest["files"])
    loaded = load_classifier(directory, expected_classes=["0", "1"])
    assert isinstance(loaded, EnsembleClassifier) and loaded.temperatures_ == ensemble.temperatures_
    np.testing.assert_array_equal(loaded.predict_proba(texts), ensemble.predict_proba(texts))
    weights = directory / "members" / "tfidf-lr" / "logreg.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(TstevalError, match=r"members/tfidf-lr/logreg.safetensors is damaged or was altered"):
        load_classifier(directory)


def test_parameters_are_checked_before_training() -> None:
    with pytest.raises(ParameterError, match=r"members='fasttext,svm' names 'svm', which is not one of the "
                                             r"backends .* \(fix: --param members=fasttext\)$"):
        make_classifier("ensemble", members="fasttext,svm")
    with pytest.raises(ParameterError, match="names a backend twice"):
        make_classifier("ensemble", members=["tfidf-lr", "tfidf-lr"])
    with pytest.raises(ParameterError, match=r"bad parameter for member 'fasttext': epoch=0 must be an int"):
        make_classifier("ensemble", member_params={"fasttext": {"epoch": 0}})
    with pytest.raises(ParameterError, match=r"gives parameters for \['textcnn'\], which are not members"):
        make_classifier("ensemble", member_params={"textcnn": {"epochs": 1}})
    with pytest.raises(ParameterError, match="the ensemble's seed is every member's seed"):
        make_classifier("ensemble", member_params={"tfidf-lr": {"seed": 3}})
    with pytest.raises(ParameterError, match=r"members='ensemble' names 'ensemble'"):
        make_classifier("ensemble", members="ensemble")
    model = make_classifier("ensemble", members="tfidf-lr,fasttext", threads=2, seed=5)
    assert model._new_member("fasttext").get_params()["threads"] == 2
    assert model._new_member("tfidf-lr").get_params()["seed"] == 5
    with pytest.raises(InputError, match="cannot hold out 20% of 4 training texts"):
        model.fit(["good", "great", "bad", "awful"], ["1", "1", "0", "0"])


def test_cli_trains_an_ensemble_and_signatures_follow_its_data(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "in.txt").write_text("the food was cold and the staff was rude .\n")
    (tmp_path / "out.txt").write_text("the food was warm and the staff was friendly .\n")
    signatures = []
    for seed in (0, 1):  # same parameters and seed; different training sentences
        for style, words in (("neg", NEGATIVE), ("pos", POSITIVE)):
            (tmp_path / f"{style}{seed}.txt").write_text("\n".join(sentences(words, 10 + seed)) + "\n")
        model, run = tmp_path / f"model{seed}", tmp_path / f"run{seed}"
        outcome = run_cli(["train-classifier", "ensemble", "--threads", str(seed + 1), "--param",
                           "members=fasttext,tfidf-lr", "--param",
                           'member_params={"fasttext": {"epoch": 20}}', "--style", f"neg={tmp_path / f'neg{seed}.txt'}",
                           "--style", f"pos={tmp_path / f'pos{seed}.txt'}", "--out", model, "--quiet"], capsys)
        assert outcome.code == 0 and "ensemble: 120 texts, 2 styles; held-out accuracy 1.000" in outcome.out
        member = json.loads((model / "members" / "fasttext" / "tsteval-classifier.json").read_text())
        assert member["params"]["threads"] == seed + 1 and member["params"]["epoch"] == 20
        assert run_cli(["score", "--classifier", f"e={model}", "--pairs", tmp_path / "in.txt", tmp_path / "out.txt",
                        "--source-style", "neg", "--target-style", "pos", "--out", run, "--quiet"], capsys).code == 0
        signatures.append(json.loads((run / "signatures.json").read_text())["sti@e"])
    assert signatures[0] != signatures[1], signatures
    expect_error(["train-classifier", "ensemble", "--param", "members=fasttext,svm", "--style",
                  f"neg={tmp_path / 'neg0.txt'}", "--style", f"pos={tmp_path / 'pos0.txt'}", "--out",
                  tmp_path / "bad", "--quiet"], capsys, "names 'svm', which is not one of the backends")


def test_manifest_declares_an_ensemble(tmp_path: Path, data_root: Path) -> None:
    import yaml

    from tsteval.experiment.manifest.loader import ManifestError, load_manifest

    data = yaml.safe_load((Path(__file__).parent / "data" / "tiny_manifest.yaml").read_text())
    data["classifiers"]["lr"] = {"backend": "ensemble", "params": {"members": ["fasttext", "tfidf-lr"],
                                                                   "member_params": {"fasttext": {"epoch": 5}}}}
    path = tmp_path / "ensemble.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_manifest(path).classifiers["lr"]
    assert spec.backend == "ensemble" and spec.params["member_params"] == {"fasttext": {"epoch": 5}}
    data["classifiers"]["lr"]["params"]["member_params"]["fasttext"]["epoch"] = 0
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ManifestError, match=r"bad parameter for member 'fasttext': epoch=0") as info:
        load_manifest(path)
    assert info.value.key == "classifiers.lr.params.member_params"


def test_every_style_question_from_the_api() -> None:
    import tsteval

    corpus = {"neg": sentences(NEGATIVE, 20), "pos": sentences(POSITIVE, 21)}
    inputs = ["the food was cold and the staff was rude .", "the room was clean and the waiter was lovely ."]
    outputs = ["the food was warm and the staff was friendly .", "the room was dirty and the waiter was lovely ."]
    card = tsteval.evaluate(inputs, outputs, source_style=["neg", "pos"], target_style=["pos", "neg"],
                            metrics=["sti", "sti_norm", "target_prob", "target_acc"], classifier="ensemble",
                            corpus=corpus)
    frame = card.frame
    # The same training texts, order and seed give the same ensemble outside the plan.
    texts = [*corpus["neg"], *corpus["pos"]]
    model = make_classifier("ensemble").fit(texts, ["neg"] * 60 + ["pos"] * 60)
    target = np.array([1, 0])
    p_in, p_out = model.predict_proba(inputs), model.predict_proba(outputs)
    np.testing.assert_allclose(frame["target_prob@clf"], p_out[[0, 1], target], atol=1e-12)
    # Two styles, nominal ground distance: STI is the change in target-style probability.
    np.testing.assert_allclose(frame["sti@clf"], p_out[[0, 1], target] - p_in[[0, 1], target], atol=1e-12)
    assert frame["target_acc@clf"].tolist() == (p_out.argmax(axis=1) == target).astype(float).tolist()
    assert frame["sti_norm@clf"].between(-1, 1).all() and frame["sti@clf"].iloc[0] > 0.3
    assert "clf:clf-" in card.signatures["sti@clf"]
