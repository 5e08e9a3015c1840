"""The ``tsteval`` command line: train style classifiers and score system outputs.

Run ``tsteval --help`` or ``tsteval COMMAND --help``.  Every error caused by the input is reported as
one line naming the file, the line and the fix, before anything is written.  Every ``--out`` follows the
rule of :mod:`tsteval.core.atomic`: checked before the work, written to a temporary sibling, moved into place,
never into a folder tsteval did not create; ``--overwrite`` replaces an output of the same kind whole.
Exit status: 0 success, 2 a user error, 70 an internal error (a bug), 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from tsteval.core.atomic import OVERWRITE_HELP, check_output_directory, check_output_file, output_directory
from tsteval.core.errors import TstevalError, quote
from tsteval.core.records import Corpus, Transfers

EPILOG_TRAIN = """examples:
  tsteval train-classifier fasttext --style neg=reviews.neg.txt --style pos=reviews.pos.txt --out clf/
  tsteval train-classifier textcnn --table corpus.csv --text-col text --label-col style --out clf/
  tsteval train-classifier tfidf-lr --yelp --exclude my_inputs.txt --param C=2.0 --out clf/
"""

EPILOG_LEXICON = """examples:
  tsteval build-lexicon --style neg=reviews.neg.txt --style pos=reviews.pos.txt --out lexicon.json
  tsteval build-lexicon --yelp --exclude my_inputs.txt --penalty l2 --D 2.5 --reference positive-words.txt \\
      --out lexicon.json
"""

EPILOG_SCORE = """examples:
  tsteval score --classifier ft=clf/ --pairs inputs.txt outputs.txt --source-style neg --target-style pos --out run/
  tsteval score --classifier ft=clf/ --tsv system.tsv --source-style 0 --target-style 1 --system mine --out run/
  tsteval score --classifier ft=clf/ --table outputs.csv --out run/     (columns input, output, source_style, ...)
  tsteval score --classifier ft=clf/ --mir --out run/                   (Mir et al.'s 12 published settings)
  tsteval score --pairs in.txt out.txt --source-style 0 --target-style 1 --content bleu,meteor,wmd,sbert \\
      --modification none,mask --lexicon lexicon.json --out run/
"""


def _parse_value(text: str) -> object:
    """A ``--param`` value: JSON when it parses (numbers, lists, booleans), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def seed_type(text: str) -> int:
    """An ``argparse`` type for ``--seed``: an integer in [0, 2**32) (what NumPy's and torch's generators take)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quote(text)} is not an integer") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"{value} is outside [0, 2**32)")
    return value


_COLUMN_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _key_values(items: Sequence[str], flag: str, value: str = "VALUE",
                column_names: bool = False) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one, an empty name or a repeated name is an error.

    With ``column_names`` a NAME becomes part of scorecard columns and signatures (``sti@NAME``), so it is
    limited to letters, digits, ``_``, ``-`` and ``.``.
    """
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise TstevalError(f"{flag} {quote(item)} must look like NAME={value}")
        if column_names and not _COLUMN_NAME.fullmatch(key):
            raise TstevalError(f"{flag} name {quote(key)} may hold only letters, digits, '_', '-' and '.' "
                               "(it names scorecard columns such as sti@NAME)")
        if key in pairs:
            raise TstevalError(f"{flag} names {quote(key)} twice ({quote(pairs[key])} and {quote(text)}); "
                               f"give each {flag} a different NAME (for --style, join the files first)")
        pairs[key] = text
    return pairs


def _training_corpus(args: argparse.Namespace) -> Corpus:
    from tsteval.readers import loaders, published

    if args.style:
        corpus = loaders.load_style_files(_key_values(args.style, "--style", "FILE"))
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
    from tsteval.classifiers.training import train_classifier

    check_output_directory(args.out, "style-classifier", args.overwrite)
    corpus = _training_corpus(args)
    params = {k: _parse_value(v) for k, v in _key_values(args.param, "--param").items()}
    if args.backend in {"textcnn", "transformer"}:
        params.setdefault("verbose", not args.quiet)
        if args.device:
            params["device"] = args.device
    trained = train_classifier(args.backend, corpus, params, seed=args.seed, heldout=args.heldout)
    out = Path(args.out)
    report = trained.report
    with output_directory(out, "style-classifier", args.overwrite) as tmp:
        trained.model.save(tmp)
        (tmp / "report.json").write_text(json.dumps(report, indent=2, default=str))
    heldout = ("no held-out split (--heldout 0)" if report["accuracy"] is None else
               f"held-out accuracy {report['accuracy']:.3f}, macro-F1 {report['macro_f1']:.3f} "
               f"(n={report['n_heldout']})")
    print(f"{args.backend}: {len(corpus)} texts, {len(corpus.styles)} styles; {heldout}; saved to {out}")
    return 0


def cmd_lexicon(args: argparse.Namespace) -> int:
    """Build a style lexicon, save it as JSON and report its size (and quality against references)."""
    from tsteval.lexicons.builder import build_lexicon
    from tsteval.lexicons.evaluate import compare_to_reference, read_word_list
    from tsteval.lexicons.lexicon import is_lexicon_file

    check_output_file(args.out, "a style lexicon", is_lexicon_file, args.overwrite)
    corpus = _training_corpus(args)
    references = {path: read_word_list(path) for path in args.reference}
    lexicon = build_lexicon(corpus, penalty=None if args.penalty == "none" else args.penalty, C=args.C, D=args.D,
                            seed=args.seed)
    out = lexicon.save(args.out, overwrite=args.overwrite)
    sizes = ", ".join(f"{style}: {len(lexicon.for_style(style))}" for style in lexicon.styles)
    print(f"{len(lexicon.words)} style words ({sizes}) from {len(corpus)} texts; saved to {out}")
    for path, words in references.items():
        quality = compare_to_reference(lexicon, words)
        print(f"against {path}: precision {quality['precision']:.3f}, recall {quality['recall']:.3f} "
              f"({quality['overlap']} shared words)")
    return 0


def _transfers(args: argparse.Namespace) -> Transfers:
    from tsteval.readers import loaders, published

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


def _content_plan(args: argparse.Namespace) -> tuple[list[str], list[str], object, object] | None:
    """Validated content metrics, modifications, lexicon and word vectors, or None without ``--content``."""
    from tsteval.metrics.content.scorer import CONTENT_METRICS, MODIFICATION_MODES

    metrics = [m.strip() for m in args.content.split(",") if m.strip()]
    if not metrics:
        return None
    unknown = [m for m in metrics if m not in CONTENT_METRICS]
    if unknown:
        raise TstevalError(f"unknown content metrics {unknown}; choose from {sorted(CONTENT_METRICS)}")
    modes = [m.strip() for m in args.modification.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODIFICATION_MODES]
    if bad:
        raise TstevalError(f"unknown modifications {bad}; choose from {sorted(MODIFICATION_MODES)}")
    lexicon = None
    if any(m != "none" for m in modes):
        if not args.lexicon:
            raise TstevalError("--modification remove/mask needs --lexicon FILE (build one with build-lexicon)")
        from tsteval.lexicons.lexicon import Lexicon

        lexicon = Lexicon.load(args.lexicon)
    vectors = None
    if any(CONTENT_METRICS[m].needs == "word_vectors" for m in metrics):
        from tsteval.metrics.content.word_vectors import WordVectors, load_glove

        vectors = load_glove() if args.vectors == "glove" else WordVectors.load(Path(args.vectors))
    return metrics, modes, lexicon, vectors


def _manifest_hash(directory: str, manifest: str) -> str:
    """A short hash of a saved model's manifest file, naming the model in signatures."""
    from tsteval.core.signature import content_hash

    return content_hash((Path(directory) / manifest).read_text(), length=8)


def cmd_score(args: argparse.Namespace) -> int:
    """Score transfers with every ``--classifier`` and write the scorecard and its summary."""
    from tsteval.classifiers.base import load_classifier
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.style.scorer import score_style
    from tsteval.scorecard import Scorecard

    check_output_directory(args.out, "scorecard", args.overwrite)
    transfers = _transfers(args)
    from tsteval.experiment.runner import report_empty_ratings

    report_empty_ratings(transfers.frame)
    classifiers = _key_values(args.classifier, "--classifier", "DIR", column_names=True)
    pair_classifiers = _key_values(args.hh, "--hh", "DIR", column_names=True)
    content = _content_plan(args)
    if not (classifiers or content or args.naturalness or pair_classifiers):
        raise TstevalError("give at least one --classifier NAME=DIR (train one with tsteval train-classifier), "
                           "--content METRICS, --naturalness NAMES or --hh NAME=DIR")
    names = [n.strip() for n in args.naturalness.split(",") if n.strip()]
    unknown = [n for n in names if n not in NATURALNESS_METRICS]
    if unknown:
        raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}")
    # Every model and file is read (and verified) before the first score is computed.
    models = {name: load_classifier(directory, expected_classes=None) for name, directory in classifiers.items()}
    if pair_classifiers:
        from tsteval.classifiers.pairs import load_pair_classifier

        pair_models = {name: load_pair_classifier(directory) for name, directory in pair_classifiers.items()}
    human = None
    if names and args.human:
        from tsteval.readers import loaders

        human = loaders.read_lines(args.human)
    card = Scorecard.from_transfers(transfers)
    for name, model in models.items():
        if hasattr(model, "verbose"):
            model.verbose = not args.quiet
        model_id = _manifest_hash(classifiers[name], "tsteval-classifier.json")
        score_style(card, model, name, model_id=model_id, ground=args.ground)
    counts = {}
    if content is not None:
        from tsteval.metrics.content.scorer import score_content

        metrics, modes, lexicon, vectors = content
        for mode in modes:
            counts |= score_content(card, metrics, modification=mode, lexicon=lexicon,
                                    placeholder=args.placeholder, word_vectors=vectors)
    for name in names:
        NATURALNESS_METRICS[name](card, human, args.seed, args.folds)
    if pair_classifiers:
        from tsteval.core.signature import Signature
        from tsteval.metrics.compatibility.compliancy import match_probability

        pairs = list(zip(card.frame["input"], card.frame["output"], strict=True))
        for name, model in pair_models.items():
            model_id = _manifest_hash(pair_classifiers[name], "tsteval-pair-classifier.json")
            card.add(f"hh@{name}", match_probability(model, pairs),
                     str(Signature("hh", {"clf": f"{name}-{model_id}"}, libraries=("numpy", "scikit-learn", "torch"))))
    summary = card.summary(seed=args.seed)
    with output_directory(args.out, "scorecard", args.overwrite) as tmp:
        card.write(tmp, summary)
    flagged = {column: c for column, c in counts.items() if any(c.values())}
    for column, c in flagged.items():
        print(f"{column}: " + ", ".join(f"{k}={v}" for k, v in c.items() if v) + " (scored by the empty/OOV policy)")
    if not args.quiet:
        print((Path(args.out) / "summary.md").read_text())
    print(f"scorecard: {len(card.frame)} rows x {len(card.metrics)} metrics written to {args.out}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Run an experiment manifest: the scorecard, aggregates, agreement, tradeoff plots and the report."""
    from tsteval.experiment.manifest import load_manifest
    from tsteval.experiment.runner import run_experiment

    manifest = load_manifest(args.manifest)
    out = Path(args.out) if args.out else manifest.output
    card = run_experiment(manifest, out=out, quiet=args.quiet, overwrite=args.overwrite)
    print(f"{manifest.name}: {len(card.frame)} rows x {len(card.metrics)} metrics; report: {out / 'report.md'}, "
          f"{out / 'report.html'}")
    return 0


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for all subcommands."""
    parser = argparse.ArgumentParser(
        prog="tsteval", description="Evaluate text style transfer: train style and pair classifiers and build "
        "style lexicons, then score system outputs for style transfer intensity, content preservation, "
        "naturalness and compatibility into a per-sentence scorecard, or run a whole experiment manifest.")
    from tsteval import __version__

    parser.add_argument("--version", action="version", version=f"tsteval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train-classifier", help="train a style classifier on a labelled corpus",
                           epilog=EPILOG_TRAIN, formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("backend", choices=["tfidf-lr", "fasttext", "textcnn", "transformer"])
    add_corpus_arguments(train)
    train.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="backend parameter, e.g. epochs=3 or model_name_or_path=/path/to/model")
    train.add_argument("--seed", type=seed_type, default=0)
    train.add_argument("--heldout", type=float, default=0.1, help="held-out share for accuracy/macro-F1")
    train.add_argument("--device", help="cpu or cuda (neural backends; default: cuda when present)")
    train.add_argument("--out", required=True, help="directory to save the trained model to")
    train.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=cmd_train)

    lexicon = sub.add_parser("build-lexicon", help="build a style lexicon from logistic-regression weights",
                             epilog=EPILOG_LEXICON, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_corpus_arguments(lexicon)
    lexicon.add_argument("--penalty", default="l1", choices=["l1", "l2", "none"],
                         help="logistic-regression penalty (Mir et al.: l1)")
    lexicon.add_argument("--C", type=float, default=3.0, help="inverse regularisation strength (Mir et al.: 3)")
    lexicon.add_argument("--D", type=float, default=2.0,
                         help="keep words whose weight is at least D standard deviations from the mean")
    lexicon.add_argument("--reference", action="append", default=[], metavar="FILE",
                         help="a word list to report precision/recall against (repeatable)")
    lexicon.add_argument("--seed", type=seed_type, default=0)
    lexicon.add_argument("--out", required=True, help="JSON file {style: [[word, weight], ...]}")
    lexicon.add_argument("--overwrite", action="store_true",
                         help="replace an existing lexicon file at --out (any other file is never replaced)")
    lexicon.set_defaults(func=cmd_lexicon)

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
    content = score.add_argument_group("content preservation")
    content.add_argument("--content", default="", metavar="METRICS",
                         help="comma-separated: bleu, bleu_mir, chrf, meteor, rougeL, embed_avg, greedy, extrema, "
                              "wmd, sbert")
    content.add_argument("--modification", default="none", metavar="MODES",
                         help="comma-separated text modifications before content metrics: none, remove, mask")
    content.add_argument("--lexicon", help="style lexicon JSON for remove/mask (see build-lexicon)")
    content.add_argument("--placeholder", default="<masked>", help="token that replaces masked style words")
    content.add_argument("--vectors", default="glove",
                         help="word vectors for embed_avg/greedy/extrema/wmd: 'glove' (GloVe 6B 50d) or a saved "
                              "tsteval word-vector directory")
    natural = score.add_argument_group("naturalness and content compatibility")
    natural.add_argument("--naturalness", default="", metavar="NAMES",
                         help="comma-separated: unigram, textcnn (cross-fitted adversarial classifiers), kn3 "
                              "(Kneser-Ney trigram perplexity), smollm2 (SmolLM2-135M perplexity)")
    natural.add_argument("--human", metavar="FILE",
                         help="human-written sentences of the target domain, one per line (default: the inputs)")
    natural.add_argument("--folds", type=int, default=5, help="cross-fitting folds for the adversarial classifiers")
    natural.add_argument("--hh", action="append", default=[], metavar="NAME=DIR",
                         help="a pair classifier (tsteval train-pairs): adds hh@NAME = P(output matches input)")
    score.add_argument("--source-style", help="style of the inputs (for --pairs/--tsv)")
    score.add_argument("--target-style", help="style the system was asked for (for --pairs/--tsv)")
    score.add_argument("--system", default="system", help="system name for --pairs/--tsv")
    score.add_argument("--setting", default="default", help="hyperparameter setting label for --pairs/--tsv")
    score.add_argument("--ground", default="nominal", choices=["nominal", "ordinal"],
                       help="EMD ground distance between styles (ordinal for ordered styles)")
    score.add_argument("--seed", type=seed_type, default=0, help="bootstrap seed")
    score.add_argument("--out", required=True, help="directory for scorecard.{csv,parquet}, summary.{csv,md}")
    score.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    score.add_argument("--quiet", action="store_true", help="no progress bars or summary printout")
    score.set_defaults(func=cmd_score)

    run = sub.add_parser("run", help="run an experiment manifest (YAML) end to end and write its report",
                         epilog="examples:\n  tsteval run manifests/mir.yaml --out runs/mir\n"
                                "  tsteval run tests/data/tiny_manifest.yaml --out /tmp/tiny --quiet",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("manifest", help="the experiment manifest (see harness/experiment/manifest.py for the schema)")
    run.add_argument("--out", help="run folder (default: the manifest's output)")
    run.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    run.add_argument("--quiet", action="store_true", help="no progress messages or bars")
    run.set_defaults(func=cmd_run)

    from tsteval.cli.compliancy import add_compliancy_parser, add_train_pairs_parser

    add_train_pairs_parser(sub)
    add_compliancy_parser(sub)
    return parser


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that ``finally`` blocks (temporary output) run before exiting."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _debug() -> bool:
    return os.environ.get("TSTEVAL_DEBUG", "") not in {"", "0"}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tsteval``; user errors exit with status 2 and a one-line message.

    Ctrl-C exits 130 and SIGTERM 143, after removing temporary output; any other exception is a bug: one line,
    exit 70 (``TSTEVAL_DEBUG=1`` re-raises it for the traceback).
    """
    args = build_parser().parse_args(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        if getattr(args, "quiet", False):
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        return args.func(args)
    except TstevalError as error:
        print(f"tsteval: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tsteval: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("tsteval: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader of our output went away (``tsteval ... | head``): not an error of ours, and nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        if _debug():
            raise
        message = (str(error).splitlines() or [""])[0]
        print(f"tsteval: internal error: {type(error).__name__}: {message} (a bug; rerun with TSTEVAL_DEBUG=1 "
              "for the traceback)", file=sys.stderr)
        return 70
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


if __name__ == "__main__":
    sys.exit(main())
