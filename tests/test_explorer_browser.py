"""The explorer page in a real headless browser: Playwright's Python package driving Debian's Chromium.

Playwright's own browser download is not used: the tests launch the system ``chromium`` (``apt-get install -y
chromium``, which ``make`` does).  They never skip: without the browser they fail and say how to install it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.experiment.report.explorer import write_explorer
from tsteval.lexicons.lexicon import Lexicon
from tsteval.scorecard import Scorecard

SCRIPT = "<script>window.pwned=1</script>"
IMAGE = '<img src=x onerror="window.pwned=1">'
EVIL_SYSTEM = '<img src=x onerror="window.pwned=2">'
LONG = "naturalness_pooled@unigram"
NOTICE = f"leakage: system {EVIL_SYSTEM}'s outputs equal its own reference (set 0) on 3 rows"


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("the browser tests need Debian's Chromium: apt-get install -y chromium (make test's set-up does "
                    "it); Playwright's own browser download is not used")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright's Python package: pip install -e '.[dev]'")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _card() -> Scorecard:
    """Three systems (one with two settings), two directions, three items; one system's name and two outputs are
    hostile markup."""
    rows = []
    rng = np.random.default_rng(0)
    for system, settings in (("alpha", ("s1", "s2")), ("beta", ("only",)), (EVIL_SYSTEM, ("only",))):
        for setting in settings:
            for item, (text, direction) in enumerate((("the food was good", ("0", "1")),
                                                      ("bad service here", ("1", "0")),
                                                      ("great place", ("0", "1")))):
                output = {0: SCRIPT, 1: IMAGE}.get(item, f"{system} rewrote: {text}") if system == "beta" else \
                    f"{system} {setting}: {text} not good"
                rows.append({"system": system, "setting": setting, "item": item, "input": text, "output": output,
                             "source_style": direction[0], "target_style": direction[1],
                             "hp.rho": {"s1": 0.1, "s2": 1.0}.get(setting, np.nan)})
    frame = pd.DataFrame(rows)
    card = Scorecard(frame)
    card.add("bleu@none", rng.uniform(0, 100, len(frame)), "metric:bleu|test")
    card.add("sti@lr", rng.uniform(-1, 1, len(frame)), "metric:sti|test")
    card.add(LONG, rng.uniform(0, 1, len(frame)), "metric:naturalness_pooled|test")  # wider than its column
    return card


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("explorer") / "explorer.html"
    lexicon = Lexicon({"0": [["bad", -1.0]], "1": [["good", 1.0], ["great", 0.8]]})
    card = _card()
    card.notices.append(NOTICE)
    write_explorer(path, card, title="browser <test>", lexicon=lexicon, tradeoff=("sti@lr", "bleu@none"))
    return path.as_uri()


@pytest.fixture(scope="module")
def loaded(browser: object, page_url: str) -> Iterator[object]:
    """The page, loaded once (parsing Plotly's bundle takes seconds on a loaded machine)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.problems = []
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: page.problems.append(str(error)))
    page.on("request", lambda r: page.problems.append(f"network: {r.url}") if not r.url.startswith(
        ("file:", "data:", "blob:", "about:")) else None)
    page.goto(page_url)
    page.wait_for_function("window.tsteval !== undefined && document.querySelector('.tabulator-row') !== null")
    yield page
    page.close()


@pytest.fixture()
def page(loaded: object) -> object:
    """The loaded page with its filters reset and its sort cleared."""
    loaded.click("#f-reset")
    loaded.evaluate("window.tsteval.table.clearSort()")
    assert loaded.locator("#count").text_content() == "12 of 12 rows"
    return loaded


def _column(page: object, field: str) -> list[str]:
    return page.locator(f'.tabulator-row .tabulator-cell[tabulator-field="{field}"]').all_text_contents()


def test_page_loads_offline_without_console_errors(page: object, tmp_path: Path) -> None:
    assert page.problems == []
    assert page.locator("#title").text_content() == "browser <test>"
    assert page.locator("#count").text_content() == "12 of 12 rows"
    assert len(_column(page, "system")) == 12
    shot = tmp_path / "explorer.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_sorting_a_metric_column_orders_the_rows(page: object) -> None:
    values = page.evaluate("window.tsteval.data.rows['bleu@none']")
    page.locator('.tabulator-col[tabulator-field="bleu@none"] .tabulator-col-title').click()
    shown = [float(v) for v in _column(page, "bleu@none")]
    assert shown == sorted(shown) and shown[0] == pytest.approx(min(values), abs=5e-4)
    page.locator('.tabulator-col[tabulator-field="bleu@none"] .tabulator-col-title').click()
    shown = [float(v) for v in _column(page, "bleu@none")]
    assert shown == sorted(shown, reverse=True) and shown[0] == pytest.approx(max(values), abs=5e-4)


def test_filters_by_system_search_and_metric_range(page: object) -> None:
    page.select_option("#f-system", "alpha")
    assert set(_column(page, "system")) == {"alpha"} and len(_column(page, "system")) == 6
    assert page.locator("#count").text_content() == "6 of 12 rows"
    page.select_option("#f-direction", "1 → 0")
    assert _column(page, "input") == ["bad service here"] * 2
    page.click("#f-reset")
    page.fill("#f-search", "great place")
    assert set(_column(page, "input")) == {"great place"} and len(_column(page, "input")) == 4
    page.click("#f-reset")
    page.locator("#ranges summary").click()
    page.fill('input[data-metric="sti@lr"][data-bound="min"]', "0")
    shown = [float(v) for v in _column(page, "sti@lr")]
    expected = [v for v in page.evaluate("window.tsteval.data.rows['sti@lr']") if v >= 0]
    assert shown and min(shown) >= 0 and len(shown) == len(expected)


def test_hostile_outputs_and_names_are_shown_as_text(page: object) -> None:
    page.select_option("#f-system", "beta")
    outputs = _column(page, "output")
    assert SCRIPT in outputs and IMAGE in outputs
    page.locator(".tabulator-row").first.click()
    compare = page.locator("#compare").text_content()
    assert SCRIPT in compare and EVIL_SYSTEM in compare
    assert EVIL_SYSTEM in page.locator("#f-system").text_content()
    assert EVIL_SYSTEM in page.locator("#tradeoff-plot .legend").text_content()
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("#table img, #compare img, #tradeoff-plot img, #f-system img").count() == 0
    assert page.problems == []


def test_the_run_notices_and_empty_counts_are_in_the_header_as_text(page: object) -> None:
    shown = page.locator("#notices li").all_text_contents()
    assert shown == [f"Warning: {NOTICE}", "Empty outputs per system (scored as failures): none"]
    assert page.locator("#notices img").count() == 0 and page.evaluate("typeof window.pwned") == "undefined"


def test_masked_text_marks_the_lexicon_words(page: object) -> None:
    page.select_option("#f-system", "alpha")
    page.locator(".tabulator-row").first.click()
    marked = page.locator("#compare .masked").all_text_contents()
    assert "good" in marked and "<masked>" not in marked
    assert "<masked>" in " ".join(_column(page, "output_masked"))


def test_clicking_a_tradeoff_point_filters_the_table(page: object) -> None:
    # One trace per system; alpha's points follow its hyperparameter rho, so its last point is setting s2.
    trace = page.evaluate("document.getElementById('tradeoff-plot').data"
                          ".findIndex((t) => t.customdata[0][0] === 'alpha')")
    point = page.locator("#tradeoff-plot .scatterlayer .trace").nth(trace).locator("path.point").last
    box = point.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("window.tsteval.state.system !== ''")
    assert page.evaluate("[window.tsteval.state.system, window.tsteval.state.setting, window.tsteval.state.direction]"
                         ) == ["alpha", "s2", "0 → 1"]  # the plot's direction too
    assert set(_column(page, "setting")) == {"s2"} and set(_column(page, "system")) == {"alpha"}
    assert page.locator("#count").text_content() == "2 of 12 rows"


def _inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - 0.5 and inner["y"] >= outer["y"] - 0.5
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)


def _overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def test_tradeoff_is_drawn_per_direction_with_labels_inside_the_plot(page: object) -> None:
    assert page.locator("#t-direction option").all_text_contents() == ["0 → 1", "1 → 0"]
    assert page.evaluate("[document.getElementById('x-metric').value, document.getElementById('y-metric').value]"
                         ) == ["sti@lr", "bleu@none"]
    rows = pd.DataFrame(page.evaluate("window.tsteval.data.rows")).astype({"sti@lr": float})
    for direction in ("0 → 1", "1 → 0"):
        page.select_option("#t-direction", direction)
        traces = page.evaluate("document.getElementById('tradeoff-plot').data.map("
                               "(t) => [t.customdata.map((c) => c.join('/')), t.x])")
        expected = rows[rows["direction"] == direction].groupby(["system", "setting"])["sti@lr"].mean()
        shown = {key: x for keys, xs in traces for key, x in zip(keys, xs, strict=True)}
        assert shown == pytest.approx({f"{a}/{b}": v for (a, b), v in expected.items()}, rel=1e-12)
        plot = page.locator("#tradeoff-plot").bounding_box()
        area = page.locator("#tradeoff-plot .nsewdrag").first.bounding_box()
        # no always-on point labels; every name is a legend entry wholly inside the figure, beside the axes
        assert page.locator("#tradeoff-plot .scatterlayer .textpoint").count() == 0
        labels = [page.locator("#tradeoff-plot .legend .legendtext").nth(k).bounding_box()
                  for k in range(page.locator("#tradeoff-plot .legend .legendtext").count())]
        assert len(labels) == expected.index.get_level_values("system").nunique() == 3
        for k, box in enumerate(labels):
            assert _inside(box, plot) and not _overlap(box, area), box
            assert not any(_overlap(box, other) for other in labels[k + 1:])
        points = page.locator("#tradeoff-plot .scatterlayer path.point")
        assert points.count() == len(expected)
        for k in range(points.count()):
            assert _inside(points.nth(k).bounding_box(), area)


def test_table_headers_are_not_truncated(page: object) -> None:
    titles = page.locator(".tabulator-col .tabulator-col-title")
    assert titles.count() >= 10
    clipped = page.evaluate("Array.from(document.querySelectorAll('.tabulator-col .tabulator-col-title'))"
                            ".filter((e) => e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight)"
                            ".map((e) => e.textContent)")
    assert clipped == []
    names = page.locator('.tabulator-col[tabulator-field="sti@lr"] .col-name')
    assert names.text_content() == "sti@lr ↑" and names.get_attribute("title").startswith("sti@lr ↑\nmetric:sti")
    assert page.locator(f'.tabulator-col[tabulator-field="{LONG}"] .col-name').text_content() == f"{LONG} ↑"
    page.locator(".tabulator-row").first.click()
    heads = page.locator("#compare th")
    assert "sti@lr ↑" in heads.all_text_contents() and f"{LONG} ↑" in heads.all_text_contents()
    assert page.evaluate("Array.from(document.querySelectorAll('#compare th'))"
                         ".filter((e) => e.scrollWidth > e.clientWidth).length") == 0
