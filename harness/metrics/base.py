"""One declaration per metric: what it measures, which way is better, its range, what it needs, its parameters.

A :class:`Metric` names a *column family* of the scorecard: ``sti@clf``, ``sti@other`` and ``bleu@mask`` are the
``sti`` and ``bleu`` metrics computed with different resources.  Everything that needs a metric's direction or
aspect (the tradeoff frontier, the report's worst examples, the agreement tables, the CLI's choices and the
manifest validator) asks :data:`tsteval.metrics.registry.METRICS`, never the column name.  The signature of a
score is built from the declaration's own parameters and the identities of the models and data used, as
sacreBLEU's ``get_signature()`` does.

>>> from tsteval.metrics.registry import METRICS
>>> wmd = METRICS["wmd"]
>>> wmd.aspect, wmd.higher_is_better, sorted(wmd.needs)
('content', False, ['word_vectors'])
>>> str(METRICS["target_acc"].signature(clf="mine-0123abcd", classes="0,1")).split("|")[:3]
['metric:target_acc', 'clf:mine-0123abcd', 'classes:0,1']
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from tsteval.core.signature import Signature

# ``joint``: a metric combining the columns of the other aspects (STRAP's J), scored after them.
Aspect = Literal["style", "content", "naturalness", "compatibility", "joint"]
ASPECTS: tuple[str, ...] = ("style", "content", "naturalness", "compatibility", "joint")
# What a metric may need besides the transfers; a plan provides each before anything is scored.
NEEDS = frozenset({"style_classifier", "lexicon", "word_vectors", "sentence_encoder", "human_corpus",
                   "pair_classifier", "language_model"})


@dataclass(frozen=True)
class Metric:
    """A scorecard column family (the part of a column before ``@``) and how its values read.

    ``scorer`` is ``"module:attribute"`` of the per-sentence function, imported only when asked for
    (:meth:`function`), so the registry stays cheap to import.  ``signature_name`` is the ``metric:`` field of
    its signatures when that differs from ``name`` (``adv_naturalness`` for ``naturalness``).
    """

    name: str
    aspect: Aspect
    higher_is_better: bool
    range: tuple[float, float]
    description: str
    needs: frozenset[str] = frozenset()
    params: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    libraries: tuple[str, ...] = ("numpy",)
    scorer: str | None = None
    signature_name: str | None = None

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS:
            raise ValueError(f"metric {self.name!r}: aspect {self.aspect!r} is not one of {ASPECTS}")
        if not self.needs <= NEEDS:
            raise ValueError(f"metric {self.name!r}: unknown needs {sorted(self.needs - NEEDS)}")
        lo, hi = self.range
        if not lo < hi or math.isnan(lo) or math.isnan(hi):
            raise ValueError(f"metric {self.name!r}: range {self.range} is not an interval")
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    def signature(self, libraries: tuple[str, ...] | None = None, **identities: object) -> Signature:
        """The signature of a score: this metric's parameters, then the ``identities`` (content hashes of the
        models and data used, and run options such as the modification); an identity of the same name as a
        parameter gives its value for this run.  ``libraries`` replaces the declared ones (a model's own)."""
        return Signature(self.signature_name or self.name, {**self.params, **identities},
                         self.libraries if libraries is None else libraries)

    def function(self) -> Callable[..., object]:
        """The per-sentence scorer, imported on first use."""
        if self.scorer is None:
            raise TypeError(f"metric {self.name!r} is scored by its aspect's scorer, not one function")
        module, attribute = self.scorer.split(":")
        return getattr(importlib.import_module(module), attribute)
