"""One declaration per metric: what it measures, which way is better, its range, what it needs, its parameters.

A :class:`Metric` names a *column family* of the scorecard: ``sti@clf``, ``sti@other`` and ``bleu@mask`` are the
``sti`` and ``bleu`` metrics computed with different resources.  Everything that needs a metric's direction or
aspect (the tradeoff frontier, the report's worst examples, the agreement tables, the CLI's choices and the
manifest validator) asks :data:`tsteval.metrics.registry.METRICS`, never the column name.  The signature of a
score is built from the declaration's settings, the parameter values used and the identities of the models and
data used, as sacreBLEU's ``get_signature()`` does.

``needs`` name resources of :data:`tsteval.metrics.resources.RESOURCES` (built once per run and handed to the
scorer as keyword arguments); ``params`` are the scorer's own keyword arguments with their defaults, settable from
the command line (``--content bleu:smooth_method=floor``), a manifest and ``tsteval.evaluate``; ``settings`` are
fixed facts recorded in every signature (the tokenisation, the solver).  An LM metric (one that needs the
``language_model``) declares what it needs from an LM server in ``server``, of :data:`SERVER_NEEDS` (``chat``: chat
completions with top log-probabilities; ``prompt``: prompt log-probabilities; ``tokenizer``: the served model's
tokenizer on this machine), which :meth:`tsteval.backends.remote.RemoteLM.require` checks before any scoring request.

>>> from tsteval.metrics.registry import METRICS
>>> wmd = METRICS["wmd"]
>>> wmd.aspect, wmd.higher_is_better, sorted(wmd.needs)
('content', False, ['word_vectors'])
>>> str(METRICS["target_acc"].signature(clf="mine-0123abcd", classes="0,1")).split("|")[:3]
['metric:target_acc', 'clf:mine-0123abcd', 'classes:0,1']
>>> METRICS["bleu"].check_params({"smooth_method": "floor", "smooth_value": "0.1"})
{'smooth_method': 'floor', 'smooth_value': 0.1, 'effective_order': True}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from tsteval.core.errors import TstevalError, quote
from tsteval.core.signature import Signature
from tsteval.metrics.resources import RESOURCES, imported

if TYPE_CHECKING:
    import numpy as np

    from tsteval.metrics.content.policy import MetricResult

# ``joint``: a metric combining the columns of the other aspects (STRAP's J), scored after them.
Aspect = Literal["style", "content", "naturalness", "compatibility", "joint"]
ASPECTS: tuple[str, ...] = ("style", "content", "naturalness", "compatibility", "joint")
SERVER_NEEDS: tuple[str, ...] = ("chat", "prompt", "tokenizer")
_TRUE, _FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def _frozen(mapping: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Computed:
    """What :meth:`Metric.compute` returns: the per-sentence ``values``, the ``corpus`` figure (the metric's own
    corpus-level score where it has one, e.g. corpus BLEU from summed statistics, else the mean) and the
    empty/OOV policy ``counts``."""

    values: Sequence[float]
    corpus: float
    counts: Mapping[str, int]


@dataclass(frozen=True)
class Metric:
    """A scorecard column family (the part of a column before ``@``) and how its values read.

    ``scorer`` is ``"module:attribute"`` of the per-sentence function, imported only when asked for
    (:meth:`function`), so the registry stays cheap to import; ``corpus_scorer`` the same for a corpus-level
    score computed from all pairs at once (``compute``'s ``corpus``; default: the mean).  ``choices`` limits a
    parameter to listed values.  ``signature_name`` is the ``metric:`` field of its signatures when that differs
    from ``name`` (``adv_naturalness`` for ``naturalness``).  ``pooled_by`` names the parameters that, when true,
    make every value depend on all the pairs scored together (BERTScore's ``idf``: document frequencies over the
    inputs): such a metric is scored on the whole table, never per block (:meth:`whole_table`).  ``server``: what an
    LM metric needs from an LM server (see the module docstring).  ``version`` goes up when the metric's values
    change, so that no cached score of an earlier version is read for it (the study engine's columns).
    """

    name: str
    aspect: Aspect
    higher_is_better: bool
    range: tuple[float, float]
    description: str
    needs: frozenset[str] = frozenset()
    settings: Mapping[str, object] = field(default_factory=dict)
    libraries: tuple[str, ...] = ("numpy",)
    scorer: str | None = None
    signature_name: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    choices: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    corpus_scorer: str | None = None
    pooled_by: tuple[str, ...] = ()
    server: frozenset[str] = frozenset()
    version: int = 1

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS:
            raise ValueError(f"metric {self.name!r}: aspect {self.aspect!r} is not one of {ASPECTS}")
        unknown = sorted(set(self.needs) - set(RESOURCES))
        if unknown:
            raise ValueError(f"metric {self.name!r}: unknown needs {unknown}; resources: {sorted(RESOURCES)}")
        if set(self.server) - set(SERVER_NEEDS) or ("language_model" in self.needs) != bool(self.server):
            raise ValueError(f"metric {self.name!r}: an LM metric declares what it needs from an LM server, of "
                             f"{SERVER_NEEDS}, and only an LM metric does (server={sorted(self.server)})")
        lo, hi = self.range
        if not lo < hi or math.isnan(lo) or math.isnan(hi):
            raise ValueError(f"metric {self.name!r}: range {self.range} is not an interval")
        if set(self.choices) - set(self.params) or set(self.pooled_by) - set(self.params):
            raise ValueError(f"metric {self.name!r}: choices or pooled_by for undeclared parameters")
        for name in ("settings", "params", "choices"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def signature(self, libraries: tuple[str, ...] | None = None, *, param_values: Mapping[str, object] | None = None,
                  **identities: object) -> Signature:
        """The signature of a score: this metric's settings, its parameter values (``param_values``, checked, over the
        defaults), then the ``identities`` (content hashes of the models and data used, and run options such as
        the modification); an identity of the same name as a setting gives its value for this run.
        ``libraries`` replaces the declared ones (a model's own)."""
        return Signature(self.signature_name or self.name,
                         {**self.settings, **self.check_params(param_values or {}), **identities},
                         self.libraries if libraries is None else libraries)

    def whole_table(self, given: Mapping[str, object]) -> bool:
        """Whether, with the parameters ``given``, every value depends on all the pairs scored together (a
        parameter of ``pooled_by`` is true), so that the metric must see the whole table at once."""
        values = self.check_params(given)
        return any(bool(values[name]) for name in self.pooled_by)

    def check_params(self, given: Mapping[str, object]) -> dict[str, object]:
        """Every parameter's value: ``given`` (strings from a command line are converted to the default's type)
        over the defaults; an unknown name or a bad value is one :class:`TstevalError` line."""
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            known = ", ".join(f"{k}={v}" for k, v in self.params.items()) or "none"
            raise TstevalError(f"metric {self.name!r} has no parameter {quote(unknown[0])}; its parameters: {known}")
        values = dict(self.params)
        for key, value in given.items():
            values[key] = self._converted(key, value)
        return values

    def _converted(self, key: str, value: object) -> object:
        default, choices = self.params[key], self.choices.get(key)
        fix = f"e.g. {self.name}:{key}={default}" if choices is None else f"one of {list(choices)}"
        try:
            if isinstance(default, bool):
                if isinstance(value, str) and value.lower() in (*_TRUE, *_FALSE):
                    value = value.lower() in _TRUE
                elif not isinstance(value, bool):
                    raise ValueError
            elif isinstance(default, int) and not isinstance(value, bool):
                value = int(value)
            elif isinstance(default, float) or (default is None and value not in (None, "none")):
                value = float(value)
                if not math.isfinite(value):
                    raise ValueError
            elif default is None:
                value = None
            else:
                value = str(value)
        except (TypeError, ValueError):
            raise TstevalError(f"metric {self.name!r}: parameter {key}={quote(str(value))} is not a "
                               f"{'number' if default is None else type(default).__name__} ({fix})") from None
        if choices is not None and value not in choices:
            raise TstevalError(f"metric {self.name!r}: parameter {key}={quote(str(value))} is not one of "
                               f"{list(choices)}")
        return value

    def clipped(self, values: object) -> np.ndarray:
        """``values`` clipped into the declared :attr:`range` (NaN stays NaN): floating error puts e.g. the BLEU of
        an output identical to its reference at 100.00000000000004, which the scorecard stores as 100.

        >>> from tsteval.metrics.registry import METRICS
        >>> METRICS["bleu"].clipped([100.00000000000004, -1e-15, 50.0]).tolist()
        [100.0, 0.0, 50.0]
        """
        import numpy as np

        low, high = self.range
        return np.clip(np.asarray(values, dtype=float), low, high)

    def function(self) -> Callable[..., object]:
        """The per-sentence scorer, imported on first use."""
        if self.scorer is None:
            raise TypeError(f"metric {self.name!r} is scored by its aspect's scorer, not one function")
        return imported(self.scorer)

    def compute(self, inputs: Sequence[str], outputs: Sequence[str], *, resources: object = None,
                **params: object) -> Computed:
        """Score ``outputs`` against ``inputs`` pair by pair (a content metric), with ``params`` over the
        declared defaults and the resources it needs built with default options (or taken from ``resources``,
        a :class:`~tsteval.metrics.resources.Resources`).

        >>> from tsteval.metrics.registry import METRICS
        >>> result = METRICS["chrf"].compute(["the food was cold"], ["the food was warm"], char_order=4)
        >>> round(float(result.values[0]), 2), round(result.corpus, 2)
        (67.74, 67.74)

        (``sacrebleu.sentence_chrf("the food was warm", ["the food was cold"], char_order=4)`` is 67.74 too.)
        """
        if self.scorer is None or self.aspect != "content":
            raise TstevalError(f"metric {self.name!r} is not scored pair by pair from texts alone: ask for it "
                               "through tsteval.evaluate or tsteval score")
        if "language_model" in self.needs:
            raise TstevalError(f"metric {self.name!r} reads the target style's name too: ask for it through "
                               "tsteval.evaluate or tsteval score")
        if isinstance(inputs, str) or isinstance(outputs, str) or len(inputs) != len(outputs):
            raise TstevalError("inputs and outputs are aligned lists of texts")
        from tsteval.metrics.resources import Resources

        values = self.check_params(params)
        resources = resources if resources is not None else Resources()
        kwargs, _ = resources.scorer_arguments(self)
        result: MetricResult = self.function()(list(inputs), list(outputs), **kwargs, **values)
        corpus = (float(imported(self.corpus_scorer)(list(inputs), list(outputs), **kwargs, **values))
                  if self.corpus_scorer else float(result.values.mean()) if len(result.values) else math.nan)
        return Computed(self.clipped(result.values), corpus, result.counts.as_dict())

