"""Lai et al. (2022): GYAFC informal-to-formal outputs of 9 systems with human ratings of style, content and
fluency, and the authors' own metric scores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, quote
from tsteval.core.records import TRANSFER_COLUMNS, Transfers
from tsteval.readers.lines import read_lines

# Rating file -> the human column it becomes and the aspect rated; the mean of the two annotators (0-100).
LAI_FILES = {"style.json": ("human_style", "style"), "content.src.json": ("human_content_src", "content"),
             "content.ref.json": ("human_content_ref", "content"), "fluency.json": ("human_fluency", "naturalness")}
LAI_SYSTEMS = 9
# The authors' own scores that are lower-is-better (WMD distance, GPT-2 perplexity); every other is higher.
_LAI_LOWER = frozenset({"wmd", "gpt2_ppl"})
_LAI_SUFFIX = {"style.json": "style", "content.src.json": "src", "content.ref.json": "ref", "fluency.json": "fluency"}


def load_lai(root: str | Path | None = None) -> Transfers:
    """Lai et al. (2022): 80 GYAFC informal inputs x 9 formal outputs (8 systems and the reference ``ref``), rated.

    One row per (system, item): ``input`` (src), ``output``, ``reference``, the ratings ``human_style``,
    ``human_content_src`` (content vs the input), ``human_content_ref`` (vs the reference) and ``human_fluency``,
    each the mean of the two annotators' 0-100 scores, and the authors' own metric scores as columns
    ``lai.NAME@FILE`` (``lai.bleu@src``, ``lai.bleu@ref``, ``lai.gpt2_ppl@fluency``, ``lai.c-gyafc@style`` ...).
    ``extra["published"]`` maps each such column to its aspect and whether higher is better; the four files must
    agree on every input, reference and output (checked).
    """
    root = Path(root) if root is not None else dataset_dir("lai2022")
    if not root.is_dir():
        raise DataNotFoundError(f"the Lai et al. (2022) ratings were expected in the directory {root}")
    rows: dict[tuple[str, int], dict] = {}
    published: dict[str, tuple[str, bool]] = {}
    for name, (human, aspect) in LAI_FILES.items():
        path = root / name
        records = [_lai_record(line, path, number) for number, line in enumerate(read_lines(path), 1)]
        for item, (number, record) in enumerate(zip(range(1, len(records) + 1), records, strict=True)):
            for system, scores in record["sys"].items():
                row = rows.setdefault((system, item), {"system": system, "setting": "default", "item": item,
                                                       "input": record["src"], "output": scores["out"],
                                                       "reference": record["ref"], "source_style": "informal",
                                                       "target_style": "formal"})
                for field_, value in (("input", record["src"]), ("output", scores["out"]),
                                      ("reference", record["ref"])):
                    if row[field_] != value:
                        raise InputError(f"the {field_} of {system} item {item} is {quote(value)} here but "
                                         f"{quote(row[field_])} in an earlier file", path=path, line=number,
                                         fix="the four rating files must rate the same transfers in the same order")
                row[human] = (_lai_score(scores, "human_1", path, number) +
                              _lai_score(scores, "human_2", path, number)) / 2.0
                for key in scores:
                    if key in ("out", "human_1", "human_2"):
                        continue
                    column = f"lai.{key}@{_LAI_SUFFIX[name]}"
                    row[column] = _lai_score(scores, key, path, number)
                    published[column] = (aspect, key not in _LAI_LOWER)
    frame = pd.DataFrame(list(rows.values()))
    counts = frame.groupby("item")["system"].nunique()
    if len(counts) == 0 or (counts != LAI_SYSTEMS).any():
        raise InputError(f"expected {LAI_SYSTEMS} systems for every input, found {sorted(set(counts))}", path=root)
    missing = [h for h, _ in LAI_FILES.values() if h not in frame.columns or frame[h].isna().any()]
    if missing:
        raise InputError(f"some transfers lack the ratings {missing}", path=root,
                         fix="every file must rate every system's output of every input")
    frame = frame.sort_values(["system", "item"], kind="stable").reset_index(drop=True)
    order = [*TRANSFER_COLUMNS, "reference", *(h for h, _ in LAI_FILES.values())]
    frame = frame[[*order, *sorted(c for c in frame.columns if c not in order)]]
    return Transfers(frame, str(root), extra={"rating_columns": {h: a for h, a in LAI_FILES.values()},
                                              "published": published})


def _lai_record(line: str, path: Path, number: int) -> dict:
    import json

    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", path=path, line=number) from error
    if not isinstance(record, dict) or not {"src", "ref", "sys"} <= set(record) or not isinstance(record["sys"], dict):
        raise InputError("expected a JSON object with src, ref and sys", path=path, line=number)
    for system, scores in record["sys"].items():
        if not isinstance(scores, dict) or not isinstance(scores.get("out"), str):
            raise InputError(f"system {quote(system)} has no output text 'out'", path=path, line=number)
    return record


def _lai_score(scores: dict, key: str, path: Path, number: int) -> float:
    value = scores.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise InputError(f"{key} is {quote(value)}, not a number", path=path, line=number)
    return float(value)


def load_lai_raters(root: str | Path | None = None) -> pd.DataFrame:
    """Lai et al.'s two annotators' own 0-100 scores: one row per (system, item, rating column, annotator), with
    ``value``; :func:`load_lai`'s ``human_*`` columns are the mean of each pair of rows."""
    root = Path(root) if root is not None else dataset_dir("lai2022")
    rows = []
    for name, (human, _) in LAI_FILES.items():
        path = root / name
        for item, line in enumerate(read_lines(path)):
            record = _lai_record(line, path, item + 1)
            for system, scores in record["sys"].items():
                rows += [{"system": system, "item": item, "rating": human, "annotator": rater,
                          "value": _lai_score(scores, rater, path, item + 1)} for rater in ("human_1", "human_2")]
    return pd.DataFrame(rows)
