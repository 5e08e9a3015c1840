"""Every metric tsteval scores, by name: the one place that says what a scorecard column measures.

>>> from tsteval.metrics.registry import METRICS, metric_of
>>> metric_of("ppl@kn3").higher_is_better
False
>>> metric_of("naturalness@unigram", "metric:adv_naturalness|clf:unigram").aspect
'naturalness'
>>> sorted(name for name, m in METRICS.items() if m.aspect == "style")
['judge_style', 'logprop_style', 'sti', 'sti_norm', 'style_strength', 'target_acc', 'target_prob']
>>> names("style")
['sti', 'sti_norm', 'target_prob', 'style_strength', 'target_acc']
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tsteval.core.errors import TstevalError
from tsteval.metrics.base import Metric
from tsteval.metrics.compatibility.declarations import COMPATIBILITY
from tsteval.metrics.content.declarations import CONTENT
from tsteval.metrics.joint.declarations import JOINT
from tsteval.metrics.judges.declarations import JUDGES
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.metrics.style.declarations import STYLE

_ALL = (*STYLE, *CONTENT, *NATURALNESS, *COMPATIBILITY, *JOINT, *JUDGES)
METRICS: Mapping[str, Metric] = MappingProxyType({m.name: m for m in _ALL})
if len(METRICS) != len(_ALL):
    raise RuntimeError("two metric declarations share a name")
_BY_SIGNATURE = {m.signature_name or m.name: m for m in _ALL}


class UnknownMetricError(TstevalError):
    """A scorecard column that no declared metric produces (e.g. a ``human_*`` rating)."""


def names(aspect: str) -> list[str]:
    """The names of the metrics of one aspect that its own scorer computes, in declaration order (the LM metrics
    of :data:`~tsteval.metrics.judges.declarations.JUDGES`, which read every aspect with one causal LM, apart)."""
    return [m.name for m in _ALL if m.aspect == aspect and m not in JUDGES]


def metric_of(column: str, signature: str | None = None) -> Metric:
    """The metric a scorecard column holds: the ``metric:NAME`` field of its signature when given, else the
    column's name before ``@``; :class:`UnknownMetricError` for a column no metric produces."""
    if signature:
        first = str(signature).split("|", 1)[0]
        if first.startswith("metric:") and first[len("metric:"):] in _BY_SIGNATURE:
            return _BY_SIGNATURE[first[len("metric:"):]]
    name = column.split("@", 1)[0]
    if name in METRICS:
        return METRICS[name]
    raise UnknownMetricError(f"the column {column!r} is not a metric tsteval declares; known metrics: "
                             f"{sorted(METRICS)}")


def find_metric(column: str, signature: str | None = None) -> Metric | None:
    """:func:`metric_of`, or None for a column that is not a declared metric."""
    try:
        return metric_of(column, signature)
    except UnknownMetricError:
        return None
