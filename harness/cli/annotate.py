"""``tsteval annotate``: human rating studies of a scored run: plan, serve, invite, status, export, import,
agreement.  (Parsing only; the work is in :mod:`tsteval.annotate`.)"""

from __future__ import annotations

import argparse
import csv
import sys
import urllib.parse

from tsteval.aggregate import N_RESAMPLES
from tsteval.cli.common import seed_type
from tsteval.core.atomic import OVERWRITE_HELP
from tsteval.readers.rated_sets import rated_set_names

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765
LOCAL = ("127.0.0.1", "localhost", "::1")
EPILOG = """the loop, end to end:
  tsteval annotate plan runs/mine --out study --items 50 --aspects style,content,fluency
  tsteval annotate invite study --annotators 3          (one private link each)
  tsteval annotate serve study                          (http://127.0.0.1:8765; Ctrl-C stops it)
  tsteval annotate status study
  tsteval annotate agreement study [--exclude-failed] [--exclude NAME]
  tsteval annotate export-ratings study --out ratings.csv
  tsteval meta-eval runs/mine --ratings study --choose-profile profile.json
  tsteval score --metrics profile:profile.json ... --out runs/mine-profile
crowdsourcing:
  tsteval annotate export study --format mturk --out batch.csv   (and batch.layout.html, the HIT layout)
  tsteval annotate invite study --prolific C1A2B3C4                (the study URL for Prolific; then serve)
  tsteval annotate import study Batch_123_batch_results.csv
  tsteval annotate import study results.csv --map Answer.q1=Input.id1:fluency
"""


def _study(path: str) -> object:
    from tsteval.annotate.study import Study

    return Study.open(path)


def add_exclusion(parser: argparse.ArgumentParser) -> None:
    """``--exclude NAMES`` and ``--exclude-failed`` (annotate agreement, export-ratings, meta-eval --ratings)."""
    parser.add_argument("--exclude", action="append", default=[], metavar="NAMES", help="leave these annotators "
                        "out (comma-separated, as annotate status names them, e.g. WorkerId:A1B2C3); repeatable")
    parser.add_argument("--exclude-failed", action="store_true", help="leave out every annotator who fails the "
                        "quality controls: a check pair's known answer missed by more than a point, or repeated "
                        "judgements more than a quarter of the scale apart on average")


def exclusion_of(args: argparse.Namespace) -> object:
    """The :class:`~tsteval.annotate.reliability.Exclusion` that ``--exclude`` and ``--exclude-failed`` ask for."""
    from tsteval.annotate.reliability import Exclusion

    named = tuple(dict.fromkeys(n.strip() for entry in args.exclude for n in entry.split(",") if n.strip()))
    return Exclusion(named, args.exclude_failed)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a positive integer")
    return int(text)


def cmd_plan(args: argparse.Namespace) -> int:
    """Sample a study from a run."""
    from tsteval.annotate.study import plan_study
    from tsteval.core.errors import TstevalError

    if (args.run is None) == (args.dataset is None):
        raise TstevalError(f"give a RUN folder or --dataset NAME, one of {rated_set_names()}")
    if args.dataset is not None:
        from tsteval.metaeval.rated.studies import rated_study

        info = rated_study(args.dataset, args.out, args.overwrite).info
        print(f"study {info['signature']}: the {args.dataset} rated set, {info['pairs']} pairs, questions "
              f"{info['questions']}, written to {args.out}; its agreement: tsteval annotate agreement {args.out}")
        return 0
    names = [a for a in args.aspects.split(",") if a] if args.aspects else None
    systems = [s for s in args.systems.split(",") if s] if args.systems else None
    study = plan_study(args.run, args.out, items=args.items, questions=names, systems=systems, seed=args.seed,
                       repeats=args.repeats, checks=args.checks, overlap=args.overlap, template=args.template,
                       text_form=args.text_form, overwrite=args.overwrite)
    info = study.info
    same = (f"; {info['identical']} of {info['pairs'] + info['identical']} were identical to another system's "
            "output for the same input: rated once, counted for each system" if info.get("identical") else "")
    print(f"study {info['signature']}: {info['pairs']} pairs to rate ({info['items']} inputs x "
          f"{len(info['systems'])} systems{same}), {info['repeats']} repeated, {info['checks']} check and "
          f"{info['overlaps']} overlap pairs, "
          f"questions {info['questions']} written to {args.out}; next: tsteval annotate invite {args.out} "
          "--annotators N, or tsteval annotate export")
    print(f"{info['references']} reference pairs (each input with its human reference, rated apart)" if
          info["references"] else "no reference pairs: the run has no reference column (score it with --references "
          "FILE, or a table with a reference column)")
    return 0


def cmd_invite(args: argparse.Namespace) -> int:
    """Add annotators and print their private links, or print the open link of a Prolific study (on the address
    the study's links already use, else ``--base-url``, else ``serve``'s default), and record that address for
    ``serve``."""
    from tsteval.core.errors import TstevalError

    if (args.annotators is None) == (args.prolific is None):
        raise TstevalError("give --annotators N (private links) or --prolific CODE (one open link for a Prolific "
                           "study whose completion code is CODE)")
    study = _study(args.study)
    store = study.store()
    try:
        recorded = store.base_url
        base = (args.base_url or recorded or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}").rstrip("/")
        _check_url(base)
        if recorded is not None and base != recorded:
            print(f"warning: the study's earlier links point to {recorded}; these to {base} (serve one address, "
                  "or put a proxy in front)", file=sys.stderr)
        if args.prolific is not None:
            if not args.prolific.isalnum():
                raise TstevalError(f"--prolific {args.prolific[:40]!r}: a Prolific completion code is letters and "
                                   "digits (the study's Completion code setting)")
            key = store.open_link(args.prolific)
            store.base_url = base
            print(f"{base}/p/{key}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
                  "&SESSION_ID={{%SESSION_ID%}}")
            print("the study's URL for Prolific: each participant gets their own pages on their first visit, and on "
                  f"the last the completion code {args.prolific} with the link back to Prolific", file=sys.stderr)
            return 0
        added = store.add_annotators(study.invited_pair_ids, seed=study.info["seed"], count=args.annotators)
        store.base_url = base
    finally:
        store.close()
    for who, token in added:
        print(f"{who.name}\t{base}/a/{token}")
    print(f"{len(added)} links: each is the only way in for its annotator (kept as a hash; not shown again)",
          file=sys.stderr)
    return 0


def _check_url(url: str) -> None:
    """Refuse a ``--base-url`` that is no http(s) address with a host (and a numeric port, if any)."""
    from tsteval.core.errors import TstevalError

    parts = urllib.parse.urlsplit(url)
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TstevalError(f"--base-url {url[:80]!r} is not an address like http://127.0.0.1:8765 or "
                           "https://rate.example.org")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the study's rating pages."""
    from tsteval.annotate.server import serve

    study = _study(args.study)
    store = study.store()
    try:
        links = store.base_url
    finally:
        store.close()
    invited = urllib.parse.urlsplit(links) if links else None
    local = invited is not None and invited.hostname in LOCAL and invited.port is not None
    if args.port is None:
        args.port = invited.port if local else DEFAULT_PORT
    elif local and invited.port != args.port:
        print(f"warning: the invited annotators' links point to {links}, not port {args.port}: serve with --port "
              f"{invited.port}, or they will not reach the page", file=sys.stderr)
    if args.host not in LOCAL:
        print(f"warning: serving on {args.host}: anyone who can reach it and holds a link can rate (use a "
              "TLS-terminating proxy on an open network)", file=sys.stderr)
    print(f"serving study {study.info['signature']} on http://{args.host}:{args.port}/a/TOKEN (Ctrl-C stops)",
          file=sys.stderr)
    serve(study, args.host, args.port, log=not args.quiet)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Print progress per annotator."""
    from tsteval.core.texttable import text_table

    study = _study(args.study)
    store = study.store()
    try:
        table = store.progress(len(study.template.names))
        history = store.history_count()
    finally:
        store.close()
    print(text_table(table) if len(table) else "no annotators yet: tsteval annotate invite STUDY --annotators N")
    print(f"{len(table)} annotators; {history} submissions in the history")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the study's pairs in a platform's batch-input form (and for MTurk the HIT layout beside it)."""
    from pathlib import Path

    from tsteval.annotate.platforms import export_rows, mturk_layout, short_rows
    from tsteval.core.atomic import check_output_file, output_file

    study = _study(args.study)
    header, rows = export_rows(study, args.format, args.per_hit, study.info["seed"])
    layout = Path(args.out).with_suffix(".layout.html") if args.format == "mturk" else None
    check_output_file(args.out, "an export", _is_export, args.overwrite)
    if layout is not None:
        check_output_file(layout, "an MTurk layout", _is_layout, args.overwrite)
    with output_file(args.out, "an export", _is_export, args.overwrite) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
    print(f"export: {len(rows)} rows ({args.format}) written to {args.out}")
    if layout is not None:
        with output_file(layout, "an MTurk layout", _is_layout, args.overwrite) as tmp:
            tmp.write_text(mturk_layout(study, args.per_hit), encoding="utf-8")
        print(f"export: the HIT layout (crowd HTML, answer fields QUESTION-K) written to {layout}")
    short = short_rows(header, rows)
    if short:
        print(f"export: {len(short)} {'row' if len(short) == 1 else 'rows'} short of {short[0][2]} pairs ("
              + ", ".join(f"row {n} holds {filled}" for n, filled, _ in short)
              + "): their empty slots hold no pair and the layout removes them")
    copies, repeats = study.info.get("overlaps", 0), study.info.get("repeats", 0)
    if args.format != "csv" and repeats:
        print(f"  {repeats} repeated pairs sit in the HIT of their original, after it: the worker who rates a pair "
              "rates its repeat")
    if args.format != "csv" and copies:
        print(f"  {copies} overlap copies sit in HITs of their own (publish one assignment per HIT); the platform "
              "cannot keep a worker from the HIT of a copy of a pair they rated (with W workers sharing the batch "
              "evenly, about 1 in W copies), and such a copy is no second rating: annotate agreement and meta-eval "
              "say how many copies each figure rests on")
    return 0


def _starts_with(prefix: str) -> object:
    """A test of whether a file is one this command wrote: its first line starts with ``prefix``."""
    def ours(path: object) -> bool:
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.readline().startswith(prefix)
        except (OSError, UnicodeDecodeError):
            return False

    return ours


_is_export = _starts_with("pair_id")
_is_layout = _starts_with("<!-- tsteval annotate export")


def cmd_import(args: argparse.Namespace) -> int:
    """Read a platform's results file into the study (all or nothing)."""
    from tsteval.annotate.platforms import parse_map, read_results

    study = _study(args.study)
    results = read_results(study, args.file, parse_map(args.map), partial=args.partial)
    rows = results.ratings
    store = study.store()
    try:
        done = store.import_ratings(rows, args.source)
    finally:
        store.close()
    print(f"import: {len(rows)} ratings from {len({r[0] for r in rows})} workers ({done.workers} new workers) read "
          f"from {args.file}: {done.said()}; answers per question: {results.said()}")
    _warn_controls(study)
    return 0


def _warn_controls(study: object) -> None:
    """Say which questions' overlap copies or repeats went to the wrong worker (no second rating, no consistency)."""
    from tsteval.annotate.reliability import collect, controls, controls_lines

    table = controls(study, collect(study).ratings)
    for line in controls_lines(table[(table["overlap_own"] > 0) | (table["repeat_other"] > 0)]):
        print(f"  warning: {line}")


def cmd_export_ratings(args: argparse.Namespace) -> int:
    """Write the collected ratings as a tidy CSV (one row per rating)."""
    from tsteval.annotate.reliability import tidy_ratings
    from tsteval.core.atomic import check_output_file, output_file

    study = _study(args.study)
    ours = _starts_with("annotator,source,pair_id")
    check_output_file(args.out, "a ratings export", ours, args.overwrite)
    frame, collected = tidy_ratings(study, exclusion_of(args))
    with output_file(args.out, "a ratings export", ours, args.overwrite) as tmp:
        frame.to_csv(tmp, index=False)
    for line in collected.lines():
        print(f"  {line}")
    print(f"export-ratings: {len(frame)} ratings by {frame['annotator'].nunique()} annotators written to {args.out}")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    """Print (and with --out, write) the study's reliability."""
    from tsteval.annotate.reliability import agreement
    from tsteval.core.markdown import plain

    result = agreement(_study(args.study), args.resamples, args.seed, exclusion_of(args))
    text = result.markdown()
    if args.out:
        from tsteval.core.atomic import check_output_file, output_file

        ours = _starts_with("# Agreement of study")
        check_output_file(args.out, "an agreement report", ours, args.overwrite)
        with output_file(args.out, "an agreement report", ours, args.overwrite) as tmp:
            tmp.write_text(text, encoding="utf-8")
    print(plain(text))
    return 0


def _add(sub: argparse._SubParsersAction, name: str, func: object, help_text: str) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text)
    if name != "plan":
        parser.add_argument("study", metavar="STUDY", help="a study folder (tsteval annotate plan --out)")
    parser.add_argument("--quiet", action="store_true", help="fewer messages")
    parser.set_defaults(func=func)
    return parser


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``annotate`` and its subcommands."""
    parser = sub.add_parser(
        "annotate", help="human rating studies: plan one from a run, serve it, import a platform's results, "
        "measure agreement", description="A blind rating study of a scored run, served from this machine or run "
        "on a crowdsourcing platform; its ratings then meta-evaluate the run's metrics (tsteval meta-eval RUN "
        "--ratings STUDY) and choose its profile.", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True)
    plan = _add(steps, "plan", cmd_plan, "sample a study (inputs stratified by direction, every system's output)")
    plan.add_argument("run", nargs="?", metavar="RUN", help="a folder written by tsteval score or tsteval run")
    plan.add_argument("--dataset", choices=rated_set_names(), metavar="NAME", help="instead of sampling a run: a "
                      "published rated set as a study, every transfer and rating (meta-eval a run of its transfers "
                      f"against it); one of {', '.join(rated_set_names())}")
    plan.add_argument("--out", required=True, help="the study folder to create")
    plan.add_argument("--items", type=_positive, default=50, help="inputs to sample (default 50)")
    plan.add_argument("--aspects", help="the template's questions to ask, comma-separated (default all: "
                      "style,content,fluency)")
    plan.add_argument("--systems", help="comma-separated systems of the run (default all)")
    plan.add_argument("--repeats", type=int, help="pairs shown twice (default 5%% of the pairs, 1 to 10)")
    plan.add_argument("--checks", type=int, help="check pairs, an unchanged copy (default 5%%, 1 to 10)")
    plan.add_argument("--overlap", type=float, default=0.0, metavar="SHARE", help="the share of the pairs a second "
                      "annotator rates where each pair goes to one worker (an exported batch): 0.2 gives a reliability "
                      "estimate at a fifth of the cost of rating every pair twice (default 0)")
    plan.add_argument("--text-form", choices=("auto", "as-is", "tokenised-lowercase"), default="auto",
                      help="how the run's texts are written: tokenised-lowercase ones (sir , the slip .) are shown "
                      "detokenised and sentence-cased (Sir, the slip.); auto (default) detects it, as-is shows them "
                      "as the run has them")
    plan.add_argument("--template", help="a questions file (YAML; default: Mir et al.'s aspects, 1-5 scales)")
    plan.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    plan.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    invite = _add(steps, "invite", cmd_invite, "add annotators and print one private link each")
    invite.add_argument("--annotators", type=_positive, help="how many annotators to add, each with a private link")
    invite.add_argument("--prolific", metavar="CODE", help="instead: print the study's open link for a Prolific "
                        "study whose completion code is CODE (its URL reads PROLIFIC_PID, STUDY_ID and SESSION_ID)")
    invite.add_argument("--base-url", help="the server's address as annotators reach it (default: the address of "
                        f"the study's earlier links, else http://{DEFAULT_HOST}:{DEFAULT_PORT}); serve reads it")
    serve = _add(steps, "serve", cmd_serve, "serve the rating pages (SQLite, one transaction per submission)")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}: this "
                       "machine only)")
    serve.add_argument("--port", type=_positive, help="port (default: the port of the links invite printed when "
                       f"they point to this machine, else {DEFAULT_PORT})")
    _add(steps, "status", cmd_status, "progress per annotator")
    export = _add(steps, "export", cmd_export, "write the pairs as a platform's batch input")
    export.add_argument("--format", choices=("mturk", "prolific", "csv"), required=True)
    export.add_argument("--per-hit", type=_positive, default=5, help="pairs per HIT / per row (default 5)")
    export.add_argument("--out", required=True, help="the CSV file to write (for mturk also OUT.layout.html, the HIT "
                        "layout: crowd HTML with answer fields QUESTION-K)")
    export.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    ratings = _add(steps, "export-ratings", cmd_export_ratings, "write the collected ratings as a tidy CSV, one row "
                   "per rating (annotator, source, pair, its kind and system, question, aspect, value)")
    add_exclusion(ratings)
    ratings.add_argument("--out", required=True, help="the CSV file to write")
    ratings.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    imported = _add(steps, "import", cmd_import, "read a platform's results file into the study (all or nothing)")
    imported.add_argument("file", metavar="FILE", help="MTurk batch results, a Prolific/survey export or a long CSV")
    imported.add_argument("--map", action="append", default=[], metavar="COLUMN=PAIR:QUESTION",
                          help="which answer column rates which pair (an id or a column holding it) and question")
    imported.add_argument("--source", default="import", help="the platform's name, kept with each rating")
    imported.add_argument("--partial", action="store_true", help="import a file that lacks some question's answer "
                          "columns (refused without it): the others are imported, the lacking answers counted missing")
    agree = _add(steps, "agreement", cmd_agreement, "Krippendorff's alpha, annotators, repeats, checks, ceiling")
    agree.add_argument("--resamples", type=_positive, default=N_RESAMPLES,
                       help=f"bootstrap resamples (default {N_RESAMPLES})")
    agree.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    add_exclusion(agree)
    agree.add_argument("--out", help="also write the report to this Markdown file")
    agree.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    return parser
