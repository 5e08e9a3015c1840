"""The content-compatibility metrics (columns ``NAME@PAIR_CLASSIFIER``): De Mattei et al.'s HH and AH checks,
scored with :func:`tsteval.metrics.compatibility.compliancy.match_probability`."""

from __future__ import annotations

from tsteval.metrics.base import Metric

_LIBRARIES = ("numpy", "scikit-learn", "torch")

COMPATIBILITY = (
    Metric("hh", "compatibility", True, (0.0, 1.0), "pair classifier's probability that the output matches its "
           "input (HH)", frozenset({"pair_classifier"}), {}, _LIBRARIES),
    Metric("ah", "compatibility", True, (0.0, 1.0), "pair classifier's probability that the output matches the "
           "source document of its input (AH)", frozenset({"pair_classifier"}), {}, _LIBRARIES),
)
