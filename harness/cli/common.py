"""Helpers shared by the ``tsteval`` subcommands: argument types, the training-corpus options and the printed
summary (Markdown, JSON or one signature line per metric)."""

from __future__ import annotations

import argparse
import json
import math

import pandas as pd

from tsteval.core.errors import TstevalError, quote
from tsteval.core.options import key_value_pairs
from tsteval.core.records import Corpus
from tsteval.core.styles import ARROW, direction_labels

# The flags of the command line that set the reader keywords, for the fixes in error messages.
CORPUS_HINTS = {"text_col": "--text-col", "label_col": "--label-col", "split": "--split",
                "table_format": "--table-format"}
FORMATS = ("markdown", "json", "signature")
STDIN_HELP = "; - reads standard input"


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
    from tsteval.readers import cds, huggingface, lines, tables, yelp

    if args.style:
        files: dict[str, list[str]] = {}
        for style, path in key_value_pairs(args.style, "--style", "FILE"):
            files.setdefault(style, []).append(path)
        corpus = lines.load_style_files(files)
        for style, paths in files.items():
            if len(paths) > 1:
                counts = [len(lines.read_lines(path)) for path in paths]
                print(f"--style {style}: {len(paths)} files joined, {sum(counts):,} texts "
                      f"({' + '.join(f'{n:,}' for n in counts)})")
    elif args.table:
        corpus = tables.load_table_corpus(args.table, text_col=args.text_col, label_col=args.label_col,
                                           table_format=args.table_format, hints=CORPUS_HINTS)
    elif args.hf:
        corpus = huggingface.load_hf_corpus(args.hf, text_col=args.text_col, label_col=args.label_col, split=args.split,
                                        hints=CORPUS_HINTS)
    elif args.yelp:
        corpus = yelp.load_yelp_corpus()
    elif args.cds:
        corpus = cds.load_cds()
    else:
        raise TstevalError("give the training data: --style NAME=FILE (repeat), --table, --hf, --yelp or --cds")
    for path in args.exclude:
        corpus = _without(corpus, path, lines.read_lines(path))
    return corpus


def _without(corpus: Corpus, path: str, lines: list[str]) -> Corpus:
    """``corpus`` minus the ``--exclude`` file's lines, printing how many training texts that removed; a warning
    when some of its lines match a training text only with case and whitespace ignored (the two files split words
    differently, and those texts stay in training), naming one."""
    from tsteval.classifiers.corpus_checks import near_matches, warn

    drop = set(lines)
    removed = [text for text in corpus.texts if text in drop]
    if len(removed) == len(corpus):
        raise TstevalError(f"--exclude {path} removes all {len(corpus):,} training texts; train on other texts "
                           "than the ones you evaluate")
    print(f"--exclude {path}: removed {len(removed):,} of {len(corpus):,} training texts "
          f"({len(set(removed)):,} distinct)")
    near = near_matches(lines, corpus.texts)
    if near:
        line, text = near[0]
        warn(f"--exclude {path}: {len(near):,} of its {len(drop):,} distinct lines match a training text only with "
             f"case and spaces ignored, e.g. {quote(line, 60)} ~ {quote(text, 60)}, and are not removed (a "
             "tokenisation mismatch: tokenise and case both files alike)")
    return corpus.without(drop) if removed else corpus


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that name a labelled training corpus (shared by train-classifier and build-lexicon)."""
    data = parser.add_argument_group("training data (choose one)")
    data.add_argument("--style", action="append", default=[], metavar="NAME=FILE",
                      help="one sentence per line, all of style NAME (repeat per style)")
    data.add_argument("--table", help="CSV, JSONL or Parquet with a text and a label column" + STDIN_HELP)
    data.add_argument("--table-format", choices=["csv", "jsonl", "parquet"],
                      help="format of --table (default: from its suffix; needed for -)")
    data.add_argument("--hf", help="a Hugging Face dataset: hub id, saved directory or data file")
    data.add_argument("--yelp", action="store_true", help="Yelp dev+test from the data root")
    data.add_argument("--cds", action="store_true", help="the 11-style Corpus of Diverse Styles sample")
    data.add_argument("--text-col", default="text")
    data.add_argument("--label-col", default="label")
    data.add_argument("--split", help="split of a Hugging Face dataset")
    parser.add_argument("--exclude", action="append", default=[], metavar="FILE",
                        help="drop these sentences (e.g. your evaluation inputs) from the training data")


def add_format_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format`` and ``--signature``: how the summary is printed on standard output."""
    parser.add_argument("--format", choices=FORMATS, default="markdown",
                        help="print the summary as a Markdown table, one JSON document (summary and signatures; "
                             "nothing else on standard output) or one signature line per metric")
    parser.add_argument("--signature", dest="format", action="store_const", const="signature",
                        help="same as --format signature: COLUMN = MEAN [LOW, HIGH] n=N SIGNATURE, one line each")


def _number(value: object) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def summary_json(summary: pd.DataFrame, signatures: dict[str, str], **extra: object) -> str:
    """The summary (per system, setting, direction and metric: mean, low, high, n, n_empty: the empty outputs) and
    the signatures as one JSON document."""
    rows = [{"system": str(r.system), "setting": str(r.setting), "source_style": str(r.source_style),
             "target_style": str(r.target_style), "direction": d, "metric": r.metric, "mean": _number(r.mean),
             "low": _number(r.ci_low), "high": _number(r.ci_high), "n": int(r.n),
             "n_empty": int(getattr(r, "n_empty", 0))}
            for r, d in zip(summary.itertuples(), direction_labels(summary), strict=True)]
    return json.dumps({**extra, "summary": rows, "signatures": signatures}, indent=2)


def signature_lines(summary: pd.DataFrame) -> list[str]:
    """One sacreBLEU-style line per metric column (prefixed by ``SYSTEM/SETTING SOURCE→TARGET:`` when there are
    several groups)."""
    several = summary[["system", "setting", "source_style", "target_style"]].drop_duplicates().shape[0] > 1
    return [(f"{r.system}/{r.setting} {d.replace(ARROW, '→')}: " if several else "")
            + f"{r.metric} = {r.mean:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] n={r.n} {r.signature}"
            for r, d in zip(summary.itertuples(), direction_labels(summary), strict=True)]
