"""The pair-classifier metrics (columns ``NAME@PAIR_CLASSIFIER``): De Mattei et al.'s HH and AH checks,
scored with :func:`tsteval.metrics.compatibility.compliancy.match_probability`.

``hh_content`` is HH's probability declared as a *content* measure, so that content tables (meta-evaluation, the
recommended profile) judge it beside BLEU and the embedding metrics: a pair classifier trained on pairs that share
content across styles (``tsteval train-pairs``) can learn to ignore style, which similarity metrics cannot."""

from __future__ import annotations

from tsteval.metrics.base import Metric

_LIBRARIES = ("numpy", "scikit-learn", "torch")

COMPATIBILITY = (
    Metric("hh", "compatibility", True, (0.0, 1.0), "pair classifier's probability that the output matches its "
           "input (HH)", frozenset({"pair_classifier"}), {}, _LIBRARIES),
    Metric("ah", "compatibility", True, (0.0, 1.0), "pair classifier's probability that the output matches the "
           "source document of its input (AH)", frozenset({"pair_classifier"}), {}, _LIBRARIES),
    Metric("hh_content", "content", True, (0.0, 1.0), "content preservation judged by the HH pair classifier: its "
           "probability that output and input share content", frozenset({"pair_classifier"}), {"pair": "input,output"},
           _LIBRARIES, "tsteval.metrics.compatibility.compliancy:match_probability"),
)
