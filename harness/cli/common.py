"""Helpers shared by the ``tsteval`` subcommands: argument types and the training-corpus options."""

from __future__ import annotations

import argparse

from tsteval.core.errors import TstevalError, quote
from tsteval.core.options import key_values
from tsteval.core.records import Corpus


def seed_type(text: str) -> int:
    """An ``argparse`` type for ``--seed``: an integer in [0, 2**32) (what NumPy's and torch's generators take)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quote(text)} is not an integer") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is outside [0, 2**32)")
    return value


def training_corpus(args: argparse.Namespace) -> Corpus:
    """The labelled corpus the training-data options name, minus every ``--exclude`` file's sentences."""
    from tsteval.readers import loaders, published

    if args.style:
        corpus = loaders.load_style_files(key_values(args.style, "--style", "FILE"))
    elif args.table:
        corpus = loaders.load_table_corpus(args.table, text_col=args.text_col, label_col=args.label_col)
    elif args.hf:
        corpus = loaders.load_hf_corpus(args.hf, text_col=args.text_col, label_col=args.label_col, split=args.split)
    elif args.yelp:
        corpus = published.load_yelp_corpus()
    elif args.cds:
        corpus = published.load_cds()
    else:
        raise TstevalError("give the training data: --style NAME=FILE (repeat), --table, --hf, --yelp or --cds")
    for path in args.exclude:
        corpus = corpus.without(loaders.read_lines(path))
    return corpus


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that name a labelled training corpus (shared by train-classifier and build-lexicon)."""
    data = parser.add_argument_group("training data (choose one)")
    data.add_argument("--style", action="append", default=[], metavar="NAME=FILE",
                      help="one sentence per line, all of style NAME (repeat per style)")
    data.add_argument("--table", help="CSV, JSONL or Parquet with a text and a label column")
    data.add_argument("--hf", help="a Hugging Face dataset: hub id, saved directory or data file")
    data.add_argument("--yelp", action="store_true", help="Yelp dev+test from the data root")
    data.add_argument("--cds", action="store_true", help="the 11-style Corpus of Diverse Styles sample")
    data.add_argument("--text-col", default="text")
    data.add_argument("--label-col", default="label")
    data.add_argument("--split", help="split of a Hugging Face dataset")
    parser.add_argument("--exclude", action="append", default=[], metavar="FILE",
                        help="drop these sentences (e.g. your evaluation inputs) from the training data")
