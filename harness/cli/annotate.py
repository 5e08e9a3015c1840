"""``tsteval annotate``: human rating studies of a scored run: plan, serve, invite, status, export, import,
agreement.  (Parsing only; the work is in :mod:`tsteval.annotate`.)"""

from __future__ import annotations

import argparse
import csv
import sys

from tsteval.cli.common import seed_type
from tsteval.core.atomic import OVERWRITE_HELP
from tsteval.readers.rated_sets import rated_set_names

EPILOG = """the loop, end to end:
  tsteval annotate plan runs/mine --out study --items 50 --aspects style,content,fluency
  tsteval annotate invite study --annotators 3          (one private link each)
  tsteval annotate serve study                          (http://127.0.0.1:8765; Ctrl-C stops it)
  tsteval annotate status study
  tsteval annotate agreement study
  tsteval meta-eval runs/mine --ratings study --choose-profile profile.json
  tsteval score --metrics profile:profile.json ... --out runs/mine-profile
crowdsourcing:
  tsteval annotate export study --format mturk --out batch.csv
  tsteval annotate import study Batch_123_batch_results.csv
  tsteval annotate import study results.csv --map Answer.q1=Input.id1:fluency
"""


def _study(path: str) -> object:
    from tsteval.annotate.study import Study

    return Study.open(path)


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
                       overwrite=args.overwrite)
    info = study.info
    print(f"study {info['signature']}: {info['pairs']} pairs ({info['items']} inputs x {len(info['systems'])} "
          f"systems), {info['repeats']} repeated, {info['checks']} check and {info['overlaps']} overlap pairs, "
          f"questions {info['questions']} written to {args.out}; next: tsteval annotate invite {args.out} "
          "--annotators N, or tsteval annotate export")
    print(f"{info['references']} reference pairs (each input with its human reference, rated apart)" if
          info["references"] else "no reference pairs: the run has no reference column (score it with --references "
          "FILE, or a table with a reference column)")
    return 0


def cmd_invite(args: argparse.Namespace) -> int:
    """Add annotators and print their private links."""
    study = _study(args.study)
    store = study.store()
    try:
        added = store.add_annotators(study.invited_pair_ids, seed=study.info["seed"], count=args.annotators)
    finally:
        store.close()
    base = args.base_url.rstrip("/")
    for who, token in added:
        print(f"{who.name}\t{base}/a/{token}")
    print(f"{len(added)} links: each is the only way in for its annotator (kept as a hash; not shown again)",
          file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the study's rating pages."""
    from tsteval.annotate.server import serve

    study = _study(args.study)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
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
    """Write the study's pairs in a platform's batch-input form."""
    from tsteval.annotate.platforms import export_rows
    from tsteval.core.atomic import check_output_file, output_file

    study = _study(args.study)
    header, rows = export_rows(study, args.format, args.per_hit, study.info["seed"])
    check_output_file(args.out, "an export", _is_export, args.overwrite)
    with output_file(args.out, "an export", _is_export, args.overwrite) as tmp:
        with open(tmp, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
    print(f"export: {len(rows)} rows ({args.format}) written to {args.out}")
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


def cmd_import(args: argparse.Namespace) -> int:
    """Read a platform's results file into the study (all or nothing)."""
    from tsteval.annotate.platforms import parse_map, read_results

    study = _study(args.study)
    rows = read_results(study, args.file, parse_map(args.map))
    store = study.store()
    try:
        new = store.import_ratings(rows, args.source)
    finally:
        store.close()
    print(f"import: {len(rows)} ratings from {len({r[0] for r in rows})} workers ({new} new) read from {args.file}")
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    """Print (and with --out, write) the study's reliability."""
    from tsteval.annotate.reliability import agreement

    result = agreement(_study(args.study), args.resamples, args.seed)
    text = result.markdown()
    if args.out:
        from tsteval.core.atomic import check_output_file, output_file

        ours = _starts_with("# Agreement of study")
        check_output_file(args.out, "an agreement report", ours, args.overwrite)
        with output_file(args.out, "an agreement report", ours, args.overwrite) as tmp:
            tmp.write_text(text, encoding="utf-8")
    print(text)
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
    plan.add_argument("--template", help="a questions file (YAML; default: Mir et al.'s aspects, 1-5 scales)")
    plan.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    plan.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    invite = _add(steps, "invite", cmd_invite, "add annotators and print one private link each")
    invite.add_argument("--annotators", type=_positive, required=True, help="how many to add")
    invite.add_argument("--base-url", default="http://127.0.0.1:8765", help="the server's address as annotators "
                        "reach it (default http://127.0.0.1:8765)")
    serve = _add(steps, "serve", cmd_serve, "serve the rating pages (SQLite, one transaction per submission)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=_positive, default=8765, help="port (default 8765)")
    _add(steps, "status", cmd_status, "progress per annotator")
    export = _add(steps, "export", cmd_export, "write the pairs as a platform's batch input")
    export.add_argument("--format", choices=("mturk", "prolific", "csv"), required=True)
    export.add_argument("--per-hit", type=_positive, default=5, help="pairs per HIT / per row (default 5)")
    export.add_argument("--out", required=True, help="the CSV file to write")
    export.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    imported = _add(steps, "import", cmd_import, "read a platform's results file into the study (all or nothing)")
    imported.add_argument("file", metavar="FILE", help="MTurk batch results, a Prolific/survey export or a long CSV")
    imported.add_argument("--map", action="append", default=[], metavar="COLUMN=PAIR:QUESTION",
                          help="which answer column rates which pair (an id or a column holding it) and question")
    imported.add_argument("--source", default="import", help="the platform's name, kept with each rating")
    agree = _add(steps, "agreement", cmd_agreement, "Krippendorff's alpha, annotators, repeats, checks, ceiling")
    agree.add_argument("--resamples", type=_positive, default=1000, help="bootstrap resamples (default 1000)")
    agree.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    agree.add_argument("--out", help="also write the report to this Markdown file")
    agree.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    return parser
