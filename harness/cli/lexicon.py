"""``tsteval build-lexicon``: a style lexicon from logistic-regression weights, saved as JSON."""

from __future__ import annotations

import argparse

from tsteval.cli.common import add_corpus_arguments, seed_type, training_corpus
from tsteval.core.atomic import check_output_file

EPILOG_LEXICON = """examples:
  tsteval build-lexicon --style neg=reviews.neg.txt --style pos=reviews.pos.txt --out lexicon.json
  tsteval build-lexicon --yelp --exclude my_inputs.txt --penalty l2 --D 2.5 --reference positive-words.txt \\
      --out lexicon.json
"""

def cmd_lexicon(args: argparse.Namespace) -> int:
    """Build a style lexicon, save it as JSON and report its size (and quality against references)."""
    from tsteval.lexicons.builder import build_lexicon
    from tsteval.lexicons.evaluate import compare_to_reference, read_word_list
    from tsteval.lexicons.lexicon import is_lexicon_file

    check_output_file(args.out, "a style lexicon", is_lexicon_file, args.overwrite)
    corpus = training_corpus(args)
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


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``build-lexicon`` to the subcommands and return its parser."""
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
    lexicon.add_argument("--quiet", action="store_true", help="no progress bars")
    lexicon.set_defaults(func=cmd_lexicon)
    return lexicon
