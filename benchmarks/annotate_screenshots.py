"""The pictures of ``docs/annotate.md``: ``python -m benchmarks.annotate_screenshots``.

Plans a study from Mir et al.'s rated Yelp transfers (scored with BLEU), serves it on 127.0.0.1, and has Debian's
Chromium (through Playwright) take the rating page mid-answer and the completion page: ``docs/images/annotate-page.png``
and ``docs/images/annotate-done.png``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from benchmarks.speed.annotate_speed import free_port, server

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


def main() -> int:
    from playwright.sync_api import sync_playwright

    from tsteval.annotate.study import plan_study
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run
    from tsteval.readers.mir import load_mir

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run(Plan(load_mir(), content=("bleu",), modifications=("none",))).save(Path(tmp) / "run")
        study = plan_study(Path(tmp) / "run", Path(tmp) / "study", items=2, seed=3,
                           systems=["ARAE", "CAAE", "DAR"])
        store = study.store()
        (_, token), = store.add_annotators(study.pair_ids, seed=0, count=1)
        store.close()
        port = free_port()
        with server(study.path, port), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 860, "height": 980})
            page.goto(f"http://127.0.0.1:{port}/a/{token}")
            for _ in range(2):
                for key in "435":
                    page.keyboard.press(key)
                with page.expect_navigation():
                    page.keyboard.press("Enter")
            page.keyboard.press("4")
            page.screenshot(path=str(IMAGES / "annotate-page.png"))
            page.keyboard.press("3")
            page.keyboard.press("4")
            for _ in range(len(study.pair_ids) - 2):
                for key in "435":
                    page.keyboard.press(key)
                with page.expect_navigation():
                    page.keyboard.press("Enter")
            page.set_viewport_size({"width": 860, "height": 420})
            page.screenshot(path=str(IMAGES / "annotate-done.png"))
            browser.close()
    print(f"wrote {IMAGES / 'annotate-page.png'} and {IMAGES / 'annotate-done.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
