"""The joint metric (column ``joint@RECIPE``), computed by :func:`tsteval.metrics.joint.score.score_joint` from
three columns of the same scorecard."""

from __future__ import annotations

from tsteval.metrics.base import Metric

JOINT = (
    Metric("joint", "joint", True, (0.0, 1.0), "per-sentence product of a style success, a content similarity and "
           "a fluency indicator (STRAP's J: accuracy x similarity x fluency), averaged over sentences",
           frozenset(), {"product": "per-sentence"}, ("numpy",), "tsteval.metrics.joint.score:joint_values"),
)
