"""Screenshots of the explorer for the committed runs, taken in headless Chromium at 1400 px.

``python -m benchmarks.explorer_screenshots dualrl --out /tmp/runs/dualrl`` runs ``manifests/dualrl.yaml``
(about 6 minutes with fastText cached) and writes ``benchmarks/results/dualrl_explorer.png`` (``mir`` and ``demo``,
the run ``make demo`` writes to ``runs/demo``, likewise); ``--run DIR`` takes
an existing run folder instead (its ``explorer.html``, built by ``tsteval explore`` when missing).  ``--report``
also refreshes the committed report folder ``benchmarks/results/NAME_report/`` from the run (report, plots,
summary, tradeoff points, run metadata).  The page is opened from its file path, the first row of the table is
clicked so the side-by-side view of one input shows, and the whole page is captured.

Needs Playwright's Python package (``pip install -e '.[dev]'``) and Debian's Chromium (``apt-get install -y
chromium``); Playwright's own browser download is not used.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
MANIFESTS = Path(__file__).resolve().parents[1] / "manifests"
REPORT_FILES = ("manifest.yaml", "report.html", "report.md", "run.json", "summary.md", "summary.csv",
                "leaderboard.csv", "leaderboard.md", "leakage.json", "significance.csv",
                "tradeoff_content_intersections.csv", "tradeoff_content_points.csv",
                "tradeoff_naturalness_intersections.csv", "tradeoff_naturalness_points.csv")


def screenshot(page: Path, png: Path, width: int = 1400) -> None:
    """Open the explorer ``page`` in headless Chromium, show one input side by side, capture the whole page."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("install Debian's Chromium first: apt-get install -y chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        view = browser.new_page(viewport={"width": width, "height": 900})
        errors: list[str] = []
        view.on("pageerror", lambda error: errors.append(str(error)))
        view.goto(page.resolve().as_uri())
        view.wait_for_function("window.tsteval !== undefined && document.querySelector('.tabulator-row') !== null",
                               timeout=120_000)
        view.locator(".tabulator-row").first.click()
        view.wait_for_timeout(500)
        view.screenshot(path=str(png), full_page=True)
        browser.close()
    if errors:
        raise SystemExit(f"the explorer page raised errors: {errors}")


def refresh_report(run: Path, name: str) -> None:
    """Replace ``benchmarks/results/NAME_report/`` with the run's report files, plots and agreement (``meta_eval/``)."""
    target = RESULTS / f"{name}_report"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for file in REPORT_FILES:
        if (run / file).is_file():
            shutil.copy2(run / file, target / file)
    for folder in ("plots", "meta_eval"):
        if (run / folder).is_dir():
            shutil.copytree(run / folder, target / folder, dirs_exist_ok=True)


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=("dualrl", "mir", "demo"), help="the manifest under manifests/")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", type=Path, help="an existing run folder of that manifest")
    where.add_argument("--out", type=Path, help="run the manifest into this new folder")
    parser.add_argument("--report", action="store_true", help="also refresh benchmarks/results/NAME_report/")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Run (or take) the run folder, build its explorer if missing, and write the screenshot."""
    args = parser().parse_args(argv)

    from tsteval.experiment.explorer import explore_folder
    from tsteval.experiment.runner import run_experiment

    run = args.run
    if run is None:
        run_experiment(MANIFESTS / f"{args.name}.yaml", out=args.out)
        run = args.out
    page = run / "explorer.html"
    if not page.is_file():
        explore_folder(run)
    png = RESULTS / f"{args.name}_explorer.png"
    screenshot(page, png)
    print(f"{png.relative_to(RESULTS.parent.parent)}: {png.stat().st_size:,} bytes")
    if args.report:
        refresh_report(run, args.name)


if __name__ == "__main__":
    main()
