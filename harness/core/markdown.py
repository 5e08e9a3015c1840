"""Markdown that tsteval writes (``report.md``, ``summary.md``): untrusted text always renders as text.

System names, setting labels, style labels, column names and system outputs come from the user's files.
Written raw into Markdown, ``<script>`` or ``<img onerror=...>`` would run in any viewer that passes inline
HTML, a ``|`` would split a table cell and a newline would end a table row.  Every such text goes through
:func:`escape`: ``& < >`` become HTML entities, Markdown punctuation is backslash-escaped (CommonMark lets
any ASCII punctuation be escaped) and line breaks become spaces.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pandas as pd

_CODE = re.compile(r"`([^`]+)`")
_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#])")
_ESCAPED = re.compile(r"\\([\\`*_\[\]|~#])")
_BREAK = re.compile(r"[\r\n\f\v\x1c-\x1e\x85\u2028\u2029]+")


def escape(text: object) -> str:
    """``text`` as literal Markdown: no HTML, no emphasis, links or code, no table cell break, one line."""
    flat = _BREAK.sub(" ", str(text))
    return _PUNCTUATION.sub(r"\\\1", html.escape(flat, quote=False))


def plain(text: str) -> str:
    """Markdown that tsteval wrote, for a terminal: :func:`escape`'s backslashes and entities undone (a terminal
    renders no Markdown, so ``style\\_strength@ft`` would be read as it is written).

    >>> plain(escape("style_strength@ft <b>|"))
    'style_strength@ft <b>|'
    """
    return html.unescape(_ESCAPED.sub(r"\1", text))


def inline(text: str) -> str:
    """Like :func:`escape`, but `backticked` spans stay code spans (their content is literal in Markdown)."""
    flat = _BREAK.sub(" ", text)
    parts = _CODE.split(flat)  # even indices: plain text, odd: code span contents (no backtick by construction)
    return "".join(escape(part) if i % 2 == 0 else f"`{part}`" for i, part in enumerate(parts))


def floats(spec: str) -> Callable[[object], str]:
    """A :func:`table` cell renderer: a float in the format ``spec``, anything else as ``str`` renders it.

    >>> floats(".3f")(0.12345), floats(".3f")(7)
    ('0.123', '7')
    """
    return lambda value: format(value, spec) if isinstance(value, float) else str(value)


def table(frame: pd.DataFrame, cell: Callable[[object], str] = str) -> str:
    """A GitHub-flavoured Markdown table; headers and cells (rendered by ``cell``) are escaped."""
    lines = ["| " + " | ".join(escape(c) for c in frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(escape(cell(v)) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)
