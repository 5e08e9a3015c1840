"""Metrics asked for by name, the same way from the command line (``--metrics``, ``--content``), a manifest
(``metrics.names``, ``metrics.content.metrics``) and ``tsteval.evaluate(metrics=...)``: every registered metric is
either routed to what scores it or refused with one line saying what it needs.

An entry is a metric name, optionally with parameters (``bleu:smooth_method=floor:smooth_value=0.1``), a naturalness
scorer (``kn3``, ``smollm2``, ``unigram``, ...), a naturalness column family with its scorer (``slor@smollm2``;
``slor@gemma3-270m`` with ``--language-model gemma3-270m``), ``recommended`` or ``recommended:FAMILY`` (one
metric per aspect, :mod:`tsteval.metaeval.recommended`) or ``profile:FILE`` (the profile a rating study chose,
:mod:`tsteval.metaeval.profile_file`).  A naturalness metric named alone is scored by its default scorer (``ppl``,
``lp_mean``, ``slor``: the Kneser-Ney trigram ``kn3``, or under an LM server the served model; ``naturalness``,
``more_natural``: the ``unigram`` adversarial classifier).

>>> parse_metric("bleu:smooth_method=floor:smooth_value=0.1")
('bleu', {'smooth_method': 'floor', 'smooth_value': '0.1'})
>>> s = select(["bleu:smooth_method=floor", "ppl", "slor@smollm2"], classifiers=False)
>>> s.content, s.params["bleu"]["smooth_method"], s.naturalness
(['bleu'], 'floor', ['kn3', 'smollm2'])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError, did_you_mean, quote

if TYPE_CHECKING:
    from tsteval.metaeval.profile_file import Profile

# The scorer that produces a naturalness metric named without one.
DEFAULT_SCORERS = {"naturalness": "unigram", "more_natural": "unigram", "naturalness_pooled": "unigram-pooled",
                   "ppl": "kn3", "lp_mean": "kn3", "slor": "kn3"}
RECOMMENDED = "recommended"
# The naturalness scorer that reads with the run's causal LM; ``ppl@MODEL`` (another model) routes to it too.
CAUSAL_LM_SCORER = "smollm2"
# The families it scores, named alone under an LM server (``served``): a user pointing tsteval at a server means it.
SERVED_FAMILIES = ("ppl", "lp_mean", "slor")
_CLASSIFIER = "a style classifier (--classifier NAME=DIR; classifier= in evaluate; classifiers: in a manifest)"
_HH = "an HH pair classifier (--hh NAME=DIR from tsteval train-pairs; hh= in evaluate; metrics.compatibility.hh " \
      "in a manifest)"
_AH = "an AH pair classifier and each transfer's source document (a manifest's metrics.compatibility: {ah: {NAME: " \
      "DIR}, documents: FILE})"


def parse_metric(entry: str) -> tuple[str, dict[str, str]]:
    """``NAME`` or ``NAME:KEY=VALUE[:KEY=VALUE...]`` as the name and its parameters (strings, checked by
    :meth:`~tsteval.metrics.base.Metric.check_params`)."""
    name, *pairs = str(entry).strip().split(":")
    params: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise TstevalError(f"metric {quote(entry)}: parameters look like {name}:KEY=VALUE, not {quote(pair)}")
        if key.strip() in params:
            raise TstevalError(f"metric {quote(entry)} sets {key.strip()} twice")
        params[key.strip()] = value.strip()
    return name, params


@dataclass
class Selection:
    """What a list of names asks for: ``style`` columns (every style metric of each classifier), ``content``
    metrics with their ``params``, ``naturalness`` scorers, the LM metrics ``judges`` (with ``params``; ``models``:
    the models named after their ``@``), the pair-classifier columns (``hh``, ``hh_content``,
    ``ah``) and the ``joint`` score; ``recommended``: the task family of the profile asked for ("" the pooled one,
    None when none was); ``profiles``: the profile files asked for (what their columns need is settled against the
    run by :func:`tsteval.metaeval.profile_file.apply_profiles`)."""

    style: bool = False
    content: list[str] = field(default_factory=list)
    params: dict[str, dict[str, object]] = field(default_factory=dict)
    naturalness: list[str] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    pairs: list[str] = field(default_factory=list)
    joint: bool = False
    recommended: str | None = None
    profiles: list[Profile] = field(default_factory=list)

    def add_content(self, name: str, params: dict[str, str]) -> None:
        """Add content metric ``name`` with ``params`` (checked); a metric given twice with different parameters
        is an error (its one column would not say which)."""
        self._add(self.content, name, params, "MODIFICATION")

    def add_judge(self, name: str, params: dict[str, str], model: str) -> None:
        """Add the LM metric ``name`` (column ``name@MODEL``) with ``params``; ``model`` as named after ``@``."""
        self._add(self.judges, name, params, "MODEL")
        if model and model not in self.models:
            self.models.append(model)

    def _add(self, chosen: list[str], name: str, params: dict[str, str], suffix: str) -> None:
        from tsteval.metrics.registry import METRICS

        values = METRICS[name].check_params(params)
        if name in chosen and self.params.get(name, values) != values:
            raise TstevalError(f"metric {name!r} is asked for twice with different parameters; one run scores "
                               f"one set (its column is {name}@{suffix})")
        if name not in chosen:
            chosen.append(name)
        if params:
            self.params[name] = values


def _scorer(name: str, scorer: str) -> str:
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

    if scorer not in NATURALNESS_METRICS:
        raise TstevalError(f"{name}@{scorer}: {scorer!r} is not a naturalness scorer; choose from "
                           f"{list(NATURALNESS_METRICS)}{did_you_mean(scorer, NATURALNESS_METRICS, '; ')}")
    return scorer


def select(entries: Iterable[str], *, classifiers: bool, hh: bool = False, ah: bool = False,
           served: bool = False) -> Selection:
    """Route every entry (see the module docstring); ``classifiers``, ``hh`` and ``ah`` say whether the run has
    style classifiers and pair classifiers, so that a metric that needs one it lacks is refused here; with
    ``served`` (an LM server, ``--lm-endpoint``) ``ppl``, ``lp_mean`` and ``slor`` named alone are scored by the
    served model.

    >>> [select(["lp_mean"], classifiers=False, served=served).naturalness for served in (False, True)]
    [['kn3'], ['smollm2']]
    """
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.registry import METRICS

    selection = Selection()
    for entry in _expand_profiles(entries, selection):
        if str(entry).strip().partition(":")[0] == RECOMMENDED:
            selection.recommended = str(entry).strip().partition(":")[2].strip()  # a task family, or "" (pooled)
            continue
        name, params = parse_metric(entry)
        family, _, scorer = name.partition("@")
        metric = METRICS.get(family)
        if metric is not None and is_judge(metric):
            selection.add_judge(family, params, scorer)
            continue
        if params and (metric is None or metric.aspect != "content"):
            raise TstevalError(f"{quote(entry)}: only content and LM metrics take parameters here")
        if name in NATURALNESS_METRICS:
            scorers = [name]
        elif metric is None:
            hint = did_you_mean(name, [*METRICS, *NATURALNESS_METRICS, RECOMMENDED])
            raise TstevalError(f"unknown metric {quote(name)}; " + (hint or f"choose from {sorted(METRICS)}, the "
                               f"naturalness scorers {list(NATURALNESS_METRICS)} or {RECOMMENDED}"))
        elif scorer and metric.aspect != "naturalness":
            raise TstevalError(f"{quote(name)}: only naturalness metrics name a scorer after '@'")
        elif metric.aspect == "naturalness" and scorer and scorer not in NATURALNESS_METRICS and (
                "language_model" in metric.needs):
            scorers = [CAUSAL_LM_SCORER]  # lp_mean@gemma3-270m: the causal LM scorer, with the run's model
            if scorer not in selection.models:
                selection.models.append(scorer)
        elif metric.aspect == "naturalness":
            alone = CAUSAL_LM_SCORER if served and family in SERVED_FAMILIES else DEFAULT_SCORERS[family]
            scorers = [_scorer(family, scorer or alone)]
        else:
            scorers = []
            _route(selection, metric.name, metric.aspect, params, classifiers=classifiers, hh=hh, ah=ah)
        selection.naturalness += [s for s in scorers if s not in selection.naturalness]
    return selection


def _expand_profiles(entries: Iterable[str], selection: Selection) -> list[str]:
    """``entries`` with each ``profile:FILE`` replaced by its metrics (the profile kept in ``selection``)."""
    from tsteval.metaeval.profile_file import PREFIX, read_profile

    out = []
    for entry in entries:
        if str(entry).strip().startswith(PREFIX):
            profile = read_profile(str(entry).strip()[len(PREFIX):])
            out += profile.entries
            selection.profiles.append(profile)
        else:
            out.append(entry)
    return out


def is_judge(metric: object) -> bool:
    """Whether ``metric`` reads its texts with the run's causal LM through one scorer (``cond_lp``, ``judge_*``)."""
    return "language_model" in metric.needs and metric.scorer is not None


def check_models(selection: Selection, language_model: str) -> None:
    """Refuse an LM metric named with another model than the run's (``cond_lp@gpt2`` beside the default)."""
    from tsteval.metrics.naturalness.lm_names import column_name

    other = [m for m in selection.models if m != column_name(language_model)]
    if other:
        raise TstevalError(f"the LM metrics are asked for with the model {other[0]!r}, but the run's language model "
                           f"is {language_model!r}: give --language-model {other[0]} (metrics.language_model in a "
                           "manifest, language_model= in evaluate)")


def _route(selection: Selection, name: str, aspect: str, params: dict[str, str], *, classifiers: bool, hh: bool,
           ah: bool) -> None:
    """Add the registered metric ``name`` of ``aspect`` (not naturalness) to ``selection``, or refuse it."""
    if name in ("hh", "hh_content") and not hh:
        raise TstevalError(f"{name} needs {_HH}")
    if name == "ah" and not ah:
        raise TstevalError(f"ah needs {_AH}")
    if aspect == "style":
        if not classifiers:
            raise TstevalError(f"{name} needs {_CLASSIFIER}")
        selection.style = True
    elif name in ("hh", "hh_content", "ah"):
        selection.pairs += [name] if name not in selection.pairs else []
        if name == "hh_content":
            selection.content += [name] if name not in selection.content else []
    elif aspect == "content":
        selection.add_content(name, params)
    elif aspect == "joint":  # STRAP's J: its style factor is target_acc of the first classifier
        selection.joint = True
        selection.style = selection.style or classifiers


def content_metrics(entries: Iterable[str]) -> tuple[list[str], dict[str, dict[str, object]]]:
    """Content metric entries (``--content``, ``metrics.content.metrics``) as names and their parameters; anything
    that is not a content metric is one error line."""
    from tsteval.metrics.registry import METRICS, names

    selection = Selection()
    for entry in entries:
        name, params = parse_metric(entry)
        if name not in METRICS or METRICS[name].aspect != "content":
            raise TstevalError(f"unknown content metric {quote(name)}; " + (
                did_you_mean(name, names("content")) or f"choose from {sorted(names('content'))}"))
        selection.add_content(name, params)
    return selection.content, selection.params
