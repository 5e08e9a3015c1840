"""The MTurk HIT layout in a real browser (Chromium, as ``tests/test_annotate_browser.py``), each HIT's cells put in
as MTurk does (a plain find and replace of ``${NAME}``): every text is shown as written, hostile markup included, and
a short HIT shows only the slots that hold a pair."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from annotate_study import HOSTILE, make_study
from badinput import run_cli
from test_explorer_browser import browser  # noqa: F401  (the shared Chromium fixture)


def test_the_layout_shows_each_text_as_written_and_only_the_pairs_of_a_short_hit(
        browser: object, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # noqa: F811
    make_study(tmp_path, items=5, questions=["content", "fluency"])
    argv = ["annotate", "export", tmp_path / "study", "--format", "mturk", "--per-hit", "3", "--out",
            tmp_path / "batch.csv"]
    assert run_cli(argv, capsys).code == 0
    layout = (tmp_path / "batch.layout.html").read_text(encoding="utf-8")
    with (tmp_path / "batch.csv").open(newline="", encoding="utf-8") as handle:
        hits = list(csv.DictReader(handle))
    hostile = next(h for h in hits if any(HOSTILE in h[f"rewrite_{k}"] for k in (1, 2, 3)))
    page = browser.new_page()
    page.route("**/*", lambda route: route.abort())  # crowd-html-elements.js is MTurk's to serve, not the test's
    try:
        for hit in (hostile, hits[-1]):
            filled = [k for k in (1, 2, 3) if hit[f"pair_id_{k}"]]
            html = layout
            for name, value in hit.items():
                html = html.replace(f"${{{name}}}", value)
            page.set_content(html, wait_until="domcontentloaded")
            shown = page.eval_on_selector_all("textarea", "areas => areas.map(a => a.value)")
            assert shown == [hit[f"{c}_{k}"] for k in filled for c in ("original", "rewrite")]
            names = page.eval_on_selector_all("input[type=radio]", "inputs => [...new Set(inputs.map(i => i.name))]")
            assert names == [f"{q}-{k}" for k in filled for q in ("content", "fluency")]
            assert page.evaluate("window.pwned") is None
        assert len(filled) == 2  # the last HIT: 17 pairs in HITs of 3
    finally:
        page.close()
