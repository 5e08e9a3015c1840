"""``tsteval score``: score system outputs into a per-sentence scorecard and its summary.

The command builds a :class:`~tsteval.experiment.plan.plan.Plan` from its arguments and runs it; the scoring itself
lives in :mod:`tsteval.experiment.run.execute`.
"""

from __future__ import annotations

import argparse
import sys

from tsteval.cli.common import STDIN_HELP, add_format_arguments, signature_lines, summary_json
from tsteval.core.atomic import OVERWRITE_HELP, check_output_directory, output_directory
from tsteval.core.records import DEFAULT_SETTING, DEFAULT_SYSTEM
from tsteval.experiment.options import OPTIONS, add_flags

EPILOG_SCORE = """examples:
  tsteval score --classifier ft=clf/ --pairs inputs.txt outputs.txt --source-style neg --target-style pos --out run/
  tsteval score --classifier ft=clf/ --tsv system.tsv --source-style 0 --target-style 1 --system mine --out run/
  tsteval score --classifier ft=clf/ --table outputs.csv --out run/     (columns input, output, source_style, ...)
  tsteval score --classifier ft=clf/ --mir --out run/                   (Mir et al.'s 12 published settings)
  tsteval score --classifier ft=clf/ --hf saved_dataset/ --split test --out run/ --format json
  paste inputs.txt outputs.txt | tsteval score --classifier ft=clf/ --tsv - --source-style neg --target-style pos \
      --out run/ --signature
  tsteval score --pairs in.txt out.txt --source-style 0 --target-style 1 --content bleu,meteor,wmd,sbert \\
      --modification none,mask --lexicon lexicon.json --out run/
  tsteval score --pairs in.txt out.txt --source-style 0 --target-style 1 --content sbert,wmd \\
      --modification none,erase --erase-style 0=train.0.txt --erase-style 1=train.1.txt --out run/
  tsteval score --dualrl GYAFC --content bleu,chrf --references dualrl --out run/   (four human references)
  tsteval score --classifier ft=clf/ --table outputs.parquet --content bleu,sbert --engine ray --out run/
  tsteval score --classifier ft=clf/ --pairs in.txt out.txt --source-style 0 --target-style 1 --content sbert \
      --naturalness unigram --baselines copy,delete-lexicon,retrieve-nearest --lexicon lexicon.json \
      --baseline-corpus 0=train.0.txt --baseline-corpus 1=train.1.txt --out run/   (J leaderboard + baselines)
  tsteval score --classifier bert=clf-transformer/ --pairs in.txt out.txt --source-style 0 --target-style 1 \
      --content bleu --modification none,attribution-mask,attribution-delete --out run/
  tsteval score --dualrl yelp --content sbert --threads 1 --device auto --out run/   (embeddings cached for reruns)
"""

# The run options shown in a group of their own in --help; every other one is among the general flags.
GROUPED = {"content": ("modifications", "placeholder", "vectors", "attribution_threshold", "learned"),
           "naturalness": ("folds", "language_model", "text_form"), "ranking": ("baselines", "joint"),
           "engine": ("engine", "address", "workers")}


def cmd_score(args: argparse.Namespace) -> int:
    """Score transfers with every ``--classifier`` and write the scorecard and its summary."""
    from tsteval.core.texttable import text_table
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import execute
    from tsteval.experiment.run.outputs import write_scored
    from tsteval.scorecard import summary_text

    check_output_directory(args.out, "scorecard", args.overwrite)
    plan = Plan.from_args(args)
    result = execute(plan)
    if result.requests is not None:  # --dry-run: nothing scored, nothing written
        print(result.requests.table())
        return 0
    card = result.card
    summary = card.summary(seed=plan.seed)
    corpus = result.corpus_references
    board = None
    if result.joint is not None:
        from tsteval.metrics.joint.score import leaderboard, sanity_notes

        board = leaderboard(card, result.joint, seed=plan.seed)
        for note in sanity_notes(board):
            result.notice(note)
    with output_directory(args.out, "scorecard", args.overwrite) as tmp:
        write_scored(tmp, result, summary, board)
    notices = sys.stderr if args.format == "json" else sys.stdout
    flagged = {column: c for column, c in result.policy.items() if any(c.values())}
    for column, c in flagged.items():
        print(f"{column}: " + ", ".join(f"{k}={v}" for k, v in c.items() if v) + " (scored by the empty/OOV policy)",
              file=notices)
    if args.format == "json":
        print(summary_json(summary, card.signatures, rows=len(card.frame), out=str(args.out), notices=result.notices))
    elif args.format == "signature":
        print("\n".join(signature_lines(summary)))
    elif not args.quiet:
        print(summary_text(summary))
        if board is not None:
            from tsteval.metrics.joint.score import leaderboard_text

            print(leaderboard_text(board, result.joint, result.notices))
        if corpus is not None and not corpus.empty:
            print(text_table(corpus, lambda v: f"{v:.2f}" if isinstance(v, float) else str(v)) + "\n")
    print(f"scorecard: {len(card.frame)} rows x {len(card.metrics)} metrics written to {args.out}", file=notices)
    if result.lm_server is not None:
        from tsteval.experiment.run.outputs import server_cost_table

        print(server_cost_table(result.lm_server), file=notices)
    return 0


def _names(aspect: str) -> str:
    from tsteval.metrics import registry

    return ", ".join(registry.names(aspect))


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``score`` to the subcommands and return its parser."""
    from tsteval.metaeval.recommended import JOINT_FACTOR, RECOMMENDED, TASK_FAMILIES
    from tsteval.metrics import registry

    score = sub.add_parser("score", help="score system outputs into a per-sentence scorecard",
                           epilog=EPILOG_SCORE, formatter_class=argparse.RawDescriptionHelpFormatter)
    score.add_argument("--classifier", action="append", default=[], metavar="NAME=DIR",
                       help=f"a saved style classifier; NAME prefixes its columns ({_names('style')}; "
                            "repeatable); NAME=hf:MODEL takes a ready-made Hugging Face sequence-classification "
                            "model (a hub id or a save_pretrained folder) as it is, without training "
                            "(--classifier-labels maps its labels to the styles)")
    src = score.add_argument_group("transfers (choose one)")
    src.add_argument("--pairs", nargs=2, metavar=("INPUTS", "OUTPUTS"),
                     help="aligned line files" + STDIN_HELP + " (for one of the two)")
    src.add_argument("--tsv", help="input<TAB>output per line" + STDIN_HELP)
    src.add_argument("--table", help="CSV/JSONL/Parquet with input, output, source_style, target_style columns"
                                     + STDIN_HELP)
    src.add_argument("--hf", metavar="DATASET", help="a Hugging Face dataset (hub id, save_to_disk folder or data "
                                                     "file) with the --table columns")
    src.add_argument("--mir", action="store_true", help="Mir et al.'s CAAE/ARAE/DAR outputs from the data root")
    src.add_argument("--dualrl", metavar="DATASET", help="DualRL system outputs (yelp or GYAFC)")
    src.add_argument("--systems", metavar="NAMES", help="score only these systems of the transfers, comma-separated "
                                                        "(--dualrl GYAFC --systems DualRL,Human0; a manifest's "
                                                        "transfers.systems); a name that is not one is an error "
                                                        "naming the nearest")
    profile = ", ".join(r.column("CLASSIFIER") + (f" template {r.template}" if r.template else "")
                        for r in RECOMMENDED)
    score.add_argument("--metrics", metavar="NAMES",
                       help="comma-separated metrics by name, each scored or refused with what it needs "
                            f"(tsteval.metrics.selection): {', '.join(sorted(registry.METRICS))}; a naturalness "
                            "scorer; NAME@SCORER (slor@smollm2); or recommended: the recommended metric of each "
                            f"aspect ({profile}), chosen by tsteval meta-eval on the rated datasets, and STRAP's "
                            f"factors of J (sbert, naturalness@{JOINT_FACTOR}) unless --joint none or another recipe "
                            "(recommended:FAMILY, FAMILY one of "
                            f"{', '.join(TASK_FAMILIES)}: that task family's profile; the content column follows "
                            "--language); or profile:FILE: the profile a "
                            "rating study chose (tsteval meta-eval RUN --ratings STUDY --choose-profile FILE)")
    content = score.add_argument_group("content preservation")
    content.add_argument("--content", default="", metavar="METRICS",
                         help=f"comma-separated: {_names('content')}; parameters after a colon, e.g. "
                              "bleu:smooth_method=floor:smooth_value=0.1")
    content.add_argument("--erase-style", action="append", default=[], metavar="NAME=FILE",
                         help="style-labelled sentences the erase modification fits its style erasers on, one per "
                              "line (repeat per style; e.g. the style classifier's training files)")
    content.add_argument("--attribution", metavar="NAME",
                         help="the --classifier (backend transformer) whose integrated gradients choose the words "
                              "of attribution-mask/-delete (default: the only transformer classifier)")
    content.add_argument("--attribution-neutral", metavar="FILE",
                         help="sentences of the domain without style, one a line: attribution-mask/-delete leave a "
                              "text unchanged unless the classifier's top probability on it is at least 0.1 above "
                              "its highest on these (default: above the uniform 1/k)")
    content.add_argument("--references", nargs="+", metavar="FILE",
                         help="human references: line i of each FILE is a reference for item i (transfer i of one "
                              "system); adds METRIC@ref columns (multi-reference BLEU/chrF, best of the references "
                              "for the others) and corpus BLEU/chrF in references.csv/.md, and the first FILE as the "
                              "scorecard's reference column (a --table's reference column is scored the same way). "
                              "'dualrl' takes the four references of the --dualrl dataset")
    content.add_argument("--lexicon", help="style lexicon JSON for remove/mask (see build-lexicon)")
    add_flags(content, GROUPED["content"])
    natural = score.add_argument_group("naturalness and content compatibility")
    natural.add_argument("--naturalness", default="", metavar="NAMES",
                         help="comma-separated: unigram, textcnn (cross-fitted adversarial classifiers, one per "
                              "system and setting), unigram-pooled (one classifier for all systems, on normalised "
                              "text), kn3 (Kneser-Ney trigram: ppl, lp_mean, slor), smollm2 (SmolLM2-135M: ppl, "
                              "lp_mean, slor)")
    natural.add_argument("--human", metavar="FILE",
                         help="human-written sentences of the target domain, one per line (default: the inputs)")
    natural.add_argument("--hh", action="append", default=[], metavar="NAME=DIR",
                         help="a pair classifier (tsteval train-pairs): adds hh@NAME = P(output matches input) "
                              "(repeatable)")
    add_flags(natural, GROUPED["naturalness"])
    ranking = score.add_argument_group("ranking")
    add_flags(ranking, GROUPED["ranking"])
    ranking.add_argument("--baseline-corpus", action="append", default=[], metavar="STYLE=FILE",
                         help="sentences of one style, one a line, for retrieve-nearest (repeatable; a STYLE given "
                              "twice joins its files)")
    src.add_argument("--table-format", choices=["csv", "jsonl", "parquet"],
                     help="format of --table (default: from its suffix; needed for -)")
    src.add_argument("--split", help="split of the --hf dataset")
    score.add_argument("--source-style", help="style of the inputs (for --pairs/--tsv; for --table/--hf when there "
                                              "is no source_style column)")
    score.add_argument("--target-style", help="style the system was asked for (as --source-style)")
    score.add_argument("--system", default=DEFAULT_SYSTEM, help="system name (for --pairs/--tsv, or without a column)")
    score.add_argument("--setting", default=DEFAULT_SETTING, help="hyperparameter setting label (as --system)")
    add_flags(score, [name for name in OPTIONS if not any(name in group for group in GROUPED.values())])
    engine = score.add_argument_group("scale-out")
    add_flags(engine, GROUPED["engine"])
    score.add_argument("--out", required=True, help="directory for scorecard.{csv,parquet}, summary.{csv,md}")
    score.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    score.add_argument("--quiet", action="store_true", help="no progress bars or summary printout")
    add_format_arguments(score)
    score.set_defaults(func=cmd_score)
    return score
