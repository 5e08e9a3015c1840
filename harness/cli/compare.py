"""``tsteval compare``: paired significance between two scored runs of the same inputs, or between the systems of
one run, per transfer direction."""

from __future__ import annotations

import argparse
import textwrap

from tsteval.aggregate import N_RESAMPLES
from tsteval.cli.common import seed_type
from tsteval.core.errors import TstevalError


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _paragraphs(text: str) -> str:
    """``text`` wrapped at 79 columns, its paragraphs kept (the raw formatter, needed for the examples, wraps
    nothing; it does not %-format the description either, so a percent sign is written once)."""
    return "\n\n".join(textwrap.fill(paragraph, 79) for paragraph in text.split("\n\n"))


def cmd_compare(args: argparse.Namespace) -> int:
    """Two runs (B against A), two systems of one run, or the system x system matrices of one run."""
    from tsteval.experiment.compare import comparison

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else None
    if args.run_b is None:
        print(comparison.in_one_run(args.run_a, args.systems, args.direction, metrics, args.format, args.resamples,
                                    args.seed))
        return 0
    given = [flag for flag, value in (("--systems", args.systems), ("--direction", args.direction),
                                      ("--metrics", args.metrics)) if value]
    if given:
        raise TstevalError(f"{', '.join(given)} compare the systems of one run: give one RUN, not two (two runs are "
                           "compared as wholes, on every metric they share)")
    resamples = N_RESAMPLES if args.resamples is None else args.resamples
    print(comparison.two_runs(args.run_a, args.run_b, args.format, resamples, args.seed, args.ignore_signatures))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compare`` to the subcommands and return its parser."""
    compare = sub.add_parser(
        "compare", help="paired significance between two scored runs, or between the systems of one run per "
                        "direction (paired bootstrap, approximate randomisation)",
        description=_paragraphs(
        "Two runs (RUN RUN_B): for each metric column both share, over the inputs both share (same input text, "
        "source and target style): the means of A and B, the difference B-A with its 95% "
        "paired-bootstrap interval, the paired bootstrap and approximate randomisation p-values (as sacreBLEU's "
        "--paired-bs and --paired-ar; the statistic is the mean of the per-sentence scores) and both Holm-adjusted "
        "across the metrics.\n\n"
        "One run (RUN --systems A B): the same table for two systems of the run, one table per transfer direction "
        "(source style, target style; Holm across the metrics of each direction): directions are never pooled. "
        "Without --systems, with --systems all or with three names or more: one system x system matrix per "
        "direction and metric (row minus column, * = paired bootstrap significant at 0.05 after Holm over the "
        "pairs of that matrix). A system with several settings is named 'SYSTEM / SETTING'."),
        epilog="examples:\n  tsteval compare runs/system-a runs/system-b --resamples 2000\n"
               "  tsteval compare runs/all --systems DualRL DeleteOnly_Li --direction '0->1'\n"
               "  tsteval compare runs/all --metrics sti@lr,bleu@none --format json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("run_a", metavar="RUN", help="a folder written by tsteval score or tsteval run")
    compare.add_argument("run_b", metavar="RUN_B", nargs="?",
                         help="a second run, compared with RUN as a whole (differences are RUN_B - RUN)")
    compare.add_argument("--systems", nargs="+", metavar="SYSTEM",
                         help="with one RUN: two systems (differences are the second - the first), several, or all "
                              "(default: all)")
    compare.add_argument("--direction", metavar="SOURCE->TARGET",
                         help="with one RUN: only this direction, by style label or name (0->1, formal->informal; "
                              "default: every direction, each on its own)")
    compare.add_argument("--metrics", metavar="COLUMNS", help="with one RUN: comma-separated metric columns "
                                                             "(default: every one)")
    compare.add_argument("--resamples", type=_positive, default=None,
                         help=f"bootstrap resamples and randomisation trials (default {N_RESAMPLES}; for a matrix, at "
                              "least 20 x its pairs, so that Holm can find a pair significant)")
    compare.add_argument("--seed", type=seed_type, default=12345, help="random seed (default 12345, sacreBLEU's)")
    compare.add_argument("--ignore-signatures", action="store_true",
                         help="compare columns whose signatures differ (the scores may not be comparable)")
    compare.add_argument("--format", choices=("text", "markdown", "json"), default="text",
                         help="plain-text tables (default), Markdown tables, or one JSON document on standard output")
    compare.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    compare.add_argument("--quiet", action="store_true", help="no progress messages or bars")
    compare.set_defaults(func=cmd_compare)
    return compare
