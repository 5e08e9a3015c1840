"""The one reader of rated sets: a declaration (:class:`tsteval.readers.rated_spec.RatedSet`) in, the transfers with
their mean ratings and every rater's own ratings out.

>>> from tsteval.readers.rated_sets import rated_set_names
>>> rated_set_names()[:4]
['mir', 'lai', 'tox600', 'cae_t5']

:func:`read_rated_set` returns a :class:`Ratings`: ``transfers`` (one row per output: the columns of
:data:`~tsteval.core.records.TRANSFER_COLUMNS`, ``reference`` where declared, ``hp.NAME`` where the set has a
hyperparameter, ``human_QUESTION`` per question (the mean over the output's raters; a choice question's majority
choice), then the authors' own scores ``SET.FIELD@TAG`` sorted), and ``raters``: one row per (output, question,
rater) with ``value`` (a choice coded as its position).  Rows are ordered by the declared systems (else sorted),
the hyperparameter's value, then the item.

Each file is checked while it is read, and a problem is one line naming the file, the line and the fix: a row with
too few or too many fields, a missing or empty text, a value that is not a number or is off its question's scale, a
rater rating one output twice, two rows of one output that disagree on its texts, a system the declaration does not
expect.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, quote
from tsteval.core.records import DEFAULT_SETTING, HP_PREFIX, TRANSFER_COLUMNS, Transfers
from tsteval.readers.rated_spec import INPUT_NUMBER, MEAN_RATER, RATER_INDEX, ROW, Question, RatedSet, RatingFile
from tsteval.readers.tables import _DECIMAL_COMMA, _NUMBER

_TEXTS = ("input", "output", "reference")
RATER_COLUMNS = ["system", "setting", "item", "question", "rater", "value"]


@dataclass(frozen=True)
class Ratings:
    """A rated set as read: its declaration, the transfers with their mean ratings, and each rater's ratings."""

    spec: RatedSet
    transfers: Transfers
    raters: pd.DataFrame

    @property
    def frame(self) -> pd.DataFrame:
        """The transfers' frame."""
        return self.transfers.frame


def read_rated_set(spec: str | RatedSet, root: str | Path | None = None) -> Ratings:
    """Read the rated set ``spec`` (a declaration or a built-in's name) from ``root`` (default: its folder under the
    data root)."""
    from tsteval.readers.rated_sets import rated_set

    spec = rated_set(spec) if isinstance(spec, str) else spec
    root = Path(root) if root is not None else dataset_dir(spec.folder)
    if not root.is_dir():
        raise DataNotFoundError(f"the {spec.title} data was expected in the directory {root}")
    outputs: dict[tuple, dict] = {}
    seen: dict[tuple, int] = {}  # (output, question, rater) -> line of its first rating
    raters: list[tuple] = []
    choices: dict[tuple, list[str]] = {}
    published: dict[str, tuple[str, bool]] = {}
    numbers: dict[str, int] = {}  # input text -> its number, for item "@input"
    for file in spec.files:
        path = root / file.path
        questions = spec.file_questions(file)
        used = _used(spec, file, questions)
        for line, row, record in _records(path, file):
            if any(str(record.get(k)) != v for k, v in file.keep.items()):
                continue
            out = _output(spec, record, path, line, row, numbers)
            key = (out["system"], out["setting"], out["item"])
            _merge(outputs, key, out, path, line)
            row_values: dict[tuple[str, str], float | str] = {}
            for question in questions:
                for rater, raw in _values(spec, file, question, record, path, line, row_values):
                    value = raw if question.product_of else _value(spec, question, raw, path, line)
                    if value is None:
                        continue
                    row_values[(question.name, rater)] = value
                    where = (key, question.name, rater)
                    if where in seen:
                        raise InputError(_twice(spec, key, question, rater, seen[where]), path=path, line=line,
                                         fix="keep one rating per rater and output: remove or merge the repeat")
                    seen[where] = line
                    if question.choices is not None:
                        choices.setdefault((key, question.column), []).append(value)
                        value = float(question.choices.index(value))
                    raters.append((*key, question.name, rater, value))
            if file.published_tag is not None:
                aspect = next((q.aspect for q in questions if q.aspect), None)
                for name, raw in record.items():
                    if name in used or (name in file.published_aspects and file.published_aspects[name] is None):
                        continue
                    column = f"{spec.name}.{name}@{file.published_tag}"
                    outputs[key][column] = _number(raw, name, path, line)
                    published[column] = (file.published_aspects.get(name, aspect), name not in spec.lower_is_better)
    table = pd.DataFrame(raters, columns=RATER_COLUMNS)
    frame = _frame(spec, outputs, table, choices, root)
    extra = {"rating_columns": {q.column: q.aspect for q in spec.questions}, "rated_set": spec.name}
    if spec.style_labels:
        extra["style_labels"] = dict(spec.style_labels)
    if published:
        extra["published"] = published
    return Ratings(spec, Transfers(frame, str(root), extra=extra), table)


def _records(path: Path, file: RatingFile) -> Iterator[tuple[int, int, dict]]:
    """(line, position, record) of each data row of ``path`` (position: the 0-based data row, ``@row``): a table's
    rows as text fields, a ``jsonl-systems`` file's one record per (line, system)."""
    if not path.is_file():
        raise DataNotFoundError(f"the rated-set file {path} is missing")
    if file.layout != "table":
        yield from _jsonl(path, file)
        return
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t" if path.suffix == ".tsv" else ",")
        header = next(reader, None)
        if header is None:
            raise InputError("the file is empty", path=path, fix="write a header row, then one row per rating")
        end, position = reader.line_num, 0
        for fields in reader:
            line, end = end + 1, reader.line_num
            if not fields:
                continue
            if len(fields) != len(header):
                raise InputError(f"{len(fields)} fields but the header has {len(header)}", path=path, line=line,
                                 fix="quote a field that holds the separator, and give every row every field")
            yield line, position, dict(zip(header, fields, strict=True))
            position += 1


def _jsonl(path: Path, file: RatingFile) -> Iterator[tuple[int, int, dict]]:
    """A JSON-lines file's records: one a line, or one per system (``jsonl-systems``) or per rater (``rater_list``)."""
    with path.open(encoding="utf-8") as handle:
        position = 0
        for line, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise InputError(f"invalid JSON: {error.msg}", path=path, line=line,
                                 fix="write one JSON object a line") from error
            nested = "sys" if file.layout == "jsonl-systems" else file.rater_list
            if not isinstance(record, dict) or (nested and not isinstance(record.get(nested), (dict, list))):
                raise InputError(f"expected a JSON object{f' with {nested}' if nested else ''}", path=path, line=line,
                                 fix="see the layout in the set's declaration (tsteval.readers.rated_spec)")
            if nested is None:
                yield line, position, record
            else:
                base = {k: v for k, v in record.items() if k != nested}
                parts = record[nested].items() if isinstance(record[nested], dict) else enumerate(record[nested])
                for name, part in parts:
                    if not isinstance(part, dict):
                        raise InputError(f"{nested} holds {quote(part)}, not an object", path=path, line=line)
                    key = "@system" if file.layout == "jsonl-systems" else RATER_INDEX
                    yield line, position, {**base, key: str(name), **part}
            position += 1


def _role(spec: RatedSet, role: str, record: dict, path: Path, line: int, row: int) -> object:
    """The value of ``role`` in ``record`` (its field, its constant, or the row's position)."""
    name = spec.fields.get(role)
    if name is None:
        return spec.constants.get(role, DEFAULT_SETTING if role == "setting" else None)
    if name == ROW:
        return row
    if name not in record:
        raise InputError(f"the field {quote(name)} (the {role}) is missing; the fields are "
                         f"{quote(sorted(record), 200)}", path=path, line=line,
                         fix="name the field in the set's declaration, or add it to the file")
    return record[name]


def _output(spec: RatedSet, record: dict, path: Path, line: int, row: int, numbers: dict[str, int]) -> dict:
    """The output a record rates: its keys, texts, styles and hyperparameter (``numbers``: the inputs numbered so
    far, for the item ``@input``)."""
    out: dict[str, object] = {"path": path, "line": line}
    for role in ("system", "setting", "source_style", "target_style"):
        out[role] = str(_role(spec, role, record, path, line, row))
    if spec.fields.get("item") == INPUT_NUMBER:
        text = _role(spec, "input", record, path, line, row)
        item: object = numbers.setdefault(text, len(numbers)) if isinstance(text, str) else None
    else:
        item = _role(spec, "item", record, path, line, row)
    if isinstance(item, str):
        if not item.strip().lstrip("-").isdigit():
            raise InputError(f"the item {quote(item)} is not a whole number", path=path, line=line,
                             fix="number each input with an integer")
        item = int(item)
    out["item"] = item
    for role in _TEXTS:
        if role == "reference" and "reference" not in spec.fields:
            continue
        text = _role(spec, role, record, path, line, row)
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"the {role} is {'empty' if isinstance(text, str) else quote(text)}", path=path,
                             line=line, fix=f"give every row its {role} text, or remove the row")
        out[role] = text
    if spec.systems is not None and out["system"] not in spec.systems:
        raise InputError(f"unknown system {quote(out['system'])}", path=path, line=line,
                         fix=f"the declaration expects one of {list(spec.systems)}")
    if spec.hyperparameter is not None:
        name_field, value_field = spec.hyperparameter
        name = str(_role_field(record, name_field, path, line))
        value = _number(_role_field(record, value_field, path, line), value_field, path, line)
        out["setting"] = f"{name}={value:g}"
        out[f"{HP_PREFIX}{name}"] = value
    return out


def _role_field(record: dict, name: str, path: Path, line: int) -> object:
    if name not in record:
        raise InputError(f"the field {quote(name)} is missing; the fields are {quote(sorted(record), 200)}",
                         path=path, line=line, fix="name the field in the set's declaration, or add it to the file")
    return record[name]


def _merge(outputs: dict[tuple, dict], key: tuple, out: dict, path: Path, line: int) -> None:
    """Record ``out``, or check it against the earlier record of the same output."""
    first = outputs.setdefault(key, out)
    if first is out:
        return
    for role in (*_TEXTS, "source_style", "target_style"):
        if role in out and out[role] != first[role]:
            where = f"line {first['line']}" + ("" if first["path"] == path else f" of {Path(first['path']).name}")
            raise InputError(f"the {role} of system {quote(out['system'])} item {out['item']} is {quote(out[role])} "
                             f"here but {quote(first[role])} on {where}", path=path, line=line,
                             fix="the rows of one output must quote the same texts: check the item and system")


def _values(spec: RatedSet, file: RatingFile, question: Question, record: dict, path: Path, line: int,
            earlier: dict[tuple[str, str], float | str]) -> list[tuple[str, object]]:
    """(rater, raw value) of ``question`` in ``record``; a product of questions from their ``earlier`` values."""
    if file.rater_fields:
        raters = list(file.rater_fields)
        if not question.product_of:
            return [(name, _role_field(record, name, path, line)) for name in raters]
    else:
        raters = [str(_role(spec, "rater", record, path, line, 0)) if "rater" in spec.fields else MEAN_RATER]
        if not question.product_of:
            return [(raters[0], _role_field(record, question.source, path, line))]
    out = []
    for rater in raters:
        factors = [earlier.get((name, rater)) for name in question.product_of]
        if all(isinstance(f, float) for f in factors):
            out.append((rater, math.prod(factors)))
    return out


def _number(raw: object, name: str, path: Path, line: int) -> float:
    """A numeric field as a float, else one line naming the field (a decimal comma gets its own hint)."""
    if isinstance(raw, str) and _NUMBER.fullmatch(raw.strip()):
        return float(raw)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw):
        return float(raw)
    comma = isinstance(raw, str) and _DECIMAL_COMMA.fullmatch(raw.strip())
    raise InputError(f"the rating {quote(name)} is {quote(raw)}, not a number", path=path, line=line,
                     fix=f"use a decimal point: {raw.replace(',', '.')}" if comma else "write a number")


def _value(spec: RatedSet, question: Question, raw: object, path: Path, line: int) -> float | str | None:
    """One rating: None for an empty cell (no rating), a choice's text, else a number on the question's scale."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if question.choices is not None:
        if raw not in question.choices:
            raise InputError(f"{question.source} is {quote(raw)}, not one of {list(question.choices)}", path=path,
                             line=line, fix="write one of the choices, or leave the cell empty for no rating")
        return str(raw)
    if question.labels:
        if raw not in question.labels:
            raise InputError(f"{question.source} is {quote(raw)}, not one of {list(question.labels)}", path=path,
                             line=line, fix="write one of the answers the declaration maps (Question.labels)")
        raw = question.labels[raw]
    value = _number(raw, question.source, path, line)
    low, high = spec.scale_of(question)
    if not low <= value <= high or (question.values is not None and value not in question.values):
        allowed = list(question.values) if question.values is not None else f"{low:g} to {high:g}"
        raise InputError(f"{question.source} is {value:g}, off the scale of {question.name} ({allowed})", path=path,
                         line=line, fix="correct the value, or declare the question's scale (Question.scale)")
    return value


def _twice(spec: RatedSet, key: tuple, question: Question, rater: str, first: int) -> str:
    system, setting, item = key
    what = f"system {quote(system)}{'' if setting == 'default' else f' {setting}'} item {item}"
    if rater == MEAN_RATER and not spec.has_raters:
        return f"{what} is rated twice on {question.name} (first on line {first})"
    return f"rater {quote(rater)} rates {what} twice on {question.name} (first on line {first})"


def _used(spec: RatedSet, file: RatingFile, questions: tuple[Question, ...]) -> set[str]:
    """The fields of ``file`` that are not published scores."""
    used = {*spec.fields.values(), *file.rater_fields, *(q.source for q in questions), *file.keep, "@system",
            RATER_INDEX}
    used |= {q.source for q in spec.questions if q.product_of}
    return used | set(spec.hyperparameter or ())


def _frame(spec: RatedSet, outputs: dict[tuple, dict], raters: pd.DataFrame, choices: dict[tuple, list[str]],
           root: Path) -> pd.DataFrame:
    """One row per output, ordered and with the columns as the module notes say."""
    if not outputs:
        raise InputError("no rated output was read", path=root, fix="check the declaration's files and keep filter")
    if spec.systems is not None:
        missing = [s for s in spec.systems if s not in {k[0] for k in outputs}]
        if missing:
            raise InputError(f"the systems {missing} have no rated output", path=root,
                             fix="check the files, or drop the systems from the declaration")
    rank = {s: i for i, s in enumerate(spec.systems or sorted({k[0] for k in outputs}))}
    hp = list(dict.fromkeys(c for out in outputs.values() for c in out if c.startswith(HP_PREFIX)))

    def order(key: tuple) -> tuple:
        return rank[key[0]], *(outputs[key].get(c, -math.inf) for c in hp), key[2], key[1]

    keys = sorted(outputs, key=order)
    hp = list(dict.fromkeys(c for k in keys for c in outputs[k] if c.startswith(HP_PREFIX)))  # as they appear
    frame = pd.DataFrame([outputs[k] for k in keys]).drop(columns=["path", "line"])
    means = raters.groupby(["system", "setting", "item", "question"], sort=False)["value"].agg(
        lambda v: sum(v) / len(v))
    for question in spec.questions:
        if question.choices is not None:
            frame[question.column] = pd.array([_majority(choices.get((k, question.column), [])) for k in keys],
                                              dtype="str")
            continue
        index = pd.MultiIndex.from_tuples([(*k, question.name) for k in keys])
        frame[question.column] = means.reindex(index).to_numpy(dtype=float)
    if spec.complete:
        _check_complete(spec, outputs, frame, keys, root)
    first = [*TRANSFER_COLUMNS, *(["reference"] if "reference" in frame else []), *hp,
             *(q.column for q in spec.questions)]
    return frame[[*first, *sorted(c for c in frame.columns if c not in first)]]


def _check_complete(spec: RatedSet, outputs: dict[tuple, dict], frame: pd.DataFrame, keys: list[tuple],
                    root: Path) -> None:
    """Every input has every (system, setting)'s output, and every output every judged rating."""
    runs = frame[["system", "setting"]].drop_duplicates()
    per_item = frame.groupby("item")["system"].size()
    if (per_item != len(runs)).any():
        item = per_item.index[per_item != len(runs)][0]
        raise InputError(f"input {item} has {per_item[item]} outputs, not one for each of the {len(runs)} systems",
                         path=root, fix="rate every system's output of every input, or drop complete=True")
    for question in spec.judged:
        unrated = frame[question.column].isna().to_numpy()
        if unrated.any():
            out = outputs[keys[int(unrated.argmax())]]
            raise InputError(f"{unrated.sum()} outputs lack a {question.name} rating, e.g. system "
                             f"{quote(out['system'])} item {out['item']}", path=out["path"], line=out["line"],
                             fix="rate every output on every question, or drop complete=True")


def _majority(values: list[str]) -> str | None:
    """The most common choice; None when there is none or two tie."""
    top = Counter(values).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]
