"""Scorecard: columns with signatures, bootstrap summaries, atomic saving, and the style scorer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsteval.aggregate import bootstrap_mean
from tsteval.core.errors import LabelMismatchError, TstevalError
from tsteval.core.records import Transfers
from tsteval.metrics.style.intensity import signed_emd
from tsteval.metrics.style.scorer import score_style
from tsteval.scorecard import Scorecard


class FixedClassifier:
    """A stand-in classifier with known distributions, so the scorer's columns can be checked exactly."""

    classes_ = np.array(["neg", "pos"], dtype=object)

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[int] = []

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return np.array([self.table[t] for t in texts])


@pytest.fixture
def transfers() -> Transfers:
    a = Transfers.from_pairs(["bad food", "great staff"], ["good food", "awful staff"],
                             source_style=["neg", "pos"], target_style=["pos", "neg"], system="A", setting="x=1")
    b = Transfers.from_pairs(["bad food", "great staff"], ["bad food", "great staff"],
                             source_style=["neg", "pos"], target_style=["pos", "neg"], system="A", setting="x=2")
    return Transfers.concat([a, b])


TABLE = {"bad food": [0.9, 0.1], "good food": [0.2, 0.8], "great staff": [0.3, 0.7], "awful staff": [0.6, 0.4]}


def test_style_scorer_columns_match_the_formulas(transfers: Transfers) -> None:
    card = Scorecard.from_transfers(transfers)
    clf = FixedClassifier(TABLE)
    score_style(card, clf, "fixed", model_id="m1")
    assert set(card.metrics) == {"sti@fixed", "sti_norm@fixed", "target_prob@fixed", "style_strength@fixed",
                                 "target_acc@fixed"}
    np.testing.assert_allclose(card.frame["sti@fixed"], [0.7, 0.3, 0.0, 0.0])
    np.testing.assert_allclose(card.frame["sti_norm@fixed"], [0.7 / 0.9, 0.3 / 0.7, 0.0, 0.0])
    np.testing.assert_allclose(card.frame["target_prob@fixed"], [0.8, 0.6, 0.1, 0.3])
    np.testing.assert_allclose(card.frame["target_acc@fixed"], [1, 1, 0, 0])
    # each distinct text is classified once: 2 distinct inputs, then 4 distinct outputs
    assert clf.calls == [2, 4]
    assert "clf:fixed-m1" in card.signatures["sti@fixed"] and "ground:nominal" in card.signatures["sti@fixed"]


def test_unknown_target_style_is_a_clear_error(transfers: Transfers) -> None:
    frame = transfers.frame.assign(target_style=["pos", "formal", "pos", "neg"])
    card = Scorecard.from_transfers(Transfers(frame))
    with pytest.raises(LabelMismatchError, match="formal"):
        score_style(card, FixedClassifier(TABLE), "fixed", model_id="m1")


def test_summary_groups_and_bootstrap(transfers: Transfers) -> None:
    card = Scorecard.from_transfers(transfers)
    score_style(card, FixedClassifier(TABLE), "fixed", model_id="m1")
    pooled = card.summary(["sti@fixed"], by=("system", "setting"))
    assert list(pooled["setting"]) == ["x=1", "x=2"]
    np.testing.assert_allclose(pooled["mean"], [0.5, 0.0])
    summary = card.summary(["sti@fixed"])  # by default one row per direction too: never pooled
    expected = card.frame.groupby(["system", "setting", "source_style", "target_style"], sort=False)["sti@fixed"]
    assert len(summary) == expected.ngroups
    np.testing.assert_allclose(summary["mean"], expected.mean().to_numpy())
    summary = pooled
    assert (summary["ci_low"] <= summary["mean"]).all() and (summary["mean"] <= summary["ci_high"]).all()
    assert summary.loc[0, "ci_low"] == pytest.approx(0.3) and summary.loc[0, "ci_high"] == pytest.approx(0.7)


def test_summary_resamples_each_group_once_for_all_its_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    parts = [Transfers.from_pairs([f"in {i}" for i in range(n)], [f"out {i}" for i in range(n)], source_style="neg",
                                  target_style="pos", system="A", setting=setting)
             for setting, n in (("x=1", 60), ("x=2", 45))]
    card = Scorecard.from_transfers(Transfers.concat(parts))
    scores = rng.exponential(size=105)
    for name, values in (("m", scores), ("copy", scores.copy()), ("negated", -scores),
                         ("other", rng.normal(size=105))):
        card.add(name, values, f"metric:{name}")
    draws = []
    default_rng = np.random.default_rng
    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: draws.append(seed) or default_rng(seed))
    summary = card.summary(n_resamples=300, seed=7).set_index(["setting", "metric"])
    assert draws == [7, 7]  # one draw of resampling indices per group, not one per metric and group
    for setting, group in card.frame.groupby("setting"):
        m = summary.loc[(setting, "m")]
        # a single metric's interval is exactly what it was when each metric drew its own resamples
        assert tuple(m[["mean", "ci_low", "ci_high"]]) == bootstrap_mean(group["m"], n_resamples=300, seed=7)
        assert tuple(summary.loc[(setting, "copy"), ["ci_low", "ci_high"]]) == (m["ci_low"], m["ci_high"])
        negated = summary.loc[(setting, "negated")]
        assert negated["ci_low"] == pytest.approx(-m["ci_high"], rel=1e-12)
        assert negated["ci_high"] == pytest.approx(-m["ci_low"], rel=1e-12)
    assert list(summary.index.get_level_values("metric")) == ["m"] * 2 + ["copy"] * 2 + ["negated"] * 2 + ["other"] * 2


def test_add_rejects_wrong_length(transfers: Transfers) -> None:
    card = Scorecard.from_transfers(transfers)
    with pytest.raises(TstevalError, match="rows"):
        card.add("m", [1.0, 2.0], "sig")


def test_save_load_round_trip_is_atomic(transfers: Transfers, tmp_path, monkeypatch) -> None:
    card = Scorecard.from_transfers(transfers)
    card.add("m", np.arange(4.0), "metric:m")
    card.notices.append("leakage: 1 of 4 outputs are training texts of ft")
    out = card.save(tmp_path / "run", card.summary(["m"]))
    assert {p.name for p in out.iterdir()} == {"scorecard.csv", "scorecard.parquet", "signatures.json",
                                               "notices.json", "summary.csv", "summary.md", ".tsteval-output.json"}
    back = Scorecard.load(out)
    pd.testing.assert_frame_equal(back.frame, card.frame)
    assert back.signatures == {"m": "metric:m"}
    assert back.notices == card.notices and "- leakage: 1 of 4" in (out / "summary.md").read_text()
    assert "metric:m" in (out / "summary.md").read_text()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", boom)
    with pytest.raises(OSError):
        card.save(tmp_path / "second")
    assert not (tmp_path / "second").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_signed_emd_reused_by_scorer_matches_functional(transfers: Transfers) -> None:
    card = Scorecard.from_transfers(transfers)
    score_style(card, FixedClassifier(TABLE), "fixed", model_id="m1")
    p = np.array([TABLE[t] for t in card.frame["input"]])
    q = np.array([TABLE[t] for t in card.frame["output"]])
    target = (card.frame["target_style"] == "pos").to_numpy().astype(int)
    np.testing.assert_allclose(card.frame["sti@fixed"], signed_emd(p, q, target))


def test_terminal_summary_is_plain_text_per_direction() -> None:
    """The terminal gets plain text (no Markdown escapes of `my_system`), one row per direction; the file gets
    Markdown with the same numbers."""
    from tsteval.scorecard import summary_markdown, summary_text

    frame = pd.DataFrame({"system": "my_system", "setting": "a|b", "item": [0, 1, 0, 1], "input": list("wxyz"),
                          "output": list("WXYZ"), "source_style": ["0", "0", "1", "1"],
                          "target_style": ["1", "1", "0", "0"]})
    card = Scorecard(frame)
    card.add("bleu@none", [10.0, 30.0, 50.0, 70.0], "metric:bleu")
    summary = card.summary(n_resamples=50)
    text = summary_text(summary)
    assert "my_system" in text and "\\_" not in text and "a|b" in text
    assert "0 → 1" in text and "1 → 0" in text and "20.000" in text and "60.000" in text
    assert "my\\_system" in summary_markdown(summary) and "20.000" in summary_markdown(summary)
