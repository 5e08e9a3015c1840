"""``tsteval train-pairs`` (an HH/AH pair classifier) and ``tsteval compliancy`` (De Mattei et al.'s HH / AH /
Main checks on a transfers table)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tsteval.cli.common import seed_type
from tsteval.core.atomic import OVERWRITE_HELP, check_output_directory, output_directory

EPILOG = """examples:
  tsteval compliancy --transfers outputs.csv --style-classifier clf/ --hh hh/ --out run/
  tsteval compliancy --transfers outputs.csv --style-classifier clf/ --hh hh/ --ah ah/ \\
      --documents documents.jsonl --out run/
The transfers table has input, output, source_style, target_style (and system, setting, item) columns; the
documents table has the columns item and document (the source document of each item's input).
"""


def cmd_compliancy(args: argparse.Namespace) -> int:
    """Score the transfers and write ``compliancy.csv`` (per sentence) and ``summary.{csv,md}`` (Table 2)."""
    from tsteval.classifiers.base import load_classifier
    from tsteval.classifiers.pairs import load_pair_classifier
    from tsteval.core.errors import TstevalError
    from tsteval.experiment.plan.plan_of_manifest import attach_documents
    from tsteval.metrics.compatibility.compliancy import compliancy_table, score_compliancy, table_markdown
    from tsteval.readers.tables import load_table_transfers

    check_output_directory(args.out, "compliancy", args.overwrite)
    if (args.ah is None) != (args.documents is None):
        raise TstevalError("--ah and --documents go together: the AH check compares each output with its source "
                           "document")
    transfers = load_table_transfers(args.transfers)
    style = load_classifier(args.style_classifier)
    hh = load_pair_classifier(args.hh)
    ah = None
    if args.ah is not None:
        ah = load_pair_classifier(args.ah)
        transfers = attach_documents(transfers, args.documents)
    scored = score_compliancy(transfers, style, hh, ah)
    table = compliancy_table(scored)
    out = Path(args.out)
    with output_directory(out, "compliancy", args.overwrite) as tmp:
        scored.drop(columns=["document"], errors="ignore").to_csv(tmp / "compliancy.csv", index=False)
        table.to_csv(tmp / "summary.csv", index=False)
        (tmp / "summary.md").write_text(table_markdown(table))
    print(table_markdown(table))
    print(f"compliancy: {len(scored)} transfers scored; written to {out}")
    return 0


def add_compliancy_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``compliancy`` to the ``tsteval`` subcommands and return its parser."""
    parser = sub.add_parser("compliancy", help="De Mattei et al.'s HH/AH/Main classifier checks and compliancy",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transfers", required=True, help="CSV/JSONL/Parquet table of transfers")
    parser.add_argument("--style-classifier", required=True, metavar="DIR", help="a saved tsteval style classifier")
    parser.add_argument("--hh", required=True, metavar="DIR", help="a saved pair classifier (input, output)")
    parser.add_argument("--ah", metavar="DIR", help="a saved pair classifier (output, source document)")
    parser.add_argument("--documents", metavar="FILE", help="table with columns item, document (needed with --ah)")
    parser.add_argument("--out", required=True, help="directory for compliancy.csv and summary.{csv,md}")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=cmd_compliancy)
    return parser


def cmd_train_pairs(args: argparse.Namespace) -> int:
    """Train an HH/AH pair classifier on De Mattei-style TF-IDF pairs of two text files, and save it."""
    from tsteval.classifiers.pairs import MATCH, NO_MATCH, make_pair_classifier
    from tsteval.metrics.compatibility.alignment import build_pairs
    from tsteval.readers.lines import read_lines

    check_output_directory(args.out, "pair-classifier", args.overwrite)
    left, right = read_lines(args.left), read_lines(args.right)
    pairs = build_pairs(left, right, strict=args.strict, loose=args.loose, seed=args.seed)
    labelled = pairs[pairs["group"] != "loose"]
    texts = [(left[i], right[j]) for i, j in zip(labelled["left"], labelled["right"], strict=True)]
    labels = [MATCH if g == "positive" else NO_MATCH for g in labelled["group"]]
    model = make_pair_classifier(args.backend, seed=args.seed).fit(texts, labels)
    with output_directory(args.out, "pair-classifier", args.overwrite) as tmp:
        model.save(tmp)
    counts = pairs["group"].value_counts().to_dict()
    print(f"{args.backend} pair classifier trained on {counts.get('positive', 0)} positive and "
          f"{counts.get('negative', 0)} negative pairs (cosine > {args.strict}; {counts.get('loose', 0)} pairs "
          f"in the loose band left out); saved to {args.out}")
    return 0


def add_train_pairs_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``train-pairs`` subcommand: TF-IDF alignment pairs of two files -> a saved pair classifier."""
    parser = sub.add_parser(
        "train-pairs", help="train an HH/AH pair classifier from two aligned-by-content text files",
        description="Builds training pairs as De Mattei et al. did: TF-IDF cosine above --strict is a match, "
        "the band between --loose and --strict is left out, and as many random pairs below --loose are "
        "non-matches. Line i of --left is paired with its most similar line of --right.",
        epilog="example:\n  tsteval train-pairs features --left kjv.txt --right bbe.txt --out hh/",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("backend", choices=["features", "cross-encoder"])
    parser.add_argument("--left", required=True, help="one text per line (e.g. inputs or verses)")
    parser.add_argument("--right", required=True, help="one text per line (e.g. outputs, or source documents)")
    parser.add_argument("--strict", type=float, default=0.5, help="cosine above which a pair is a match")
    parser.add_argument("--loose", type=float, default=0.185, help="cosine below which a pair may be a negative")
    parser.add_argument("--seed", type=seed_type, default=0)
    parser.add_argument("--out", required=True, help="directory to save the pair classifier to")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(func=cmd_train_pairs)
    return parser
