"""Babakov et al.'s (2022) own computation of BLEU and chrF, a hook of the content benchmark's page
(``content_benchmark.yaml``): the steps from their figures to tsteval's, each scored on every pair of a set."""

from __future__ import annotations

import numpy as np

# column -> (metric, the output is the hypothesis, sentence BLEU's effective order)
VARIANTS = {"bleu@upstream": ("bleu", False, False), "chrf@upstream": ("chrf", False, False),
            "bleu@reversed": ("bleu", True, False), "chrf@reversed": ("chrf", True, False),
            "bleu@reversed-effective": ("bleu", True, True)}


def upstream_scores(inputs: list[str], outputs: list[str], metric: str, reverse: bool = False,
                    effective_order: bool = False) -> np.ndarray:
    """BLEU or chrF as upstream ``rank_metrics.py`` computes them: ``sacrebleu`` corpus scores of one pair, the
    input (``text1``) the hypothesis and the output (``text2``) the reference, 13a tokenisation, exponential
    smoothing; ``reverse``: the output the hypothesis (tsteval's direction); ``effective_order``: sentence BLEU's.

    >>> round(float(upstream_scores(["the food was good ."], ["the food was bad ."], "bleu")[0]), 1)
    42.7
    """
    from sacrebleu.metrics import BLEU, CHRF

    scorer = BLEU(effective_order=effective_order) if metric == "bleu" else CHRF()
    pairs = zip(outputs, inputs, strict=True) if reverse else zip(inputs, outputs, strict=True)
    if effective_order:
        return np.array([scorer.sentence_score(a, [b]).score for a, b in pairs])
    return np.array([scorer.corpus_score([a], [[b]]).score for a, b in pairs])


def upstream(data: object, *, seed: int) -> dict[str, np.ndarray]:
    """The :data:`VARIANTS` of every row of ``data``'s set (``seed`` unused: nothing is drawn)."""
    inputs, outputs = data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist()
    return {column: upstream_scores(inputs, outputs, *variant) for column, variant in VARIANTS.items()}
