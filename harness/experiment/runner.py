"""Run an experiment manifest end to end: one scorecard, aggregates, agreement, tradeoff curves and a report.

``run_experiment`` is what ``tsteval run`` calls.  It loads the transfers and the training corpus, trains (or
reuses from the cache) the classifiers, scores every metric into one scorecard, and writes the run folder
atomically: everything goes to a temporary sibling folder first and is moved into place at the end, so a
failed run leaves no half-written output.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.classifiers.training import TrainedClassifier, train_classifier
from tsteval.core.atomic import check_output_directory, output_directory
from tsteval.core.errors import TstevalError
from tsteval.core.records import Corpus, Transfers
from tsteval.core.signature import content_hash, package_version
from tsteval.experiment import agreement
from tsteval.experiment.manifest import HUMAN_PREFIX, CorpusSpec, Manifest, TransfersSpec, load_manifest
from tsteval.experiment.tradeoff import Tradeoff, plot_tradeoff, tradeoff_curves
from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
from tsteval.scorecard import Scorecard

# Which human rating column each aspect's metrics are checked against; a metric column belongs to an aspect
# by its name before "@" (style: the score_style metrics; content: CONTENT_METRICS; naturalness: registered).
HUMAN_ASPECTS = {"style": ("human_style_intensity",), "content": ("human_content_preservation",),
                 "naturalness": ("human_naturalness_output",)}
# Agreement statistics offered by tsteval.experiment.agreement, by name; each maps (metric, human) -> a result
# with ``r`` (or ``statistic``) and ``p_value``.  New statistics there are picked up without changes here.
AGREEMENT_STATISTICS = ("pearson", "spearman", "kendall")


@dataclass
class RunContext:
    """What a run has loaded, passed to naturalness scorers and to the report."""

    manifest: Manifest
    transfers: Transfers
    corpus: Corpus | None
    quiet: bool
    classifiers: dict[str, TrainedClassifier] = field(default_factory=dict)
    lexicon: object = None
    log: Callable[[str], None] = print


def load_transfers(spec: TransfersSpec, seed: int) -> Transfers:
    """The transfers a manifest names (published, table or systems x settings x files), sampled if asked."""
    from tsteval.readers import loaders, published

    if spec.published == "mir":
        transfers = published.load_mir()
    elif spec.published == "dualrl":
        transfers = published.load_dualrl(spec.dataset or "yelp", spec.systems_filter)
    elif spec.table is not None:
        transfers = loaders.load_table_transfers(spec.table, hp_cols=spec.hp_cols)
    else:
        parts = []
        for system in spec.systems:
            for setting in system.settings:
                offset = 0
                for f in setting.files:
                    meta = {"system": system.name, "setting": setting.label, "source_style": f.source_style,
                            "target_style": f.target_style}
                    part = (loaders.load_tsv_transfers(f.tsv, **meta) if f.tsv is not None
                            else loaders.load_parallel_files(f.inputs, f.outputs, **meta))
                    frame = part.frame.assign(item=part.frame["item"] + offset)
                    for name, value in setting.hyperparameters.items():
                        frame[f"hp.{name}"] = value
                    offset += len(frame)
                    parts.append(Transfers(frame, part.origin))
        transfers = Transfers.concat(parts)
    frame = transfers.frame
    if spec.published == "mir" and spec.systems_filter:
        frame = frame[frame["system"].isin(spec.systems_filter)]
    if spec.sample is not None:
        items = np.sort(frame["item"].unique())
        if spec.sample < len(items):
            keep = np.random.default_rng(seed).choice(items, spec.sample, replace=False)
            frame = frame[frame["item"].isin(keep)]
    if frame is not transfers.frame:
        transfers = Transfers(frame, transfers.origin, transfers.extra)
    return transfers


def load_corpus(spec: CorpusSpec, transfers: Transfers, seed: int) -> Corpus:
    """A training corpus without the evaluation inputs (unless ``exclude_inputs: false``), subsampled if asked."""
    from tsteval.readers import loaders, published

    inputs = set(transfers.frame["input"]) if spec.exclude_inputs else set()
    if spec.published == "yelp":
        corpus: Corpus = published.load_yelp_corpus(splits=spec.splits, exclude=inputs)
    else:
        corpus = (loaders.load_style_files(dict(spec.style)) if spec.style
                  else loaders.load_table_corpus(spec.table, text_col=spec.text_col, label_col=spec.label_col))
        corpus = corpus.without(inputs) if inputs else corpus
    if spec.max_per_style is not None:
        rng = np.random.default_rng(seed)
        labels = np.asarray(corpus.labels)
        keep = np.sort(np.concatenate([
            rng.choice(idx, min(spec.max_per_style, idx.size), replace=False)
            for idx in (np.flatnonzero(labels == style) for style in corpus.styles)]))
        corpus = Corpus([corpus.texts[i] for i in keep], [corpus.labels[i] for i in keep], corpus.origin)
    return corpus


def _train(ctx: RunContext) -> None:
    """Train (or load from the cache) every classifier of the manifest; classifiers sharing a corpus share it."""
    corpora: dict[str, Corpus] = {}
    for name, spec in ctx.manifest.classifiers.items():
        params = dict(spec.params)
        if spec.backend in {"textcnn", "transformer"}:
            params.setdefault("verbose", not ctx.quiet)
        corpus = ctx.corpus
        if spec.corpus is not None:
            if repr(spec.corpus) not in corpora:
                corpora[repr(spec.corpus)] = load_corpus(spec.corpus, ctx.transfers, ctx.manifest.seed)
            corpus = corpora[repr(spec.corpus)]
        start = time.perf_counter()
        trained = train_classifier(spec.backend, corpus, params, seed=ctx.manifest.seed, heldout=spec.heldout)
        ctx.classifiers[name] = trained
        ctx.log(f"classifier {name} ({spec.backend}): {'cache hit' if trained.cached else 'trained'} "
                f"{trained.key} in {time.perf_counter() - start:.1f} s, held-out accuracy "
                f"{trained.report.get('accuracy')}")


def _lexicon(ctx: RunContext) -> None:
    spec = ctx.manifest.lexicon
    if spec is None:
        return
    from tsteval.lexicons.builder import build_lexicon
    from tsteval.lexicons.lexicon import Lexicon

    ctx.lexicon = Lexicon.load(spec.file) if spec.file is not None else build_lexicon(
        ctx.corpus, penalty=spec.penalty, C=spec.C, D=spec.D, seed=ctx.manifest.seed)
    ctx.log(f"lexicon: {len(ctx.lexicon.words)} style words from {ctx.lexicon.origin}")


def _word_vectors(ctx: RunContext, modification: str) -> object:
    """The word vectors for ``modification``: GloVe, a saved folder, or word2vec on the training corpus
    (on the style-masked corpus for masking, as Mir et al. did)."""
    content = ctx.manifest.metrics.content
    from tsteval.metrics.content.word_vectors import WordVectors, load_glove, train_word2vec

    if content.vectors == "glove":
        return load_glove()
    if content.vectors == "dir":
        return WordVectors.load(content.vectors_dir)
    texts = ctx.corpus.texts
    if modification == "mask":
        from tsteval.lexicons.modify import modify_texts

        texts = modify_texts(texts, ctx.lexicon, "mask", content.placeholder)
    return train_word2vec(texts, seed=ctx.manifest.seed)


def score(ctx: RunContext) -> Scorecard:
    """Every metric of the manifest as columns of one scorecard over the transfers."""
    from tsteval.metrics.content.scorer import CONTENT_METRICS, score_content
    from tsteval.metrics.style.scorer import score_style

    metrics = ctx.manifest.metrics
    card = Scorecard.from_transfers(ctx.transfers)
    for name in metrics.style.classifiers:
        trained = ctx.classifiers[name]
        score_style(card, trained.model, name, model_id=trained.key, ground=metrics.style.ground)
    content = metrics.content
    needs_vectors = any(CONTENT_METRICS[m].needs == "word_vectors" for m in content.metrics)
    for modification in content.modifications:
        start = time.perf_counter()
        vectors = _word_vectors(ctx, modification) if needs_vectors else None
        counts = score_content(card, content.metrics, modification=modification, lexicon=ctx.lexicon,
                               placeholder=content.placeholder, word_vectors=vectors)
        flagged = {c: {k: v for k, v in n.items() if v} for c, n in counts.items() if any(n.values())}
        ctx.log(f"content @{modification}: {', '.join(content.metrics)} in {time.perf_counter() - start:.1f} s"
                + (f"; empty/OOV policy applied: {flagged}" if flagged else ""))
    for name in metrics.naturalness:
        start = time.perf_counter()
        NATURALNESS_METRICS[name](card, ctx.corpus.texts if ctx.corpus is not None else None, ctx.manifest.seed, 5)
        ctx.log(f"naturalness {name} in {time.perf_counter() - start:.1f} s")
    return card


def metric_aspect(column: str, manifest: Manifest) -> str | None:
    """The aspect (style, content, naturalness) a scorecard metric column measures."""
    from tsteval.metrics.style.scorer import STYLE_METRICS

    base = column.split("@")[0]
    if base in STYLE_METRICS:
        return "style"
    if base in manifest.metrics.content.metrics:
        return "content"
    if "@" in column and column.split("@")[-1] in manifest.metrics.naturalness:
        return "naturalness"
    return None


def _statistic_fields(result: object) -> dict[str, float]:
    value = getattr(result, "r", None)
    value = getattr(result, "statistic", None) if value is None else value
    return {"value": float(value), "p_value": float(getattr(result, "p_value", np.nan)),
            "low": float(getattr(result, "fisher_low", getattr(result, "low", np.nan))),
            "high": float(getattr(result, "fisher_high", getattr(result, "high", np.nan))),
            "n": int(getattr(result, "n", 0))}


def agreement_frame(card: Scorecard, manifest: Manifest) -> pd.DataFrame:
    """Every metric against every human rating of its aspect, per system and pooled ("all"), for each
    statistic ``tsteval.experiment.agreement`` offers.  Unrated rows are left out; a constant sample gives no row."""
    statistics = {n: getattr(agreement, n) for n in AGREEMENT_STATISTICS if hasattr(agreement, n)}
    frame = card.frame
    rows = []
    for metric in card.metrics:
        aspect = metric_aspect(metric, manifest)
        for human in HUMAN_ASPECTS.get(aspect, ()):
            if human not in frame.columns:
                continue
            if not pd.api.types.is_numeric_dtype(frame[human]):  # loaders parse ratings; never coerce here
                continue
            rated = frame[frame[human].notna()]
            groups = [("all", rated), *rated.groupby("system", sort=False)]
            for system, group in groups:
                for stat, fn in statistics.items():
                    try:
                        result = fn(group[metric].to_numpy(float), group[human].to_numpy(float))
                    except TstevalError:
                        continue
                    rows.append({"aspect": aspect, "human": human, "metric": metric, "system": system,
                                 "statistic": stat, **_statistic_fields(result)})
    return pd.DataFrame(rows, columns=["aspect", "human", "metric", "system", "statistic", "value", "p_value",
                                       "low", "high", "n"])


def human_columns(frame: pd.DataFrame) -> list[str]:
    """Numeric human-rating columns (``human_*``) carried by the transfers."""
    return [c for c in frame.columns if c.startswith(HUMAN_PREFIX) and pd.api.types.is_numeric_dtype(frame[c])]


def empty_ratings(frame: pd.DataFrame) -> dict[str, int]:
    """Per human-rating column (``human_*``), how many transfers have no rating (an empty cell)."""
    counts = {c: int(frame[c].isna().sum()) for c in frame.columns if c.startswith(HUMAN_PREFIX)}
    return {c: n for c, n in counts.items() if n}


def report_empty_ratings(frame: pd.DataFrame) -> None:
    """One line on stderr (also under ``--quiet``: it is about the data, not progress) when ratings are empty."""
    counts = empty_ratings(frame)
    if counts:
        print(f"[tsteval] human ratings: {sum(counts.values())} empty cells are no rating and are left out of the "
              f"agreement statistics ({', '.join(f'{c} {n} of {len(frame)}' for c, n in counts.items())})",
              file=sys.stderr)


def tradeoffs(card: Scorecard, manifest: Manifest) -> list[Tradeoff]:
    """Style vs content and style vs naturalness curves, for the axes the manifest names and the card has."""
    spec = manifest.tradeoff
    out = []
    if spec.style is None:
        return out
    for column, aspect in ((spec.content, "Content preservation"), (spec.naturalness, "Naturalness")):
        if column is not None and column in card.frame.columns and card.frame[column].notna().any():
            out.append(tradeoff_curves(card.frame, spec.style, column, aspect, seed=manifest.seed,
                                       n_resamples=manifest.report.bootstrap_resamples))
    return out


def _metadata(ctx: RunContext, card: Scorecard, seconds: float) -> dict:
    m = ctx.manifest
    return {
        "name": m.name, "manifest": str(m.path), "manifest_hash": content_hash(m.text), "seed": m.seed,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(time.time() - seconds)),
        "seconds": round(seconds, 1), "rows": len(card.frame), "transfers_origin": ctx.transfers.origin,
        "systems": sorted(card.frame["system"].unique()), "settings": int(card.frame[["system", "setting"]]
                                                                           .drop_duplicates().shape[0]),
        "training_corpus": None if ctx.corpus is None else {"origin": ctx.corpus.origin, "texts": len(ctx.corpus),
                                                            "styles": ctx.corpus.styles},
        "classifiers": {name: {"backend": m.classifiers[name].backend, "key": t.key, "cached": t.cached,
                               "accuracy": t.report.get("accuracy"), "macro_f1": t.report.get("macro_f1"),
                               "n_train": t.report.get("n_train"), "n_heldout": t.report.get("n_heldout"),
                               "params": t.report.get("params")}
                        for name, t in ctx.classifiers.items()},
        "lexicon": None if ctx.lexicon is None else {"origin": str(ctx.lexicon.origin),
                                                     "words": len(ctx.lexicon.words)},
        "human_ratings": {"columns": [c for c in ctx.transfers.frame.columns if c.startswith(HUMAN_PREFIX)],
                          "empty": empty_ratings(ctx.transfers.frame)},
        "versions": {lib: package_version(lib) for lib in ("tsteval", "numpy", "pandas", "scikit-learn", "torch",
                                                           "matplotlib", "sacrebleu", "POT")},
        "signatures": card.signatures,
    }


def run_experiment(manifest: Manifest | str | Path, out: str | Path | None = None,
                   quiet: bool = False, overwrite: bool = False) -> Scorecard:
    """Run ``manifest`` (a :class:`Manifest` or a manifest file) and write its run folder; returns the scorecard.

    The folder (``out``, else the manifest's ``output``) gets ``scorecard.{csv,parquet}``, ``signatures.json``,
    ``summary.{csv,md}``, ``agreement.csv``, ``tradeoff_*.csv``, ``plots/``, ``run.json``, ``manifest.yaml``,
    ``report.md`` and ``report.html``.  It follows :mod:`tsteval.core.atomic`'s rule, checked before any work: a new
    or empty folder, or (with ``overwrite``) a run folder tsteval wrote, replaced whole.
    """
    from tsteval.experiment.report import write_report

    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    out = Path(out) if out is not None else manifest.output
    check_output_directory(out, "run", overwrite)
    start = time.perf_counter()
    log = (lambda _message: None) if quiet else (lambda message: print(f"[tsteval] {message}", file=sys.stderr))
    transfers = load_transfers(manifest.transfers, manifest.seed)
    log(f"transfers: {len(transfers)} rows from {transfers.origin}")
    report_empty_ratings(transfers.frame)
    corpus = load_corpus(manifest.corpus, transfers, manifest.seed) if manifest.needs_corpus() else None
    if corpus is not None:
        log(f"training corpus: {len(corpus)} texts, styles {corpus.styles}")
    ctx = RunContext(manifest, transfers, corpus, quiet, log=log)
    _train(ctx)
    _lexicon(ctx)
    card = score(ctx)
    summary = card.summary(seed=manifest.seed, n_resamples=manifest.report.bootstrap_resamples)
    agreements = agreement_frame(card, manifest)
    curves = tradeoffs(card, manifest)

    with output_directory(out, "run", overwrite) as tmp:
        card.write(tmp, summary)
        agreements.to_csv(tmp / "agreement.csv", index=False)
        plots = {}
        for k, t in enumerate(curves):
            stem = f"tradeoff_{t.y_aspect.split()[0].lower()}"
            t.points.to_csv(tmp / f"{stem}_points.csv", index=False)
            t.intersections.to_csv(tmp / f"{stem}_intersections.csv", index=False)
            plots[k] = plot_tradeoff(t, tmp / "plots" / stem, f"{manifest.name}: {t.x_aspect} vs {t.y_aspect}")
        (tmp / "manifest.yaml").write_text(manifest.text, encoding="utf-8")
        metadata = _metadata(ctx, card, time.perf_counter() - start)
        (tmp / "run.json").write_text(json.dumps(metadata, indent=2, default=str))
        write_report(tmp, metadata, card, summary, agreements, curves,
                     {k: [p.relative_to(tmp) for p in v] for k, v in plots.items()}, human_columns(card.frame),
                     manifest.report, manifest.tradeoff.style, manifest.tradeoff.content)
    log(f"run written to {out} in {time.perf_counter() - start:.1f} s")
    return card
