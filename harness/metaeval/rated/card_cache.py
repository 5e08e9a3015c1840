"""Scorecards the meta-evaluation studies keep between runs (``runs/``): a scored table is read back instead of
scored again when its rows and its key (everything else that decided its scores: the set, the models, templates,
seed) are the ones asked for.

A cached scorecard is a folder :meth:`~tsteval.scorecard.Scorecard.save` wrote, with ``FOLDER.json`` beside it
holding the key and the run's notes; the JSON is removed before the folder is replaced and written after, so a run
cut short leaves no scorecard under another run's key.

>>> import tempfile, pandas as pd
>>> from tsteval.core.records import TRANSFER_COLUMNS
>>> card = Scorecard(pd.DataFrame({c: ["a"] for c in TRANSFER_COLUMNS}))
>>> card.add("bleu@none", [1.0], "bleu|x")
>>> folder = Path(tempfile.mkdtemp()) / "bleu"
>>> save_cached(folder, card, {"seed": 0}, {"seconds": 2.5})
>>> load_cached(folder, card.frame, {"seed": 0})[1], load_cached(folder, card.frame, {"seed": 1})
({'seconds': 2.5}, None)
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tsteval.scorecard import Scorecard


def _meta(folder: Path) -> Path:
    return folder.with_name(f"{folder.name}.json")


def _plain(key: dict) -> object:
    return json.loads(json.dumps(key, default=str))


def save_cached(folder: Path, card: Scorecard, key: dict, notes: dict | None = None) -> None:
    """Keep ``card`` in ``folder`` under ``key``, with ``notes``."""
    _meta(folder).unlink(missing_ok=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    card.save(folder, overwrite=True)
    _meta(folder).write_text(json.dumps({"key": _plain(key), "notes": notes or {}}, indent=1, default=str),
                             encoding="utf-8")


def load_cached(folder: Path, rows: pd.DataFrame | None, key: dict) -> tuple[Scorecard, dict] | None:
    """The scorecard and notes kept in ``folder`` under ``key`` whose input and output rows are ``rows``'s (any rows
    when None); None when there is none."""
    if not _meta(folder).is_file() or not (folder / "scorecard.parquet").is_file():
        return None
    saved = json.loads(_meta(folder).read_text(encoding="utf-8"))
    if saved.get("key") != _plain(key):
        return None
    card = Scorecard.load(folder)
    if rows is not None and any(card.frame[c].tolist() != rows[c].tolist() for c in ("input", "output")):
        return None  # compared as lists: str and object columns alike
    return card, saved.get("notes", {})
