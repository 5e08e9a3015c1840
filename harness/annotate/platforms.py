"""Crowdsourcing platforms: a study's pairs in a platform's batch-input form (``tsteval annotate export``) and its
results file read back into the study's database (``tsteval annotate import``).

Export (``--format``):

* ``mturk``: Amazon Mechanical Turk's batch input CSV, one row per HIT of ``per_hit`` pairs in a seeded order,
  columns ``pair_id_K``, ``original_K``, ``rewrite_K``, ``target_K`` for K = 1..per_hit and ``study_signature``,
  and beside it the HIT layout (:func:`mturk_layout`, crowd HTML: ``${original_1}``... and the answer fields
  ``QUESTION-K``, ``fluency-3``).  MTurk's results file then holds ``Input.pair_id_K`` and either
  ``Answer.QUESTION-K`` or, as a crowd-form writes it, all answers in the JSON column ``Answer.taskAnswers``;
  import reads both without a map.  Each repeated pair (``r:ID``) sits in the HIT of ``ID``, in its last slots, so
  that the worker who rated ``ID`` rates it again (:func:`hits`); a study's overlap copies (``annotate plan
  --overlap``) come last, in HITs of their own, so that with one assignment per HIT another worker rates them
  (mostly: MTurk cannot keep a worker from a copy's HIT; agreement counts the copies that are a second rating).  A
  HIT with fewer than ``per_hit`` pairs (the last of each group) is said by :func:`short_rows`; the layout removes
  its empty slots;
* ``prolific``: the same rows for a survey tool linked from a Prolific study (its results carry the participant in
  ``PROLIFIC_PID`` or ``participant_id``); the study's own open link (``tsteval annotate invite --prolific``) needs
  no survey tool;
* ``csv``: one row per pair (``pair_id``, ``original``, ``rewrite``, ``target``, ``study_signature``).

System names never leave the study.  Import reads the worker from ``WorkerId``, ``PROLIFIC_PID``,
``participant_id`` or ``annotator``; each answer column ``Answer.QUESTION-K`` (or ``QUESTION-K``) is the rating of
``QUESTION`` for the pair named in the row's ``Input.pair_id_K`` (or ``pair_id_K``; a cell ``cant_judge`` is the
answer "can't judge" where the template offers it); a long file with columns
``annotator, pair_id, question, value`` is read as it is.  ``--map COLUMN=PAIR:QUESTION`` says it for a file
tsteval did not export: PAIR is a pair id, or the name of the column holding it in each row.

Ratings attach only to what was shown: where a row carries the texts beside a pair's id (``Input.original_K``
and ``Input.rewrite_K`` beside ``Input.pair_id_K``; ``original``, ``rewrite`` beside ``pair_id``), each must be
the study's text of that pair (:func:`shown`, whitespace aside); where it carries ``study_signature`` (every
export does), it must be this study's; a file with a pair column that carries no texts must carry the signature.
Every template question is answered or said missing: a question without an answer column for pairs the file
shows is refused (``partial=True``, ``import --partial``, imports the others and counts it missing), and a blank
answer of a shown pair is counted per question (:attr:`Results.missing`), and so is a "can't judge" (an answer
stored without a value, :attr:`Results.cant_judge`).  Every value is checked (a known pair,
a whole number on the study's scale, one rating per worker, pair and question) before anything is written; the
first bad cell is one line naming the file, row and column, and then nothing is imported.  A malformed row is
refused, never skipped: more or fewer cells than the header (a cut-off last line), and in a long file an empty
annotator, pair, question or value.
"""

from __future__ import annotations

import csv
import html
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tsteval.annotate.study import Study
from tsteval.core.errors import InputError, TstevalError, quote

FORMATS = ("mturk", "prolific", "csv")
WORKER_COLUMNS = ("WorkerId", "PROLIFIC_PID", "participant_id", "annotator")
LONG = ("annotator", "pair_id", "question", "value")
SIGNATURE = "study_signature"
TEXTS = ("original", "rewrite", "target")
TASK_ANSWERS = "Answer.taskAnswers"
CANT_JUDGE = "cant_judge"  # a results cell holding the answer "can't judge" (where the template offers it)
ANSWER = re.compile(r"^(?:Answer\.)?([A-Za-z_][A-Za-z0-9_]*)-(\d+)$")
PAIR_COLUMN = re.compile(r"^(?:Input\.)?pair_id_\d+$")
CROWD_ELEMENTS = "https://assets.crowd.aws/crowd-html-elements.js"


def shown(study: Study, pair: dict) -> list[str]:
    """The texts a rater is shown of ``study``'s pair ``pair`` (a row of ``pairs.csv``), in :data:`TEXTS` order, as
    shown (:meth:`Study.display`): what every export writes and every import compares a results row with."""
    return [study.display(pair["input"]), study.display(pair["output"]), pair["target_name"]]


def export_rows(study: Study, fmt: str, per_hit: int = 5, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """The header and rows of ``study``'s pairs in the platform format ``fmt`` (see the module notes)."""
    if fmt not in FORMATS:
        raise TstevalError(f"unknown format {fmt!r}; choose from {list(FORMATS)}")
    pairs = study.shown_pairs.iloc[np.random.default_rng(seed).permutation(len(study.shown_pairs))]
    second = (pairs["kind"] == "overlap").to_numpy()
    groups = [[[p["pair_id"], *shown(study, p)] for p in part.to_dict("records")]
              for part in (pairs[~second], pairs[second])]
    sign = study.info["signature"]
    if fmt == "csv":
        return ["pair_id", *TEXTS, SIGNATURE], [[*record, sign] for group in groups for record in group]
    if per_hit < 1:
        raise TstevalError(f"--per-hit must be at least 1, not {per_hit}")
    header = [f"{name}_{k}" for k in range(1, per_hit + 1) for name in ("pair_id", *TEXTS)] + [SIGNATURE]
    rows = []
    for records in groups:  # the overlap copies in HITs of their own, never beside the pair they repeat
        by_id = {record[0]: record for record in records}
        for hit in hits([record[0] for record in records], per_hit):
            chunk = [by_id[pair] for pair in hit]
            chunk += [["", "", "", ""]] * (per_hit - len(chunk))
            rows.append([cell for record in chunk for cell in record] + [sign])
    return header, rows


def short_rows(header: list[str], rows: list[list[str]]) -> list[tuple[int, int, int]]:
    """The rows (HITs) of an export holding fewer pairs than slots: (row number from 1, pairs, slots)."""
    slots = [i for i, name in enumerate(header) if PAIR_COLUMN.match(name)]
    counts = [(n, sum(bool(row[i]) for i in slots)) for n, row in enumerate(rows, 1)]
    return [(n, filled, len(slots)) for n, filled in counts if len(slots) > 1 and filled < len(slots)]


def mturk_layout(study: Study, per_hit: int) -> str:
    """The MTurk HIT layout (crowd HTML) of an ``export --format mturk`` batch of ``per_hit`` pairs per HIT: each
    slot K shows ``${original_K}`` and ``${rewrite_K}`` and asks every template question as the required radio
    field ``QUESTION-K`` (values the scale's points, and :data:`CANT_JUDGE` where the template offers "can't
    judge"); a script removes the slots of a short HIT's empty pairs.  MTurk puts a batch's cells into the layout as
    they are, so the texts sit in read-only text areas, where a tag in a system output (``<unk>``, ``<script>``) is
    shown as written instead of read as HTML."""
    template = study.template
    low, high = template.scale
    slots = []
    for k in range(1, per_hit + 1):
        asked = []
        for q in template.questions:
            prompt = html.escape(q.prompt).replace("{target}", f"<strong>${{target_{k}}}</strong>")
            points = "".join(f'<label><input type="radio" name="{q.name}-{k}" value="{v}" required> {v}'
                             f'{" " + html.escape(q.anchors[v]) if v in q.anchors else ""}</label> '
                             for v in range(low, high + 1))
            if template.cant_judge:  # the answer "can't judge", read back as the cell cant_judge
                points += (f'<label><input type="radio" name="{q.name}-{k}" value="{CANT_JUDGE}" required> '
                           f'{html.escape(template.cant_judge)}</label> ')
            asked.append(f'  <fieldset><legend>{prompt}</legend>{points}</fieldset>')
        slots.append(f'<section class="pair" data-pair="${{pair_id_{k}}}">\n  <p>Original</p>\n'
                     f'  <textarea class="text" readonly rows="3">${{original_{k}}}</textarea>\n  <p>Rewrite (meant '
                     f'to be <strong>${{target_{k}}}</strong>)</p>\n'
                     f'  <textarea class="text" readonly rows="3">${{rewrite_{k}}}</textarea>\n'
                     + "\n".join(asked) + "\n</section>")
    return (f'<!-- tsteval annotate export --format mturk, study {study.info["signature"]}: paste as the HIT layout '
            f'(Source); results: tsteval annotate import STUDY Batch_results.csv -->\n'
            f'<script src="{CROWD_ELEMENTS}"></script>\n'
            "<style>.text { background: #f4f4f6; padding: .5rem; width: 100%; border: 0; resize: none; font: inherit; }"
            " "
            'section.pair { border-top: 1px solid #ccc; margin: 1rem 0; }</style>\n'
            f'<crowd-form>\n<h2>{html.escape(template.title)}</h2>\n<p>{html.escape(template.instructions)}</p>\n'
            + "\n".join(slots) + '\n</crowd-form>\n'
            '<script>document.querySelectorAll(\'section.pair[data-pair=""]\').forEach((s) => s.remove());</script>\n')


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


def _task_answers(cell: str, path: Path, line: int) -> dict[str, str]:
    """A crowd-form's ``Answer.taskAnswers`` cell (a JSON list holding one object of field -> answer) as answer
    columns ``Answer.FIELD``: a plain value as it is, a radio group's ``{"1": false, "2": true}`` as its chosen
    option ("" where none is)."""
    where = {"path": path, "line": line}
    try:
        data = json.loads(cell) if cell.strip() else [{}]
    except ValueError as error:
        raise InputError(f"column {TASK_ANSWERS}: not JSON ({error})", **where,
                         fix="download the batch results again, whole") from None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise InputError(f"column {TASK_ANSWERS}: {quote(cell)} is not a list of one object of answers", **where)
    out = {}
    for name, value in data.items():
        if isinstance(value, dict):
            chosen = [option for option, on in value.items() if on is True]
            if len(chosen) > 1:
                raise InputError(f"column {TASK_ANSWERS}: field {name} has {len(chosen)} options chosen "
                                 f"({chosen}); a rating is one", **where)
            value = chosen[0] if chosen else ""
        elif value is None:
            value = ""
        elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"column {TASK_ANSWERS}: field {name}: {quote(value)} is not an answer", **where)
        out[f"Answer.{name}"] = str(value)
    return out


def _same(a: str, b: str) -> bool:
    """Whether two texts are the same, whitespace aside (a spreadsheet may rewrap or trim a cell)."""
    return a.split() == b.split()


@dataclass
class Results:
    """A results file read and checked: its (worker, pair, question, value) ``ratings`` (value None: "can't
    judge"), and per question the answers it ``asked`` for (a worker shown a pair), those ``missing`` (blank, or no
    column with ``partial``) and those answered "can't judge" (``cant_judge``: answered, but no value to use)."""

    ratings: list[tuple[str, str, str, float | None]] = field(default_factory=list)
    asked: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    cant_judge: dict[str, int] = field(default_factory=dict)

    def said(self) -> str:
        """The answers per question, said in a line: ``content 35 of 35, fluency 34 of 35 (1 missing, 2 can't
        judge)``; a "can't judge" answer is answered, its value missing."""
        out = []
        for q, n in self.asked.items():
            notes = [f"{count} {what}" for count, what in ((self.missing[q], "missing"),
                                                           (self.cant_judge.get(q, 0), "can't judge")) if count]
            out.append(f"{q} {n - self.missing[q]} of {n}" + (f" ({', '.join(notes)})" if notes else ""))
        return ", ".join(out)


class _Reader:
    """The checks of one results file against its study (see the module notes)."""

    def __init__(self, study: Study, path: Path, header: list[str]) -> None:
        self.study, self.path, self.header = study, path, header
        self.known = {p["pair_id"]: p for p in study.pairs.to_dict("records")}
        self.seen: dict[tuple[str, str, str], int] = {}
        names = study.template.names
        self.results = Results(asked=dict.fromkeys(names, 0), missing=dict.fromkeys(names, 0),
                               cant_judge=dict.fromkeys(names, 0))
        self.signature = next((c for c in (SIGNATURE, f"Input.{SIGNATURE}") if c in header), None)

    def texts(self, source: str) -> dict[str, str]:
        """The columns holding the texts shown with the pair named in column ``source`` (``Input.original_3``
        beside ``Input.pair_id_3``): name -> column, empty unless both the original and the rewrite are there."""
        if source not in self.header or "pair_id" not in source:
            return {}
        columns = {name: source.replace("pair_id", name) for name in TEXTS}
        columns = {name: column for name, column in columns.items() if column in self.header}
        return columns if {"original", "rewrite"} <= set(columns) else {}

    def tied(self, sources: Sequence[str]) -> None:
        """Refuse a file whose pairs nothing ties to this study's texts: a pair source without texts and no
        signature column."""
        bare = next((s for s in sources if not self.texts(s)), None)
        if bare is not None and self.signature is None:
            named = f"column {bare}" if bare in self.header else f"pair {quote(bare)}"
            raise InputError(f"nothing ties these ratings to this study's texts: {named} carries no texts shown "
                             f"(original and rewrite beside it) and the file no {SIGNATURE} column",
                             path=self.path, fix=f"import the results of this study's export (they carry both), or "
                             f"add a column {SIGNATURE} holding {self.study.info['signature']} to every row if "
                             "you know its raters saw this study's texts")

    def row(self, line: int, row: dict[str, str]) -> None:
        """Check the row's study signature, where the file carries one."""
        if self.signature is not None:
            value = (row.get(self.signature) or "").strip()
            if value != self.study.info["signature"]:
                raise InputError(f"column {self.signature}: {quote(value)} is not this study's signature "
                                 f"{self.study.info['signature']}: the row rates another study's batch",
                                 path=self.path, line=line, fix="import it into the study that exported the batch")

    def pair(self, line: int, column: str, pair: str, row: dict[str, str], source: str) -> None:
        """Refuse an unknown pair, or one shown with other texts than the study's."""
        if pair not in self.known:
            raise InputError(f"column {column}: no pair {quote(pair)} in this study", path=self.path, line=line,
                             fix="import the results of this study's export, or correct --map")
        for name, text_column in self.texts(source).items():
            cell, expected = row.get(text_column) or "", shown(self.study, self.known[pair])[TEXTS.index(name)]
            if not _same(cell, expected):
                raise InputError(f"column {text_column}: pair {pair} was shown with the {name} {quote(cell)}, "
                                 f"the study's is {quote(expected)}: these ratings are of other texts",
                                 path=self.path, line=line, fix="import the results of this study's own export")

    def add(self, line: int, column: str, worker: str, pair: str, question: str, text: str) -> None:
        """One answer (``text``; blank: missing; :data:`CANT_JUDGE`: "can't judge", answered without a value) of
        ``worker`` on ``question`` of the known ``pair``."""
        if question in self.results.asked:
            self.results.asked[question] += 1
        if not text.strip():
            self.results.missing[question] += 1
            return
        offered = self.study.template.cant_judge
        try:
            value = None if text.strip() == CANT_JUDGE and offered else float(text)
        except ValueError:
            raise InputError(f"column {column}: {quote(text)} is not a number" + (
                f" (nor {CANT_JUDGE}, the answer \"can't judge\")" if offered else ""), path=self.path,
                line=line) from None
        try:
            self.study.check(question, pair, value)
        except InputError as error:
            raise InputError(f"column {column}: {error}", path=self.path, line=line) from None
        key = (worker, pair, question)
        if key in self.seen:
            raise InputError(f"column {column}: {worker} rates {pair} {question} again (first on line "
                             f"{self.seen[key]})", path=self.path, line=line,
                             fix="keep one assignment per worker and pair")
        self.seen[key] = line
        if value is None:  # "can't judge": answered, counted beside the missing
            self.results.cant_judge[question] += 1
        self.results.ratings.append((worker, pair, question, value))

    def complete(self, given: dict[str, set[str]], partial: bool, how: str) -> None:
        """Refuse, unless ``partial``, a pair source (source -> the questions answered for its pairs) without an
        answer to some template question; ``how`` says how such an answer is named."""
        for source, questions in given.items():
            lacking = [q for q in self.study.template.names if q not in questions]
            if lacking and not partial:
                named = f"column {source}" if source in self.header else f"pair {quote(source)}"
                raise InputError(f"no {lacking[0]} answer for the pairs of {named}: the file answers "
                                 f"{sorted(questions) or 'none'} of the study's questions "
                                 f"{self.study.template.names}", path=self.path,
                                 fix=f"give every question its answer ({how}), or --partial to import the others "
                                 f"and count {lacking[0]} as missing")


def _read_long(check: _Reader, rows: list[dict[str, str]], partial: bool) -> Results:
    """The ratings of a long results file (one rating a row), each worker's pair answered or said missing on
    every template question."""
    check.tied(["pair_id"])
    check.complete({"pair_id": {row["question"].strip() for row in rows}}, partial,
                   "a row annotator, pair_id, question, value for each")
    given: dict[tuple[str, str], tuple[int, set[str]]] = {}
    for line, row in enumerate(rows, 2):
        empty = next((c for c in LONG if not row[c].strip()), None)
        if empty is not None:
            raise InputError(f"column {empty}: empty; each row of a long file is one rating ({', '.join(LONG)})",
                             path=check.path, line=line, fix="fill in its annotator, pair, question and value, "
                             "or delete the row")
        check.row(line, row)
        worker, pair, question = (row[c].strip() for c in LONG[:3])
        check.pair(line, "pair_id", pair, row, "pair_id")
        check.add(line, "value", worker, pair, question, row["value"])
        given.setdefault((worker, pair), (line, set()))[1].add(question)
    for (worker, pair), (line, questions) in given.items():
        for question in check.study.template.names:
            if question not in questions:
                check.add(line, "question", worker, pair, question, "")  # said missing
    return check.results


def read_results(study: Study, path: str | Path, mapping: dict[str, tuple[str, str]] | None = None,
                 partial: bool = False) -> Results:
    """The ratings of the results file ``path``, every cell checked first (see the module notes); ``partial``
    accepts a question without answer columns (counted missing)."""
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
    if TASK_ANSWERS in header:  # its fields become columns Answer.FIELD, which --map can name too
        for line, row in enumerate(rows, 2):
            row.update(_task_answers(row[TASK_ANSWERS], path, line))
        header += [c for c in dict.fromkeys(c for row in rows for c in row) if c not in header]
    check = _Reader(study, path, header)
    if set(LONG) <= set(header) and not mapping:
        return _read_long(check, rows, partial)
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
        if pair not in header and (not mapping or pair not in check.known):
            raise InputError(f"no column {quote(pair)} in the header: it names the pair that {column} rates"
                             if not mapping else f"--map {column}={pair}:...: {quote(pair)} is neither a column of "
                             "the file nor a pair of this study", path=path,
                             fix="give the file as the platform wrote it (every HIT's pair_id_K column), or name "
                                 "the column holding each pair's id with --map COLUMN=PAIR:QUESTION")
    given: dict[str, set[str]] = {}
    for pair, question in answers.values():
        given.setdefault(pair, set()).add(question)
    if not mapping:  # a slot of the export that some row fills but no answer column rates
        given.update({c: set() for c in header if PAIR_COLUMN.match(c) and c not in given})
    used = {c for row in rows for c, v in row.items() if (v or "").strip()}
    given = {s: qs for s, qs in given.items()  # the sources some row fills (a pair id or an answer)
             if s not in header or s in used or any(c in used for c, (t, _) in answers.items() if t == s)}
    check.tied(list(given))
    check.complete(given, partial, "Answer.QUESTION-K in the layout, or --map COLUMN=PAIR:QUESTION")
    names = study.template.names
    for line, row in enumerate(rows, 2):
        worker = (row.get(worker_column) or "").strip()
        if not worker:
            raise InputError(f"column {worker_column}: no worker", path=path, line=line)
        check.row(line, row)
        for source in given:
            pair_id = (row.get(source) or "").strip() if source in header else source
            columns = {q: c for c, (s, q) in answers.items() if s == source}
            if not pair_id and not any((row.get(c) or "").strip() for c in columns.values()):
                continue  # an empty slot (a short HIT)
            check.pair(line, source if source in header else next(iter(columns.values())), pair_id, row, source)
            for question in [*names, *(q for q in columns if q not in names)]:
                column = columns.get(question)  # none: a question --partial lets go unasked (counted missing)
                check.add(line, column or source, f"{worker_column}:{worker}", pair_id, question,
                          (row.get(column) or "") if column else "")
    if not check.results.ratings:
        raise InputError("no rating in the file", path=path, fix="check the answer columns and --map")
    return check.results
