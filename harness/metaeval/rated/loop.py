"""The loop closed: a study's ratings meta-evaluate every metric column of its run (``tsteval meta-eval RUN --ratings
STUDY``) and choose the run's profile by the committed rule (``--choose-profile OUT.json``).

The ratings a metric is judged against are each rated pair's **mean over annotators** of each question (the
quality-control pairs left out; an output identical to another system's for the same input takes that pair's),
joined to the run's rows on system, setting, item and direction; the tables are
:func:`tsteval.metaeval.engine.meta_evaluate`'s (bootstrap clustered by input, Williams' test).  Each metric is
compared with the current recommendation of its aspect (:data:`tsteval.metaeval.recommended.RECOMMENDED`) where
the run has that column, else the earlier one (:data:`~tsteval.metaeval.recommended.EARLIER`).

The profile is chosen by the rule the evidence pages apply, version 2 (:func:`tsteval.metaeval.study.rule.apply_rule`,
the same function), with the study's questions of an aspect as its sets (every question weighs the same) and the
recommendation as the reference: a column's gain is the mean over questions of its sentence-level Pearson r minus
the reference's, its interval from the study engine's resampler
(:func:`tsteval.metaeval.study.runner.judge_ratings`: clustered by input, the draws shared by every column and
question); a candidate gains at least +.02 with the interval above 0 and is significantly worse on no question; the
candidates tied with the best (their difference's interval holds 0) go to the cheapest by CPU seconds per 1,000
pairs of the committed speed benchmark (:data:`tsteval.metaeval.study.rule.COSTS`), where a column without a measured
cost is priced above every measured one (never preferred in a tie over one; the reason says so).

The rule is not applied to an aspect, and the default column is kept, when its ratings cannot carry the decision:
fewer than :data:`MIN_PAIRS` rated pairs (the intervals are then too wide for a difference to mean anything), or a
split-half reliability below :data:`MIN_RELIABILITY` (the study shows its ratings are mostly noise).  Where the
reliability is unknown (one rating per pair, the commonest crowdsourcing design) the rule's own evidence, a gain
whose clustered 95% interval lies above 0, decides on :data:`MIN_PAIRS_UNKNOWN` rated pairs or more, and the profile
file marks the aspect ``reliability_unknown`` (docs/meta-evaluation.md gives the reasoning).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.annotate.reliability import Exclusion, ceiling, collect, controls, matrices, split_half
from tsteval.annotate.study import KEYS, Study
from tsteval.core.errors import InputError, quote
from tsteval.core.records import DEFAULT_SETTING
from tsteval.metaeval.tables import MetaEvaluation
from tsteval.scorecard import Scorecard

MIN_PAIRS = 30
MIN_RELIABILITY = 0.5
MIN_PAIRS_UNKNOWN = 100  # rated pairs an aspect of unknown reliability needs (a correlation's interval about +-0.15)
PROFILE_KIND = "tsteval-profile"


def study_ratings(study: Study, ratings: pd.DataFrame | None = None) -> tuple[pd.DataFrame, dict[str, str]]:
    """The mean rating of each rated pair per question (columns ``human_QUESTION``) of ``ratings`` (default: every
    annotator's, :func:`~tsteval.annotate.reliability.collect`) with the join keys, and the rating columns'
    aspects."""
    ratings = collect(study).ratings if ratings is None else ratings
    rated_as = study.rated_as
    ratings = study.rated(ratings)
    means = ratings.groupby(["pair_id", "question"])["value"].mean().unstack("question")
    keyed = study.pairs.set_index("pair_id").loc[rated_as.index, list(KEYS)]
    frame = keyed.assign(rated_as=rated_as).join(means, on="rated_as", how="inner").drop(columns="rated_as")
    columns = {q: f"human_{q}" for q in study.template.names if q in frame.columns}
    frame = frame.rename(columns=columns).reset_index(drop=True)
    return frame, {f"human_{q}": study.template.question(q).aspect for q in columns}


def ceilings(study: Study, seed: int = 0, ratings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per question: its aspect, the pairs with two ratings or more, the split-half reliability and the ceiling,
    and the overlap copies it rests on (planned, counted as a second rating, left out: :func:`controls`), of
    ``ratings`` (default: every annotator's)."""
    ratings = collect(study).ratings if ratings is None else ratings
    rated = study.pairs.loc[study.pairs["kind"] == "rated", "pair_id"].tolist()
    used = controls(study, ratings).set_index("question")
    rows = []
    for question, table in matrices(study.rated(ratings), study.template.names, rated).items():
        reliability, units = split_half(table.to_numpy(dtype=float), seed=seed)
        rows.append({"rating": f"human_{question}", "aspect": study.template.question(question).aspect,
                     "pairs": int(table.shape[1]), "pairs_2_raters": units, "split_half": reliability,
                     "ceiling": ceiling(reliability), "overlap_planned": int(used.at[question, "overlap_planned"]),
                     "overlap_used": int(used.at[question, "overlap_used"]),
                     "overlap_own": int(used.at[question, "overlap_own"])})
    return pd.DataFrame(rows)


def overlap_words(row: dict) -> str:
    """What a :func:`ceilings` row rests on, in words ("" for a study without overlap copies)."""
    if not row.get("overlap_planned"):
        return ""
    return (f" ({row['overlap_used']} of {row['overlap_planned']} overlap copies a second rating, "
            f"{row['overlap_own']} left out: rated only by their pair's own annotator)")


def current_profile(columns: list[str]) -> dict[str, str]:
    """The recommended column of each aspect that the run has (style: ``style_strength`` of its first classifier),
    else the earlier recommendation of content and naturalness where the run has it (:data:`EARLIER`)."""
    from tsteval.metaeval.recommended import EARLIER, RECOMMENDED

    style = [c for c in columns if c.startswith("style_strength@")]
    out = {}
    for r in RECOMMENDED:
        wanted = r.column(style[0].partition("@")[2] if style else "")
        if wanted in columns:
            out[r.aspect] = wanted
        elif EARLIER.get(r.aspect) in columns:
            out[r.aspect] = EARLIER[r.aspect]
    return out


def check_texts(card: Scorecard, origin: str, study: Study) -> None:
    """Refuse a run that does not hold, for every rated pair of ``study``, a row with its keys and the very input
    and output its annotators rated (the run it was planned from does; a run scored again on other outputs does
    not): one line naming the first pair that differs."""
    frame = card.frame.assign(setting=card.frame["setting"] if "setting" in card.frame else DEFAULT_SETTING)
    frame = frame.astype({k: str for k in KEYS}).drop_duplicates(list(KEYS))
    rated = study.pairs[study.pairs["pair_id"].isin(study.rated_as.index)]
    joined = rated.merge(frame[[*KEYS, "input", "output"]].assign(in_run=True), on=list(KEYS), how="left",
                         suffixes=("", "_run"))
    fix = f"compare the study with the run it was planned from ({study.info['run']}) or one holding its texts"
    for pair in joined.itertuples():
        where = f"pair {pair.pair_id} (system {pair.system}, setting {pair.setting}, item {pair.item})"
        if pair.in_run is not True:
            raise InputError(f"the run has no row for {where}", path=origin, fix=fix)
        for column in ("input", "output"):
            if getattr(pair, column) != getattr(pair, f"{column}_run"):
                raise InputError(f"the {column} of {where} is not the text its annotators rated: "
                                 f"{quote(getattr(pair, f'{column}_run'))} in the run, {quote(getattr(pair, column))} "
                                 "rated", path=origin, fix=fix)


def meta_evaluate_study(run: str | Path, study: Study, *, n_resamples: int = N_RESAMPLES, seed: int = 0,
                        exclusion: Exclusion | None = None) -> MetaEvaluation:
    """Every metric column of ``run`` against ``study``'s mean ratings (without the annotators ``exclusion`` leaves
    out), each compared with its aspect's current recommendation where the run has it; ``info["ceiling"]`` holds
    :func:`ceilings`, ``info["collected"]`` the exclusions and "can't judge" answers in words, ``info["params"]`` the
    parameters each column was scored with away from its defaults (what scores it again: a profile file's)."""
    from tsteval.metaeval.engine import meta_evaluate
    from tsteval.metaeval.profile_file import column_params
    from tsteval.metaeval.tables import load_card

    card, origin = load_card(run)
    check_texts(card, origin, study)
    collected = collect(study, exclusion)
    frame, aspects = study_ratings(study, collected.ratings)
    if not aspects:
        raise InputError("the study has no ratings yet", path=study.path,
                         fix="collect some with tsteval annotate serve, or import a platform's results file")
    baselines = current_profile(list(card.metrics))
    result = meta_evaluate(card, aspects, frame, list(KEYS), baselines=baselines, n_resamples=n_resamples,
                           seed=seed)
    result.info["ceiling"] = ceilings(study, seed, collected.ratings).to_dict("records")
    result.info["excluded"], result.info["collected"] = collected.excluded, collected.lines()
    result.info["study"] = study.info["signature"]
    result.info["params"] = {c: p for c in card.metrics if (p := column_params(c, card.signatures.get(c)))}
    result.info["rule"] = rule_evidence(card, frame, aspects, baselines, study, n_resamples, seed)
    return result


def rule_evidence(card: Scorecard, ratings: pd.DataFrame, aspects: dict[str, str], reference: dict[str, str],
                  study: Study, n_resamples: int, seed: int) -> dict:
    """Rule v2 (:func:`tsteval.metaeval.study.rule.apply_rule`) on the run's columns against ``ratings`` (the mean
    rating of each pair per question, ``aspects``: question column -> aspect), each question a set of an in-memory
    study, ``reference``: aspect -> column (module notes)."""
    from dataclasses import replace

    from tsteval.metaeval.study.declaration import Rule, StudySet
    from tsteval.metaeval.study.declaration import Study as Declaration
    from tsteval.metaeval.study.rule import COSTS, apply_rule
    from tsteval.metaeval.study.runner import judge_ratings
    from tsteval.metaeval.tables import Rating, join_ratings, registered_columns

    frame, _ = join_ratings(card.frame, ratings, list(KEYS), str(study.path), list(aspects))
    columns = registered_columns(card)
    label = str(study.info["signature"])
    declared = Declaration(study.path, f"study {label}", (StudySet(label, label, study=study.path),), (),
                           statistics=("pearson",), levels=("sentence",), resamples=n_resamples, seed=seed,
                           rule=Rule({a: c for a, c in reference.items() if a in aspects.values()}, COSTS))
    evidence = judge_ratings(frame, [Rating(c, a) for c, a in aspects.items()],
                             {c.column: frame[c.column].to_numpy(dtype=float) for c in columns},
                             {c.column: c for c in columns}, declared, 0, label, str(study.path))
    questions = [replace(e, label=e.rating, primary=True) for e in evidence]
    return apply_rule(declared, questions, {e.label: {} for e in questions}, measured_only=False)


@dataclass
class ProfileChoice:
    """The profile chosen on a study: ``profile`` (aspect -> column), the ``default`` it started from, per aspect
    the reason, the annotators ``excluded`` from the ratings it rests on, ``params``: per aspect, the parameters
    its column was scored with away from the defaults (an LM judge's template), the ``rule``'s settings and, per
    aspect it decided, its ``evidence`` (:func:`_evidence`)."""

    profile: dict[str, str]
    default: dict[str, str]
    reasons: dict[str, str] = field(default_factory=dict)
    reliability_unknown: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    params: dict[str, dict[str, str]] = field(default_factory=dict)
    rule: dict = field(default_factory=dict)
    evidence: dict[str, dict] = field(default_factory=dict)

    def to_json(self, study: Study, run: str) -> dict:
        """The profile file's content (read back by ``tsteval score --metrics profile:FILE``)."""
        return {"kind": PROFILE_KIND, "profile": self.profile, "params": self.params, "default": self.default,
                "reasons": self.reasons, "reliability_unknown": self.reliability_unknown, "excluded": self.excluded,
                "study": study.info["signature"], "run": run, "rule": self.rule, "evidence": self.evidence,
                "min_pairs": MIN_PAIRS, "min_reliability": MIN_RELIABILITY, "min_pairs_unknown": MIN_PAIRS_UNKNOWN}


def choose_profile(result: MetaEvaluation) -> ProfileChoice:
    """Apply rule v2 (``result.info["rule"]``, :func:`rule_evidence`) to ``result`` of :func:`meta_evaluate_study`,
    aspect by aspect, where the ratings can carry it (module notes)."""
    default = {a: c for a, c in result.info["baselines"].items() if c is not None}
    default = {result.info["ratings"][rating]: column for rating, column in default.items()}
    profile, reasons, unknown, evidence = dict(default), {}, [], {}
    rule = result.info["rule"]
    picks = {p["aspect"]: p for group in rule["groups"] for p in group["picks"]}
    ceiling_of = {row["rating"]: row for row in result.info["ceiling"]}
    used = result.counts.set_index("rating")["used"].to_dict() if len(result.counts) else {}
    for aspect, column in default.items():
        ratings = [r for r, a in result.info["ratings"].items() if a == aspect]
        if not all(np.isfinite(ceiling_of[r]["split_half"]) for r in ratings):
            unknown.append(aspect)
        weak = next((reason for r in ratings if (reason := _too_weak(r, used.get(r, 0), ceiling_of[r]["split_half"]))),
                    None)
        if weak or aspect not in picks:
            reasons[aspect] = f"kept {column}: {weak or 'its ratings judge no other column of the run'}"
            continue
        pick = picks[aspect]
        profile[aspect], evidence[aspect] = pick["chosen"], _evidence(pick)
        reasons[aspect] = _reason(pick, rule["min_gain"])
        if aspect in unknown:
            reasons[aspect] += "; reliability unknown (one rating per pair: the gain's interval is the evidence)"
    params = {aspect: result.info["params"][column] for aspect, column in profile.items()
              if column in result.info.get("params", {})}
    settings = {k: rule[k] for k in ("version", "min_gain", "statistic", "level", "costs")}
    return ProfileChoice(profile, default, reasons, unknown, dict(result.info.get("excluded", {})), params,
                         settings, evidence)


def _evidence(pick: dict) -> dict:
    """What the profile file keeps of the rule's decision on an aspect: the reference, the chosen column's gain
    over it with its interval (None where the reference stays), the columns tied with the best candidate, the costs
    of these (None: not measured), the questions, and every column's row as the rule computed it."""
    row = next((r for r in pick["columns"] if r["column"] == pick["chosen"]), None)
    tied = [r["column"] for r in pick["columns"] if r["tied"]]
    cost_of = {r["column"]: r["cost"] for r in pick["columns"]} | {pick["reference"]: pick["reference_cost"]}
    costs = {c: cost_of[c] for c in dict.fromkeys([pick["reference"], pick["chosen"], *tied])}
    return {"reference": pick["reference"], "chosen": pick["chosen"], "gain": None if row is None else row["gain"],
            "interval": None if row is None else [row["lo"], row["hi"]], "tied": tied, "costs": costs,
            "questions": pick["sets"], "columns": pick["columns"]}


def _reason(pick: dict, min_gain: float) -> str:
    """The rule's decision on an aspect in words."""
    rows, reference, chosen = pick["columns"], pick["reference"], pick["chosen"]
    questions = len(pick["sets"])
    measure = (f"mean over {questions} question{'s' if questions != 1 else ''} of the sentence-level Pearson r; "
               f"rule v2: at least {min_gain:+.2f}, the interval above 0, worse on no question")
    if chosen == reference:
        best = next((r for r in rows if r["gain"] is not None), None)
        lead = "" if best is None else f"; the largest gain: {best['column']} {_gain(best)}"
        return f"kept {reference}: no column qualifies ({measure}){lead}"
    row = next(r for r in rows if r["column"] == chosen)
    text = f"{chosen} gains {_gain(row)} over {reference} ({measure})"
    tied = [r for r in rows if r["tied"]]
    others = [r["column"] for r in tied if r["column"] != chosen]
    if others:
        cost = "no measured cost" if row["cost"] is None else f"{row['cost']:g} CPU s per 1,000 pairs"
        text += (f"; tied with {', '.join(others)} (the difference from the best candidate holds 0): the cheapest "
                 f"({cost})")
    unmeasured = [r["column"] for r in tied if r["cost"] is None]
    if unmeasured:
        text += (f"; {', '.join(unmeasured)} {'has' if len(unmeasured) == 1 else 'have'} no measured cost "
                 "(column_costs.json): priced above every measured column, never preferred in a tie over one")
    return text


def _gain(row: dict) -> str:
    """A rule row's gain and interval as text (an interval end the resamples did not give: n/a)."""
    lo, hi = ("n/a" if v is None else f"{v:+.3f}" for v in (row["lo"], row["hi"]))
    return f"{row['gain']:+.3f} [{lo}, {hi}]"


def _too_weak(rating: str, pairs: int, reliability: float) -> str | None:
    """Why the ratings ``rating`` (``pairs`` rated pairs used, split-half ``reliability``, NaN when unknown) cannot
    carry the rule's decision, or None (module notes)."""
    if np.isfinite(reliability) and (pairs < MIN_PAIRS or reliability < MIN_RELIABILITY):
        return (f"{rating} has {pairs} rated pairs and split-half reliability {reliability:.2f} (the rule needs "
                f"{MIN_PAIRS} pairs and {MIN_RELIABILITY}; with fewer or noisier ratings a metric's lead is chance)")
    if not np.isfinite(reliability) and pairs < MIN_PAIRS_UNKNOWN:
        return (f"{rating} has {pairs} rated pairs and unknown reliability (one rating per pair); the rule needs "
                f"{MIN_PAIRS_UNKNOWN} rated pairs then, or a second rating of a share of them (tsteval annotate plan "
                f"--overlap 0.2) and {MIN_PAIRS}")
    return None


def write_profile(choice: ProfileChoice, study: Study, run: str, out: str | Path, overwrite: bool = False) -> None:
    """Write the profile file atomically (an existing profile is replaced only with ``overwrite``)."""
    from tsteval.core.atomic import output_file

    with output_file(out, "a profile", is_profile, overwrite) as tmp:
        Path(tmp).write_text(json.dumps(choice.to_json(study, run), indent=1) + "\n", encoding="utf-8")


def is_profile(path: Path) -> bool:
    """Whether ``path`` holds a profile file (so that ``--overwrite`` may replace it)."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("kind") == PROFILE_KIND
    except (OSError, ValueError, AttributeError):
        return False
