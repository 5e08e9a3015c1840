"""The verse-aligned English Bible versions of Carlson et al. (2018): ``bible/VERSION.tsv.gz``.

Each version is a table of verses with ids ``(book, chapter, verse)``.  The same id in two versions is the same
content in two styles; a chapter (its verses joined in order) is the verse's source document, the role the
article plays for a headline in De Mattei et al. (2020).

Policy for the published files' oddities: HTML entities are unescaped (BBE writes ``&lt;``); placeholder verses
with no letter or digit (``...``, ``***``, ``[]``, ``+``: verses a version omits) are dropped; a verse id given on
several lines (BBE Psalms 76:1, a superscription then the verse) has its texts joined in file order.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError

BIBLE_VERSIONS = ("ASV", "BBE", "DARBY", "DRA", "KJV", "LEB", "WEB", "YLT")
VERSE_ID = ("book", "chapter", "verse")


def load_bible(version: str) -> pd.DataFrame:
    """One version's verses: columns ``book, chapter, verse, text`` in file order (placeholders dropped)."""
    path = dataset_dir("bible") / f"{version}.tsv.gz"
    if not path.is_file():
        raise DataNotFoundError(f"Bible version {version!r} not found: expected the file {path} "
                                f"(versions: {', '.join(BIBLE_VERSIONS)})")
    frame = pd.read_csv(path, sep="\t", dtype={"book": str, "text": str}, keep_default_na=False, quoting=3)
    missing = [c for c in (*VERSE_ID, "text") if c not in frame.columns]
    if missing:
        raise InputError(f"the columns {missing} are missing; the columns are {list(frame.columns)}", path=path)
    frame["text"] = frame["text"].map(html.unescape).str.strip()
    frame = frame[frame["text"].str.contains(r"[^\W_]", regex=True)]
    return frame.groupby(list(VERSE_ID), sort=False, as_index=False)["text"].agg(" ".join)


def parallel_verses(versions: Sequence[str]) -> pd.DataFrame:
    """Verses present (non-empty) in every one of ``versions``: the id columns plus one text column per version,
    in the first version's order."""
    if len(versions) < 1 or len(set(versions)) != len(versions):
        raise InputError(f"give distinct Bible versions, not {list(versions)}")
    frame = load_bible(versions[0]).rename(columns={"text": versions[0]})
    for version in versions[1:]:
        frame = frame.merge(load_bible(version).rename(columns={"text": version}), on=list(VERSE_ID), how="inner")
    return frame.reset_index(drop=True)


def chapters(verses: pd.DataFrame, column: str) -> pd.Series:
    """The text of each chapter (verses of ``column`` joined by spaces in verse order), indexed by (book, chapter)."""
    ordered = verses.sort_values(list(VERSE_ID), kind="stable")
    return ordered.groupby(["book", "chapter"], sort=False)[column].agg(" ".join)


def chapter_documents(verses: pd.DataFrame, column: str) -> list[str]:
    """For each verse (row of ``verses``), the text of its chapter in ``column``: its source document."""
    by_chapter = chapters(verses, column)
    return [by_chapter[(book, chapter)] for book, chapter in zip(verses["book"], verses["chapter"], strict=True)]
