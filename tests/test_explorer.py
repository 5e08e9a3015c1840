"""The explorer page without a browser: the embedded data, its escaping, the correlations, the masked text and
``tsteval explore`` (the page itself is driven in Chromium by tests/test_explorer_browser.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsteval.cli.main import main
from tsteval.core.atomic import read_marker
from tsteval.experiment.report.explorer import (
    correlations,
    explorer_data,
    masked_texts,
    read_explorer_data,
    script_json,
)
from tsteval.lexicons.lexicon import Lexicon
from tsteval.scorecard import Scorecard

HOSTILE = "</script><script>window.pwned=1</script>"


def _card(n: int = 8) -> Scorecard:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"system": ["a", "b"] * (n // 2), "setting": "only", "item": np.arange(n) // 2,
                          "input": "the food was good", "output": [HOSTILE, "the food was bad"] * (n // 2),
                          "source_style": "1", "target_style": "0"})
    card = Scorecard(frame)
    card.add("bleu@none", rng.uniform(0, 100, n), "metric:bleu|x")
    card.add("wmd@none", rng.uniform(0, 3, n), "metric:wmd|x")
    return card


def test_script_json_cannot_end_its_script_element() -> None:
    text = script_json({"output": HOSTILE, "amp": "a & b <!--"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"output": HOSTILE, "amp": "a & b <!--"}


def test_embedded_rows_round_trip_the_scorecard(tmp_path: Path) -> None:
    card = _card()
    card.frame.loc[3, "bleu@none"] = np.nan
    folder = card.save(tmp_path / "scores")
    assert main(["explore", str(folder), "--quiet"]) == 0
    html = (folder / "explorer.html").read_text(encoding="utf-8")
    assert HOSTILE not in html and html.count("</script>") == html.count("<script")
    data = read_explorer_data(folder / "explorer.html")
    rows = pd.DataFrame(data["rows"])
    assert data["rows"]["bleu@none"][3] is None  # NaN as JSON null, not the invalid token NaN
    embedded = rows.astype({"bleu@none": float}).groupby("system")["bleu@none"].mean()
    assert embedded.to_dict() == pytest.approx(card.frame.groupby("system")["bleu@none"].mean().to_dict(), rel=1e-12)
    assert list(rows["output"]) == list(card.frame["output"])
    wmd = {c["name"]: c for c in data["scores"]}["wmd@none"]
    assert wmd["higher_is_better"] is False and wmd["aspect"] == "content"
    assert "explorer.html" in read_marker(folder)["files"]


def test_explore_refuses_to_replace_without_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    folder = _card().save(tmp_path / "scores")
    assert main(["explore", str(folder), "--quiet"]) == 0
    assert main(["explore", str(folder), "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["explore", str(folder), "--quiet", "--overwrite"]) == 0
    other = tmp_path / "notes.html"
    other.write_text("<p>mine</p>")
    assert main(["explore", str(folder), "--out", str(other), "--overwrite"]) == 2
    assert other.read_text() == "<p>mine</p>"
    assert main(["explore", str(tmp_path / "missing")]) == 2
    assert "not a scorecard folder" in capsys.readouterr().err


def test_correlations_match_scipy() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": [2.0, 1.0, 4.0, 3.0, np.nan],
                          "c": [5.0, 5.0, 5.0, 5.0, 5.0]})
    out = correlations(frame, ["a", "b", "c"])
    assert out["pearson"][0][1] == pytest.approx(stats.pearsonr([1, 2, 3, 4], [2, 1, 4, 3]).statistic, abs=1e-6)
    assert out["spearman"][0][1] == pytest.approx(stats.spearmanr([1, 2, 3, 4], [2, 1, 4, 3]).statistic, abs=1e-6)
    assert out["pearson"][0][2] is None  # a constant column has no correlation


def test_masked_text_is_what_the_mask_metrics_saw() -> None:
    lexicon = Lexicon({"1": [["good", 1.0]], "0": [["bad", -1.0]]})
    masked, words = masked_texts(pd.Series(["The food was GOOD, not bad!", "plain"]), lexicon, "<masked>")
    assert masked == ["the food was <masked> , not <masked> !", "plain"]
    assert words == ["good bad", ""]
    assert masked_texts(pd.Series(["x"]), None, "<masked>") is None


def test_default_tradeoff_axes_follow_the_declared_aspects() -> None:
    card = _card()
    card.add("sti@lr", np.linspace(-1, 1, len(card.frame)), "metric:sti|x")
    data = explorer_data(card, title="t")
    assert data["tradeoff"] == {"x": "sti@lr", "y": "bleu@none"}
    assert explorer_data(card, title="t", tradeoff=("sti@lr", "wmd@none"))["tradeoff"]["y"] == "wmd@none"


def test_default_tradeoff_axes_are_the_recommended_metrics_where_scored() -> None:
    from tsteval.metaeval.recommended import RECOMMENDED

    content = next(r.column() for r in RECOMMENDED if r.aspect == "content")
    card = _card()
    card.add("sti@lr", np.linspace(-1, 1, len(card.frame)), "metric:sti|x")
    card.add("style_strength@lr", np.linspace(0, 1, len(card.frame)), "metric:style_strength|x")
    card.add(content, np.linspace(0, 1, len(card.frame)), f"metric:{content.split('@')[0]}|x")
    # the recommended style and content metrics (tsteval.metaeval.recommended) where no axes are given (tsteval score)
    assert explorer_data(card, title="t")["tradeoff"] == {"x": "style_strength@lr", "y": content}
    # a manifest's own axes (its report's, issue 56 item 7) before them, where scored
    assert explorer_data(card, title="t", tradeoff=("sti@lr", "wmd@none"))["tradeoff"] == {"x": "sti@lr",
                                                                                           "y": "wmd@none"}
    assert explorer_data(card, title="t", tradeoff=("sti@lr", "e5@none"))["tradeoff"] == {"x": "sti@lr", "y": content}
