"""Run an experiment manifest end to end: one scorecard, aggregates, agreement, tradeoff curves and a report.

``run_experiment`` is what ``tsteval run`` calls.  It loads the transfers and the training corpus, trains (or
reuses from the cache) the classifiers, scores every metric into one scorecard, and writes the run folder
atomically: everything goes to a temporary sibling folder first and is moved into place at the end, so a
failed run leaves no half-written output.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pandas as pd

from tsteval.core.atomic import check_output_directory, output_directory
from tsteval.core.datapaths import portable
from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash, package_version
from tsteval.core.styles import direction_label, style_names
from tsteval.experiment.compare.tradeoff import Tradeoff, direction_tradeoffs, plot_tradeoff
from tsteval.experiment.manifest.loader import HUMAN_PREFIX, Manifest, MetaEvalSpec, load_manifest
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.execute import Run, execute
from tsteval.failures import failure_counts
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.pages import write_files
from tsteval.metaeval.tables import MetaEvaluation, Rating
from tsteval.readers.ratings import empty_ratings
from tsteval.scorecard import Scorecard

# The rating column of each aspect that a run without ``meta_eval:`` judges its metrics against (a metric column's
# aspect is the one its metric declares, tsteval.metrics.registry; content ratings also judge compatibility).
HUMAN_ASPECTS = {"style": ("human_style_intensity",), "content": ("human_content_preservation",),
                 "naturalness": ("human_naturalness_output",)}


def agreement(card: Scorecard, manifest: Manifest) -> MetaEvaluation | None:
    """Every metric against the human ratings of its aspect, by :func:`tsteval.meta_evaluate` (what ``tsteval
    meta-eval`` computes): the manifest's ``meta_eval`` ratings, baselines and resamples, else each rating column of
    :data:`HUMAN_ASPECTS` the transfers fill with ``report.bootstrap_resamples``; None without a rating column."""
    spec = manifest.meta_eval
    if spec is None:
        humans = [h for h in human_columns(card.frame) if card.frame[h].notna().any()]
        spec = MetaEvalSpec(tuple((h, aspect) for aspect, columns in HUMAN_ASPECTS.items() for h in columns
                                  if h in humans), resamples=manifest.report.bootstrap_resamples)
    if not spec.ratings:
        return None
    return meta_evaluate(card, [Rating(column, aspect) for column, aspect in spec.ratings],
                         baselines=dict(spec.baselines), n_resamples=spec.resamples, seed=manifest.options.seed)


def human_columns(frame: pd.DataFrame) -> list[str]:
    """Numeric human-rating columns (``human_*``) carried by the transfers."""
    return [c for c in frame.columns if c.startswith(HUMAN_PREFIX) and pd.api.types.is_numeric_dtype(frame[c])]


def tradeoffs(card: Scorecard, manifest: Manifest) -> list[Tradeoff]:
    """Style vs content and style vs naturalness curves, for the axes the manifest names and the card has."""
    spec = manifest.tradeoff
    out = []
    if spec.style is None:
        return out
    for column, aspect in ((spec.content, "Content preservation"), (spec.naturalness, "Naturalness")):
        if column is not None and column in card.frame.columns and card.frame[column].notna().any():
            out += direction_tradeoffs(card.frame, spec.style, column, aspect, seed=manifest.options.seed,
                                       n_resamples=manifest.report.bootstrap_resamples)
    return out


def _by_aspect(curves: list[Tradeoff]) -> dict[str, list[tuple[int, Tradeoff]]]:
    """The curves (with their index) per file stem ``tradeoff_ASPECT``, one curve per direction in each."""
    stems: dict[str, list[tuple[int, Tradeoff]]] = {}
    for k, t in enumerate(curves):
        stems.setdefault(f"tradeoff_{t.y_aspect.split()[0].lower()}", []).append((k, t))
    return stems


def _slug(direction: str) -> str:
    """A direction as a file-name part: ``negative → positive`` -> ``negative-positive``."""
    return re.sub(r"[^\w]+", "-", direction).strip("-")


def significance(card: Scorecard, manifest: Manifest, recipe: object) -> pd.DataFrame | None:
    """The ``compare:`` significance matrices, one per transfer direction and column
    (:func:`tsteval.experiment.compare.significance.direction_matrices` of every system): the columns it names, or the
    tradeoff axes and J that were scored; None without ``compare:``."""
    from tsteval.experiment.compare.significance import choose_systems, direction_matrices, directions

    spec = manifest.compare
    if spec is None:
        return None
    columns = list(spec.metrics) if spec.metrics is not None else [
        c for c in (manifest.tradeoff.style, manifest.tradeoff.content, manifest.tradeoff.naturalness,
                    getattr(recipe, "column", None)) if c is not None and c in card.signatures]
    if not columns:
        raise TstevalError(f"{manifest.path}: compare: no column to compare (no tradeoff axis or J was scored); "
                           "give compare.metrics: [COLUMN, ...]")
    keys = card.frame[["system", "setting", "source_style", "target_style"]].astype(str).drop_duplicates()
    if not keys.duplicated(["source_style", "target_style"]).any():
        raise TstevalError(f"{manifest.path}: compare: no transfer direction has two systems to compare (baselines "
                           "count); add a system or baselines: [copy], or remove compare:")
    pairs = direction_matrices(card, choose_systems(card, None), directions(card.frame), columns, spec.resamples,
                               manifest.options.seed)  # resamples None: enough for Holm
    names = style_names(card.frame)
    pairs.insert(2, "direction", [direction_label(s, t, names) for s, t in
                                  zip(pairs["source_style"], pairs["target_style"], strict=True)])
    return pairs


def _without_baselines(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the systems given, not of the baselines the plan added (they carry no human ratings)."""
    from tsteval.experiment.plan.baselines import is_baseline

    return frame[~frame["system"].map(is_baseline)]


def _metadata(m: Manifest, plan: Plan, result: Run, seconds: float, out: Path) -> dict:
    card = result.card
    return {
        "name": m.name, "manifest": portable(m.path, out), "manifest_hash": content_hash(m.text), "seed": plan.seed,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(time.time() - seconds)),
        "seconds": round(seconds, 1), "rows": len(card.frame), "transfers_origin": portable(plan.transfers.origin, out),
        "systems": sorted(card.frame["system"].unique()), "settings": int(card.frame[["system", "setting"]]
                                                                           .drop_duplicates().shape[0]),
        "training_corpus": None if plan.corpus is None else {"origin": portable(plan.corpus.origin, out),
                                                             "texts": len(plan.corpus), "styles": plan.corpus.styles},
        "classifiers": {name: {"backend": m.classifiers[name].backend, "key": t.key, "identity": t.identity,
                               "cached": t.cached,
                               "accuracy": t.report.get("accuracy"), "macro_f1": t.report.get("macro_f1"),
                               "n_train": t.report.get("n_train"), "n_heldout": t.report.get("n_heldout"),
                               "params": t.report.get("params")}
                        for name, t in result.trained.items()},
        "lexicon": None if result.lexicon is None else {"origin": portable(result.lexicon.origin, out),
                                                        "words": len(result.lexicon.words)},
        "human_ratings": {"columns": [c for c in plan.transfers.frame.columns if c.startswith(HUMAN_PREFIX)],
                          "empty": empty_ratings(_without_baselines(plan.transfers.frame))},
        "versions": {lib: package_version(lib) for lib in ("tsteval", "numpy", "pandas", "scikit-learn", "torch",
                                                           "matplotlib", "sacrebleu", "POT")},
        "leakage": None if result.leakage is None else result.leakage.counts,
        "notices": result.notices, "empty_outputs": failure_counts(card.frame),
        "lm_server": result.lm_server,
        "sample": plan.transfers.extra.get("sample"),
        "tradeoff": {"style": m.tradeoff.style, "content": m.tradeoff.content, "naturalness": m.tradeoff.naturalness},
        "signatures": card.signatures,
    }


def run_experiment(manifest: Manifest | str | Path, out: str | Path | None = None,
                   quiet: bool = False, overwrite: bool = False) -> Scorecard:
    """Run ``manifest`` (a :class:`Manifest` or a manifest file) and write its run folder; returns the scorecard.

    The folder (``out``, else the manifest's ``output``) gets ``scorecard.{csv,parquet}``, ``signatures.json``,
    ``summary.{csv,md}``, ``policy.json``, ``leakage.json``, ``references.{csv,md}`` with references and
    ``leaderboard.{csv,md}`` when J was scored (as ``tsteval score``:
    :func:`~tsteval.experiment.run.outputs.write_scored`), ``tradeoff_*.csv``,
    ``plots/``, ``run.json``, ``manifest.yaml``, ``report.md``, ``report.html`` and ``explorer.html``
    (:mod:`tsteval.experiment.report.explorer`), with ``meta_eval/`` (the agreement with human ratings:
    :func:`agreement`, written as ``tsteval meta-eval`` writes it) when the transfers carry ratings and
    ``significance.csv`` with ``compare:``.  It follows
    :mod:`tsteval.core.atomic`'s rule, checked before any work: a new or empty folder, or (with ``overwrite``) a run
    folder tsteval wrote, replaced whole.
    """
    from tsteval.experiment.report.explorer import write_explorer
    from tsteval.experiment.report.report import write_report
    from tsteval.experiment.run.outputs import write_scored

    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    out = Path(out) if out is not None else manifest.output
    check_output_directory(out, "run", overwrite)
    start = time.perf_counter()
    log = (lambda _message: None) if quiet else (lambda message: print(f"[tsteval] {message}", file=sys.stderr))
    plan = Plan.from_manifest(manifest, quiet=quiet, log=log)
    result = execute(plan, log)
    card = result.card
    if result.requests is not None:  # dry run: nothing scored, nothing written
        print(result.requests.table())
        return card
    summary = card.summary(seed=manifest.options.seed, n_resamples=manifest.report.bootstrap_resamples)
    agreements = agreement(card, manifest)
    curves = tradeoffs(card, manifest)
    board = None
    if result.joint is not None:
        from tsteval.metrics.joint.score import leaderboard, sanity_notes

        board = leaderboard(card, result.joint, manifest.report.bootstrap_resamples, manifest.options.seed)
        for note in sanity_notes(board):
            result.notice(note)
    pairs = significance(card, manifest, result.joint)

    with output_directory(out, "run", overwrite) as tmp:
        write_scored(tmp, result, summary, board)
        if pairs is not None:
            pairs.to_csv(tmp / "significance.csv", index=False)
        if agreements is not None:
            (tmp / "meta_eval").mkdir()
            write_files(agreements, tmp / "meta_eval", f"{manifest.name}: agreement with human ratings")
        plots = {}
        for stem, group in _by_aspect(curves).items():
            for table in ("points", "intersections"):
                pd.concat([getattr(t, table).assign(direction=t.direction) for _, t in group],
                          ignore_index=True).to_csv(tmp / f"{stem}_{table}.csv", index=False)
            for j, (k, t) in enumerate(group):
                name = f"{stem}_{j + 1}-{_slug(t.direction)}" if len(group) > 1 else stem
                plots[k] = plot_tradeoff(t, tmp / "plots" / name,
                                         f"{manifest.name}: {t.title()}, {t.direction}")
        (tmp / "manifest.yaml").write_text(manifest.text, encoding="utf-8")
        metadata = _metadata(manifest, plan, result, time.perf_counter() - start, out)
        (tmp / "run.json").write_text(json.dumps(metadata, indent=2, default=str))
        write_report(tmp, metadata, card, summary, agreements, curves,
                     {k: [p.relative_to(tmp) for p in v] for k, v in plots.items()}, human_columns(card.frame),
                     manifest.report, manifest.tradeoff.style, manifest.tradeoff.content, board=board,
                     recipe=result.joint, pairs=pairs)
        write_explorer(tmp / "explorer.html", card, title=manifest.name, lexicon=result.lexicon,
                       placeholder=plan.placeholder, tradeoff=(manifest.tradeoff.style, manifest.tradeoff.content))
    log(f"run written to {out} in {time.perf_counter() - start:.1f} s")
    if result.lm_server is not None:
        from tsteval.experiment.run.outputs import server_cost_table

        print(server_cost_table(result.lm_server))
    return card
