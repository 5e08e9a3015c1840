"""The ``tsteval`` command line: the parser of every subcommand (one module each in :mod:`tsteval.cli`) and
``main``, which runs one and turns every failure into a one-line message and an exit status.

Run ``tsteval --help`` or ``tsteval COMMAND --help``.  Every error caused by the input is reported as
one line naming the file, the line and the fix, before anything is written.  Every ``--out`` follows the
rule of :mod:`tsteval.core.atomic`: checked before the work, written to a temporary sibling, moved into place,
never into a folder tsteval did not create; ``--overwrite`` replaces an output of the same kind whole.
Exit status: 0 success, 2 a user error, 70 an internal error (a bug), 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.progress import quieted


class Parser(argparse.ArgumentParser):
    """argparse's parser (its subcommands' too), whose "invalid choice" error adds the nearest choices
    (:func:`~tsteval.core.errors.did_you_mean`): ``train-classifier tfidf_lr``, ``tsteval scroe``."""

    def _check_value(self, action: argparse.Action, value: object) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            hint = did_you_mean(str(value), action.choices or (), "; ")
            if not hint:
                raise
            raise argparse.ArgumentError(action, error.message + hint) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for all subcommands."""
    parser = Parser(
        prog="tsteval", description="Evaluate text style transfer: train style and pair classifiers and build "
        "style lexicons, then score system outputs for style transfer intensity, content preservation, "
        "naturalness and compatibility into a per-sentence scorecard, or run a whole experiment manifest.")
    from tsteval import __version__

    parser.add_argument("--version", action="version", version=f"tsteval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    from tsteval.cli import annotate, compare, explore, lexicon, metaeval, pairs, run, score, train, train_metric

    for command in (train, train_metric, lexicon, score, run):
        command.add_parser(sub)
    pairs.add_train_pairs_parser(sub)
    pairs.add_compliancy_parser(sub)
    compare.add_parser(sub)
    explore.add_parser(sub)
    metaeval.add_parser(sub)
    annotate.add_parser(sub)
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
        with quieted(args.quiet):
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
