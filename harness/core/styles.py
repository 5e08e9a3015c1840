"""What a run's style labels mean: every table, plot and leaderboard names a transfer direction by its styles
(``formal → informal``), not by the labels the classifiers were trained on (``0 → 1``).

A scored run carries the names beside the labels, in the columns ``source_name`` and ``target_name`` (from the
run's ``style_labels`` option, else the reader's ``extra["style_labels"]``, else the label itself); a scorecard
written before they existed shows the labels.

>>> import pandas as pd
>>> frame = pd.DataFrame({"source_style": ["0", "1"], "target_style": ["1", "0"]})
>>> named = with_style_names(frame, {"0": "formal", "1": "informal"}.get)
>>> direction_labels(named).tolist()
['formal → informal', 'informal → formal']
>>> direction_label("0", "1", style_names(frame))
'0 → 1'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

# label column -> name column
NAME_COLUMNS = {"source_style": "source_name", "target_style": "target_name"}
ARROW = " → "


def with_style_names(frame: pd.DataFrame, name_of: Callable[[str], str | None]) -> pd.DataFrame:
    """``frame`` with ``source_name`` and ``target_name`` beside its style labels (``name_of(label)``, the label
    itself where it gives None)."""
    named = frame.copy()
    for label_column, name_column in NAME_COLUMNS.items():
        labels = named[label_column].astype(str)
        named.insert(named.columns.get_loc(label_column) + 1, name_column,
                     [name_of(label) or label for label in labels])
    return named


def style_names(frame: pd.DataFrame) -> dict[str, str]:
    """Label -> name from the name columns of ``frame`` (empty when it has none)."""
    names: dict[str, str] = {}
    for label_column, name_column in NAME_COLUMNS.items():
        if {label_column, name_column} <= set(frame.columns):
            names.update(zip(frame[label_column].astype(str), frame[name_column].astype(str), strict=True))
    return names


def direction_label(source: object, target: object, names: Mapping[str, str]) -> str:
    """``SOURCE → TARGET`` by name (the label where ``names`` has none)."""
    return f"{names.get(str(source), str(source))}{ARROW}{names.get(str(target), str(target))}"


def direction_labels(frame: pd.DataFrame) -> pd.Series:
    """The direction of every row of ``frame``, named by style."""
    names = style_names(frame)
    return pd.Series([direction_label(s, t, names) for s, t in zip(frame["source_style"], frame["target_style"],
                                                                   strict=True)], index=frame.index, dtype=object)
