"""``--metrics recommended``: one metric per aspect, chosen from the meta-evaluation on the rated datasets.

Each choice points to the evidence (``benchmarks/results/meta_eval/``, produced by ``make meta-eval``).  Nothing
here is fitted on the ratings: a choice is one registered metric, picked by its sentence-level correlation.

>>> [r.column("ft") for r in RECOMMENDED]
['target_prob@ft', 'sbert@none', 'lp_mean@kn3']
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
                   "itself (with the ensemble classifier +.019 on Mir, equal on Lai); STI fits ratings of the change "
                   "better (Mir: sti@ensemble +.042 over the baseline)"),
    Recommendation("content", "sbert", "none", f"{EVIDENCE}: unmasked MiniLM cosine: +.004 over bleu@none on Mir "
                   "(not significant), +.342 on Lai"),
    Recommendation("naturalness", "lp_mean", "kn3", f"{EVIDENCE}: the Kneser-Ney trigram's mean token "
                   "log-probability, the baseline itself: perplexity, SLOR and the adversarial classifiers are worse "
                   "on Mir; SmolLM2's SLOR is +.305 better on Lai but -.462 worse on Mir"),
)


def recommended_options(content: list[str], modifications: list[str], naturalness: list[str],
                        classifiers: int) -> tuple[list[str], list[str], list[str]]:
    """``content``, ``modifications`` and ``naturalness`` of ``tsteval score`` with the recommended ones added; the
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
    return content, modifications, naturalness
