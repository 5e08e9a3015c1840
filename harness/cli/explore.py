"""``tsteval explore``: write the interactive explorer page of an existing run or scorecard folder."""

from __future__ import annotations

import argparse

from tsteval.core.atomic import OVERWRITE_HELP


def cmd_explore(args: argparse.Namespace) -> int:
    """Write ``explorer.html`` for a folder written by ``tsteval run`` or ``tsteval score``."""
    from tsteval.experiment.report.explorer import explore_folder

    path = explore_folder(args.run_dir, out=args.out, lexicon=args.lexicon, overwrite=args.overwrite)
    if not args.quiet:
        print(f"explorer: {path} (open it in a browser; it works offline)")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``explore`` to the subcommands and return its parser."""
    explore = sub.add_parser(
        "explore", help="write a self-contained interactive HTML explorer of a run or scorecard folder",
        description="One HTML file with the data embedded, opened from a file path with no network: the "
        "per-sentence scorecard as a sortable, filterable table, every system's output for one input side by "
        "side, the tradeoff scatter linked to the table and the metric x metric correlation heatmap.",
        epilog="examples:\n  tsteval explore runs/dualrl\n  tsteval explore scores/ --lexicon lexicon.json "
               "--out /tmp/explorer.html", formatter_class=argparse.RawDescriptionHelpFormatter)
    explore.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by tsteval run or tsteval score")
    explore.add_argument("--out", help="the HTML file to write (default: RUN_DIR/explorer.html)")
    explore.add_argument("--lexicon", help="style lexicon JSON for the masked text (default: the run's lexicon "
                                           "when run.json names one under the data root)")
    explore.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    explore.add_argument("--quiet", action="store_true", help="print nothing on success")
    explore.set_defaults(func=cmd_explore)
    return explore
