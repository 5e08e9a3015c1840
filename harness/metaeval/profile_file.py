"""``--metrics profile:FILE``: the profile a rating study chose (``tsteval meta-eval RUN --ratings STUDY
--choose-profile FILE``) read back as what scores each of its columns.

A profile file maps each aspect to one scorecard column (``{"profile": {"content": "chrf@none", ...}}``) and, under
``"params"``, the parameters the run scored a column with where they differ from the metric's defaults (an LM
judge's ``template``, BLEU's smoothing), read from the run's signatures when the profile is chosen.  Every kind of
column a study can choose is scored as the run scored it:

- ``NAME@MODIFICATION`` (a content metric): the metric with that ``--modification``; ``NAME@ref`` against the
  run's references, which must then be given (``--references``, or a ``reference`` column in the table);
- ``NAME@CLASSIFIER`` (a style metric): the style metrics of the classifier of that name, which must be given;
- ``hh@NAME``, ``hh_content@NAME``, ``ah@NAME``: the pair classifier of that name, which must be given;
- ``NAME@MODEL`` (an LM metric, or a naturalness family read by a causal LM: ``judge_fluency@qwen2.5-coder-1.5b``,
  ``lp_mean@gemma3-270m``): read by that model, which becomes the run's language model, as under ``--metrics
  recommended`` (:func:`tsteval.metaeval.recommended.profile_language_model`);
- ``NAME@SCORER`` (another naturalness column: ``ppl@kn3``, ``naturalness@unigram``): named as it is.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "profile.json")
>>> _ = open(path, "w").write(json.dumps({"kind": "tsteval-profile", "profile": {
...     "style": "style_strength@ft", "content": "chrf@ref", "naturalness": "judge_fluency@smollm2"},
...     "params": {"naturalness": {"template": "2"}}}))
>>> profile = read_profile(path)
>>> profile.entries, profile.modifications, profile.references, profile.classifiers
(['style_strength', 'chrf', 'judge_fluency@smollm2:template=2'], [], ['chrf@ref'], {'style_strength@ft': 'ft'})
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tsteval.core.errors import InputError, quote, read_json

if TYPE_CHECKING:
    from tsteval.metrics.selection import Selection

PREFIX = "profile:"
KIND = "tsteval-profile"
PAIR_METRICS = ("hh", "hh_content", "ah")
_FIX = "choose the profile again with tsteval meta-eval RUN --ratings STUDY --choose-profile FILE"


@dataclass
class Profile:
    """What a profile file asks for: the ``--metrics`` ``entries``, the content ``modifications``, the columns
    scored against ``references``, the style and pair classifiers its columns name (column -> name) and the
    causal LM its LM columns are read by (column -> model) with the LM metrics it adds (``judges``)."""

    path: str
    entries: list[str] = field(default_factory=list)
    modifications: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    classifiers: dict[str, str] = field(default_factory=dict)
    pairs: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)


def read_profile(path: str) -> Profile:
    """The profile file ``path`` read into what scores each of its columns (module notes)."""
    data = read_json(path, "profile", fix="write one with tsteval meta-eval RUN --ratings STUDY --choose-profile")
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("profile"), dict):
        raise InputError("not a profile file (expected {\"kind\": \"tsteval-profile\", \"profile\": {ASPECT: "
                         "COLUMN}})", path=path, fix="write one with tsteval meta-eval ... --choose-profile FILE")
    params = data.get("params", {})
    if not isinstance(params, dict) or not all(isinstance(p, dict) for p in params.values()):
        raise InputError(f"\"params\" is {quote(params)}, not {{ASPECT: {{PARAMETER: VALUE}}}}", path=path, fix=_FIX)
    profile = Profile(path)
    for aspect, column in data["profile"].items():
        if not isinstance(column, str) or not column:
            raise InputError(f"the {aspect} column {quote(column)} is not a column name", path=path)
        _add_column(profile, aspect, column, {str(k): str(v) for k, v in params.get(aspect, {}).items()})
    return profile


def _add_column(profile: Profile, aspect: str, column: str, params: Mapping[str, str]) -> None:
    """Add what scores ``column`` (the profile's ``aspect``, scored with ``params``) to ``profile``."""
    from tsteval.metrics.content.references import REFERENCE_LABEL
    from tsteval.metrics.registry import METRICS
    from tsteval.metrics.selection import is_judge

    name, _, suffix = column.partition("@")
    metric = METRICS.get(name)
    if metric is None or metric.aspect == "joint":
        raise InputError(f"the {aspect} column {quote(column)} is no registered metric's of one aspect",
                         path=profile.path, fix="choose the profile again with this version of tsteval")
    tail = "".join(f":{key}={value}" for key, value in params.items())
    if is_judge(metric) or ("language_model" in metric.needs and suffix and _is_model(suffix)):
        profile.entries.append(column + tail)
        if suffix:
            profile.models[column] = suffix
        if is_judge(metric):
            profile.judges.append(name)
        return
    if tail and metric.aspect != "content":
        raise InputError(f"the {aspect} column {quote(column)} takes no parameters ({dict(params)})",
                         path=profile.path, fix=_FIX)
    if name in PAIR_METRICS:
        profile.entries.append(name)
        if suffix:
            profile.pairs[column] = suffix
    elif metric.aspect == "style":
        profile.entries.append(name)
        if suffix:
            profile.classifiers[column] = suffix
    elif metric.aspect == "content":
        profile.entries.append(name + tail)
        if suffix == REFERENCE_LABEL:
            profile.references.append(column)
        elif suffix and suffix not in profile.modifications:
            profile.modifications.append(suffix)
    else:
        profile.entries.append(column)


def _is_model(suffix: str) -> bool:
    """Whether a naturalness column's ``@SUFFIX`` names a causal LM rather than a naturalness scorer."""
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

    return suffix not in NATURALNESS_METRICS


def column_params(column: str, signature: str | None) -> dict[str, str]:
    """The parameters of ``column`` that its ``signature`` shows set away from the metric's defaults (what the
    profile file keeps under ``"params"``), as text.

    >>> column_params("judge_fluency@smollm2", "metric:judge_fluency|template:2|lm:x"), column_params("x@y", None)
    ({'template': '2'}, {})
    >>> column_params("bleu@none", "metric:bleu|smooth_method:floor|smooth_value:None|effective_order:True")
    {'smooth_method': 'floor'}
    """
    from tsteval.metrics.registry import find_metric

    metric = find_metric(column, signature)
    if metric is None or not signature:
        return {}
    fields = dict(part.partition(":")[::2] for part in str(signature).split("|")[1:])
    return {key: value for key, default in metric.params.items() if (value := fields.get(key, str(default))) !=
            str(default) and metric.check_params({key: value})[key] != default}


def apply_profiles(chosen: Selection, options: MutableMapping[str, object], *, classifiers: Collection[str],
                   pairs: Collection[str], references: bool | None) -> None:
    """Settle what ``chosen`` asks for against the run, the one path of the command line, a manifest and
    :func:`tsteval.evaluate`: ``--metrics recommended``
    (:func:`~tsteval.metaeval.recommended.apply_recommended`) and each profile file's modifications and model added
    to ``options`` (``modifications``, ``language_model``), then every classifier, reference set and model its
    columns need checked (``classifiers``, ``pairs``: the names given; ``references``: whether the run has
    references, None when the transfers are not read yet: the caller checks :func:`reference_columns` with
    :func:`check_references` once they are); one line naming the profile file and the column otherwise."""
    from tsteval.metaeval.recommended import profile_language_model
    from tsteval.metrics.selection import check_models

    if chosen.recommended is not None:
        from tsteval.classifiers.corpus_checks import warn
        from tsteval.metaeval.recommended import apply_recommended, family_note

        options["modifications"] = tuple(apply_recommended(chosen, list(options["modifications"]),
                                                           len(classifiers), options))
        if note := family_note(chosen.recommended):
            warn(note)
    for profile in chosen.profiles:
        given = list(options["modifications"])
        options["modifications"] = (*given, *(m for m in profile.modifications if m not in given))
        others = [j for j in chosen.judges if j not in profile.judges]
        for column, model in profile.models.items():
            options["language_model"] = profile_language_model(str(options["language_model"]), others, model,
                                                               column)
        _check_needs(profile, classifiers, pairs, references)
    check_models(chosen, str(options["language_model"]))


def reference_columns(chosen: Selection) -> tuple[tuple[str, str], ...]:
    """The profiles' columns scored against references, each as (profile file, column)."""
    return tuple((profile.path, column) for profile in chosen.profiles for column in profile.references)


def check_references(columns: Sequence[tuple[str, str]], references: bool) -> None:
    """Refuse the first of ``columns`` (:func:`reference_columns`) when the run has no ``references``."""
    if columns and not references:
        path, column = columns[0]
        raise InputError(f"the column {column} is scored against human references, and the run has none",
                         path=path, fix="give --references FILE or a reference column in the table "
                         "(metrics.content.references in a manifest, references= in evaluate)")


def _check_needs(profile: Profile, classifiers: Collection[str], pairs: Collection[str],
                 references: bool | None) -> None:
    """Refuse a profile whose columns need a classifier, a pair classifier or references the run lacks."""
    if references is not None:
        check_references([(profile.path, column) for column in profile.references], references)
    for column, name in profile.classifiers.items():
        if name not in classifiers:
            raise InputError(f"the column {column} is the style classifier {name!r}'s, which the run lacks (it has "
                             f"{sorted(classifiers)})", path=profile.path, fix=f"give --classifier {name}=DIR "
                             f"(classifiers: {{{name}: ...}} in a manifest, classifier={{{name!r}: ...}} in evaluate)")
    for column, name in profile.pairs.items():
        if name not in pairs:
            raise InputError(f"the column {column} is the pair classifier {name!r}'s, which the run lacks (it has "
                             f"{sorted(pairs)})", path=profile.path, fix=f"give the pair classifier {name} (--hh "
                             f"{name}=DIR; metrics.compatibility in a manifest; hh={{{name!r}: ...}} in evaluate)")
