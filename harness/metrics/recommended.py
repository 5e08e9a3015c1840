"""``--metrics recommended``: one metric per aspect, chosen from the meta-evaluation on the rated datasets.

Each choice points to the evidence (``benchmarks/results/meta_eval/``, produced by ``make meta-eval``).  Nothing
here is fitted on the ratings: a choice is one registered metric, picked by its sentence-level correlation.

>>> [r.column("ft") for r in RECOMMENDED]
['target_prob@ft', 'sbert@none', 'lp_mean@kn3']

A leaderboard ranks by the joint score J, whose default recipe is STRAP's (:mod:`tsteval.metrics.joint.score`);
its fluency factor is the adversarial classifier ``naturalness@unigram``, which is not a recommended metric but is
added as J's factor (:data:`JOINT_FACTOR`) unless J is off or given another recipe:

>>> recommended_options([], ["none"], [], classifiers=1, joint="auto")[2]
['kn3', 'unigram']
"""

from __future__ import annotations

from dataclasses import dataclass

from tsteval.core.errors import TstevalError

EVIDENCE = "benchmarks/results/meta_eval/{mir,lai}/metaeval.md"


@dataclass(frozen=True)
class Recommendation:
    """One aspect's metric: a registered metric name and its variant (content: the modification; naturalness:
    the scorer; style: any classifier the user gives)."""

    aspect: str
    metric: str
    variant: str
    evidence: str

    def column(self, classifier: str = "") -> str:
        """The scorecard column it produces (a style column takes the classifier's name)."""
        return f"{self.metric}@{classifier if self.aspect == 'style' else self.variant}"


RECOMMENDED = (
    Recommendation("style", "target_prob", "", f"{EVIDENCE}: the output's target-style probability, the baseline "
                   "itself; style_strength (its log-odds) is +.045 on Mir and +.029 (not significant) on Lai, where "
                   "every classifier trained here correlates negatively; STI fits ratings of the change better "
                   "(Mir: sti@ensemble +.042)"),
    Recommendation("content", "sbert", "none", f"{EVIDENCE}: unmasked MiniLM cosine: +.004 over bleu@none on Mir "
                   "(not significant), +.342 on Lai"),
    Recommendation("naturalness", "lp_mean", "kn3", f"{EVIDENCE}: the Kneser-Ney trigram's mean token "
                   "log-probability, the baseline itself: perplexity, SLOR and the adversarial classifiers are worse "
                   "on Mir; SmolLM2's SLOR on restored text is +.324 better on Lai but -.365 worse on Mir"),
)
# STRAP's fluency factor of J (tsteval.metrics.joint.score.STRAP_FLUENCY), scored so a leaderboard can rank.
JOINT_FACTOR = "unigram"


def recommended_options(content: list[str], modifications: list[str], naturalness: list[str],
                        classifiers: int, joint: object = "auto") -> tuple[list[str], list[str], list[str]]:
    """``content``, ``modifications`` and ``naturalness`` of ``tsteval score`` with the recommended ones added, and
    STRAP's fluency factor when ``joint`` (the run's ``joint`` option) is ``"auto"`` or ``"strap"``; the
    recommended style metric needs a style classifier (``classifiers`` = how many were given)."""
    if classifiers == 0:
        raise TstevalError("--metrics recommended includes the style metric target_prob: give --classifier "
                           "NAME=DIR (train one with tsteval train-classifier)")
    for r in RECOMMENDED:
        if r.aspect == "content":
            content = [*content, r.metric] if r.metric not in content else content
            modifications = [*modifications, r.variant] if r.variant not in modifications else modifications
        elif r.aspect == "naturalness" and r.variant not in naturalness:
            naturalness = [*naturalness, r.variant]
    if joint in ("auto", "strap") and JOINT_FACTOR not in naturalness:
        naturalness = [*naturalness, JOINT_FACTOR]
    return content, modifications, naturalness
