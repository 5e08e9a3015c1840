"""Pearson agreement with Mir et al.'s "±", the bootstrap mean and Table 4.3 of Mir et al."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsteval.aggregate import Score, bootstrap_mean
from tsteval.core.errors import InputError
from tsteval.metaeval.agreement import Correlation, bowley_se, pearson
from tsteval.metrics.style.intensity import emd, target_probability

STI_DIR = Path("mir2019/evaluations/automated/style_transfer_intensity/sentence_level/style_distributions")
MIR_TARGET = np.r_[np.ones(122, dtype=int), np.zeros(122, dtype=int)]


# --- Pearson ----------------------------------------------------------------------------------------------------

def test_pearson_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = 0.5 * x + rng.normal(size=200)
    c = pearson(x, y)
    ref = stats.pearsonr(x, y)
    assert isinstance(c, Correlation) and c.n == 200
    assert c.r == pytest.approx(ref.statistic, abs=1e-12)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert c.se == pytest.approx((1 - c.r**2) / np.sqrt(200))
    assert c.margin == pytest.approx(1.96 * c.se)


@pytest.mark.parametrize("r, n, published", [(0.587, 1220, 0.037), (0.519, 732, 0.053), (0.536, 976, 0.045),
                                              (0.566, 1220, 0.038), (0.470, 976, 0.049), (0.602, 1220, 0.036)])
def test_mir_margin_from_r_and_n(r: float, n: int, published: float) -> None:
    assert round(1.96 * bowley_se(r, n), 3) == published


def test_pearson_errors() -> None:
    with pytest.raises(InputError, match="constant"):
        pearson([1, 2, 3, 4], [2, 2, 2, 2])
    with pytest.raises(InputError, match="at least 3"):
        pearson([1, 2], [2, 3])
    with pytest.raises(InputError, match="paired"):
        pearson([1, 2, 3], [1, 2, 3, 4])
    with pytest.raises(InputError, match="not finite"):
        pearson([1, 2, np.nan, 4], [1, 2, 3, 4])


# --- bootstrap --------------------------------------------------------------------------------------------------

def test_bootstrap_matches_scipy_percentile() -> None:
    x = np.random.default_rng(2).exponential(size=400)
    mean, low, high = bootstrap_mean(x, n_resamples=20_000, seed=5)
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="percentile", confidence_level=0.95,
                          rng=np.random.default_rng(11)).confidence_interval
    assert mean == pytest.approx(x.mean())
    width = ref.high - ref.low
    assert low == pytest.approx(ref.low, abs=0.03 * width)  # different resamples: Monte Carlo tolerance
    assert high == pytest.approx(ref.high, abs=0.03 * width)
    assert low < mean < high


def test_bootstrap_deterministic_and_blocked() -> None:
    x = np.random.default_rng(3).normal(size=300)
    assert bootstrap_mean(x, seed=4) == bootstrap_mean(x, seed=4)
    assert bootstrap_mean(x, seed=4) != bootstrap_mean(x, seed=5)
    big = np.random.default_rng(4).normal(size=50_000)  # several resample blocks
    mean, low, high = bootstrap_mean(big, n_resamples=400)
    se = big.std() / np.sqrt(big.size)
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_mean([0.7]) == (0.7, 0.7, 0.7)
    with pytest.raises(InputError, match="NaN"):
        bootstrap_mean([0.1, np.nan, 0.3])
    with pytest.raises(InputError, match="non-empty"):
        bootstrap_mean([])
    with pytest.raises(InputError, match="confidence"):
        bootstrap_mean([0.1, 0.2], confidence=95)


def test_score_as_dict() -> None:
    s = Score(name="sti", value=0.5, low=0.4, high=0.6, n=10, signature="metric:sti|ground:nominal")
    assert s.as_dict() == {"name": "sti", "value": 0.5, "low": 0.4, "high": 0.6, "n": 10,
                           "signature": "metric:sti|ground:nominal"}
    with pytest.raises(AttributeError):
        s.value = 0.1  # type: ignore[misc]


# --- Mir et al. Table 4.3 ---------------------------------------------------------------------------------------

# (model, classifier) -> (target style probability, Wasserstein): r and "±" as printed in Table 4.3.
TABLE_4_3 = {
    ("CAAE", "fasttext"): ((0.566, 0.038), (0.587, 0.037)), ("CAAE", "textcnn"): ((0.587, 0.037), (0.602, 0.036)),
    ("ARAE", "fasttext"): ((0.513, 0.053), (0.519, 0.053)), ("ARAE", "textcnn"): ((0.515, 0.053), (0.522, 0.053)),
    ("DAR", "fasttext"): ((0.470, 0.049), (0.536, 0.045)), ("DAR", "textcnn"): ((0.508, 0.047), (0.565, 0.043)),
}


@pytest.mark.parametrize("model, classifier", list(TABLE_4_3))
def test_reproduces_mir_table_4_3(data_root: Path, model: str, classifier: str) -> None:
    """All settings of a model pooled; "Wasserstein" is the unsigned EMD (the signed one gives lower r)."""
    ratings = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    inputs = np.load(data_root / STI_DIR / "input_distributions.npz")[classifier]
    dist, prob, human = [], [], []
    for (param, value), group in ratings[ratings.model == model].groupby(["param", "value"]):
        group = group.sort_values("item")
        assert np.array_equal(group.target_style.to_numpy(), MIR_TARGET)
        tag = f"{value:g}".replace(".", "_")  # 0.01 -> 0_01, 5.0 -> 5
        outputs = np.load(data_root / STI_DIR / f"{model}_{param}_{tag}.npz")[classifier]
        dist.append(emd(inputs, outputs))
        prob.append(target_probability(outputs, MIR_TARGET))
        human.append(group.human_style_intensity.to_numpy())
    y = np.concatenate(human)
    for scores, (r, margin) in zip((prob, dist), TABLE_4_3[(model, classifier)], strict=True):
        c = pearson(np.concatenate(scores), y)
        assert c.n == 244 * len(human)
        assert (round(c.r, 3), round(c.margin, 3)) == (r, margin)
