"""A study's ratings database (SQLite, WAL): annotators, their shuffled assignments, one current rating per
annotator x pair x question (``ratings``; a NULL value is the answer "can't judge") and every submission ever made
(``history``).

Each submission is one transaction (:meth:`Store.submit`): the history rows and the current rows are written
together or not at all, so a server killed at any moment keeps every rating it acknowledged.  Tokens are stored as
SHA-256 hashes only; the link holding a token is printed once, by ``tsteval annotate invite``.

>>> import tempfile, os
>>> store = Store(os.path.join(tempfile.mkdtemp(), "ratings.sqlite"), create=True)
>>> (who, token), = store.add_annotators(["p1", "p2"], seed=0, count=1)
>>> store.annotator(token).name, store.assignment(who)
('a1', ['p1', 'p2'])
>>> store.submit(who, "p1", {"content": 4}, "web"); store.submit(who, "p1", {"content": 5}, "web")
>>> store.ratings().value.tolist(), store.history_count()
([5.0], 2)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS annotators (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, token_hash TEXT UNIQUE,
    source TEXT NOT NULL, created REAL NOT NULL, code TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS assignments (annotator INTEGER NOT NULL REFERENCES annotators(id), position INTEGER NOT NULL,
    pair_id TEXT NOT NULL, PRIMARY KEY (annotator, position), UNIQUE (annotator, pair_id));
CREATE TABLE IF NOT EXISTS ratings (annotator INTEGER NOT NULL REFERENCES annotators(id), pair_id TEXT NOT NULL,
    question TEXT NOT NULL, value REAL, at REAL NOT NULL, source TEXT NOT NULL,
    PRIMARY KEY (annotator, pair_id, question));
CREATE TABLE IF NOT EXISTS history (id INTEGER PRIMARY KEY AUTOINCREMENT, annotator INTEGER NOT NULL,
    pair_id TEXT NOT NULL, question TEXT NOT NULL, value REAL, at REAL NOT NULL, source TEXT NOT NULL);
"""
SESSIONS = """CREATE TABLE IF NOT EXISTS sessions (annotator INTEGER NOT NULL REFERENCES annotators(id),
    study_id TEXT NOT NULL, session_id TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (annotator, study_id, session_id))"""
UNHELD = object()  # a rating the database does not hold yet
PROLIFIC = "PROLIFIC_PID:"  # an open link's participant's name prefix (as an import of Prolific results names them)


def token_hash(token: str) -> str:
    """The stored form of an annotator's token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Annotator:
    """An annotator: database id, name (``a1``, ... or ``mturk:WORKER``) and completion code."""

    id: int
    name: str
    code: str


@dataclass(frozen=True)
class Imported:
    """What an import did: the new ``workers`` and, of its ratings, the ``new`` ones, those that ``changed`` a
    rating already held and those ``unchanged``."""

    workers: int
    new: int
    changed: int
    unchanged: int

    def said(self) -> str:
        """``100 new, 3 changed (their earlier values stay in the history), 2 unchanged``."""
        changed = f"{self.changed} changed (their earlier values stay in the history)" if self.changed else "0 changed"
        return f"{self.new} new, {changed}, {self.unchanged} unchanged"


class Store:
    """The ratings database of a study (one connection; the server uses it from one thread)."""

    def __init__(self, path: str | Path, *, create: bool = False) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise InputError("no ratings database", path=self.path, fix="give a folder made by tsteval annotate plan")
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed transaction survives a killed process
        self.db.execute("PRAGMA foreign_keys=ON")
        if create:
            self.db.executescript(SCHEMA)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES ('secret', ?)", (secrets.token_hex(32),))

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @property
    def secret(self) -> str:
        """The study's random secret (keys the forms' anti-forgery tokens)."""
        return self.db.execute("SELECT value FROM meta WHERE key = 'secret'").fetchone()[0]

    def derived(self, purpose: str) -> str:
        """A value only this study can compute for ``purpose`` (an HMAC under its secret): the open link's key
        (``open``), a participant's token (``participant:PID``)."""
        return hmac.new(self.secret.encode("ascii"), purpose.encode("utf-8"), "sha256").hexdigest()[:32]

    def completion_code(self) -> str | None:
        """The Prolific study's completion code its open link was made with (``invite --prolific``), or None."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'prolific_code'").fetchone()
        return None if row is None else row[0]

    def open_link(self, code: str) -> str:
        """Open the study to a Prolific study whose completion code is ``code``; returns the link's key."""
        self.db.execute("INSERT INTO meta VALUES ('prolific_code', ?) ON CONFLICT (key) DO UPDATE SET value = "
                        "excluded.value", (code,))
        return self.derived("open")

    def participant(self, pid: str, pairs: Sequence[str], *, seed: int, study_id: str,
                    session_id: str) -> tuple[Annotator, str]:
        """The open link's participant ``pid`` (named ``PROLIFIC_PID:PID``) and their token: added on their first
        visit, with every pair of ``pairs`` in their own order (as :meth:`add_annotators` gives) and the study's
        completion code as theirs; each visit's Prolific ``study_id`` and ``session_id`` recorded."""
        token = self.derived(f"participant:{pid}")
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(SESSIONS)
            who = self.find(PROLIFIC + pid)
            if who is None:
                number = self.db.execute("SELECT COUNT(*) FROM annotators").fetchone()[0] + 1
                self.db.execute("INSERT INTO annotators (name, token_hash, source, created, code) VALUES "
                                "(?, ?, 'prolific', ?, ?)", (PROLIFIC + pid, token_hash(token), time.time(),
                                                             self.completion_code()))
                who = self.find(PROLIFIC + pid)
                self.db.executemany("INSERT INTO assignments VALUES (?, ?, ?)",
                                    [(who.id, i, p) for i, p in enumerate(shuffled(pairs, seed, number))])
            self.db.execute("INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?)",
                            (who.id, study_id, session_id, time.time()))
        return who, token

    @property
    def base_url(self) -> str | None:
        """The address the invited annotators' links point to (``annotate invite`` records it, ``serve`` reads it)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'base_url'").fetchone()
        return None if row is None else row[0]

    @base_url.setter
    def base_url(self, url: str) -> None:
        self.db.execute("INSERT INTO meta VALUES ('base_url', ?) ON CONFLICT (key) DO UPDATE SET value = "
                        "excluded.value", (url,))

    def add_annotators(self, pairs: Sequence[str], *, seed: int, count: int) -> list[tuple[Annotator, str]]:
        """Add ``count`` annotators, each with a new token and every pair of ``pairs`` in an order shuffled by
        ``seed`` and the annotator's number (:func:`shuffled`); returns them with their tokens."""
        out = []
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for _ in range(count):
                token = secrets.token_urlsafe(24)
                number = self.db.execute("SELECT COUNT(*) FROM annotators").fetchone()[0] + 1
                who = self._insert(f"a{number}", token_hash(token), "web")
                self.db.executemany("INSERT INTO assignments VALUES (?, ?, ?)",
                                    [(who.id, i, p) for i, p in enumerate(shuffled(pairs, seed, number))])
                out.append((who, token))
        return out

    def _insert(self, name: str, hashed: str | None, source: str) -> Annotator:
        code = secrets.token_hex(4).upper()
        cursor = self.db.execute("INSERT INTO annotators (name, token_hash, source, created, code) "
                                 "VALUES (?, ?, ?, ?, ?)", (name, hashed, source, time.time(), code))
        return Annotator(cursor.lastrowid, name, code)

    def import_ratings(self, rows: Sequence[tuple[str, str, str, float | None]], source: str) -> Imported:
        """Record (worker name, pair, question, value) rows of a platform's results file in one transaction: a new
        worker becomes an annotator without a token, assigned the pairs they rated.  A rating the database holds
        with the same value is left as it is; one with another value is replaced and counted as changed (the history
        keeps both)."""
        now, new = time.time(), 0
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            ids: dict[str, int] = {}
            for name in dict.fromkeys(r[0] for r in rows):
                row = self.db.execute("SELECT id FROM annotators WHERE name = ?", (name,)).fetchone()
                if row is None:
                    new += 1
                ids[name] = row[0] if row is not None else self._insert(name, None, source).id
            for name, pair in dict.fromkeys((r[0], r[1]) for r in rows):
                position = self.db.execute("SELECT COUNT(*) FROM assignments WHERE annotator = ?",
                                           (ids[name],)).fetchone()[0]
                self.db.execute("INSERT OR IGNORE INTO assignments VALUES (?, ?, ?)", (ids[name], position, pair))
            held = {(a, p, q): v for a, p, q, v in self.db.execute("SELECT annotator, pair_id, question, value "
                                                                   "FROM ratings")}
            written = [(ids[r[0]], r[1], r[2], None if r[3] is None else float(r[3]), source) for r in rows]
            # (row, the value held before: UNHELD where none is; a held None is "can't judge")
            rated = [(w, held.get(w[:3], UNHELD)) for w in written]
            self._write([w for w, old in rated if old != w[3]], now)
        return Imported(new, sum(old is UNHELD for _, old in rated),
                        sum(old is not UNHELD and old != w[3] for w, old in rated),
                        sum(old is not UNHELD and old == w[3] for w, old in rated))

    def annotator(self, token: str) -> Annotator | None:
        """The annotator holding ``token``, or None."""
        row = self.db.execute("SELECT id, name, code FROM annotators WHERE token_hash = ?",
                              (token_hash(token),)).fetchone()
        return None if row is None else Annotator(*row)

    def find(self, name: str) -> Annotator | None:
        """The annotator called ``name``, or None."""
        row = self.db.execute("SELECT id, name, code FROM annotators WHERE name = ?", (name,)).fetchone()
        return None if row is None else Annotator(*row)

    def assignment(self, who: Annotator) -> list[str]:
        """``who``'s pairs in their order."""
        rows = self.db.execute("SELECT pair_id FROM assignments WHERE annotator = ? ORDER BY position", (who.id,))
        return [r[0] for r in rows]

    def answered(self, who: Annotator) -> dict[str, dict[str, float | None]]:
        """``who``'s current ratings: pair -> question -> value (None: "can't judge")."""
        out: dict[str, dict[str, float | None]] = {}
        for pair, question, value in self.db.execute(
                "SELECT pair_id, question, value FROM ratings WHERE annotator = ?", (who.id,)):
            out.setdefault(pair, {})[question] = value
        return out

    def submit(self, who: Annotator | int, pair: str, values: Mapping[str, float | None], source: str) -> None:
        """Record ``who``'s ``values`` (question -> rating, None: "can't judge") of ``pair`` in one transaction."""
        self.submit_many([(who.id if isinstance(who, Annotator) else who, pair, q, None if v is None else float(v),
                           source) for q, v in values.items()])

    def submit_many(self, rows: Sequence[tuple[int, str, str, float | None, str]]) -> None:
        """Record (annotator, pair, question, value, source) rows in one transaction (all or none)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self._write(rows, time.time())

    def _write(self, rows: Sequence[tuple[int, str, str, float | None, str]], now: float) -> None:
        self.db.executemany("INSERT INTO history (annotator, pair_id, question, value, at, source) "
                            "VALUES (?, ?, ?, ?, ?, ?)", [(*r[:4], now, r[4]) for r in rows])
        self.db.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (annotator, pair_id, "
                            "question) DO UPDATE SET value = excluded.value, at = excluded.at, "
                            "source = excluded.source", [(*r[:4], now, r[4]) for r in rows])

    def ratings(self) -> pd.DataFrame:
        """Every current rating: annotator (name), pair_id, question, value (NaN: "can't judge")."""
        return pd.read_sql_query("SELECT a.name AS annotator, r.pair_id, r.question, r.value FROM ratings r "
                                 "JOIN annotators a ON a.id = r.annotator ORDER BY a.id, r.pair_id, r.question",
                                 self.db)

    def records(self) -> pd.DataFrame:
        """Every current rating with where it came from: annotator, source, pair_id, question, value (NaN: "can't
        judge"), at (UTC, ISO 8601)."""
        frame = pd.read_sql_query("SELECT a.name AS annotator, r.source, r.pair_id, r.question, r.value, r.at "
                                  "FROM ratings r JOIN annotators a ON a.id = r.annotator ORDER BY a.id, r.pair_id, "
                                  "r.question", self.db)
        return frame.assign(at=pd.to_datetime(frame["at"], unit="s", utc=True).dt.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def history_count(self) -> int:
        """How many submissions rows the history holds."""
        return self.db.execute("SELECT COUNT(*) FROM history").fetchone()[0]

    def progress(self, questions: int) -> pd.DataFrame:
        """Per annotator: name, source, pairs assigned, pairs fully rated, completion code."""
        return pd.read_sql_query(
            "SELECT a.name AS annotator, a.source, (SELECT COUNT(*) FROM assignments s WHERE s.annotator = a.id) "
            "AS assigned, (SELECT COUNT(*) FROM (SELECT pair_id FROM ratings r WHERE r.annotator = a.id GROUP BY "
            "pair_id HAVING COUNT(*) >= ?)) AS done, a.code FROM annotators a ORDER BY a.id", self.db,
            params=(questions,))


def shuffled(pairs: Sequence[str], seed: int, number: int) -> list[str]:
    """``pairs`` in annotator ``number``'s order: a seeded permutation in which each repeat (``r:ID``) comes after
    ``ID``, so that the second judgement of a pair is made later.

    >>> shuffled(["p1", "p2", "p3", "r:p1"], 0, 2)
    ['p3', 'p2', 'p1', 'r:p1']
    """
    order = [pairs[i] for i in np.random.default_rng([seed, number]).permutation(len(pairs))]
    for repeat in [p for p in order if p.startswith("r:")]:
        first, second = order.index(repeat[2:]), order.index(repeat)
        if second < first:
            order[first], order[second] = order[second], order[first]
    return order
