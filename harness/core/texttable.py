"""Plain-text tables for the terminal: columns padded with spaces, no Markdown escapes.

Names come from the user's files, so every header and cell goes through :func:`tsteval.core.errors.clip`: control
characters (a newline would break a row, an escape sequence would reach the terminal) are shown escaped.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from tsteval.core.errors import clip


def text_table(frame: pd.DataFrame, cell: Callable[[object], str] = str) -> str:
    """``frame`` as aligned plain text: the first column left-aligned, the others right-aligned, a rule under the
    header; ``cell`` renders each value.

    >>> frame = pd.DataFrame({"metric": ["bleu@none", "sti@lr"], "B-A": [-1.25, 0.5]})
    >>> print(text_table(frame, lambda v: f"{v:+.3f}" if isinstance(v, float) else str(v)))
    metric        B-A
    ---------  ------
    bleu@none  -1.250
    sti@lr     +0.500
    >>> print(text_table(pd.DataFrame({"system": ["a\\nb"], "x": ["1"]})))
    system  x
    ------  -
    a\\nb    1
    """
    rows = [[clip(str(c), 80) for c in frame.columns]]
    rows += [[clip(cell(v), 80) for v in row] for row in frame.itertuples(index=False)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(frame.columns))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths,
                                                                                             strict=True))).rstrip()

    return "\n".join([line(rows[0]), "  ".join("-" * w for w in widths), *(line(r) for r in rows[1:])])
