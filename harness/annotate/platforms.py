"""Crowdsourcing platforms: a study's pairs in a platform's batch-input form (``tsteval annotate export``) and its
results file read back into the study's database (``tsteval annotate import``).

Export (``--format``):

* ``mturk``: Amazon Mechanical Turk's batch input CSV, one row per HIT of ``per_hit`` pairs in a seeded order,
  columns ``pair_id_K``, ``original_K``, ``rewrite_K``, ``target_K`` for K = 1..per_hit (the HIT layout refers to
  them as ``${original_1}``...); each repeated pair (``r:ID``) sits in the HIT of ``ID``, in its last slots, so that
  the worker who rated ``ID`` rates it again (:func:`hits`); a study's overlap copies (``annotate plan --overlap``)
  come last, in HITs of their own, so that with one assignment per HIT another worker rates them (mostly: MTurk
  cannot keep a worker from a copy's HIT; agreement counts the copies that are a second rating).  Name the layout's
  answer fields ``QUESTION-K`` (``fluency-3``): MTurk's results file then holds ``Input.pair_id_K`` and
  ``Answer.QUESTION-K``, which import reads without a map;
* ``prolific``: the same rows for a survey tool linked from a Prolific study (its results carry the participant in
  ``PROLIFIC_PID`` or ``participant_id``);
* ``csv``: one row per pair (``pair_id``, ``original``, ``rewrite``, ``target``).

System names never leave the study.  Import reads the worker from ``WorkerId``, ``PROLIFIC_PID``,
``participant_id`` or ``annotator``; each answer column ``Answer.QUESTION-K`` (or ``QUESTION-K``) is the rating of
``QUESTION`` for the pair named in the row's ``Input.pair_id_K`` (or ``pair_id_K``; a cell ``cant_judge`` is the
answer "can't judge" where the template offers it); a long file with columns
``annotator, pair_id, question, value`` is read as it is.  ``--map COLUMN=PAIR:QUESTION`` says it for a file
tsteval did not export: PAIR is a pair id, or the name of the column holding it in each row.  Every value is
checked (a known pair, a whole number on the study's scale, one rating per worker, pair and question) before
anything is written; the first bad cell is one line naming the file, row and column, and then nothing is imported.
A malformed row is refused, never skipped: more or fewer cells than the header (a cut-off last line), and in a long
file an empty annotator, pair, question or value.  A blank answer cell of a whole row in a wide file is "not rated".
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tsteval.annotate.study import Study
from tsteval.core.errors import InputError, TstevalError, quote

FORMATS = ("mturk", "prolific", "csv")
WORKER_COLUMNS = ("WorkerId", "PROLIFIC_PID", "participant_id", "annotator")
LONG = ("annotator", "pair_id", "question", "value")
CANT_JUDGE = "cant_judge"  # a results cell holding the answer "can't judge" (where the template offers it)
ANSWER = re.compile(r"^(?:Answer\.)?([A-Za-z_][A-Za-z0-9_]*)-(\d+)$")


def export_rows(study: Study, fmt: str, per_hit: int = 5, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """The header and rows of ``study``'s pairs in the platform format ``fmt`` (see the module notes)."""
    if fmt not in FORMATS:
        raise TstevalError(f"unknown format {fmt!r}; choose from {list(FORMATS)}")
    pairs = study.shown_pairs.iloc[np.random.default_rng(seed).permutation(len(study.shown_pairs))]
    second = (pairs["kind"] == "overlap").to_numpy()
    groups = [[[p.pair_id, study.display(p.input), study.display(p.output), p.target_name]
               for p in part.itertuples()]
              for part in (pairs[~second], pairs[second])]
    if fmt == "csv":
        return ["pair_id", "original", "rewrite", "target"], [record for group in groups for record in group]
    if per_hit < 1:
        raise TstevalError(f"--per-hit must be at least 1, not {per_hit}")
    header = [f"{name}_{k}" for k in range(1, per_hit + 1) for name in ("pair_id", "original", "rewrite", "target")]
    rows = []
    for records in groups:  # the overlap copies in HITs of their own, never beside the pair they repeat
        by_id = {record[0]: record for record in records}
        for hit in hits([record[0] for record in records], per_hit):
            chunk = [by_id[pair] for pair in hit]
            chunk += [["", "", "", ""]] * (per_hit - len(chunk))
            rows.append([cell for record in chunk for cell in record])
    return header, rows


def hits(order: Sequence[str], per_hit: int) -> list[list[str]]:
    """The pair ids ``order`` in HITs of at most ``per_hit``, in that order but for the repeats: each ``r:ID`` in the
    HIT of ``ID``, in its last slots, with the originals of the HIT's repeats in its first slots, so that the worker
    who rates ``ID`` rates it again, later (MTurk gives each assignment of a HIT to one worker).

    >>> hits(["p1", "r:p3", "p2", "p3", "p4"], 3)
    [['p1', 'p2', 'p4'], ['p3', 'r:p3']]
    """
    repeat = {pair[2:]: pair for pair in order if pair.startswith("r:")}
    if repeat and per_hit < 2:
        raise TstevalError(f"--per-hit {per_hit} cannot hold a repeated pair beside its original (the same worker "
                           "must rate both): give --per-hit 2 or more")
    queue, out = [pair for pair in order if not pair.startswith("r:")], []
    while queue:
        hit: list[str] = []
        while (room := per_hit - len(hit) - sum(p in repeat for p in hit)) and queue:
            pick = next((i for i, pair in enumerate(queue) if 1 + (pair in repeat) <= room), None)
            if pick is None:
                break
            hit.append(queue.pop(pick))
        out.append(sorted(hit, key=lambda pair: pair not in repeat) + [repeat[p] for p in hit if p in repeat])
    return out


def parse_map(entries: Sequence[str]) -> dict[str, tuple[str, str]]:
    """``COLUMN=PAIR:QUESTION`` entries as column -> (PAIR, QUESTION).

    >>> parse_map(["Answer.q1=Input.id1:fluency"])
    {'Answer.q1': ('Input.id1', 'fluency')}
    """
    out = {}
    for entry in entries:
        column, sep, rest = entry.rpartition("=")
        pair, sep2, question = rest.rpartition(":")
        if not sep or not sep2 or not column or not pair or not question:
            raise TstevalError(f"--map {quote(entry)}: expected COLUMN=PAIR:QUESTION, e.g. "
                               "Answer.fluency-3=Input.pair_id_3:fluency")
        out[column] = (pair, question)
    return out


def _answer_columns(header: list[str], mapping: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Answer column -> (pair column or id, question) for a results file without a map."""
    if mapping:
        return mapping
    out = {}
    for column in header:
        match = ANSWER.match(column)
        if match:
            question, k = match.groups()
            prefix = "Input." if column.startswith("Answer.") else ""
            out[column] = (f"{prefix}pair_id_{k}", question)
    return out


def read_results(study: Study, path: str | Path, mapping: dict[str, tuple[str, str]] | None = None,
                 ) -> list[tuple[str, str, str, float | None]]:
    """The (worker, pair, question, value) ratings of the results file ``path``, every cell checked first."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, strict=True)
            header = list(reader.fieldnames or [])
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"cannot read the results file: {getattr(error, 'strerror', None) or error}",
                         path=path) from None
    for line, row in enumerate(rows, 2):
        if None in row or None in row.values():  # more cells than the header, or fewer (a cut-off line)
            cells = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or [])
            raise InputError(f"the row has {cells} cells and the header {len(header)}: the file is cut off or "
                             "malformed here", path=path, line=line, fix="download the results file again, whole")
    known = set(study.pair_ids)
    seen: dict[tuple[str, str, str], int] = {}
    out = []

    def add(line: int, column: str, worker: str, pair: str, question: str, text: str) -> None:
        if not text.strip():
            return  # not answered
        if pair not in known:
            raise InputError(f"column {column}: no pair {quote(pair)} in this study", path=path, line=line,
                             fix="import the results of this study's export, or correct --map")
        try:
            value = None if text.strip() == CANT_JUDGE and study.template.cant_judge else float(text)
        except ValueError:
            raise InputError(f"column {column}: {quote(text)} is not a number" + (
                f" (nor {CANT_JUDGE}, the answer \"can't judge\")" if study.template.cant_judge else ""), path=path,
                line=line) from None
        try:
            study.check(question, pair, value)
        except InputError as error:
            raise InputError(f"column {column}: {error}", path=path, line=line) from None
        key = (worker, pair, question)
        if key in seen:
            raise InputError(f"column {column}: {worker} rates {pair} {question} again (first on line "
                             f"{seen[key]})", path=path, line=line, fix="keep one assignment per worker and pair")
        seen[key] = line
        out.append((worker, pair, question, value))

    if set(LONG) <= set(header) and not mapping:
        for line, row in enumerate(rows, 2):
            empty = next((c for c in LONG if not row[c].strip()), None)
            if empty is not None:
                raise InputError(f"column {empty}: empty; each row of a long file is one rating ({', '.join(LONG)})",
                                 path=path, line=line, fix="fill in its annotator, pair, question and value, or "
                                 "delete the row")
            add(line, "value", row["annotator"], row["pair_id"], row["question"], row["value"])
        return out
    worker_column = next((c for c in WORKER_COLUMNS if c in header), None)
    if worker_column is None:
        raise InputError(f"no worker column (one of {list(WORKER_COLUMNS)}) among {quote(header, 300)}", path=path,
                         fix="give a platform's results file")
    answers = _answer_columns(header, mapping or {})
    missing = [c for c in answers if c not in header]
    if not answers or missing:
        raise InputError(f"no answer column {quote(missing[0]) if missing else 'like Answer.fluency-1'} in the "
                         "header", path=path, fix="name the file's answer columns with --map COLUMN=PAIR:QUESTION")
    for column, (pair, _) in answers.items():
        if pair not in header and (not mapping or pair not in known):
            raise InputError(f"no column {quote(pair)} in the header: it names the pair that {column} rates"
                             if not mapping else f"--map {column}={pair}:...: {quote(pair)} is neither a column of "
                             "the file nor a pair of this study", path=path,
                             fix="give the file as the platform wrote it (every HIT's pair_id_K column), or name "
                                 "the column holding each pair's id with --map COLUMN=PAIR:QUESTION")
    for line, row in enumerate(rows, 2):
        worker = (row.get(worker_column) or "").strip()
        if not worker:
            raise InputError(f"column {worker_column}: no worker", path=path, line=line)
        for column, (pair, question) in answers.items():
            pair_id = (row.get(pair) or "").strip() if pair in header else pair
            if pair_id or (row.get(column) or "").strip():
                add(line, column, f"{worker_column}:{worker}", pair_id, question, row.get(column) or "")
    if not out:
        raise InputError("no rating in the file", path=path, fix="check the answer columns and --map")
    return out
