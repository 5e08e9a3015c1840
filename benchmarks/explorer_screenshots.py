"""Screenshots of the explorer and the example reports for the committed runs, taken in headless Chromium at 1400 px.

``python -m benchmarks.explorer_screenshots all --out /tmp/runs`` is the one command behind every committed picture
and example report: it runs ``manifests/demo.yaml``, ``dualrl.yaml`` and ``mir.yaml`` into ``/tmp/runs/NAME`` and
writes ``benchmarks/results/NAME_explorer.png`` for each, and ``benchmarks/results/{dualrl,mir}_report/`` (report,
plots, summary, tradeoff points, run metadata) from the two runs that have one (tens of minutes on the 2-core
machine, classifiers from the cache).  One of them: ``python -m benchmarks.explorer_screenshots dualrl --out
/tmp/runs/dualrl`` (``--run DIR`` takes an existing run folder instead: its ``explorer.html``, built by ``tsteval
explore`` when missing; ``--report`` also refreshes its report folder).  The page is opened from its file path, the
first row of the table is clicked so the side-by-side view of one input shows, and the whole page is captured.

Needs Playwright's Python package (``pip install -e '.[dev]'``) and Debian's Chromium (``apt-get install -y
chromium``); Playwright's own browser download is not used.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
NAMES = ("demo", "dualrl", "mir")  # every manifest with a committed screenshot
REPORTED = ("dualrl", "mir")  # those with a committed example report
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
    parser.add_argument("name", choices=("all", *NAMES), help="the manifest under manifests/, or all of them")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", type=Path, help="an existing run folder of that manifest")
    where.add_argument("--out", type=Path, help="run the manifest into this new folder")
    parser.add_argument("--report", action="store_true", help="also refresh benchmarks/results/NAME_report/")
    return parser


def picture(name: str, run: Path | None, out: Path | None, report: bool) -> None:
    """Run manifest ``name`` into ``out`` (or take the folder ``run``), build its explorer if missing, write the
    screenshot and, with ``report``, the committed report folder."""
    from tsteval.experiment.report.explorer import explore_folder
    from tsteval.experiment.run.runner import run_experiment

    if run is None:
        run_experiment(MANIFESTS / f"{name}.yaml", out=out)
        run = out
    page = run / "explorer.html"
    if not page.is_file():
        explore_folder(run)
    png = RESULTS / f"{name}_explorer.png"
    screenshot(page, png)
    print(f"{png.relative_to(RESULTS.parent.parent)}: {png.stat().st_size:,} bytes")
    if report:
        refresh_report(run, name)


def main(argv: Sequence[str] | None = None) -> None:
    """Every picture and report (``all``), or one manifest's."""
    args = parser().parse_args(argv)
    if args.name != "all":
        picture(args.name, args.run, args.out, args.report)
        return
    if args.out is None:
        raise SystemExit("all runs every manifest: give --out FOLDER (each run goes to FOLDER/NAME)")
    for name in NAMES:
        picture(name, None, args.out / name, name in REPORTED)


if __name__ == "__main__":
    main()
