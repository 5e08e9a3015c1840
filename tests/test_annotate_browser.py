"""The loop in a real browser (Playwright driving Debian's Chromium, as ``tests/test_explorer_browser.py`` does):
two annotators rate a small study with the keyboard only, one closes the tab halfway and resumes from the same link,
and what they entered is exactly what the database, agreement and meta-evaluation read."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from annotate_study import make_study
from test_explorer_browser import browser  # noqa: F401  (the shared Chromium fixture)

from benchmarks.speed.annotate_speed import free_port, server
from tsteval.annotate.reliability import agreement
from tsteval.metaeval.rated.loop import study_ratings


def _value(annotator: int, pair: str, question: int) -> int:
    """What annotator ``annotator`` presses for ``question`` of ``pair``: 1-5, different per annotator."""
    return 1 + (sum(map(ord, pair)) + 2 * question + annotator) % 5


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, str, list[str]]]:
    study = make_study(tmp_path_factory.mktemp("browser"), items=2)
    store = study.store()
    tokens = [token for _, token in store.add_annotators(study.pair_ids, seed=0, count=2)]
    store.close()
    port = free_port()
    with server(study.path, port):
        yield study, f"http://127.0.0.1:{port}", tokens


def _rate_pages(page: object, annotator: int, count: int, entered: dict) -> None:
    """Rate ``count`` pages with the keyboard: a digit per question, then Enter."""
    for _ in range(count):
        pair = page.get_attribute("#form", "data-pair")
        questions = page.eval_on_selector_all("fieldset", "sets => sets.map(s => s.dataset.question)")
        for k, question in enumerate(questions):
            value = _value(annotator, pair, k)
            page.keyboard.press(str(value))
            entered[(f"a{annotator}", pair, question)] = float(value)
        with page.expect_navigation():
            page.keyboard.press("Enter")


def test_two_annotators_rate_with_the_keyboard_and_resume(browser: object, served: tuple) -> None:  # noqa: F811
    study, base, tokens = served
    total = len(study.pair_ids)
    entered: dict[tuple[str, str, str], float] = {}
    context = browser.new_context(viewport={"width": 900, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{base}/a/{tokens[0]}")
    page.keyboard.press("4")  # answers the first question and moves on; the arrow goes back to it
    assert page.get_attribute("fieldset.active", "data-question") == "content"
    page.keyboard.press("ArrowUp")
    assert page.get_attribute("fieldset.active", "data-question") == "style"
    _rate_pages(page, 1, 3, entered)
    assert page.text_content("#counter") == f"3 of {total} done"
    page.close()  # the tab is closed mid-study ...
    page = context.new_page()
    page.goto(f"{base}/a/{tokens[0]}")  # ... and the link reopens where it stopped
    assert page.text_content("#counter") == f"3 of {total} done"
    _rate_pages(page, 1, total - 3, entered)
    assert "every pair is rated" in page.text_content("body")
    second = browser.new_context().new_page()
    second.goto(f"{base}/a/{tokens[1]}")
    _rate_pages(second, 2, total, entered)
    assert second.evaluate("window.pwned") is None and page.evaluate("window.pwned") is None
    assert problems == []
    context.close()

    store = study.store()
    ratings = store.ratings()
    store.close()
    assert {(r.annotator, r.pair_id, r.question): r.value for r in ratings.itertuples()} == entered
    frame, _ = study_ratings(study)
    rated = study.pairs.query("kind == 'rated'")
    for pair, row in zip(rated["pair_id"], frame.itertuples(), strict=True):
        assert row.human_content == np.mean([entered[(a, pair, "content")] for a in ("a1", "a2")])
    result = agreement(study, n_resamples=20)
    import krippendorff

    table = np.array([[entered[(a, p, "style")] for p in sorted(rated["pair_id"])] for a in ("a1", "a2")])
    got = result.alpha.query("question == 'style' and level == 'interval'")["alpha"].iloc[0]
    assert got == pytest.approx(krippendorff.alpha(reliability_data=table, level_of_measurement="interval"))
