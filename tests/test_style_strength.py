"""style_strength: the log-odds of the target style, against scipy's logit of a fitted classifier's probabilities,
and a monotone transform of target_prob on the same rows."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logit
from scipy.stats import spearmanr

import tsteval
from tsteval.classifiers.base import make_classifier
from tsteval.core.errors import InputError
from tsteval.core.records import Transfers
from tsteval.metrics.registry import METRICS
from tsteval.metrics.style.intensity import target_log_odds, target_probability
from tsteval.metrics.style.scorer import score_style
from tsteval.scorecard import Scorecard

CORPUS = {"neg": ["the food was awful", "terrible service", "i hated it", "bad and cold", "rude staff",
                  "never again", "the soup was bland"],
          "pos": ["the food was great", "lovely service", "i loved it", "good and warm", "kind staff",
                  "will come back", "the soup was tasty"],
          "neutral": ["we went on tuesday", "the menu has pasta", "it is on main street", "they open at nine",
                      "parking is behind", "there are ten tables", "the soup was soup"]}
INPUTS = ["the food was awful", "rude staff", "the menu has pasta", "i loved it", "the soup was bland", "never again"]
OUTPUTS = ["the food was great", "kind staff", "the menu has great pasta", "i hated it", "the soup was tasty",
           "never again"]


@pytest.fixture(scope="module")
def classifier() -> object:
    """A small tfidf-lr classifier over three styles (fitted, not a stand-in)."""
    return make_classifier("tfidf-lr").fit([t for s in CORPUS for t in CORPUS[s]],
                                           [s for s in CORPUS for _ in CORPUS[s]])


@pytest.mark.parametrize("styles", [("neg", "pos"), None])
def test_style_strength_is_the_logit_of_the_target_probability(classifier: object, styles: tuple | None) -> None:
    """Two styles (a classifier fitted on neg/pos only) and three: scipy's logit of predict_proba's target column."""
    clf = classifier if styles is None else make_classifier("tfidf-lr").fit(
        [t for s in styles for t in CORPUS[s]], [s for s in styles for _ in CORPUS[s]])
    source = ["neg", "neg", "neutral", "pos", "neg", "neg"] if styles is None else ["neg", "neg", "neg", "pos",
                                                                                     "neg", "neg"]
    target = ["pos", "pos", "pos", "neg", "pos", "neutral"] if styles is None else ["pos", "pos", "pos", "neg",
                                                                                     "pos", "pos"]
    card = Scorecard.from_transfers(Transfers.from_pairs(INPUTS, OUTPUTS, source_style=source, target_style=target))
    score_style(card, clf, "lr", model_id="m")
    classes = [str(c) for c in clf.classes_]
    proba = clf.predict_proba(OUTPUTS)
    p_target = proba[np.arange(len(OUTPUTS)), [classes.index(t) for t in target]]
    expected = logit(np.clip(p_target, 1e-6, 1 - 1e-6))
    np.testing.assert_allclose(card.frame["style_strength@lr"], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(card.frame["target_prob@lr"], p_target, rtol=1e-12)
    signature = card.signatures["style_strength@lr"]
    assert signature.startswith("metric:style_strength|clip:1e-06|clf:lr-m|")


def test_style_strength_ranks_rows_as_target_prob_does(classifier: object) -> None:
    rng = np.random.default_rng(0)
    inputs = [" ".join(rng.choice(sorted({w for ts in CORPUS.values() for t in ts for w in t.split()}), 4))
              for _ in range(60)]
    outputs = list(np.roll(inputs, 1))
    card = tsteval.evaluate(inputs, outputs, source_style="neg", target_style="pos", metrics=["target_prob"],
                            classifier={"lr": classifier})
    prob, strength = card.frame["target_prob@lr"].to_numpy(), card.frame["style_strength@lr"].to_numpy()
    order = np.argsort(prob, kind="stable")
    assert np.all(np.diff(strength[order]) >= 0)
    assert np.all(np.diff(strength[order])[np.diff(prob[order]) > 0] > 0)  # strictly where target_prob rises
    assert spearmanr(prob, strength).statistic == pytest.approx(1.0)


def test_clip_keeps_certain_rows_finite_and_is_declared() -> None:
    Q = np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    values = target_log_odds(Q, [1, 1, 1])
    np.testing.assert_allclose(values, [np.log(1e6 - 1), -np.log(1e6 - 1), 0.0])
    three = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]])
    np.testing.assert_allclose(target_log_odds(three, [2, 1]), [np.log(0.7 / 0.3), np.log(0.3 / 0.7)])
    np.testing.assert_allclose(target_log_odds(three, [2, 1]), logit(target_probability(three, [2, 1])))
    with pytest.raises(InputError, match="clip"):
        target_log_odds(Q, [1, 1, 1], clip=0.0)
    metric = METRICS["style_strength"]
    assert (metric.aspect, metric.higher_is_better, metric.range) == ("style", True, (-np.inf, np.inf))
    assert metric.settings == {"clip": 1e-6}
