"""Rank correlations, Williams' t, per-system correlations (Mir's per-model tables) and Fleiss' kappa."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats import inter_rater

from tsteval.core.errors import InputError
from tsteval.metaeval.agreement import (
    FIELLER_KENDALL,
    Correlation,
    by_system,
    compare_dependent_correlations,
    fleiss_kappa,
    kendall,
    spearman,
    williams_t,
)


def _pair(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, 0.6 * x + rng.normal(size=n)


# --- Spearman and Kendall ---------------------------------------------------------------------------------------

def test_spearman_matches_scipy_and_bonett_wright() -> None:
    x, y = _pair()
    c = spearman(x, y)
    ref = stats.spearmanr(x, y)
    assert isinstance(c, Correlation) and c.method == "spearman" and c.n == 120
    assert c.r == pytest.approx(ref.statistic, abs=1e-12)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    se_z = np.sqrt((1 + c.r**2 / 2) / (120 - 3))  # Bonett & Wright (2000)
    assert c.se == pytest.approx((1 - c.r**2) * se_z)
    assert c.margin == pytest.approx(1.96 * c.se)


def test_kendall_matches_scipy_and_fieller() -> None:
    x, y = _pair(seed=1)
    y = np.round(y, 1)  # ties: scipy's tau-b
    c = kendall(x, y)
    ref = stats.kendalltau(x, y)
    assert c.method == "kendall"
    assert c.r == pytest.approx(ref.statistic, abs=1e-12)
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    se_z = np.sqrt(0.437 / (120 - 4))  # Fieller, Hartley & Pearson (1957)
    assert FIELLER_KENDALL == 0.437
    assert c.se == pytest.approx((1 - c.r**2) * se_z)
    assert np.isinf(kendall([1, 2, 3, 4], [1, 3, 2, 4]).se)  # n = 4: unbounded


def test_rank_correlation_errors() -> None:
    for f in (spearman, kendall):
        with pytest.raises(InputError, match="constant"):
            f([1, 2, 3, 4], [5, 5, 5, 5])
        with pytest.raises(InputError, match="paired"):
            f([1, 2, 3], [1, 2])


# --- Williams' t ------------------------------------------------------------------------------------------------

def test_williams_t_by_hand() -> None:
    # r1 = .5, r2 = .3, r12 = .4, n = 100:  |R| = 1 - .25 - .09 - .16 + 2(.5)(.3)(.4) = .62,
    # t = .2 sqrt(99 x 1.4) / sqrt(2 (99/97) .62 + .4^2 (.6)^3) = 2.35457 / 1.14023 = 2.06499
    assert williams_t(0.5, 0.3, 0.4, 100) == pytest.approx(2.0649936, abs=1e-6)
    assert williams_t(0.3, 0.5, 0.4, 100) == pytest.approx(-2.0649936, abs=1e-6)
    assert williams_t(0.4, 0.4, 0.2, 50) == 0.0
    with pytest.raises(InputError, match="more than 3"):
        williams_t(0.5, 0.3, 0.4, 3)


def test_compare_dependent_correlations() -> None:
    rng = np.random.default_rng(3)
    human = rng.normal(size=300)
    a = human + rng.normal(size=300)
    b = human + 2 * rng.normal(size=300)
    result = compare_dependent_correlations(a, b, human)
    r1, r2, r12 = stats.pearsonr(a, human)[0], stats.pearsonr(b, human)[0], stats.pearsonr(a, b)[0]
    assert (result.r1, result.r2, result.r12) == pytest.approx((r1, r2, r12), abs=1e-12)
    assert result.df == 297 and result.n == 300
    assert result.t == pytest.approx(williams_t(r1, r2, r12, 300))
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(result.t), 297))
    greater = compare_dependent_correlations(a, b, human, alternative="greater")
    assert greater.p_value == pytest.approx(stats.t.sf(result.t, 297))
    rho = compare_dependent_correlations(a, b, human, method="spearman")
    assert rho.r1 == pytest.approx(stats.spearmanr(a, human).statistic)
    with pytest.raises(InputError, match="Pearson or Spearman"):
        compare_dependent_correlations(a, b, human, method="kendall")
    with pytest.raises(InputError, match="paired"):
        compare_dependent_correlations(a[:-1], b, human)


# --- per system -----------------------------------------------------------------------------------------------

def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = []
    for system in ("A", "B", "C"):
        for setting in (1, 2):
            quality = rng.normal()
            for item in range(40):
                human = quality + rng.normal(scale=0.5)
                rows.append({"system": system, "setting": setting, "item": item, "human_x": human,
                             "human_y": -human + rng.normal(), "m1": human + rng.normal(), "m2": rng.normal()})
    frame = pd.DataFrame(rows)
    frame.loc[3, "human_x"] = np.nan  # an unrated item is dropped pairwise
    return frame


def test_by_system_pools_then_each_system() -> None:
    frame = _frame()
    table = by_system(frame, "m1", "human_x", "spearman")
    assert list(table) == ["all", "A", "B", "C"]
    rated = frame.dropna(subset=["human_x"])
    assert table["all"].n == 239 and table["all"].method == "spearman"
    assert table["all"].r == pytest.approx(stats.spearmanr(rated["m1"], rated["human_x"]).statistic, abs=1e-12)
    for system, part in rated.groupby("system"):
        c = by_system(frame, "m1", "human_x")[system]
        assert c.n == len(part)
        assert c.r == pytest.approx(stats.pearsonr(part["m1"], part["human_x"]).statistic, abs=1e-12)
        assert c.margin == pytest.approx(1.96 * (1 - c.r ** 2) / np.sqrt(c.n), rel=1e-12)


def test_by_system_refuses_bad_columns_and_undefined_correlations() -> None:
    frame = _frame()
    frame["label"] = "tie"
    with pytest.raises(InputError, match="'label' is not numeric"):
        by_system(frame, "m1", "label")
    with pytest.raises(InputError, match="'nope' not in the frame"):
        by_system(frame, "nope", "human_x")
    frame.loc[frame["system"] == "B", "m1"] = 1.0
    with pytest.raises(InputError, match="constant"):
        by_system(frame, "m1", "human_x")


# --- Fleiss' kappa ----------------------------------------------------------------------------------------------

# The worked example of Fleiss' kappa (10 items, 14 raters, 5 categories): P-bar = 0.378, P-bar_e = 0.213,
# kappa = 0.210 to three decimals.
FLEISS_EXAMPLE = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def test_fleiss_kappa_textbook_example() -> None:
    kappa = fleiss_kappa(FLEISS_EXAMPLE, counts=True)
    assert kappa == pytest.approx(inter_rater.fleiss_kappa(FLEISS_EXAMPLE), abs=1e-12)
    assert round(kappa, 3) == 0.210
    # the same table as raw ratings (items x raters of category codes) gives the same kappa
    raw = np.array([np.repeat(np.arange(5), row) for row in FLEISS_EXAMPLE])
    assert fleiss_kappa(raw) == pytest.approx(kappa, abs=1e-12)
    assert fleiss_kappa(FLEISS_EXAMPLE, counts=True, method="randolph") == pytest.approx(
        inter_rater.fleiss_kappa(FLEISS_EXAMPLE, method="randolph"))


def test_fleiss_kappa_errors() -> None:
    with pytest.raises(InputError, match="same number of raters"):
        fleiss_kappa([[1, 2], [3, 1]], counts=True)
    with pytest.raises(InputError, match="missing"):
        fleiss_kappa([[1.0, np.nan], [2.0, 1.0]])
    with pytest.raises(InputError, match="one category"):
        fleiss_kappa([[1, 1, 1], [1, 1, 1]])
    with pytest.raises(InputError, match="2-D"):
        fleiss_kappa([1, 2, 3])
