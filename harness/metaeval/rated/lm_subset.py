"""The three-LM meta-evaluation: every packaged causal LM's columns on a declared, seeded subset of each rated
dataset, beside the aspects' baselines and the recommendations the rule was fixed against (README: "Which column
is recommended").

Qwen2.5-Coder-1.5B on every rated row takes hours on a 2-core CPU, so the rows are those of :data:`SUBSET_INPUTS`
inputs drawn by ``numpy.random.default_rng(seed)`` from the sorted distinct inputs, every column on those rows only.
Each LM scores ``ppl``/``lp_mean``/``slor`` (on the text restored to its written form), ``logprop_content``,
``logprop_style`` and the judges with one template each (:data:`JUDGE_TEMPLATES`, fixed before any of these
numbers); the style classifiers :data:`SUBSET_CLASSIFIERS`, the content columns ``bleu``, ``sbert`` and
``bertscore_f1`` at ``none``, the naturalness baseline the Kneser-Ney trigram.  Two comparisons: with the aspect's
baseline (the meta-evaluation's ``baseline.csv``) and with the recommendation the rule was fixed against
(``recommendation.csv``), which :mod:`tsteval.metaeval.profile_rule` reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import TstevalError
from tsteval.core.records import TRANSFER_COLUMNS, Corpus, Transfers
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.rated.datasets import (
    HUMAN_SAMPLE,
    LAI_RATINGS,
    MIR_RATINGS,
    MIR_TEMPLATES,
    Log,
    RatedRun,
    _sample,
    dualrl_form,
    lai_materials,
    mir_materials,
    style_classifiers,
)
from tsteval.metaeval.tables import MetaEvaluation, Rating
from tsteval.scorecard import Scorecard

LANGUAGE_MODELS = ("smollm2", "gemma3-270m", "qwen2.5-coder-1.5b")
# Qwen2.5-Coder-1.5B in bfloat16 on the CPU (README: the measured difference from float32); the others float32.
PRECISION = {"qwen2.5-coder-1.5b": "bf16"}
# LogProp of every packaged LM on every rated row (the full tables, benchmarks/results/meta_eval/; 2,975 distinct
# pairs): each model in bfloat16 on the CPU, 2-3x faster than float32 and within .05 nats of it (speed_logprop).
LOGPROP_PRECISION = "bf16"
SUBSET_INPUTS = 100  # every input of a smaller set (Lai's 80, CAE-T5's 100)
# The content columns of the subset: the naive baselines (BLEU, chrF), the recommendation and BERTScore.
SUBSET_CONTENT = ("bleu", "chrf", "sbert", "bertscore_f1")
# The style classifiers on the subset: fastText (the recommendation's), the transformer and their ensemble (issue 42).
SUBSET_CLASSIFIERS = ("fasttext", "transformer", "fasttext_transformer")
LM_METRICS = ("logprop_content", "logprop_style", "judge_style", "judge_content", "judge_fluency")
# One template per judge: those chosen on Lai with SmolLM2 (rated.MIR_TEMPLATES), fixed before these tables.
JUDGE_TEMPLATES = {name: k for name, k in MIR_TEMPLATES.items() if name != "cond_lp"}


def input_subset(transfers: Transfers, size: int, seed: int = 0) -> Transfers:
    """The rows of ``size`` inputs drawn by ``default_rng(seed)`` from the sorted distinct inputs.

    >>> pairs = Transfers.from_pairs(["b", "a", "c", "a"], ["1", "2", "3", "4"], source_style="0", target_style="1")
    >>> sorted(input_subset(pairs, 2).frame["input"])
    ['b', 'c']
    """
    inputs = np.array(sorted(set(transfers.frame["input"])), dtype=object)
    chosen = set(np.random.default_rng(seed).choice(inputs, min(size, len(inputs)), replace=False))
    frame = transfers.frame[transfers.frame["input"].isin(chosen)].reset_index(drop=True)
    return Transfers(frame, transfers.origin, dict(transfers.extra))


# The recommendations when the rule was fixed (README: "Which column is recommended", commit 0d6cf0a): the rule
# takes every difference from these, so a rerun compares with them, not with the profile the rule then chose.
RULE_RECOMMENDATIONS = {"style": "target_prob@fasttext", "content": "sbert@none", "naturalness": "lp_mean@kn3"}


def model_resources(plan: object, model: str, precision: str) -> object:
    """The run's resources (``plan``'s options) with causal LM ``model`` at ``precision``."""
    from dataclasses import replace

    from tsteval.experiment.plan.plan import resource_options
    from tsteval.metrics.resources import Resources

    return Resources(replace(resource_options(plan), language_model=model, precision=precision))


def score_language_models(card: Scorecard, plan: object, models: Sequence[str], log: Log) -> dict[str, float]:
    """Add every LM column of each of ``models`` to ``card`` through the run's resources (``plan``'s options with
    that model and its :data:`PRECISION`): the registered causal-LM naturalness scorer, LogProp and the judges;
    returns the seconds each model took."""
    from tsteval.metrics.judges.scorer import score_judges
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

    seconds = {}
    for model in models:
        start = time.perf_counter()
        resources = model_resources(plan, model, PRECISION.get(model, "fp32"))
        NATURALNESS_METRICS["smollm2"](card, plan.human, plan.seed, plan.folds, resources=resources)
        score_judges(card, LM_METRICS[:2], resources, {}, plan.text_form, plan.style_name, model)
        score_judges(card, tuple(JUDGE_TEMPLATES), resources, {}, plan.text_form, plan.style_name, model,
                     only=JUDGE_TEMPLATES)
        seconds[model] = round(time.perf_counter() - start, 1)
        log(f"{model} ({resources.get('language_model').identity}): {seconds[model]:.0f} s")
    return seconds


def score_logprop(card: Scorecard, plan: object, models: Sequence[str] = LANGUAGE_MODELS,
                  log: Log = print) -> dict[str, float]:
    """Add ``logprop_content@MODEL`` and ``logprop_style@MODEL`` of each of ``models`` (every row; the full rated
    tables carry them), each model in :data:`LOGPROP_PRECISION`; returns the seconds each model took."""
    from tsteval.metrics.judges.scorer import score_judges

    seconds = {}
    for model in models:
        start = time.perf_counter()
        resources = model_resources(plan, model, LOGPROP_PRECISION)
        score_judges(card, LM_METRICS[:2], resources, {}, plan.text_form, plan.style_name, model)
        seconds[model] = round(time.perf_counter() - start, 1)
        log(f"LogProp with {model} ({resources.get('language_model').identity}): {seconds[model]:.0f} s")
    return seconds


def subset_materials(name: str, seed: int = 0, log: Log = print) -> tuple[Transfers, Corpus, list[str], dict,
                                                                        tuple[Rating, ...], bool]:
    """Rated set ``name``'s transfers, its style training corpus (without any rated text), the human text of the
    naturalness baseline, the corpus counts, its judged ratings (each aspect's first) and whether its style
    classifiers read DualRL's written form (Lai).  Mir and Lai as their full tables are scored; every other set
    with a declared style corpus (:data:`~tsteval.metaeval.rated.datasets.STYLE_CORPORA`), the human text a seeded
    sample of the corpus's target-style texts."""
    from tsteval.metaeval.rated.datasets import STYLE_CORPORA, ratings_of
    from tsteval.readers.rated import read_rated_set
    from tsteval.readers.rated_sets import rated_set

    if name in ("mir", "lai"):
        transfers, corpus, human, notes = (mir_materials if name == "mir" else lai_materials)(seed, log)
        return transfers, corpus, human, notes, MIR_RATINGS if name == "mir" else LAI_RATINGS, name == "lai"
    spec = rated_set(name)
    if spec.style_corpus is None:
        raise TstevalError(f"{name}: the LM tables need a style training corpus; the declaration names none "
                           "(RatedSet.style_corpus)")
    rated = read_rated_set(spec)
    corpus, notes = STYLE_CORPORA[spec.style_corpus](rated)
    target = rated.frame["target_style"].iloc[0]
    human = _sample([t for t, label in zip(corpus.texts, corpus.labels, strict=True) if label == target],
                    HUMAN_SAMPLE, seed)
    log(f"{name}: style corpus {spec.style_corpus}, {notes['training_texts']} texts; human text {len(human)} "
        f"{target} texts")
    return rated.transfers, corpus, human, notes, ratings_of(spec, primary=True), False


def _cached_columns(card: Scorecard, folder: Path, key: dict, score: Callable[[], object], log: Log) -> float | None:
    """Add to ``card`` the columns ``score()`` adds, read from ``folder`` when kept there under ``key`` for
    ``card``'s rows (:mod:`~tsteval.metaeval.rated.card_cache`); returns the seconds scoring took, then or now."""
    from tsteval.metaeval.rated.card_cache import load_cached, save_cached

    cached = load_cached(folder, card.frame, key)
    if cached is not None:
        kept, notes = cached
        for column in kept.metrics:
            card.add(column, kept.frame[column].to_numpy(), kept.signatures[column])
        log(f"read {folder.name} from the cache ({folder.parent})")
        return notes.get("seconds")
    before = set(card.metrics)
    start = time.perf_counter()
    score()
    seconds = round(time.perf_counter() - start, 1)
    new = [c for c in card.metrics if c not in before]
    rows = [c for c in TRANSFER_COLUMNS if c in card.frame.columns]
    save_cached(folder, Scorecard(card.frame[[*rows, *new]].copy(), {c: card.signatures[c] for c in new}), key,
                {"seconds": seconds})
    return seconds


def lm_tables(name: str, models: Sequence[str] = LANGUAGE_MODELS, *, inputs: int = SUBSET_INPUTS, seed: int = 0,
              n_resamples: int = N_RESAMPLES, threads: int | None = None, cache: Path | None = None,
              log: Log = print) -> tuple[RatedRun, MetaEvaluation]:
    """Score the subset of rated set ``name`` (Mir, Lai or a declared set with a style corpus) and meta-evaluate it
    twice: against the aspects' baselines (the run's result) and against :data:`RULE_RECOMMENDATIONS` (returned
    beside it).  Each LM's columns are kept in ``cache`` (a scorecard folder ``MODEL``), so a rerun scores only what
    is missing."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    transfers, corpus, human, notes, ratings, dualrl = subset_materials(name, seed, log)
    subset = input_subset(transfers, inputs, seed)
    n_inputs = subset.frame["input"].nunique()
    notes |= {"inputs": n_inputs, "requested_inputs": inputs, "subset_rows": len(subset.frame), "seed": seed,
              "subset": "numpy.random.default_rng(seed).choice(sorted distinct inputs, inputs, replace=False)"}
    log(f"{name}: {len(subset.frame)} rows of {n_inputs} inputs (of {len(transfers.frame)} rows)")
    plan = Plan(subset, content=SUBSET_CONTENT, modifications=("none",), naturalness=("kn3",), references=(),
                human=human, corpus=corpus, seed=seed, threads=threads, precision="fp32")  # as committed: no @ref
    card = run(plan)
    style_view = dualrl_form(subset) if dualrl else subset
    style = run(Plan(style_view, classifiers=style_classifiers(SUBSET_CLASSIFIERS), corpus=corpus, seed=seed,
                     threads=threads))
    for column in style.metrics:
        card.add(column, style.frame[column].to_numpy(), style.signatures[column])
    notes["seconds_per_model"] = {}
    for model in models:
        def score(model: str = model) -> None:
            score_language_models(card, plan, [model], log)

        key = {"model": model, "precision": PRECISION.get(model, "fp32"), "seed": seed, "templates": JUDGE_TEMPLATES}
        seconds = (_cached_columns(card, cache / model, key, score, log) if cache is not None else
                   score_language_models(card, plan, [model], log)[model])
        if seconds is not None:
            notes["seconds_per_model"][model] = seconds
    ratings = list(ratings)
    result = meta_evaluate(card, ratings, n_resamples=n_resamples, seed=seed)
    against = meta_evaluate(card, ratings, baselines={r.column: RULE_RECOMMENDATIONS[r.aspect] for r in ratings},
                            n_resamples=n_resamples, seed=seed)
    return RatedRun(name, card, result, notes), against


def content_set_tables(name: str, *, seed: int = 0, n_resamples: int = N_RESAMPLES,
                       log: Log = print) -> tuple[RatedRun, MetaEvaluation]:
    """A content-pair set (``content_*``): :data:`SUBSET_CONTENT` on every pair, meta-evaluated against the content
    baseline and against the content recommendation of :data:`RULE_RECOMMENDATIONS` (no LM column: its LM figures
    are the content benchmark's, ``benchmarks/evidence/content_benchmark_lm.yaml``)."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run
    from tsteval.metaeval.rated.datasets import ratings_of
    from tsteval.readers.rated import read_rated_set
    from tsteval.readers.rated_sets import rated_set

    spec = rated_set(name)
    rated = read_rated_set(spec)
    log(f"{name}: {len(rated.frame)} pairs, content {list(SUBSET_CONTENT)}")
    card = run(Plan(rated.transfers, content=SUBSET_CONTENT, modifications=("none",), seed=seed, precision="fp32"))
    ratings = list(ratings_of(spec, primary=True))
    notes = {"inputs": rated.frame["input"].nunique(), "subset_rows": len(rated.frame), "seed": seed,
             "subset": "every pair"}
    result = meta_evaluate(card, ratings, n_resamples=n_resamples, seed=seed)
    against = meta_evaluate(card, ratings, baselines={r.column: RULE_RECOMMENDATIONS[r.aspect] for r in ratings},
                            n_resamples=n_resamples, seed=seed)
    return RatedRun(name, card, result, notes), against
