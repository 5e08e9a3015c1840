"""Tables (CSV, JSONL, Parquet) of transfers or of labelled texts, read strictly: every bad cell is one error naming
the file, the line or row, the column and the fix (the line policy of :mod:`tsteval.readers.lines`)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, quote
from tsteval.core.records import DEFAULT_SETTING, DEFAULT_SYSTEM, HP_PREFIX, TRANSFER_COLUMNS, Corpus, Transfers
from tsteval.readers.lines import STDIN, Hints, argument_for, display_name, read_bytes, read_lines, read_text_lines
from tsteval.readers.ratings import CATEGORICAL_RATINGS, HUMAN_PREFIX

TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_COLUMN_ROLES = ("input", "output", "text", "label", "source_style", "target_style", "system", "setting", "item")


@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    path: str
    first_line: int | None  # file line of row 0 when rows map to lines one to one, else None
    hints: Hints | None = None  # keyword -> command-line flag, for the fixes in messages
    empty_cells: bool = False  # an empty cell is the empty text (CSV, which has no missing value of its own)

    def where(self, row: int) -> dict[str, Any]:
        return {"path": self.path, "line": None if self.first_line is None else self.first_line + row}

    def column(self, name: str, role: str) -> pd.Series:
        if name not in self.frame.columns:
            raise InputError(f"no column {quote(name)} for the {role}; the columns are "
                             f"{quote(list(self.frame.columns), 200)}",
                             path=self.path, fix=self._column_fix(role))
        return self.frame[name]

    def _column_fix(self, role: str) -> str:
        argument = argument_for(f"{role.split('_')[0]}_col", self.hints) if role in _COLUMN_ROLES else None
        if argument is None:
            return f"name the {role} column with the matching argument" if self.hints is None else \
                f"rename the {role} column of the table to {role!r}"
        return f"name the {role} column with {argument}"

    def texts(self, name: str, role: str) -> list[str]:
        return self.text_column(name, role).tolist()

    def text_column(self, name: str, role: str, allow_empty: bool = False) -> pd.Series:
        """The column ``name`` checked as text, each distinct value once (no Python object per row: at 100k rows
        those are tens of MB the process keeps); a bad cell is an error naming its row.  A text is kept as written,
        line breaks inside it included.  ``allow_empty`` (the outputs: an empty one is a system's failure, scored)
        lets empty and whitespace-only texts through, and an empty CSV cell is then the empty text."""
        column = self.column(name, role)
        if allow_empty and self.empty_cells:
            column = column.fillna("")
        try:
            codes, distinct = pd.factorize(column)
        except TypeError:  # an unhashable cell (a JSON list or object): found and named by _check_texts
            self._check_texts(column.tolist(), name, role, allow_empty)
            raise
        if (codes < 0).any() or not all(isinstance(v, str) and (allow_empty or v.strip()) for v in distinct.tolist()):
            self._check_texts(column.tolist(), name, role, allow_empty)
        return column.reset_index(drop=True)

    def _check_texts(self, values: list[object], name: str, role: str, allow_empty: bool = False) -> None:
        for row, value in enumerate(values):
            if is_missing(value):
                raise InputError(f"row {row + 1}: the {role} ({name!r}) is missing", **self.where(row),
                                 fix="fill in every cell of the column or drop the row" + (
                                     ' (an empty output is the text "", scored as a failure)' if allow_empty
                                     else ""))
            if not isinstance(value, str):
                raise InputError(f"row {row + 1}: the {role} (column {name!r}) is {_kind(value)} {quote(value)}, "
                                 "not text", **self.where(row), fix=f"write each {role} as one string")
            if not allow_empty and not value.strip():
                raise InputError(f"row {row + 1}: the {role} ({name!r}) is empty", **self.where(row))

    def labels(self, name: str, role: str) -> list[str]:
        return self.label_column(name, role).tolist()

    def label_column(self, name: str, role: str) -> pd.Series:
        """The column ``name`` as text labels (``0`` and ``"0"`` are one style); a missing cell is an error naming
        its row."""
        column = self.column(name, role)
        missing = np.flatnonzero(column.isna().to_numpy())
        if len(missing):
            raise InputError(f"row {missing[0] + 1}: the {role} ({name!r}) is missing", **self.where(int(missing[0])))
        if column.dtype == object:
            for row, value in enumerate(column.tolist()):
                if not isinstance(value, (str, int, float, np.number)):  # a JSON list or object, a Parquet array
                    raise InputError(f"row {row + 1}: the {role} (column {name!r}) is {_kind(value)} {quote(value)}, "
                                     "not a label", **self.where(row), fix=f"write each {role} as one string")
        return column.astype(str).reset_index(drop=True)

    def numbers(self, name: str, role: str) -> list[float]:
        out = []
        for row, value in enumerate(self.column(name, role).tolist()):
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if math.isnan(number):
                raise InputError(f"row {row + 1}: the {role} ({name!r}) is {quote(value)}, not a number",
                                 **self.where(row))
            out.append(number)
        return out

    def item_ids(self, name: str) -> list[int] | list[str]:
        """The item column: integers when every cell is a whole number (``7``, ``"007"``, ``7.0``), otherwise every
        id as its text (``"negative-0"``, and then ``"7"`` too), so that one column never mixes the two."""
        values = self.column(name, "item").tolist()
        numbers: list[int] = []
        for row, value in enumerate(values):
            if is_missing(value) or (isinstance(value, str) and not value.strip()):
                raise InputError(f"row {row + 1}: the item ({name!r}) is missing", **self.where(row),
                                 fix="give every row an item id, or drop the column to number the rows in order")
            number = None if isinstance(value, bool) else _whole_number(value)
            if number is not None:
                numbers.append(number)
        return numbers if len(numbers) == len(values) else [str(v).strip() for v in values]

    def ratings(self, name: str) -> pd.Series:
        """A human-rating column: float64 with NaN for an empty cell ("no rating"), whatever the file format.

        A cell that is not a number is an error naming the row (a decimal comma gets its own hint); the
        ``CATEGORICAL_RATINGS`` columns keep their text and accept only their choices.
        """
        choices = CATEGORICAL_RATINGS.get(name)
        out: list[object] = []
        for row, value in enumerate(self.column(name, "rating").tolist()):
            if is_missing(value) or (isinstance(value, str) and not value.strip()):
                out.append(None if choices else math.nan)
            elif choices is not None:
                if value not in choices:
                    raise InputError(f"row {row + 1}: the rating {quote(name)} is {quote(value)}, not one of "
                                     f"{list(choices)}", **self.where(row), fix="leave the cell empty for no rating")
                out.append(value)
            else:
                out.append(self._rating(value, name, row))
        return pd.Series(out, dtype=object if choices else "float64")

    def _rating(self, value: object, name: str, row: int) -> float:
        """One non-empty rating cell as a finite float (NaN stays "no rating"), else an error naming the row."""
        fix = "write a number, or leave the cell empty for no rating"
        if isinstance(value, str):
            text = value.strip()
            if _NUMBER.fullmatch(text) and math.isfinite(float(text)):
                return float(text)
            if _DECIMAL_COMMA.fullmatch(text):
                fix = f"use a decimal point: {text.replace(',', '.')}"
        elif not isinstance(value, bool) and isinstance(value, (int, float, np.number)):
            number = float(value)
            if not math.isinf(number):
                return number
        raise InputError(f"row {row + 1}: the rating {quote(name)} is {quote(value)}, not a number",
                         **self.where(row), fix=fix)


def _whole_number(value: object) -> int | None:
    """``value`` as an int when it is a whole number (an integer, an integral float, or the text of either), else
    None."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else None


def _kind(value: object) -> str:
    """What a bad cell is, for a message: JSON's names for a JSON value (``a list``, ``an object``), else the type."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, np.number)):
        return "a number"
    return f"a {type(value).__name__}"


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def read_table(path: str | Path, table_format: str | None = None, hints: Hints | None = None) -> Table:
    """A CSV, JSONL or Parquet table; ``table_format`` (``csv``, ``jsonl`` or ``parquet``) overrides the suffix and is
    needed for standard input (``-``)."""
    name = display_name(path)
    formats = [s.lstrip(".") for s in TABLE_SUFFIXES]
    if table_format is None:
        if str(path) == STDIN:
            raise InputError("a table read from standard input needs its format", path=name,
                             fix=f"give {argument_for('table_format', hints) or 'the format'} with one of "
                                 f"{', '.join(formats)}")
        table_format = Path(path).suffix.lower().lstrip(".")
        if table_format not in formats:
            raise InputError(f"unknown table suffix {Path(path).suffix!r}", path=path,
                             fix=f"use one of {', '.join(TABLE_SUFFIXES)} (the suffix picks the format)")
    elif table_format not in formats:
        raise InputError(f"unknown table format {quote(table_format)}", path=name, fix=f"use one of {formats}")
    if str(path) != STDIN and not Path(path).is_file():
        raise InputError("file not found", path=path)
    if table_format == "jsonl":
        records = []
        for number, line in enumerate(read_lines(path), 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON: {exc.msg} at column {exc.colno}", path=name, line=number) from exc
            if not isinstance(record, dict):
                raise InputError(f"expected a JSON object, found {type(record).__name__}", path=name, line=number)
            records.append(record)
        return Table(pd.DataFrame.from_records(records), name, 1, hints)
    if table_format == "parquet":
        raw, _ = read_bytes(path)
        try:
            frame = pd.read_parquet(io.BytesIO(raw))
        except Exception as exc:  # pyarrow raises many types for a corrupt file
            raise InputError(f"cannot read as Parquet: {exc}", path=name) from exc
        import pyarrow

        pyarrow.default_memory_pool().release_unused()  # the decoding's buffers: as much again as the table
        return Table(frame, name, None, hints)
    # Strict UTF-8; a blank line may be inside a quoted cell (a multi-line text: one text, its line breaks kept,
    # CRLF read as LF), one outside any cell is no row.
    lines = read_text_lines(path, allow_blank=True).lines
    try:
        # Every cell stays text ("NA", "null", "007" included); only a truly empty cell is missing.
        frame = pd.read_csv(io.StringIO("\n".join(lines)), dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, csv.Error, ValueError) as exc:
        raise InputError(f"cannot parse as CSV: {exc}", path=name) from exc
    # Rows map to lines 2.. only when no quoted cell spans several lines.
    return Table(frame, name, 2 if len(lines) == len(frame) + 1 else None, hints, empty_cells=True)


def frame_transfers(table: Table, input_col: str, output_col: str, source_col: str, target_col: str,
                     system_col: str, setting_col: str, item_col: str, hp_cols: Sequence[str],
                     source_style: str | None, target_style: str | None, system: str, setting: str) -> Transfers:
    """Map a table onto ``Transfers``; an absent optional column falls back to its constant."""
    frame = table.frame
    if frame.empty:
        raise InputError("the table has no rows", path=table.path)
    out = pd.DataFrame({"input": table.text_column(input_col, "input"),
                        "output": table.text_column(output_col, "output", allow_empty=True)})
    for role, col, constant in (("source_style", source_col, source_style), ("target_style", target_col, target_style),
                                ("system", system_col, system), ("setting", setting_col, setting)):
        if col in frame.columns:
            out[role] = table.label_column(col, role)
        elif constant is not None:
            out[role] = str(constant)
        else:
            column = argument_for(f"{role.split('_')[0]}_col", table.hints)
            constant_arg = argument_for(role, table.hints)
            fixes = [f"name the column with {column}" if column else f"add a column {role!r}"]
            if constant_arg:
                fixes.append(f"give one value for every row with {constant_arg}")
            raise InputError(f"no column {col!r} for the {role}; the columns are {quote(list(frame.columns), 200)}",
                             path=table.path, fix=", or ".join(fixes))
    if item_col in frame.columns:
        out["item"] = table.item_ids(item_col)
    else:
        out["item"] = out.groupby(["system", "setting"]).cumcount()
    hp_names = list(dict.fromkeys([*hp_cols, *(c for c in frame.columns if c.startswith(HP_PREFIX))]))
    for col in hp_names:
        name = col if col.startswith(HP_PREFIX) else HP_PREFIX + col
        out[name] = table.numbers(col, f"hyperparameter {name[len(HP_PREFIX):]}")
    used = {input_col, output_col, source_col, target_col, system_col, setting_col, item_col, *hp_names}
    for col in frame.columns:
        if col not in used and col not in out.columns:
            out[col] = table.ratings(col).to_numpy() if str(col).startswith(HUMAN_PREFIX) else frame[col].to_numpy()
    return Transfers(out[[*TRANSFER_COLUMNS, *(c for c in out.columns if c not in TRANSFER_COLUMNS)]], table.path)


def load_table_transfers(path: str | Path, input_col: str = "input", output_col: str = "output",
                         source_col: str = "source_style", target_col: str = "target_style",
                         system_col: str = "system", setting_col: str = "setting", item_col: str = "item",
                         hp_cols: Sequence[str] = (), *, source_style: str | None = None,
                         target_style: str | None = None, system: str = DEFAULT_SYSTEM,
                         setting: str = DEFAULT_SETTING, table_format: str | None = None,
                         hints: Hints | None = None) -> Transfers:
    """Transfers from a CSV, JSONL or Parquet table (format by suffix or ``table_format``), one row per transfer.

    Input and output columns are required.  The style, system and setting columns are used when present and
    otherwise replaced by the constants ``source_style``/``target_style`` (no default: a missing style column
    without a constant is an error), ``system`` and ``setting``; without an item column the items are numbered
    in row order within each (system, setting).  ``hp_cols`` (and any ``hp.*`` column) become numeric
    ``hp.<name>`` columns; ``human_*`` columns are human ratings, parsed by :meth:`Table.ratings` (numbers,
    an empty cell is no rating) so that CSV, JSONL and Parquet give the same frame; every other column is
    kept as it is.
    """
    return frame_transfers(read_table(path, table_format, hints), input_col, output_col, source_col, target_col,
                            system_col, setting_col, item_col, hp_cols, source_style, target_style, system, setting)


def load_table_corpus(path: str | Path, text_col: str = "text", label_col: str = "label", *,
                      table_format: str | None = None, hints: Hints | None = None) -> Corpus:
    """A labelled corpus from a CSV, JSONL or Parquet table (format by suffix or ``table_format``)."""
    table = read_table(path, table_format, hints)
    if table.frame.empty:
        raise InputError("the table has no rows", path=table.path)
    return Corpus(table.texts(text_col, "text"), table.labels(label_col, "label"), table.path)
