"""``--metrics profile:FILE``: the profile a rating study chose (``tsteval meta-eval RUN --ratings STUDY
--choose-profile FILE``) read back as metric names to score.

A profile file maps each aspect to one scorecard column (``{"profile": {"content": "chrf@none", ...}}``).  A
content column ``NAME@MODIFICATION`` becomes the metric ``NAME`` and the modification; a style column the style
metric (scored with the run's classifiers); a naturalness or LM column is named as it is.

>>> import json, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "profile.json")
>>> _ = open(path, "w").write(json.dumps({"kind": "tsteval-profile", "profile": {
...     "style": "style_strength@ft", "content": "chrf@mask", "naturalness": "lp_mean@kn3"}}))
>>> read_profile(path)
(['style_strength', 'chrf', 'lp_mean@kn3'], ['mask'])
"""

from __future__ import annotations

from tsteval.core.errors import InputError, quote, read_json

PREFIX = "profile:"
KIND = "tsteval-profile"


def read_profile(path: str) -> tuple[list[str], list[str]]:
    """The metric entries and content modifications of the profile file ``path``."""
    from tsteval.metrics.registry import METRICS

    data = read_json(path, "profile", fix="write one with tsteval meta-eval RUN --ratings STUDY --choose-profile")
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("profile"), dict):
        raise InputError("not a profile file (expected {\"kind\": \"tsteval-profile\", \"profile\": {ASPECT: "
                         "COLUMN}})", path=path, fix="write one with tsteval meta-eval ... --choose-profile FILE")
    entries, modifications = [], []
    for aspect, column in data["profile"].items():
        if not isinstance(column, str) or not column:
            raise InputError(f"the {aspect} column {quote(column)} is not a column name", path=path)
        name, _, suffix = column.partition("@")
        metric = METRICS.get(name)
        if metric is None:
            raise InputError(f"the {aspect} column {quote(column)} is no registered metric's", path=path,
                             fix="choose the profile again with this version of tsteval")
        if metric.aspect in ("content", "compatibility") and suffix:
            entries.append(name)
            modifications.append(suffix)
        elif metric.aspect == "style":
            entries.append(name)
        else:
            entries.append(column)
    return entries, modifications
