"""``tsteval compare``: paired significance of the differences between two scored runs of the same inputs."""

from __future__ import annotations

import argparse
import json

from tsteval.cli.common import seed_type


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare run B with run A: per shared metric, the mean difference B - A, its interval and p-values."""
    from tsteval.core import markdown as md
    from tsteval.experiment.significance import compare_runs
    from tsteval.scorecard import Scorecard

    a, b = Scorecard.load(args.run_a), Scorecard.load(args.run_b)
    table, matched = compare_runs(a, b, origin_a=args.run_a, origin_b=args.run_b, n_resamples=args.resamples,
                                  seed=args.seed, ignore_signatures=args.ignore_signatures)
    if args.format == "json":
        print(json.dumps({"a": args.run_a, "b": args.run_b, "matched": matched, "rows_a": len(a.frame),
                          "rows_b": len(b.frame), "resamples": args.resamples, "seed": args.seed,
                          "metrics": table.to_dict(orient="records")}, indent=2))
        return 0
    shown = table.rename(columns={"mean_a": "A", "mean_b": "B", "difference": "B-A", "low": "95% low",
                                  "high": "95% high", "p_bootstrap": "p (bootstrap)",
                                  "p_randomisation": "p (randomisation)", "p_bootstrap_holm": "p Holm (bootstrap)",
                                  "p_randomisation_holm": "p Holm (randomisation)", "better": "better"})
    print(f"A = {md.escape(args.run_a)}, B = {md.escape(args.run_b)}: {matched} rows matched (A has {len(a.frame)}, "
          f"B has {len(b.frame)}); paired bootstrap and approximate randomisation, {args.resamples} resamples, "
          f"seed {args.seed}; Holm-adjusted across {len(table)} metrics\n")
    print(md.table(shown, lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compare`` to the subcommands and return its parser."""
    compare = sub.add_parser(
        "compare", help="paired significance between two scored runs (paired bootstrap, approximate randomisation)",
        description="For each metric column both runs share, over the inputs both share (same input text, source "
        "and target style): the means of A and B, the difference B-A with its 95%% paired-bootstrap interval, the "
        "paired bootstrap and approximate randomisation p-values (as sacreBLEU's --paired-bs and --paired-ar; "
        "the statistic is the mean of the per-sentence scores) and both Holm-adjusted across the metrics.",
        epilog="example:\n  tsteval compare runs/system-a runs/system-b --resamples 2000",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("run_a", metavar="RUN_A", help="a folder written by tsteval score or tsteval run")
    compare.add_argument("run_b", metavar="RUN_B", help="the run compared with RUN_A (differences are B - A)")
    compare.add_argument("--resamples", type=_positive, default=1000,
                         help="bootstrap resamples and randomisation trials (default 1000)")
    compare.add_argument("--seed", type=seed_type, default=12345, help="random seed (default 12345, sacreBLEU's)")
    compare.add_argument("--ignore-signatures", action="store_true",
                         help="compare columns whose signatures differ (the scores may not be comparable)")
    compare.add_argument("--format", choices=("markdown", "json"), default="markdown",
                         help="a Markdown table or one JSON document on standard output")
    compare.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")
    compare.add_argument("--quiet", action="store_true", help="no progress messages or bars")
    compare.set_defaults(func=cmd_compare)
    return compare
