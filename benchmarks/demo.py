"""``make demo``: a first table in seconds, then a full comparison of real systems in minutes.

First table: fastText and TF-IDF + logistic regression (fast to train on 2 CPU cores) on Yelp dev+test without
the evaluation inputs, the 12 CAAE/ARAE/DAR settings of Mir et al. scored with them, and the Pearson correlation of
EMD and of target-style probability with the human style ratings per model, beside the paper's fastText figures.

Then the comparison: ``tsteval run manifests/demo.yaml`` scores the Yelp outputs published with DualRL (11 systems,
four human rewrites and the copy baseline, 500 inputs per direction) with the same fast classifiers and the
recommended metrics, and the demo prints from that run folder the leaderboard per transfer direction (J with its
95% bootstrap interval), one significance test on J between the two best published systems per direction, and
the paths of the tradeoff plots and of the explorer page.  ``--quick`` stops after the first table.  The text-CNN
and transformer reproduction of Mir et al.'s Table 4.3 is ``make reproduce``
(:mod:`benchmarks.reproductions.mir_style_reproduction`).

Run: ``python -m benchmarks.demo [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import html
import time
from pathlib import Path

import pandas as pd

from benchmarks.common import by_model, r_margin
from benchmarks.reproductions import mir_style_reproduction as reproduction
from tsteval.aggregate import N_RESAMPLES
from tsteval.cli.main import main as tsteval_main

QUICK_BACKENDS = ("fasttext", "tfidf-lr")
MANIFEST = Path(__file__).resolve().parent.parent / "manifests" / "demo.yaml"
RUN = Path(__file__).resolve().parent.parent / "runs" / "demo"
JOINT = "joint@strap"


def quick_table(seed: int = 0) -> str:
    """Markdown: per fast classifier and model, Pearson r (± Mir's margin) of EMD and target probability with
    ``human_style_intensity``, the paper's fastText values beside them."""
    card, corpus, reports = reproduction.score(QUICK_BACKENDS, seed)
    frame = card.frame
    frame[[f"emd@{b}" for b in QUICK_BACKENDS]] = frame[[f"sti@{b}" for b in QUICK_BACKENDS]].abs().to_numpy()
    figures = by_model(frame, [f"{m}@{b}" for b in QUICK_BACKENDS for m in ("target_prob", "emd")],
                       "human_style_intensity", seed)
    rows = []
    for backend in QUICK_BACKENDS:
        for metric in ("target_prob", "emd"):
            ours = figures[f"{metric}@{backend}"]
            paper = reproduction.PAPER.get((backend, metric))
            rows += [{"classifier": f"{backend} (held-out acc. {reports[backend]['accuracy']:.3f})", "metric": metric,
                      "model": model, "ours": r_margin(ours[model][:2]),
                      "paper": r_margin(paper[model] if paper else None)}
                     for model in (*reproduction.MODELS, "Average")]
    return "\n".join(["# First look: STI vs human style ratings with fast classifiers (Mir et al. Table 4.3)", "",
                      f"12 settings x 244 items = {len(frame)} rows; classifiers trained on {len(corpus)} Yelp "
                      "sentences (dev + test, evaluation inputs removed). Pearson r ± Mir's margin.", "",
                      pd.DataFrame(rows).to_markdown(index=False), ""])


def published(system: str) -> bool:
    """A system of the DualRL release, not a human rewrite or a trivial baseline."""
    return not system.startswith(("Human", "baseline:"))


def significance_line(run: Path, resamples: int = N_RESAMPLES, seed: int = 0) -> str:
    """The paired-bootstrap test on J between the two published systems ranked highest in the first direction, one
    table per direction (``tsteval compare RUN --systems A B``: paired by input, directions never pooled)."""
    from tsteval.experiment.compare.comparison import in_one_run

    board = pd.read_csv(run / "leaderboard.csv", dtype={"source_style": str, "target_style": str})
    first = board[(board["source_style"] == board["source_style"].iloc[0])
                  & (board["target_style"] == board["target_style"].iloc[0])]
    best, second = [s for s in first["system"] if published(s)][:2]
    table = in_one_run(str(run), [best, second], None, [JOINT], "text", resamples, seed)
    return "\n".join([f"## One significance test per direction: {second} vs {best} on {JOINT}", "",
                      f"tsteval compare {run} --systems {best} {second} --metrics {JOINT} --seed {seed}", "",
                      table, "", f"Every pair, one matrix per direction: {run / 'significance.csv'}.", ""])


def leaderboard_text(run: Path) -> str:
    """The run's ``leaderboard.csv`` as one plain table per transfer direction, named by style when the board
    names them (``negative → positive``)."""
    board = pd.read_csv(run / "leaderboard.csv", dtype={"source_style": str, "target_style": str})
    page = run / "leaderboard.md"  # tsteval's own statement of the recipe, unescaped for the terminal
    recipe = next((html.unescape(line).replace("\\", "") for line in page.read_text(encoding="utf-8").splitlines()
                   if line.startswith("J = ")), "") if page.is_file() else ""
    lines = [f"## Leaderboard per transfer direction: {JOINT}, 95% bootstrap interval", "", recipe, ""]
    for (source, target), part in board.groupby(["source_style", "target_style"], sort=False):
        shown = pd.DataFrame({"rank": part["rank"], "system": part["system"], "n": part["n"],
                              "J [95% CI]": [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                                             zip(part["J"], part["J_low"], part["J_high"], strict=True)],
                              "style": part["style"], "content": part["content"], "fluency": part["fluency"]})
        title = part["direction"].iloc[0] if "direction" in part.columns else f"{source} → {target}"
        lines += [f"### {title}", "", shown.to_markdown(index=False, floatfmt=".3f"), ""]
    return "\n".join(lines)


def comparison(run: Path) -> str:
    """Score the DualRL Yelp systems with ``tsteval run`` and summarise the run folder it writes."""
    status = tsteval_main(["run", str(MANIFEST), "--out", str(run), "--overwrite"])
    if status != 0:
        raise SystemExit(f"tsteval run {MANIFEST} failed (exit {status})")
    plots = sorted(str(p) for p in (run / "plots").glob("tradeoff_*.png"))
    return "\n".join([f"# DualRL Yelp systems, scored with {MANIFEST.name}", "", leaderboard_text(run), "",
                      significance_line(run),
                      "## Tradeoff plots (style vs content, style vs naturalness)", "",
                      *(f"- {p}" for p in plots), "", f"Report: {run / 'report.html'}",
                      f"Explorer (open in a browser): {run / 'explorer.html'}", ""])


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="stop after the first table")
    parser.add_argument("--out", type=Path, default=RUN, help=f"the comparison's run folder (default {RUN})")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    start = time.perf_counter()
    print(quick_table())
    print(f"(first table after {time.perf_counter() - start:.0f} s"
          f"{'; comparison skipped (--quick)' if args.quick else '; the DualRL comparison follows'})\n", flush=True)
    if args.quick:
        return 0
    print(comparison(args.out.resolve()))
    print(f"(demo finished after {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    from tsteval.core.errors import TstevalError

    try:
        raise SystemExit(main())
    except TstevalError as error:  # a missing data root or model: one line, as the CLI says it
        raise SystemExit(f"demo: {error}") from None
