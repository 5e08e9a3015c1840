"""``tsteval train-metric``: fine-tune a sentence encoder on the data root's human judgements into a learned metric
(:mod:`tsteval.metrics.learned`) and save it as a folder that ``--learned DIR`` scores."""

from __future__ import annotations

import argparse
import json

from tsteval.cli.common import seed_type
from tsteval.core.atomic import OVERWRITE_HELP

EPILOG = """examples:
  tsteval train-metric content --out learned/                # the bi-encoder (cosine), about 10 minutes on 2 cores
  tsteval train-metric content --shape cross --out learned-x/
  tsteval train-metric content --exclude-set content_cae --out loso-cae/   # CAE and its group left out
  tsteval score --pairs in.txt out.txt --source-style 0 --target-style 1 --content learned --learned learned/
"""


def cmd_train_metric(args: argparse.Namespace) -> int:
    """Train and save a learned metric; print where, on what, and its held-out correlation."""
    from tsteval.metrics.learned.folder import load
    from tsteval.metrics.learned.learn import train_metric
    from tsteval.metrics.learned.training import Recipe

    recipe = Recipe(shape=args.shape, epochs=args.epochs, per_set=args.per_set, seed=args.seed,
                    threads=args.threads)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()] if args.sets else None
    out = train_metric(args.aspect, args.out, recipe=recipe, encoder=args.encoder, sets=sets,
                       exclude=args.exclude_set, overwrite=args.overwrite,
                       log=(lambda _m: None) if args.quiet else print)
    folder = load(out)
    kept = folder.manifest["report"]["kept"]
    print(f"{folder.identity}: trained on {', '.join(folder.sets)} in {folder.manifest['report']['seconds']:.0f} s; "
          f"held-out Spearman {kept['mean']:.3f} (mean over sets, at epoch {kept['epoch']:.2f}); saved to {out}")
    if not args.quiet:
        print(json.dumps({k: round(v, 3) for k, v in kept["sets"].items()}))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``train-metric`` to the subcommands and return its parser."""
    from tsteval.metrics.learned.training import ASPECT_SHAPES, Recipe

    parser = sub.add_parser("train-metric", help="fine-tune a learned metric on the rated sets' human judgements",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("aspect", choices=["content"], help="what the metric scores (content: input against output)")
    parser.add_argument("--out", required=True, help="directory to save the learned metric to")
    parser.add_argument("--shape", choices=ASPECT_SHAPES["content"], default="bi",
                        help="bi: cosine of two embeddings (cost of sbert, cached); cross: input and output read "
                             "together (one forward a pair)")
    parser.add_argument("--encoder", metavar="ID_OR_DIR", help="the encoder to fine-tune (default: the packaged "
                                                              "all-MiniLM-L6-v2)")
    parser.add_argument("--sets", metavar="A,B", help="train on these rated sets only (default: every source)")
    parser.add_argument("--exclude-set", action="append", default=[], metavar="NAME",
                        help="leave out this rated set and every set that shares a text with it (repeatable)")
    parser.add_argument("--epochs", type=int, default=Recipe.epochs)
    parser.add_argument("--per-set", type=int, default=Recipe.per_set, metavar="N",
                        help="pairs drawn from a set each epoch at most (a large set does not outweigh the others)")
    parser.add_argument("--seed", type=seed_type, default=0)
    parser.add_argument("--threads", type=int, default=Recipe.threads, metavar="N",
                        help="CPU threads (part of what makes a run reproducible)")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bars or log lines")
    parser.set_defaults(func=cmd_train_metric)
    return parser
