"""The style metrics (columns ``NAME@CLASSIFIER``), scored by :func:`tsteval.metrics.style.scorer.score_style`."""

from __future__ import annotations

import math

from tsteval.metrics.base import Metric

_LIBRARIES = ("numpy", "scikit-learn", "torch")
_NEEDS = frozenset({"style_classifier"})

STYLE = (
    Metric("sti", "style", True, (-1.0, 1.0), "style transfer intensity: EMD between the style distributions of "
           "input and output, signed + toward the target style", _NEEDS, {"ground": "nominal", "signed": "yes"},
           _LIBRARIES),
    Metric("sti_norm", "style", True, (-1.0, 1.0), "STI over the largest EMD reachable on that side "
           "(Reed & Beck)", _NEEDS, {"ground": "nominal", "signed": "yes"}, _LIBRARIES),
    Metric("target_prob", "style", True, (0.0, 1.0), "the classifier's probability of the target style for the "
           "output", _NEEDS, {}, _LIBRARIES),
    Metric("style_strength", "style", True, (-math.inf, math.inf), "log-odds of the target style for the output, "
           "ln p_t - ln(1 - p_t), with p_t clipped to [clip, 1 - clip]: target_prob on an unbounded scale",
           _NEEDS, {"clip": 1e-6}, _LIBRARIES),
    Metric("target_acc", "style", True, (0.0, 1.0), "1 when the classifier's top style for the output is the "
           "target style", _NEEDS, {}, _LIBRARIES),
)
