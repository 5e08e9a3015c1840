"""Generic, strict loaders: plain-text lines, TSV pairs, tables (CSV/JSONL/Parquet) and Hugging Face datasets.

Every loader validates the whole input before returning anything, and every bad input raises an
``InputError`` that names the file (and the line or row) and how to fix it.

Line policy: files are UTF-8 (a leading BOM is ignored); ``\\n`` or ``\\r\\n`` ends a line and only that is
removed, so other whitespace is kept as written.  An empty file, and an empty or whitespace-only line, are
refused rather than skipped: in line-aligned data a blank line is almost always a missing output or a
misalignment, and dropping it silently would shift every later line onto the wrong partner.

The path ``-`` (``STDIN``) reads standard input, named ``<stdin>`` in messages; a table read from it needs its
format (``table_format``).  ``hints`` (a mapping from a keyword such as ``split`` or ``text_col`` to the command-line
flag that sets it, e.g. ``--split``) makes the fixes in messages name the flags; without it they name the keywords.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, TstevalError, quote
from tsteval.core.records import HP_PREFIX, TRANSFER_COLUMNS, Corpus, Transfers

TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")
HUMAN_PREFIX = "human_"  # columns holding human ratings of the transfers
# Ratings that are a choice, not a number: which of input and output a rater found more natural (Mir et al.).
CATEGORICAL_RATINGS = {"human_naturalness_relative": ("input", "output", "tie")}
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_COLUMN_ROLES = ("input", "output", "text", "label", "source_style", "target_style", "system", "setting", "item")
STDIN = "-"  # the path that reads standard input
STDIN_NAME = "<stdin>"
Hints = Mapping[str, str]
_HF_BUILDERS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet", ".txt": "text"}


def _argument(keyword: str, hints: Hints | None) -> str | None:
    """How a message names the argument ``keyword``: ``keyword=...`` in Python, its flag (or None: no flag) on the
    command line (``hints`` given)."""
    return f"{keyword}=..." if hints is None else hints.get(keyword)


def _display(path: str | Path) -> str:
    """``path`` as messages and origins name it (``<stdin>`` for ``-``)."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def _read_bytes(path: str | Path) -> tuple[bytes, str | Path]:
    """The bytes of ``path`` (standard input for ``-``) and its name for messages."""
    if str(path) == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        return (stream.read() if stream is not None else sys.stdin.read().encode("utf-8")), STDIN_NAME
    path = Path(path)
    try:
        return path.read_bytes(), path
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=path) from exc


@dataclass(frozen=True)
class TextLines:
    """The lines of one text file, with the (1-based) numbers of lines decoded with a fallback encoding."""

    path: Path
    lines: list[str]
    reencoded: list[int] = field(default_factory=list)


def read_text_lines(path: str | Path, *, fallback_encoding: str | None = None,
                    allow_blank: bool = False) -> TextLines:
    """Read a UTF-8 file as lines, strictly.

    ``fallback_encoding`` decodes, line by line, only the lines that are not valid UTF-8 (for published files
    known to mix in another encoding); those line numbers are reported in ``reencoded``.  ``allow_blank`` lets
    empty lines through for callers that give them a meaning of their own.
    """
    raw, path = _read_bytes(path)
    if not raw:
        raise InputError("the file is empty", path=path, fix="give the file at least one line of text")
    reencoded: list[int] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if fallback_encoding is None:
            line_no = raw.count(b"\n", 0, exc.start) + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1)
            raise InputError(f"byte 0x{raw[exc.start]:02x} at byte offset {exc.start} (byte {column} of the line) "
                             "is not valid UTF-8", path=path, line=line_no,
                             fix="re-encode the file as UTF-8, e.g. `iconv -f LATIN1 -t UTF-8`") from exc
        text = _decode_with_fallback(raw, path, fallback_encoding, reencoded)
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    if not allow_blank:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                raise InputError("the line is empty or only whitespace", path=path, line=number,
                                 fix="every line must hold one text; remove the line or fill it in")
    return TextLines(Path(path), lines, reencoded)


def _decode_with_fallback(raw: bytes, path: Path, encoding: str, reencoded: list[int]) -> str:
    parts = []
    for number, chunk in enumerate(raw.split(b"\n"), 1):
        try:
            parts.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            try:
                parts.append(chunk.decode(encoding))
            except UnicodeDecodeError as exc:
                raise InputError(f"the line is neither UTF-8 nor {encoding}", path=path, line=number,
                                 fix="re-encode the file as UTF-8") from exc
            reencoded.append(number)
    return "\n".join(parts)


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file without their newlines; empty files and blank lines are refused."""
    return read_text_lines(path).lines


def split_tsv_line(line: str, path: str | Path, number: int) -> tuple[str, str]:
    """``input<TAB>output`` split in two; any other number of TABs is an error naming the line."""
    parts = line.split("\t")
    if len(parts) != 2:
        raise InputError(f"expected input<TAB>output but found {len(parts) - 1} TABs", path=path, line=number,
                         fix="write exactly one TAB between the input and its transfer on every line")
    return parts[0], parts[1]


# --- plain-text files ------------------------------------------------------------------------------------------

def load_style_files(files: Mapping[str, str | Path | Sequence[str | Path]]) -> Corpus:
    """A corpus from files of one style each (one sentence a line); ``files`` maps a style label to a path or to
    several paths, whose lines are concatenated in the order given."""
    if not files:
        raise InputError("no style files given", fix="pass {style: path, ...} with at least one entry")
    texts: list[str] = []
    labels: list[str] = []
    paths: list[str | Path] = []
    for style, given in files.items():
        for path in [given] if isinstance(given, (str, Path)) else given:
            lines = read_lines(path)
            texts += lines
            labels += [str(style)] * len(lines)
            paths.append(path)
    origin = os.path.commonpath([str(Path(p).resolve()) for p in paths])
    return Corpus(texts, labels, origin)


def load_style_dir(directory: str | Path, pattern: str = "*.txt") -> Corpus:
    """A corpus from every file in ``directory`` matching ``pattern``; each file's stem is its style."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("not a directory", path=directory, fix="pass the folder that holds one file per style")
    files: dict[str, Path] = {}
    for path in sorted(p for p in directory.glob(pattern) if p.is_file()):
        if path.stem in files:
            raise InputError(f"two files give the style {path.stem!r}: {files[path.stem].name} and {path.name}",
                             path=directory, fix="use a pattern that matches one file per style")
        files[path.stem] = path
    if not files:
        raise InputError(f"no file matches {pattern!r}", path=directory, fix="pass the pattern of the style files")
    return load_style_files(files)


def load_parallel_files(inputs_path: str | Path, outputs_path: str | Path, **transfer_kw: Any) -> Transfers:
    """Transfers from two aligned files: line i of the outputs is the transfer of line i of the inputs.

    ``transfer_kw`` goes to ``Transfers.from_pairs`` (``source_style``, ``target_style``, ``system``, ...).  One of
    the two (not both) may be ``-``, standard input.
    """
    if str(inputs_path) == STDIN and str(outputs_path) == STDIN:
        raise InputError("the inputs and the outputs cannot both be read from standard input", path=STDIN_NAME,
                         fix="give one of the two as a file, or both on one stream as input<TAB>output lines")
    inputs, outputs = read_text_lines(inputs_path), read_text_lines(outputs_path)
    if len(inputs.lines) != len(outputs.lines):
        raise InputError(f"{len(inputs.lines)} lines in {_display(inputs_path)} but {len(outputs.lines)} lines in "
                         f"{_display(outputs_path)}", path=_display(outputs_path),
                         fix="line i of the outputs must be the transfer of line i of the inputs")
    return Transfers.from_pairs(inputs.lines, outputs.lines, origin=_display(outputs_path), **transfer_kw)


def load_tsv_transfers(path: str | Path, **transfer_kw: Any) -> Transfers:
    """Transfers from ``input<TAB>output`` lines; ``transfer_kw`` as for ``load_parallel_files``."""
    text = read_text_lines(path)
    pairs = [split_tsv_line(line, text.path, number) for number, line in enumerate(text.lines, 1)]
    return Transfers.from_pairs([p[0] for p in pairs], [p[1] for p in pairs], origin=_display(path), **transfer_kw)


# --- tables ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    frame: pd.DataFrame
    path: str
    first_line: int | None  # file line of row 0 when rows map to lines one to one, else None
    hints: Hints | None = None  # keyword -> command-line flag, for the fixes in messages

    def where(self, row: int) -> dict[str, Any]:
        return {"path": self.path, "line": None if self.first_line is None else self.first_line + row}

    def column(self, name: str, role: str) -> pd.Series:
        if name not in self.frame.columns:
            raise InputError(f"no column {quote(name)} for the {role}; the columns are "
                             f"{quote(list(self.frame.columns), 200)}",
                             path=self.path, fix=self._column_fix(role))
        return self.frame[name]

    def _column_fix(self, role: str) -> str:
        argument = _argument(f"{role.split('_')[0]}_col", self.hints) if role in _COLUMN_ROLES else None
        if argument is None:
            return f"name the {role} column with the matching argument" if self.hints is None else \
                f"rename the {role} column of the table to {role!r}"
        return f"name the {role} column with {argument}"

    def texts(self, name: str, role: str) -> list[str]:
        return self.text_column(name, role).tolist()

    def text_column(self, name: str, role: str) -> pd.Series:
        """The column ``name`` checked as non-empty text, each distinct value once (no Python object per row:
        at 100k rows those are tens of MB the process keeps); a bad cell is an error naming its row."""
        column = self.column(name, role)
        try:
            codes, distinct = pd.factorize(column)
        except TypeError:  # an unhashable cell (a JSON list or object): found and named by _check_texts
            self._check_texts(column.tolist(), name, role)
            raise
        if (codes < 0).any() or not all(isinstance(v, str) and v.strip() for v in distinct.tolist()):
            self._check_texts(column.tolist(), name, role)
        return column.reset_index(drop=True)

    def _check_texts(self, values: list[object], name: str, role: str) -> None:
        for row, value in enumerate(values):
            if _missing(value):
                raise InputError(f"row {row + 1}: the {role} ({name!r}) is missing", **self.where(row),
                                 fix="fill in every cell of the column or drop the row")
            if not isinstance(value, str):
                raise InputError(f"row {row + 1}: the {role} (column {name!r}) is {_kind(value)} {quote(value)}, "
                                 "not text", **self.where(row), fix=f"write each {role} as one string")
            if not value.strip():
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
            if _missing(value) or (isinstance(value, str) and not value.strip()):
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
            if _missing(value) or (isinstance(value, str) and not value.strip()):
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


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def read_table(path: str | Path, table_format: str | None = None, hints: Hints | None = None) -> Table:
    """A CSV, JSONL or Parquet table; ``table_format`` (``csv``, ``jsonl`` or ``parquet``) overrides the suffix and is
    needed for standard input (``-``)."""
    name = _display(path)
    formats = [s.lstrip(".") for s in TABLE_SUFFIXES]
    if table_format is None:
        if str(path) == STDIN:
            raise InputError("a table read from standard input needs its format", path=name,
                             fix=f"give {_argument('table_format', hints) or 'the format'} with one of "
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
        raw, _ = _read_bytes(path)
        try:
            frame = pd.read_parquet(io.BytesIO(raw))
        except Exception as exc:  # pyarrow raises many types for a corrupt file
            raise InputError(f"cannot read as Parquet: {exc}", path=name) from exc
        import pyarrow

        pyarrow.default_memory_pool().release_unused()  # the decoding's buffers: as much again as the table
        return Table(frame, name, None, hints)
    lines = read_lines(path)  # strict UTF-8, no blank lines
    try:
        # Every cell stays text ("NA", "null", "007" included); only a truly empty cell is missing.
        frame = pd.read_csv(io.StringIO("\n".join(lines)), dtype=str, keep_default_na=False, na_values=[""])
    except (pd.errors.ParserError, csv.Error, ValueError) as exc:
        raise InputError(f"cannot parse as CSV: {exc}", path=name) from exc
    # Rows map to lines 2.. only when no quoted cell spans several lines.
    return Table(frame, name, 2 if len(lines) == len(frame) + 1 else None, hints)


def _frame_transfers(table: Table, input_col: str, output_col: str, source_col: str, target_col: str,
                     system_col: str, setting_col: str, item_col: str, hp_cols: Sequence[str],
                     source_style: str | None, target_style: str | None, system: str, setting: str) -> Transfers:
    """Map a table onto ``Transfers``; an absent optional column falls back to its constant."""
    frame = table.frame
    if frame.empty:
        raise InputError("the table has no rows", path=table.path)
    out = pd.DataFrame({"input": table.text_column(input_col, "input"),
                        "output": table.text_column(output_col, "output")})
    for role, col, constant in (("source_style", source_col, source_style), ("target_style", target_col, target_style),
                                ("system", system_col, system), ("setting", setting_col, setting)):
        if col in frame.columns:
            out[role] = table.label_column(col, role)
        elif constant is not None:
            out[role] = str(constant)
        else:
            column = _argument(f"{role.split('_')[0]}_col", table.hints)
            constant_arg = _argument(role, table.hints)
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
                         target_style: str | None = None, system: str = "system",
                         setting: str = "default", table_format: str | None = None,
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
    return _frame_transfers(read_table(path, table_format, hints), input_col, output_col, source_col, target_col,
                            system_col, setting_col, item_col, hp_cols, source_style, target_style, system, setting)


def load_table_corpus(path: str | Path, text_col: str = "text", label_col: str = "label", *,
                      table_format: str | None = None, hints: Hints | None = None) -> Corpus:
    """A labelled corpus from a CSV, JSONL or Parquet table (format by suffix or ``table_format``)."""
    table = read_table(path, table_format, hints)
    if table.frame.empty:
        raise InputError("the table has no rows", path=table.path)
    return Corpus(table.texts(text_col, "text"), table.labels(label_col, "label"), table.path)


# --- Hugging Face datasets -------------------------------------------------------------------------------------

def _hf_dataset(source: Any, split: str | None, cache_dir: str | Path | None,
                hints: Hints | None = None) -> tuple[Any, str]:
    """Resolve ``source`` to one ``datasets.Dataset`` and a name for messages."""
    import datasets  # heavy; only loaded when a Hugging Face source is used

    if isinstance(source, datasets.Dataset):
        return source, f"<datasets.Dataset {source.info.dataset_name or 'in memory'}>"
    name = "<datasets.DatasetDict>"
    if not isinstance(source, datasets.DatasetDict):
        name = str(source)
        path = Path(source)
        if path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file()):
            source = datasets.load_from_disk(str(path))
        elif path.is_file():
            builder = _HF_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise InputError(f"unknown data-file suffix {path.suffix!r}", path=path,
                                 fix=f"use one of {', '.join(_HF_BUILDERS)}")
            source = _load_dataset(builder, name, split, cache_dir, data_files=str(path))
        else:
            source = _load_dataset(name, name, split, cache_dir)
    if isinstance(source, datasets.DatasetDict):
        if split is None and len(source) == 1:
            split = next(iter(source))
        if split not in source:
            raise InputError(f"split {split!r} not found; the splits are {sorted(source)}", path=name,
                             fix=f"pass {_argument('split', hints) or 'the split'} with one of them")
        return source[split], f"{name}[{split}]"
    return source, name


def _load_dataset(path: str, name: str, split: str | None, cache_dir: str | Path | None, **kw: Any) -> Any:
    import datasets

    try:
        return datasets.load_dataset(path, split=split, cache_dir=None if cache_dir is None else str(cache_dir), **kw)
    except Exception as exc:  # hub, network and builder errors come in many types
        raise TstevalError(f"cannot load the dataset {name!r} with datasets.load_dataset: {type(exc).__name__}: "
                           f"{exc}. A hub id needs network access (HF_HUB_OFFLINE unset) or a cached copy; "
                           "otherwise pass a Dataset object, a save_to_disk directory or a local data file.") from exc


def _hf_frame(dataset: Any) -> pd.DataFrame:
    """The dataset as a frame, with ClassLabel columns mapped to their names."""
    import datasets

    frame = dataset.to_pandas()
    for col, feature in dataset.features.items():
        if isinstance(feature, datasets.ClassLabel):
            frame[col] = [None if _missing(v) or v < 0 else feature.int2str(int(v)) for v in frame[col]]
    return frame


def load_hf_corpus(source: Any, text_col: str, label_col: str, split: str | None = None, *,
                   cache_dir: str | Path | None = None, hints: Hints | None = None) -> Corpus:
    """A corpus from a Hugging Face dataset: a ``Dataset``/``DatasetDict``, a ``save_to_disk`` directory, a local
    data file (CSV, JSON(L), Parquet, text) or a hub id for ``datasets.load_dataset``.

    ClassLabel labels become their names; ``split`` picks a split when there are several.
    """
    dataset, name = _hf_dataset(source, split, cache_dir, hints)
    table = Table(_hf_frame(dataset), name, None, hints)
    if table.frame.empty:
        raise InputError("the dataset has no rows", path=name)
    return Corpus(table.texts(text_col, "text"), table.labels(label_col, "label"), name)


def load_hf_transfers(source: Any, split: str | None = None, input_col: str = "input", output_col: str = "output",
                      source_col: str = "source_style", target_col: str = "target_style",
                      system_col: str = "system", setting_col: str = "setting", item_col: str = "item",
                      hp_cols: Sequence[str] = (), *, source_style: str | None = None,
                      target_style: str | None = None, system: str = "system", setting: str = "default",
                      cache_dir: str | Path | None = None, hints: Hints | None = None) -> Transfers:
    """Transfers from a Hugging Face dataset (sources as for ``load_hf_corpus``, columns as for
    ``load_table_transfers``)."""
    dataset, name = _hf_dataset(source, split, cache_dir, hints)
    return _frame_transfers(Table(_hf_frame(dataset), name, None, hints), input_col, output_col, source_col, target_col,
                            system_col, setting_col, item_col, hp_cols, source_style, target_style, system, setting)


def empty_ratings(frame: pd.DataFrame) -> dict[str, int]:
    """Per human-rating column (``human_*``), how many transfers have no rating (an empty cell)."""
    counts = {c: int(frame[c].isna().sum()) for c in frame.columns if c.startswith(HUMAN_PREFIX)}
    return {c: n for c, n in counts.items() if n}


def report_empty_ratings(frame: pd.DataFrame) -> None:
    """One line on stderr (also under ``--quiet``: it is about the data, not progress) when ratings are empty."""
    counts = empty_ratings(frame)
    if counts:
        print(f"[tsteval] human ratings: {sum(counts.values())} empty cells are no rating and are left out of the "
              f"agreement statistics ({', '.join(f'{c} {n} of {len(frame)}' for c, n in counts.items())})",
              file=sys.stderr)
