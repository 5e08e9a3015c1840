"""``tsteval run``: run an experiment manifest end to end and write its report."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tsteval.cli.common import add_format_arguments, signature_lines, summary_json
from tsteval.core.atomic import OVERWRITE_HELP
from tsteval.experiment.options import add_flags

# The run options tsteval run takes as flags, over the manifest's: where and how the machine runs the models.
MACHINE_OPTIONS = ("device", "threads", "precision", "batch_tokens")


def cmd_run(args: argparse.Namespace) -> int:
    """Run an experiment manifest: the scorecard, aggregates, agreement, tradeoff plots and the report."""
    from tsteval.experiment.manifest.loader import load_manifest
    from tsteval.experiment.run.runner import run_experiment

    manifest = load_manifest(args.manifest)
    given = {name: getattr(args, name) for name in MACHINE_OPTIONS if getattr(args, name) is not None}
    manifest = replace(manifest, options=replace(manifest.options, **given))  # read over the manifest's
    out = Path(args.out) if args.out else manifest.output
    card = run_experiment(manifest, out=out, quiet=args.quiet, overwrite=args.overwrite)
    if manifest.options.dry_run:  # the requests were printed; nothing was scored or written
        return 0
    if args.format != "markdown":
        summary = pd.read_csv(out / "summary.csv", dtype={"system": str, "setting": str})
        print(summary_json(summary, card.signatures, name=manifest.name, rows=len(card.frame), out=str(out),
                           notices=card.notices)
              if args.format == "json" else "\n".join(signature_lines(summary)))
    print(f"{manifest.name}: {len(card.frame)} rows x {len(card.metrics)} metrics; report: {out / 'report.md'}, "
          f"{out / 'report.html'}", file=sys.stderr if args.format == "json" else sys.stdout)
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``run`` to the subcommands and return its parser."""
    run = sub.add_parser("run", help="run an experiment manifest (YAML) end to end and write its report",
                         epilog="examples:\n  tsteval run manifests/mir.yaml --out runs/mir\n"
                                "  tsteval run tests/data/tiny_manifest.yaml --out /tmp/tiny --quiet",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("manifest",
                     help="the experiment manifest (see harness/experiment/manifest/loader.py for the schema)")
    run.add_argument("--out", help="run folder (default: the manifest's output)")
    run.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    run.add_argument("--quiet", action="store_true", help="no progress messages or bars")
    add_flags(run, MACHINE_OPTIONS)
    add_format_arguments(run)
    run.set_defaults(func=cmd_run)
    return run
