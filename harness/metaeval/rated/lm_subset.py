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
from collections.abc import Sequence

import numpy as np

from tsteval.core.records import Transfers
from tsteval.metaeval.rated.datasets import (
    LAI_RATINGS,
    MIR_RATINGS,
    MIR_TEMPLATES,
    Log,
    RatedRun,
    _classifiers,
    dualrl_form,
    lai_materials,
    mir_materials,
)
from tsteval.metaeval.tables import MetaEvaluation, meta_evaluate
from tsteval.scorecard import Scorecard

LANGUAGE_MODELS = ("smollm2", "gemma3-270m", "qwen2.5-coder-1.5b")
# Qwen2.5-Coder-1.5B in bfloat16 on the CPU (README: the measured difference from float32); the others float32.
PRECISION = {"qwen2.5-coder-1.5b": "bf16"}
# LogProp of every packaged LM on every rated row (the full tables, benchmarks/results/meta_eval/; 2,975 distinct
# pairs): each model in bfloat16 on the CPU, 2-3x faster than float32 and within .05 nats of it (speed_logprop).
LOGPROP_PRECISION = "bf16"
SUBSET_INPUTS = 24
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


def lm_tables(name: str, models: Sequence[str] = LANGUAGE_MODELS, *, inputs: int = SUBSET_INPUTS, seed: int = 0,
              n_resamples: int = 1000, threads: int | None = None,
              log: Log = print) -> tuple[RatedRun, MetaEvaluation]:
    """Score the subset of rated dataset ``name`` and meta-evaluate it twice: against the aspects' baselines (the
    run's result) and against :data:`RULE_RECOMMENDATIONS` (returned beside it)."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    materials = mir_materials if name == "mir" else lai_materials
    transfers, corpus, human, notes = materials(seed, log)
    subset = input_subset(transfers, inputs, seed)
    notes |= {"inputs": inputs, "subset_rows": len(subset.frame), "seed": seed,
              "subset": "numpy.random.default_rng(seed).choice(sorted distinct inputs, inputs, replace=False)"}
    log(f"{name}: {len(subset.frame)} rows of {inputs} inputs (of {len(transfers.frame)} rows)")
    plan = Plan(subset, content=("bleu", "sbert", "bertscore_f1"), modifications=("none",), naturalness=("kn3",),
                human=human, corpus=corpus, seed=seed, threads=threads, precision="fp32")  # as committed
    card = run(plan)
    style_view = dualrl_form(subset) if name == "lai" else subset
    style = run(Plan(style_view, classifiers=_classifiers(SUBSET_CLASSIFIERS), corpus=corpus, seed=seed,
                     threads=threads))
    for column in style.metrics:
        card.add(column, style.frame[column].to_numpy(), style.signatures[column])
    notes["seconds_per_model"] = score_language_models(card, plan, models, log)
    ratings = list(MIR_RATINGS if name == "mir" else LAI_RATINGS)
    result = meta_evaluate(card, ratings, n_resamples=n_resamples, seed=seed)
    against = meta_evaluate(card, ratings, baselines={r.column: RULE_RECOMMENDATIONS[r.aspect] for r in ratings},
                            n_resamples=n_resamples, seed=seed)
    return RatedRun(name, card, result, notes), against
