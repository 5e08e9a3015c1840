"""``NAME=VALUE`` options (``--classifier lr=clf/``, ``--param C=2``), shared by the command line and plans."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from tsteval.core.errors import TstevalError, quote

COLUMN_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def parse_value(text: str) -> object:
    """A ``--param`` value: JSON when it parses (numbers, lists, booleans), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def check_column_name(name: str, flag: str) -> str:
    """``name`` when it may be part of scorecard columns and signatures (``sti@NAME``), else an error."""
    if not COLUMN_NAME.fullmatch(name):
        raise TstevalError(f"{flag} name {quote(name)} may hold only letters, digits, '_', '-' and '.' "
                           "(it names scorecard columns such as sti@NAME)")
    return name


def key_value_pairs(items: Sequence[str], flag: str, value: str = "VALUE",
                    column_names: bool = False) -> list[tuple[str, str]]:
    """``NAME=VALUE`` options as ``(NAME, VALUE)`` pairs in the order given (a NAME may repeat); a malformed one
    or an empty name is an error.

    With ``column_names`` a NAME becomes part of scorecard columns and signatures (``sti@NAME``), so it is
    limited to letters, digits, ``_``, ``-`` and ``.``.
    """
    pairs: list[tuple[str, str]] = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise TstevalError(f"{flag} {quote(item)} must look like NAME={value}")
        if column_names:
            check_column_name(key, flag)
        pairs.append((key, text))
    return pairs


def key_values(items: Sequence[str], flag: str, value: str = "VALUE", column_names: bool = False) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict; a malformed one, an empty name or a repeated name is an error."""
    pairs: dict[str, str] = {}
    for key, text in key_value_pairs(items, flag, value, column_names):
        if key in pairs:
            raise TstevalError(f"{flag} names {quote(key)} twice ({quote(pairs[key])} and {quote(text)}); "
                               f"give each {flag} a different NAME")
        pairs[key] = text
    return pairs


def label_maps(text: str, flag: str) -> dict[str, dict[str, str]]:
    """``NAME=LABEL:STYLE,LABEL:STYLE,NAME2=...`` (``--classifier-labels``) as ``{NAME: {LABEL: STYLE}}``: an item
    with ``=`` starts a classifier's mapping, the items after it continue it; a malformed item is an error.

    >>> label_maps("fr=formal:1,informal:0,tox=toxic:1,neutral:0", "--classifier-labels")
    {'fr': {'formal': '1', 'informal': '0'}, 'tox': {'toxic': '1', 'neutral': '0'}}
    """
    maps: dict[str, dict[str, str]] = {}
    current = None
    for item in (i.strip() for i in text.split(",") if i.strip()):
        name, sep, pair = item.rpartition("=")
        if sep:
            current = maps.setdefault(check_column_name(name.strip(), flag), {})
        label, colon, style = pair.rpartition(":")
        if current is None or not colon or not label.strip() or not style.strip():
            raise TstevalError(f"{flag}: {quote(item)} must look like NAME=LABEL:STYLE,LABEL:STYLE (e.g. "
                               "sentiment=NEGATIVE:0,POSITIVE:1)")
        if label.strip() in current:
            raise TstevalError(f"{flag}: the label {quote(label.strip())} is mapped twice")
        current[label.strip()] = style.strip()
    return maps
