"""``tsteval train-classifier``: train (or reuse from the cache) a style classifier and save it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tsteval.cli.common import add_corpus_arguments, seed_type, training_corpus
from tsteval.core.atomic import OVERWRITE_HELP, check_output_directory, output_directory
from tsteval.core.options import key_values, parse_value

EPILOG_TRAIN = """examples:
  tsteval train-classifier fasttext --style neg=reviews.neg.txt --style pos=reviews.pos.txt --out clf/
  tsteval train-classifier textcnn --table corpus.csv --text-col text --label-col style --out clf/
  tsteval train-classifier tfidf-lr --yelp --exclude my_inputs.txt --param C=2.0 --out clf/
  tsteval train-classifier ensemble --param members=fasttext,tfidf-lr --style neg=a.txt --style pos=b.txt --out clf/
"""

def cmd_train(args: argparse.Namespace) -> int:
    """Train (or reuse from the cache) a style classifier and copy it to ``--out``."""
    from tsteval.classifiers.base import backend_class
    from tsteval.classifiers.corpus_checks import warn
    from tsteval.classifiers.training import train_classifier

    check_output_directory(args.out, "style-classifier", args.overwrite)
    corpus = training_corpus(args)
    params = {k: parse_value(v) for k, v in key_values(args.param, "--param").items()}
    accepted = backend_class(args.backend)._get_param_names()
    if "verbose" in accepted:  # the neural backends and the ensemble (which hands it to its neural members)
        params.setdefault("verbose", not args.quiet)
    given = {"device": args.device or None, "threads": args.threads}
    params.update({name: value for name, value in given.items() if value is not None and name in accepted})
    ignored = [f"--{name} {value}" for name, value in given.items() if value is not None and name not in accepted]
    if ignored:
        warn(f"{', '.join(ignored)}: backend {args.backend!r} has no such setting and ignores it (fastText and the "
             "ensemble's fastText member take --threads; the neural backends --device)")
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


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``train-classifier`` to the subcommands and return its parser."""
    from tsteval.classifiers.base import BACKENDS

    train = sub.add_parser("train-classifier", help="train a style classifier on a labelled corpus",
                           epilog=EPILOG_TRAIN, formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("backend", choices=list(BACKENDS))
    add_corpus_arguments(train)
    train.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="backend parameter, e.g. epochs=3 or model_name_or_path=/path/to/model")
    train.add_argument("--seed", type=seed_type, default=0)
    train.add_argument("--heldout", type=float, default=0.1, help="held-out share for accuracy/macro-F1")
    train.add_argument("--threads", type=int, metavar="N",
                       help="CPU threads for fastText (also as an ensemble member); the same as --param threads=N. "
                            "More than 1 is faster but not reproducible for a seed (Hogwild updates). Other backends "
                            "ignore it, saying so in one line")
    train.add_argument("--device", help="cpu or cuda (neural backends, which default to cuda when present; the "
                                        "others ignore it, saying so in one line)")
    train.add_argument("--out", required=True, help="directory to save the trained model to")
    train.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(func=cmd_train)
    return train
