"""``tsteval meta-eval``: do the metrics of a scorecard track human ratings?  (Parsing only; the work is in
:mod:`tsteval.metaeval.engine` and :mod:`tsteval.metaeval.rated.datasets`.)"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from tsteval.aggregate import N_RESAMPLES
from tsteval.cli.annotate import add_exclusion, exclusion_of
from tsteval.cli.common import seed_type
from tsteval.core.atomic import OVERWRITE_HELP, check_output_directory
from tsteval.readers.rated_sets import rated_set_names

EPILOG = """examples:
  tsteval meta-eval --scorecard runs/mine --ratings ratings.csv --key item,system \\
      --rating content=human_content --rating style=human_style --out runs/mine-metaeval
  tsteval meta-eval --scorecard runs/mine --rating naturalness=human_fluency --out runs/meta   (ratings in the run)
  tsteval meta-eval --dataset lai --out results/lai        (score Lai et al.'s rated GYAFC outputs and evaluate)
  tsteval meta-eval runs/mine --ratings study --choose-profile profile.json   (a tsteval annotate study)
  tsteval meta-eval --study benchmarks/evidence/content_sets.yaml   (a study declaration: docs/studies.md)
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


def _baselines(items: list[str]) -> dict[str, str]:
    from tsteval.core.errors import TstevalError

    out = {}
    for item in items:
        key, sep, column = item.partition("=")
        if not sep or not key or not column:
            raise TstevalError(f"--baseline {item!r}: expected ASPECT=COLUMN or RATING=COLUMN, e.g. content=bleu@none")
        out[key] = column
    return out


def _run_study(args: argparse.Namespace) -> int:
    """``--study FILE``: run a study declaration and write its page (tsteval.metaeval.study)."""
    from tsteval.core.errors import TstevalError
    from tsteval.metaeval.study.declaration import load_study, page_declarations
    from tsteval.metaeval.study.runner import run_study

    others = [flag for flag, given in (("RUN/--scorecard", args.run or args.scorecard), ("--ratings", args.ratings),
                                      ("--rating", args.rating), ("--dataset", args.dataset)) if given]
    if others:
        raise TstevalError(f"--study brings its sets and columns: leave out {others[0]}")
    paths = page_declarations(args.study) if Path(args.study).is_dir() else [Path(args.study)]
    if len(paths) > 1 and args.out is not None:
        raise TstevalError("--out takes one study; a folder of declarations writes each to its out: folder")
    for path in paths:
        study = load_study(path)
        if args.out is None and study.out is None:
            raise TstevalError(f"{path}: the study names no out: folder; give --out FOLDER")
        result = run_study(study, log=(lambda _message: None) if args.quiet else print)
        target = result.write(args.out)
        if not args.quiet:
            print(f"{path.name}: written to {target / 'study.md'}")
    return 0


def cmd_meta_eval(args: argparse.Namespace) -> int:
    """Meta-evaluate a scorecard (or a built-in rated dataset) and write the tables and the plot."""
    from tsteval.core.errors import TstevalError
    from tsteval.core.markdown import plain
    from tsteval.metaeval.engine import meta_evaluate

    if args.study is not None:
        return _run_study(args)
    if args.run is not None:
        if args.scorecard is not None and args.scorecard != args.run:
            raise TstevalError("give the run once: RUN or --scorecard RUN")
        args.scorecard = args.run
    if args.ratings is not None and Path(args.ratings, "study.json").is_file():
        return _meta_eval_study(args)
    if args.choose_profile or args.exclude or args.exclude_failed:
        option = "--choose-profile" if args.choose_profile else "--exclude" if args.exclude else "--exclude-failed"
        raise TstevalError(f"{option} needs --ratings STUDY (a folder made by tsteval annotate plan)")
    if args.out is None:
        raise TstevalError("give --out FOLDER for the tables")
    if (args.dataset is None) == (args.scorecard is None):
        raise TstevalError("give --scorecard RUN (with --rating ASPECT=COLUMN ...) or --dataset NAME, one of "
                           f"{rated_set_names()}")
    if args.dataset is not None and (args.rating or args.ratings):
        raise TstevalError("--dataset brings its own ratings: leave out --rating and --ratings")
    if args.scorecard is not None and not args.rating:
        raise TstevalError("--scorecard needs at least one --rating ASPECT=COLUMN, e.g. --rating content=human_content")
    check_output_directory(args.out, "meta-eval", args.overwrite)
    log = (lambda _message: None) if args.quiet else print
    agreement = ""
    if args.dataset is not None:
        from tsteval.metaeval.rated.datasets import rated_dataset
        from tsteval.metaeval.rated.rater_agreement import agreement_markdown

        rated = rated_dataset(args.dataset, n_resamples=args.resamples, seed=args.seed, log=log)
        result = rated.result
        title = f"Meta-evaluation on the {args.dataset} ratings"
        agreement = agreement_markdown(rated.notes["agreement"], args.dataset)
        if "style" in rated.notes:
            agreement += f"\n- {rated.notes['style']}\n"
    else:
        keys = [k for k in args.key.split(",") if k]
        result = meta_evaluate(args.scorecard, args.rating, args.ratings, keys, baselines=_baselines(args.baseline),
                               n_resamples=args.resamples, seed=args.seed)
        title = "Meta-evaluation"
    result.write(args.out, overwrite=args.overwrite, title=title)
    if agreement:
        Path(args.out, "agreement.md").write_text(agreement, encoding="utf-8")
    if not args.quiet:
        print(plain(result.markdown(title)))
        print(plain(agreement))
    print(f"meta-eval: {len(result.table)} correlations and {len(result.baseline)} baseline comparisons written to "
          f"{args.out}")
    return 0


def _meta_eval_study(args: argparse.Namespace) -> int:
    """``meta-eval RUN --ratings STUDY [--choose-profile OUT.json]``: the study's mean ratings against every column
    of the run, the noise ceiling of each rating beside them, and the profile chosen by rule v2
    (:mod:`tsteval.metaeval.study.rule`)."""
    from tsteval.annotate.study import Study
    from tsteval.core.atomic import check_output_file
    from tsteval.core.errors import TstevalError
    from tsteval.core.markdown import plain
    from tsteval.metaeval.rated.loop import (
        choose_profile,
        is_profile,
        meta_evaluate_study,
        overlap_words,
        write_profile,
    )

    if args.scorecard is None or args.dataset is not None or args.rating:
        raise TstevalError("with --ratings STUDY give the study's run (RUN) and no --dataset or --rating")
    if args.out is not None:
        check_output_directory(args.out, "meta-eval", args.overwrite)
    if args.choose_profile:
        check_output_file(args.choose_profile, "a profile", is_profile, args.overwrite)
    study = Study.open(args.ratings)
    result = meta_evaluate_study(args.scorecard, study, n_resamples=args.resamples, seed=args.seed,
                                 exclusion=exclusion_of(args))
    title = f"Meta-evaluation against study {study.info['signature']}"
    if args.out is not None:
        result.write(args.out, overwrite=args.overwrite, title=title)
    if not args.quiet:
        print(plain(result.markdown(title)))
    print("noise ceiling (the highest correlation any metric can reach with these mean ratings):")
    for row in result.info["ceiling"]:
        known = math.isfinite(row["split_half"])
        figure = (f"split-half reliability {row['split_half']:.3f}, ceiling {row['ceiling']:.3f}" if known
                  else "reliability unknown (it needs 3 pairs rated twice: tsteval annotate plan --overlap)")
        print(f"  {row['rating']} ({row['aspect']}): {row['pairs']} pairs, {row['pairs_2_raters']} rated twice or "
              f"more{overlap_words(row)}, {figure}")
    for line in result.info["collected"]:
        print(f"  {line}")
    if args.choose_profile:
        choice = choose_profile(result)
        write_profile(choice, study, args.scorecard, args.choose_profile, args.overwrite)
        for aspect, reason in choice.reasons.items():
            print(f"  {aspect}: {reason}")
        print(f"profile {choice.profile} written to {args.choose_profile}; score it with tsteval score --metrics "
              f"profile:{args.choose_profile} ...")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``meta-eval`` to the subcommands and return its parser."""
    parser = sub.add_parser(
        "meta-eval", help="correlate metric columns with human ratings (clustered bootstrap, vs a baseline)",
        description="For every metric column of a scorecard and every human rating column of its aspect: Pearson, "
        "Spearman and Kendall at the levels sentence, within_system (mean of the per-(system, setting) r) and "
        "system, with 95%% intervals from a bootstrap clustered by input, and the difference from a baseline metric "
        "(default bleu@none for content, target_prob for style, the LM's length-normalised score for naturalness) "
        "with its interval and Williams' t.  Writes metaeval.csv, baseline.csv, counts.csv, metaeval.md and "
        "metaeval.png (tsteval run writes the same files to meta_eval/ of its run folder); with --dataset also "
        "agreement.md, the raters' agreement (alpha, split-half reliability, noise ceiling).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", nargs="?", metavar="RUN", help="the run (same as --scorecard RUN)")
    parser.add_argument("--scorecard", metavar="RUN", help="a folder written by tsteval score or tsteval run")
    parser.add_argument("--ratings", metavar="FILE|STUDY", help="human ratings (CSV/JSONL/Parquet) joined on --key, "
                        "or a study folder of tsteval annotate (its mean ratings, joined on system, setting, item "
                        "and direction); without it the rating columns are read from the scorecard")
    add_exclusion(parser)
    parser.add_argument("--choose-profile", metavar="OUT.json", help="with --ratings STUDY: apply the profile rule "
                        "(version 2, the evidence pages') to the study and write the chosen profile (score it with "
                        "--metrics profile:OUT.json)")
    parser.add_argument("--rating", action="append", default=[], metavar="ASPECT=COLUMN",
                        help="a rating column and its aspect (style, content, naturalness); repeat for several")
    parser.add_argument("--key", default="item,system", help="comma-separated join keys present in both tables "
                        "(default item,system; e.g. item,system,setting or input,output)")
    parser.add_argument("--baseline", action="append", default=[], metavar="ASPECT=COLUMN",
                        help="the baseline of an aspect or of one rating column (RATING=COLUMN)")
    parser.add_argument("--dataset", choices=rated_set_names(), metavar="NAME",
                        help="score a built-in rated set with every applicable metric and meta-evaluate it, the "
                        f"raters' agreement beside; one of {', '.join(rated_set_names())} (docs/meta-evaluation.md)")
    parser.add_argument("--study", metavar="FILE|DIR", help="run a study declaration (YAML: its sets, columns, "
                        "statistics and rule; docs/studies.md), or every page declaration of a folder, and write "
                        "study.json, study.md and scores.parquet to its out: folder (or --out)")
    parser.add_argument("--resamples", type=_positive, default=N_RESAMPLES,
                        help=f"bootstrap resamples (default {N_RESAMPLES})")
    parser.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    parser.add_argument("--out", help="output folder (required except with --ratings STUDY)")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress messages or tables")
    parser.set_defaults(func=cmd_meta_eval)
    return parser
