"""The ``tsteval`` command line: train style classifiers and score system outputs.

Run ``tsteval --help`` or ``tsteval COMMAND --help``.  Every error caused by the input is reported as
one line naming the file, the line and the fix, before anything is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from harness.data import Corpus, Transfers
from harness.errors import TstevalError

EPILOG_TRAIN = """examples:
  tsteval train-classifier fasttext --style neg=reviews.neg.txt --style pos=reviews.pos.txt --out clf/
  tsteval train-classifier textcnn --table corpus.csv --text-col text --label-col style --out clf/
  tsteval train-classifier tfidf-lr --yelp --exclude my_inputs.txt --param C=2.0 --out clf/
"""

EPILOG_SCORE = """examples:
  tsteval score --classifier ft=clf/ --pairs inputs.txt outputs.txt --source-style neg --target-style pos --out run/
  tsteval score --classifier ft=clf/ --tsv system.tsv --source-style 0 --target-style 1 --system mine --out run/
  tsteval score --classifier ft=clf/ --table outputs.csv --out run/     (columns input, output, source_style, ...)
  tsteval score --classifier ft=clf/ --mir --out run/                   (Mir et al.'s 12 published settings)
"""


def _parse_value(text: str) -> object:
    """A ``--param`` value: JSON when it parses (numbers, lists, booleans), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _key_values(items: Sequence[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        if "=" not in item:
            raise TstevalError(f"{flag} {item!r} must look like NAME=VALUE")
        key, value = item.split("=", 1)
        pairs[key] = value
    return pairs


def _training_corpus(args: argparse.Namespace) -> Corpus:
    from harness import loaders, published

    if args.style:
        corpus = loaders.load_style_files(_key_values(args.style, "--style"))
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


def cmd_train(args: argparse.Namespace) -> int:
    """Train (or reuse from the cache) a style classifier and copy it to ``--out``."""
    from classifiers.training import train_classifier

    corpus = _training_corpus(args)
    params = {k: _parse_value(v) for k, v in _key_values(args.param, "--param").items()}
    if args.backend in {"textcnn", "transformer"}:
        params.setdefault("verbose", not args.quiet)
        if args.device:
            params["device"] = args.device
    trained = train_classifier(args.backend, corpus, params, seed=args.seed, heldout=args.heldout)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        trained.model.save(tmp)
        report = trained.report
        (tmp / "report.json").write_text(json.dumps(report, indent=2, default=str))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.backend}: {len(corpus)} texts, {len(corpus.styles)} styles; held-out accuracy "
          f"{report['accuracy']:.3f}, macro-F1 {report['macro_f1']:.3f} (n={report['n_heldout']}); saved to {out}")
    return 0


def _transfers(args: argparse.Namespace) -> Transfers:
    from harness import loaders, published

    meta = {"system": args.system, "setting": args.setting}
    if args.pairs or args.tsv:
        if args.source_style is None or args.target_style is None:
            raise TstevalError("--pairs and --tsv need --source-style and --target-style")
        meta.update(source_style=args.source_style, target_style=args.target_style)
    if args.pairs:
        return loaders.load_parallel_files(args.pairs[0], args.pairs[1], **meta)
    if args.tsv:
        return loaders.load_tsv_transfers(args.tsv, **meta)
    if args.table:
        return loaders.load_table_transfers(args.table)
    if args.mir:
        return published.load_mir()
    if args.dualrl:
        return published.load_dualrl(args.dualrl)
    raise TstevalError("give the transfers: --pairs INPUTS OUTPUTS, --tsv FILE, --table FILE, --mir or --dualrl")


def cmd_score(args: argparse.Namespace) -> int:
    """Score transfers with every ``--classifier`` and write the scorecard and its summary."""
    from classifiers.base import load_classifier
    from harness.scorecard import Scorecard
    from harness.signature import content_hash
    from harness.style_scorer import score_style

    transfers = _transfers(args)
    classifiers = _key_values(args.classifier, "--classifier")
    if not classifiers:
        raise TstevalError("give at least one --classifier NAME=DIR (train one with tsteval train-classifier)")
    card = Scorecard.from_transfers(transfers)
    for name, directory in classifiers.items():
        model = load_classifier(directory, expected_classes=None)
        if hasattr(model, "verbose"):
            model.verbose = not args.quiet
        model_id = content_hash((Path(directory) / "tsteval-classifier.json").read_text(), length=8)
        score_style(card, model, name, model_id=model_id, ground=args.ground)
    summary = card.summary(seed=args.seed)
    card.save(args.out, summary)
    if not args.quiet:
        print((Path(args.out) / "summary.md").read_text())
    print(f"scorecard: {len(card.frame)} rows x {len(card.metrics)} metrics written to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for all subcommands."""
    parser = argparse.ArgumentParser(
        prog="tsteval", description="Evaluate text style transfer: train style classifiers, then score "
        "system outputs for style transfer intensity into a per-sentence scorecard.")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train-classifier", help="train a style classifier on a labelled corpus",
                           epilog=EPILOG_TRAIN, formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("backend", choices=["tfidf-lr", "fasttext", "textcnn", "transformer"])
    data = train.add_argument_group("training data (choose one)")
    data.add_argument("--style", action="append", default=[], metavar="NAME=FILE",
                      help="one sentence per line, all of style NAME (repeat per style)")
    data.add_argument("--table", help="CSV, JSONL or Parquet with a text and a label column")
    data.add_argument("--hf", help="a Hugging Face dataset: hub id, saved directory or data file")
    data.add_argument("--yelp", action="store_true", help="Yelp dev+test from the data root")
    data.add_argument("--cds", action="store_true", help="the 11-style Corpus of Diverse Styles sample")
    data.add_argument("--text-col", default="text")
    data.add_argument("--label-col", default="label")
    data.add_argument("--split", help="split of a Hugging Face dataset")
    train.add_argument("--exclude", action="append", default=[], metavar="FILE",
                       help="drop these sentences (e.g. your evaluation inputs) from the training data")
    train.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="backend parameter, e.g. epochs=3 or model_name_or_path=/path/to/model")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--heldout", type=float, default=0.1, help="held-out share for accuracy/macro-F1")
    train.add_argument("--device", help="cpu or cuda (neural backends; default: cuda when present)")
    train.add_argument("--out", required=True, help="directory to save the trained model to")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=cmd_train)

    score = sub.add_parser("score", help="score system outputs into a per-sentence scorecard",
                           epilog=EPILOG_SCORE, formatter_class=argparse.RawDescriptionHelpFormatter)
    score.add_argument("--classifier", action="append", default=[], metavar="NAME=DIR",
                       help="a saved style classifier; NAME prefixes its columns (repeatable)")
    src = score.add_argument_group("transfers (choose one)")
    src.add_argument("--pairs", nargs=2, metavar=("INPUTS", "OUTPUTS"), help="aligned line files")
    src.add_argument("--tsv", help="input<TAB>output per line")
    src.add_argument("--table", help="CSV/JSONL/Parquet with input, output, source_style, target_style columns")
    src.add_argument("--mir", action="store_true", help="Mir et al.'s CAAE/ARAE/DAR outputs from the data root")
    src.add_argument("--dualrl", metavar="DATASET", help="DualRL system outputs (yelp or GYAFC)")
    score.add_argument("--source-style", help="style of the inputs (for --pairs/--tsv)")
    score.add_argument("--target-style", help="style the system was asked for (for --pairs/--tsv)")
    score.add_argument("--system", default="system", help="system name for --pairs/--tsv")
    score.add_argument("--setting", default="default", help="hyperparameter setting label for --pairs/--tsv")
    score.add_argument("--ground", default="nominal", choices=["nominal", "ordinal"],
                       help="EMD ground distance between styles (ordinal for ordered styles)")
    score.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    score.add_argument("--out", required=True, help="directory for scorecard.{csv,parquet}, summary.{csv,md}")
    score.add_argument("--quiet", action="store_true", help="no progress bars or summary printout")
    score.set_defaults(func=cmd_score)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tsteval``; user errors exit with status 2 and a one-line message."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except TstevalError as error:
        print(f"tsteval: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
