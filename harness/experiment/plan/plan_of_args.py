"""The plan of ``tsteval score``: its command-line arguments read into a :class:`~tsteval.experiment.plan.plan.Plan`
(the transfers, the classifiers, the metrics and every run option of :data:`tsteval.experiment.options.OPTIONS`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.options import key_value_pairs, key_values
from tsteval.core.records import Transfers
from tsteval.experiment.options import from_args
from tsteval.experiment.plan.plan import Plan


def plan_of_args(args: argparse.Namespace) -> Plan:
    """The plan of ``tsteval score``: transfers, classifiers and options from the command line.

    Names and files are checked here, before any model is loaded; :func:`~tsteval.experiment.run.execute.run` loads
    the models.
    """
    from tsteval.metaeval.profile_file import apply_profiles
    from tsteval.metrics.content.references import has_references
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, check_modifications
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.selection import content_metrics, select
    from tsteval.readers.ratings import report_empty_ratings

    transfers = _transfers_of_args(args)
    report_empty_ratings(transfers.frame)
    classifiers = key_values(args.classifier, "--classifier", "DIR", column_names=True)
    pair_classifiers = key_values(args.hh, "--hh", "DIR", column_names=True)
    metrics, params = content_metrics(m for m in args.content.split(",") if m.strip())
    options = from_args(args)
    names = [n.strip() for n in args.naturalness.split(",") if n.strip()]
    chosen = select((m for m in (args.metrics or "").split(",") if m.strip()), classifiers=bool(classifiers),
                    hh=bool(pair_classifiers), served=options["lm_endpoint"] is not None)
    for name in metrics:
        chosen.add_content(name, params.get(name, {}))
    apply_profiles(chosen, options, classifiers=classifiers, pairs=pair_classifiers,
                   references=bool(args.references) or has_references(transfers))
    modes = list(options["modifications"])
    metrics, params = chosen.content, chosen.params
    names += [n for n in chosen.naturalness if n not in names]
    baselines = options["baselines"]
    lexicon = None
    if args.lexicon and (metrics or "delete-lexicon" in baselines):
        from tsteval.lexicons.lexicon import Lexicon

        lexicon = Lexicon.load(args.lexicon)
    attribution = None
    corpus_files: dict[str, list[str]] = {}
    if not metrics:
        modes = ["none"]
    else:
        check_modifications(modes, "--modification")
        if ERASE in modes:
            corpus_files = _style_files(args.erase_style, "--erase-style",
                                        "--modification erase fits a style eraser on style-labelled sentences: "
                                        "give --erase-style NAME=FILE for each style (e.g. the style "
                                        "classifier's training files)")
        if any(m in ("mask", "remove") for m in modes) and lexicon is None:
            raise TstevalError("--modification remove/mask needs --lexicon FILE (build one with build-lexicon)")
        if any(m in ATTRIBUTION_MODIFICATIONS for m in modes):
            attribution = _attribution_of_args(args, classifiers)
    if not (classifiers or metrics or names or pair_classifiers or chosen.joint or chosen.judges):
        raise TstevalError("give at least one --classifier NAME=DIR (train one with tsteval "
                           "train-classifier), --content METRICS, --naturalness NAMES or --hh NAME=DIR")
    unknown = [n for n in names if n not in NATURALNESS_METRICS]
    if unknown:
        raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}"
                           + "".join(did_you_mean(n, NATURALNESS_METRICS, f"; {n!r}: ") for n in unknown))
    from tsteval.readers import lines

    human = None
    if names and args.human:
        human = lines.read_lines(args.human)
    if args.baseline_corpus:  # one training corpus: --erase-style and --baseline-corpus files join by style
        for style, paths in _style_files(args.baseline_corpus, "--baseline-corpus", "").items():
            corpus_files.setdefault(style, []).extend(paths)
    corpus = lines.load_style_files(corpus_files) if corpus_files else None
    joint = options.pop("joint")
    return Plan(transfers, classifiers={n: _classifier(n, d) for n, d in classifiers.items()}, **{**options,
               "modifications": tuple(modes), "joint": "strap" if chosen.joint and joint == "auto" else joint},
               content=tuple(metrics), lexicon=lexicon, attribution=attribution,
               attribution_neutral=lines.read_lines(args.attribution_neutral) if args.attribution_neutral
               else None, naturalness=tuple(names), human=human,
               hh={n: Path(d) for n, d in pair_classifiers.items()},
               references=_references_of_args(args, metrics), params=params, corpus=corpus, quiet=args.quiet,
               judges=tuple(chosen.judges))


def _classifier(name: str, given: str) -> object:
    """A ``--classifier`` source: a ready-made model's spec for ``hf:ID_OR_DIR``, else the saved folder."""
    from tsteval.experiment.manifest.specs import ready_made

    source = ready_made(name, given)
    return Path(source) if isinstance(source, str) else source


def _style_files(given: Sequence[str], flag: str, missing: str) -> dict[str, list[str]]:
    """The files of a repeatable ``FLAG NAME=FILE`` by style (a style given twice joins its files); ``missing`` is
    the error when none is given."""
    if not given:
        raise TstevalError(missing)
    files: dict[str, list[str]] = {}
    for style, path in key_value_pairs(given, flag, "FILE"):
        files.setdefault(style, []).append(path)
    return files


def _attribution_of_args(args: argparse.Namespace, classifiers: Mapping[str, str]) -> str:
    """The ``--classifier`` NAME whose transformer attributes the attribution modifications: ``--attribution``, or
    the only transformer among the classifiers."""
    from tsteval.classifiers.base import saved_backend
    from tsteval.experiment.manifest.specs import HUB

    if args.attribution is not None:
        if args.attribution not in classifiers:
            raise TstevalError(f"--attribution {args.attribution!r} is not a --classifier NAME "
                               f"({sorted(classifiers)}){did_you_mean(args.attribution, classifiers, '; ')}")
        chosen = [args.attribution]
    else:
        chosen = [n for n, d in classifiers.items()
                  if not d.startswith(f"{HUB}:") and saved_backend(d) == "transformer"]
        if len(chosen) != 1:
            raise TstevalError("--modification attribution-mask/attribution-delete need one transformer style "
                               "classifier: give --classifier NAME=DIR of backend transformer (train-classifier "
                               "transformer)" + (f" and --attribution NAME to choose among {chosen}" if chosen else ""))
    if saved_backend(classifiers[chosen[0]]) != "transformer":
        raise TstevalError(f"--attribution {chosen[0]!r}: attribution masking needs a transformer classifier, and "
                           f"{classifiers[chosen[0]]} is {saved_backend(classifiers[chosen[0]])}")
    return chosen[0]


def _references_of_args(args: argparse.Namespace, metrics: Sequence[str]) -> object:
    """``--references``: files, or ``dualrl`` (the references of the ``--dualrl`` dataset)."""
    from tsteval.metrics.content.references import DUALRL_PREFIX

    given = args.references
    if not given:
        return None
    if not metrics:
        raise TstevalError("--references needs content metrics to score against them: add --content bleu,chrf,...")
    if given == [DUALRL_PREFIX]:
        if not args.dualrl:
            raise TstevalError("--references dualrl gives the DualRL references of --dualrl DATASET; for other "
                               "transfers give reference files (line i: a reference for item i)")
        return f"{DUALRL_PREFIX}:{args.dualrl}"
    return [Path(f) for f in given]


# The flags of ``tsteval score`` that set the reader keywords, for the fixes in error messages.
SCORE_HINTS = {"split": "--split", "table_format": "--table-format", "source_style": "--source-style",
               "target_style": "--target-style", "system": "--system", "setting": "--setting"}


def _transfers_of_args(args: argparse.Namespace) -> Transfers:
    """The transfers the arguments name, only those of ``--systems`` when given (DualRL reads only their files)."""
    from tsteval.readers import dualrl

    systems = [s.strip() for s in args.systems.split(",") if s.strip()] if args.systems is not None else None
    if args.dualrl:
        return dualrl.load_dualrl(args.dualrl, systems)
    transfers = _source_of_args(args)
    return transfers if systems is None else transfers.of_systems(systems)


def _source_of_args(args: argparse.Namespace) -> Transfers:
    from tsteval.readers import huggingface, lines, mir, tables

    meta = {"system": args.system, "setting": args.setting}
    if args.pairs or args.tsv:
        if args.source_style is None or args.target_style is None:
            raise TstevalError("--pairs and --tsv need --source-style and --target-style")
        meta.update(source_style=args.source_style, target_style=args.target_style)
    if args.pairs:
        return lines.load_parallel_files(args.pairs[0], args.pairs[1], **meta)
    if args.tsv:
        return lines.load_tsv_transfers(args.tsv, **meta)
    if args.table or args.hf:
        constants = {"source_style": args.source_style, "target_style": args.target_style, **meta}
        if args.table:
            return tables.load_table_transfers(args.table, table_format=args.table_format, hints=SCORE_HINTS,
                                                **constants)
        return huggingface.load_hf_transfers(args.hf, split=args.split, hints=SCORE_HINTS, **constants)
    if args.mir:
        return mir.load_mir()
    raise TstevalError("give the transfers: --pairs INPUTS OUTPUTS, --tsv FILE, --table FILE, --hf DATASET, --mir "
                       "or --dualrl")
