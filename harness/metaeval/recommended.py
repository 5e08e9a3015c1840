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
                   "by MiniLM fine-tuned with the transformer backend's recipe, +.232 [+.122, +.342] over "
                   "target_prob@fasttext pooled across Mir (+.182) and Lai (+.325); with fastText +.073 (issue 42: "
                   "benchmarks/results/meta_eval_style.md)"),
    Recommendation("content", "sbert", "none", f"{EVIDENCE}: unmasked MiniLM cosine: +.004 over bleu@none on Mir "
                   "(not significant), +.342 on Lai; no LM column beats it pooled (LogProp's content -.063 with "
                   f"Qwen, {RULE})"),
    Recommendation("naturalness", "lp_mean", "gemma3-270m", f"{RULE}: Gemma 3 270M's mean token log-probability "
                   "of the output restored to its written form, +.252 [+.115, +.389] over lp_mean@kn3 pooled across "
                   "Mir (+.075, not significant) and Lai (+.378); its SLOR +.249 next"),
)
# The run's causal LM when the profile scores the naturalness column above, and the column without an LM (the fast
# profile: the Kneser-Ney trigram, the recommendation before the three-LM tables; make demo scores it).
LANGUAGE_MODEL = "gemma3-270m"
FAST_NATURALNESS = "lp_mean@kn3"
# The naturalness scorer that reads the run's causal LM (its columns are named by the model).
LM_SCORER = "smollm2"
# STRAP's fluency factor of J (tsteval.metrics.joint.score.STRAP_FLUENCY), scored so a leaderboard can rank.
JOINT_FACTOR = "unigram"


def recommended_options(content: list[str], modifications: list[str], naturalness: list[str],
                        classifiers: int, joint: object = "auto") -> tuple[list[str], list[str], list[str]]:
    """``content``, ``modifications`` and ``naturalness`` of ``tsteval score`` with the recommended ones added (the
    naturalness column's scorer is the causal-LM one, ``smollm2``, run with :data:`LANGUAGE_MODEL`: see
    :func:`recommended_language_model`), and STRAP's fluency factor when ``joint`` (the run's ``joint`` option) is
    ``"auto"`` or ``"strap"``; the recommended style metric needs a style classifier (``classifiers`` = how many were
    given)."""
    if classifiers == 0:
        raise TstevalError("--metrics recommended includes the style metric style_strength: give --classifier "
                           "NAME=DIR (train one with tsteval train-classifier transformer, the backend it was chosen "
                           "with)")
    for r in RECOMMENDED:
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
