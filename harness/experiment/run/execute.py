"""Executing a :class:`~tsteval.experiment.plan.plan.Plan`: every resource first (loaded, trained or built), then the
per-sentence columns (here or on Ray), then what needs whole groups of rows, into one scorecard (:func:`run`)."""

from __future__ import annotations

import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tsteval.core.errors import TstevalError
from tsteval.experiment.plan.plan import Log, Plan, resource_options, silent
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard

if TYPE_CHECKING:
    import pandas as pd

    from tsteval.experiment.run.dry_run import Requests
    from tsteval.experiment.run.leakage import Leakage
    from tsteval.experiment.run.overlap import Overlap
    from tsteval.experiment.run.sentences import SentenceJob
    from tsteval.metrics.joint.score import JointRecipe


@dataclass
class Run:
    """What :func:`execute` produced: the scorecard, the policy counts per column (:attr:`policy`: the card's, the
    empty/OOV policy's and the texts cut at a model's length limit), and the
    resources it used (trained classifiers by name, the lexicon), for the run's metadata; ``leakage``: the
    leakage counts taken before scoring (:mod:`tsteval.experiment.run.leakage`); ``lm_server``: with an LM server, its
    model and the requests and tokens the run spent, per metric (:func:`~tsteval.experiment.run.outputs.server_cost`);
    ``requests``:
    with ``plan.dry_run``, what the run would send to its LM server (nothing else is scored); ``notices``: the
    warnings that every file a user reads repeats (:meth:`notice`)."""

    card: Scorecard
    trained: dict[str, object] = field(default_factory=dict)
    lexicon: object = None
    corpus_references: pd.DataFrame | None = None
    joint: JointRecipe | None = None
    leakage: Leakage | None = None
    lm_server: dict[str, object] | None = None
    requests: Requests | None = None

    @property
    def notices(self) -> list[str]:
        """The run's warnings, kept on the scorecard (:attr:`Scorecard.notices`), so that :func:`tsteval.evaluate`
        returns them with it and ``notices.json`` is written from them."""
        return self.card.notices

    @property
    def policy(self) -> dict[str, dict[str, int]]:
        """The policy counts per column, kept on the scorecard (:attr:`Scorecard.policy`), so that
        :func:`tsteval.evaluate` returns them with it and ``policy.json`` is written from them."""
        return self.card.policy

    @policy.setter
    def policy(self, counts: dict[str, dict[str, int]]) -> None:
        self.card.policy = counts

    def notice(self, line: str) -> None:
        """A warning every file a user reads carries (the summary, the leaderboard, the report, the explorer), not
        only stderr: printed once as one warning line and kept in :attr:`notices`."""
        from tsteval.classifiers.corpus_checks import warn

        warn(line)
        self.notices.append(line)


def _attributed(card: Scorecard, classifier: object, plan: Plan) -> dict[str, tuple[list[str], list[str]]]:
    """Input and output texts of every attribution modification; integrated gradients run once per text (not on a
    failed, empty output: it stays empty)."""
    from tsteval.lexicons.attribution import AttributionMasker
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS

    frame = card.frame
    texts = sorted(set(frame["input"]) | {t for t in frame["output"] if t.strip()})
    results = AttributionMasker(classifier, threshold=plan.attribution_threshold,
                                n_steps=plan.attribution_steps).attributions(texts)
    out = {}
    for label, mode in ATTRIBUTION_MODIFICATIONS.items():
        if label in plan.modifications:
            masker = AttributionMasker(classifier, threshold=plan.attribution_threshold, mode=mode,
                                       placeholder=plan.placeholder, n_steps=plan.attribution_steps,
                                       neutral_texts=plan.attribution_neutral)
            rendered = dict(zip(texts, masker.render(masker.remask(results)), strict=True))
            out[label] = ([rendered[t] for t in frame["input"]], [rendered.get(t, t) for t in frame["output"]])
    return out


def _attribution_cuts(card: Scorecard, classifier: object, plan: Plan) -> dict[str, dict[str, int]]:
    """Per attribution modification, ``MODIFICATION@CLASSIFIER``: the rows whose input or output has words past the
    classifier's ``max_length``, which get no attribution and are never masked (:mod:`tsteval.metrics.truncation`)."""
    from tsteval.lexicons.attribution import truncated
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS
    from tsteval.metrics.truncation import cut_counts

    frame = card.frame
    texts = sorted(set(frame["input"]) | set(frame["output"]))
    cut = dict(zip(texts, truncated(classifier, texts).tolist(), strict=True))
    rows = np.array([cut[a] or cut[b] for a, b in zip(frame["input"], frame["output"], strict=True)], dtype=bool)
    return {f"{label}@{plan.attribution}": cut_counts(rows, classifier.length_limit)
            for label in ATTRIBUTION_MODIFICATIONS if label in plan.modifications}


def execute(plan: Plan, log: Log = silent) -> Run:
    """Score ``plan``: every resource first (loaded, trained or built), then the per-sentence columns (style and
    content: :func:`~tsteval.experiment.run.sentences.score_sentences`, here or on Ray with ``engine="ray"``), then
    what needs whole groups of rows (references' corpus scores, naturalness, pair classifiers); torch runs on
    ``plan.threads`` threads throughout (every neural model)."""
    from tsteval.core.devices import torch_threads

    with torch_threads(plan.threads):
        return _execute(plan, log)


def _execute(plan: Plan, log: Log) -> Run:
    """:func:`execute` inside its thread setting."""
    from tsteval.core.styles import with_style_names
    from tsteval.experiment.run.leakage import leakage
    from tsteval.experiment.run.overlap import Overlap, overlap_workers
    from tsteval.experiment.run.sentences import SentenceJob
    from tsteval.failures import answers, failure_notice
    from tsteval.metrics import registry
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, erasable
    from tsteval.metrics.languages import plan_warnings
    from tsteval.metrics.naturalness.registry import CPU_SCORERS

    result = Run(Scorecard(with_style_names(plan.transfers.frame, plan.style_name)))
    card = result.card
    if plan.baselines:
        log(f"baselines: {', '.join(plan.baselines)} added as systems"
            + "".join(f"; {name}: {n} inputs made only of style words became <deleted>"
                      for name, n in plan.baseline_notes.items() if n))
    resources = Resources(resource_options(plan), log)
    for line in plan_warnings(plan):
        result.notice(line)
    if plan.dry_run:
        from tsteval.experiment.run.dry_run import lm_requests

        # the card stays unscored; a failed output is sent nothing (:func:`~tsteval.failures.answers`)
        result.requests = lm_requests(plan, Scorecard(answers(card).frame.copy()), resources)
        return result
    models = {name: tuple(resources.get("style_classifier", name)) for name in plan.classifiers}  # (model, id)
    result.trained = resources.trained
    learned = resources.get("learned_metric").value.folder if "learned" in plan.content else None
    result.leakage = leakage(card, {name: model for name, (model, _) in models.items()}, plan.references, learned)
    for line in result.leakage.warnings:
        result.notice(line)
    failures = failure_notice(card.frame)
    if failures is not None:
        result.notice(failures)
    pairs = {key: resources.get("pair_classifier", key) for key in resources.options.pair_classifiers}
    if plan.lexicon is not None:
        result.lexicon = resources.get("lexicon").value
        log(f"lexicon: {len(result.lexicon.words)} style words from {result.lexicon.origin}")
    content = tuple(m for m in plan.content if "pair_classifier" not in registry.METRICS[m].needs)
    job = SentenceJob(models={name: models[name] for name in plan.style_names}, ground=plan.ground,
                      content=content, modifications=plan.modifications, lexicon=result.lexicon,
                      placeholder=plan.placeholder, resources=resources, params=plan.params)
    workers = 0 if plan.engine == "ray" else overlap_workers(
        plan.device, plan.workers, any(m in ATTRIBUTION_MODIFICATIONS for m in plan.modifications))
    # the rows a scorer that cannot read an empty output scores (every row unless a system failed on some)
    answered = answers(card) if plan.naturalness or plan.judges or pairs else card
    with Overlap(workers) if workers else nullcontext() as overlap:
        if overlap is not None:  # the CPU-side metrics start in other processes while the GPU's models load
            rest = overlap.start_sentences(card, job)
            if set(plan.naturalness) & set(CPU_SCORERS):
                overlap.start_naturalness(answered, plan.naturalness, resources.get("human_corpus").value,
                                          plan.seed, plan.folds, resources.options)
        for modification in plan.modifications:  # every resource built (or refused) before any score
            for name in erasable(content) if modification == ERASE else content:
                resources.scorer_arguments(registry.METRICS[name], modification, erase=modification == ERASE)
        remote = _remote_lm(plan, resources)
        _score(plan, result, answered, job, rest if overlap is not None else job, resources, models, pairs, overlap,
               log)
    if remote is not None:
        from tsteval.experiment.run.outputs import server_cost

        result.lm_server = server_cost(remote)
    return result


def _remote_lm(plan: Plan, resources: Resources) -> object:
    """With ``plan.lm_endpoint`` and an LM metric to score, the server's model, every LM metric of the plan
    refused in one line before any scoring request where the server cannot give it (else None)."""
    from tsteval.classifiers.corpus_checks import warn
    from tsteval.metrics.naturalness.registry import REMOTE_SCORES
    from tsteval.metrics.selection import CAUSAL_LM_SCORER

    lm_scores = REMOTE_SCORES if CAUSAL_LM_SCORER in plan.naturalness else ()
    if plan.lm_endpoint is None or not (plan.judges or lm_scores):
        return None
    remote = resources.get("language_model").value
    remote.require([*plan.judges, *lm_scores])
    if lm_scores and not remote.has_tokenizer:
        warn(f"slor is left out: its unigram model counts the served model's tokens, and no tokenizer loads from "
             f"{remote.tokenizer_source!r} (give --lm-tokenizer); ppl and lp_mean are scored")
    return remote


def _score(plan: Plan, result: Run, answered: Scorecard, job: SentenceJob, rest: SentenceJob, resources: Resources,
           models: dict, pairs: dict, overlap: Overlap | None, log: Log) -> None:
    """:func:`_execute` once every resource is built (``models``: the style classifiers, ``pairs``: the pair
    classifiers): every column of ``plan`` into ``result.card``; with ``overlap``, what it took is scored in its
    processes and ``rest`` of the per-sentence ``job`` here.  Naturalness, the LM metrics and the pair classifiers
    score the ``answered`` rows (:func:`~tsteval.failures.answers`), and each failed output gets their
    worst value (:func:`~tsteval.failures.fill_failures`); content is 0 on it."""
    from tsteval.experiment.run.sentences import score_sentences
    from tsteval.failures import content_failures, fill_failures
    from tsteval.metrics import registry
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS
    from tsteval.metrics.languages import record_language
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.style.scorer import swapped_labels_warning
    from tsteval.metrics.truncation import notices as truncation_notices

    card, content = result.card, job.content
    if overlap is not None:
        scores = overlap.sentences(card, rest, job, log)
    elif plan.engine == "ray":
        from tsteval.experiment.run.ray_engine import score_sentences_on_ray

        scores = score_sentences_on_ray(card, job, address=plan.address, workers=plan.workers, quiet=plan.quiet,
                                        log=log)
    else:
        attributed = {}
        if content and any(m in ATTRIBUTION_MODIFICATIONS for m in plan.modifications):
            attributed = _attributed(card, models[plan.attribution][0], plan)
            result.policy |= _attribution_cuts(card, models[plan.attribution][0], plan)
        scores = score_sentences(card, job, attributed=attributed, log=log)
    result.policy |= scores.policy
    for name, hits in scores.hits.items():
        swapped = swapped_labels_warning(card.frame["input"].tolist(), card.frame["target_style"].tolist(), hits,
                                         name)
        if swapped is not None:
            result.notice(swapped)
    if plan.references is not None:
        from tsteval.metrics.content.references import score_references

        start = time.perf_counter()
        counts, result.corpus_references = score_references(card, content, plan.references, resources=resources,
                                                            params=plan.params)
        result.policy |= counts
        log(f"content @ref ({len(plan.references)} references): {', '.join(content)} in "
            f"{time.perf_counter() - start:.1f} s")
    content_failures(card, [c for c in card.metrics
                            if registry.metric_of(c, card.signatures[c]).aspect == "content"])
    for name in plan.naturalness:
        if overlap is not None and overlap.naturalness(answered, name, log):
            continue
        start = time.perf_counter()
        result.policy |= NATURALNESS_METRICS[name](answered, resources.get("human_corpus").value, plan.seed,
                                                   plan.folds, resources=resources) or {}
        log(f"naturalness {name} in {time.perf_counter() - start:.1f} s")
    if plan.judges:
        from tsteval.metrics.judges.scorer import score_judges

        start = time.perf_counter()
        score_judges(answered, plan.judges, resources, plan.params, plan.text_form, plan.style_name,
                     plan.language_model)
        log(f"LM metrics {', '.join(plan.judges)} with {plan.language_model} in {time.perf_counter() - start:.1f} s")
    if pairs:
        from tsteval.metrics.compatibility.compliancy import match_probability, pair_rows
        from tsteval.metrics.truncation import cut_counts
    for metric, names in (("hh", plan.hh), ("ah", plan.ah)):
        rows = pair_rows(answered.frame, metric) if names else []
        for name in names:
            built = pairs[f"{metric}/{name}"]
            probability = match_probability(built.value, rows)
            columns = [metric] + (["hh_content"] if metric == "hh" and "hh_content" in plan.content else [])
            limit = getattr(built.value, "length_limit", None)  # the feature backend reads every text whole
            cut = None if limit is None else cut_counts(built.value.truncated(rows), limit)
            for column in columns:
                answered.add(f"{column}@{name}", probability,
                             str(registry.METRICS[column].signature(clf=f"{name}-{built.identity}")))
                if cut is not None:
                    result.policy[f"{column}@{name}"] = cut
    fill_failures(card, answered)
    for line in truncation_notices(result.policy, len(card.frame)):
        result.notice(line)
    record_language(card.signatures, plan.language)  # before J, whose signature hashes its parts' signatures
    result.joint = _joint(plan, card, log)
    if result.joint is not None:
        from tsteval.metrics.joint.score import fluency_warning

        fluency = fluency_warning(card, result.joint)
        if fluency is not None:
            result.notice(fluency)


def _joint(plan: Plan, card: Scorecard, log: Log) -> JointRecipe | None:
    """Score the J column of ``plan.joint`` (see :class:`Plan`); the recipe used, or None."""
    from tsteval.metrics.joint.score import missing_for_strap, score_joint, strap_recipe

    if plan.joint == "none":
        return None
    recipe = plan.joint
    if recipe in ("auto", "strap"):
        recipe = strap_recipe(card, plan.style_names)
        if recipe is None:
            missing = missing_for_strap(card, plan.style_names)
            if plan.joint == "strap":
                raise TstevalError(f"the joint score (STRAP's J) needs {' and '.join(missing)}; score them or give "
                                   "a J recipe STYLE,CONTENT,FLUENCY")
            log(f"joint score J not computed: STRAP's recipe needs {' and '.join(missing)}")
            return None
    column = score_joint(card, recipe)
    log(f"joint score {column} = {recipe.style} x {recipe.content} x {recipe.fluency}")
    return recipe


def run(plan: Plan, log: Log | None = None) -> Scorecard:
    """Score ``plan`` into one scorecard (see :func:`execute`); ``log`` gets progress lines (default: stderr
    unless the plan is quiet)."""
    if log is None:
        log = silent if plan.quiet else (lambda message: print(f"[tsteval] {message}", file=sys.stderr))
    result = execute(plan, log)
    if result.requests is not None:
        print(result.requests.table())
    return result.card
