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
import re
from collections.abc import Sequence

import numpy as np
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


# Words that carry no content of their own, for choosing the word a content-changing edit replaces: scikit-learn's
# English stop words plus the archaic function words of the older versions.
ARCHAIC_FUNCTION_WORDS = frozenset({"thee", "thou", "thy", "thine", "unto", "hath", "hast", "doth", "shalt", "wilt",
                                    "shall", "upon", "also", "said", "saith", "came", "come", "went", "made",
                                    "make", "things", "therefore", "wherefore", "behold", "even", "yea"})
KNOWN_ANSWER_KINDS = {"rewrite": True, "word_swap": False, "adjacent": False}


def content_words(text: str) -> list[str]:
    """The words of ``text`` an edit may replace to change its content: alphabetic, 4+ letters, not a stop word.

    >>> content_words("And the LORD said unto Moses, Go in unto Pharaoh")
    ['LORD', 'Moses', 'Pharaoh']
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    words = re.findall(r"[A-Za-z]+", text)
    return [w for w in words if len(w) >= 4 and w.lower() not in ENGLISH_STOP_WORDS
            and w.lower() not in ARCHAIC_FUNCTION_WORDS]


def swap_word(text: str, old: str, new: str) -> str:
    """``text`` with the first whole-word occurrence of ``old`` replaced by ``new`` (capitalised when ``old`` is).

    >>> swap_word("And Moses went up", "Moses", "aaron")
    'And Aaron went up'
    """
    if old[0].isupper():
        new = new[0].upper() + new[1:]
    return re.sub(rf"\b{re.escape(old)}\b", new, text, count=1)


def known_answer_pairs(verses: pd.DataFrame, source: str, targets: Sequence[str], n: int,
                       seed: int = 0) -> pd.DataFrame:
    """Pairs whose content relation is known, for ``n`` sampled verses of ``verses`` (columns of
    :func:`parallel_verses` with ``source`` and every ``targets`` version): from the source verse x to

    * ``rewrite``: the same verse in a target version (targets taken in turn): a style rewrite that keeps content;
    * ``word_swap``: x with one content word (:func:`content_words`) replaced by a content word of another sampled
      verse that x does not contain: the same style, one fact changed;
    * ``adjacent``: the next verse of the same chapter in the same target version: a rewrite of other content.

    Rows: ``item`` (the verse's index in the sample), ``verse`` (``book chapter:verse``), ``kind``, ``input``,
    ``output``, ``target_version``, ``keeps_content``.  Only verses with a next verse in their chapter and a content
    word are sampled; the draw is seeded.
    """
    frame = verses.sort_values(list(VERSE_ID), kind="stable").reset_index(drop=True)
    same_chapter = ((frame["book"] == frame["book"].shift(-1)) & (frame["chapter"] == frame["chapter"].shift(-1)))
    candidates = np.flatnonzero(same_chapter.to_numpy() & frame[source].map(lambda t: bool(content_words(t))))
    if len(candidates) < max(n, 2):
        raise InputError(f"only {len(candidates)} verses have a next verse and a content word; asked for {n} (at "
                         "least 2)")
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(candidates, n, replace=False))
    rows = []
    for item, row in enumerate(sample):
        x = frame.at[row, source]
        target = targets[item % len(targets)]
        donor = frame.at[sample[(item + 1) % n], source]
        present = {w.lower() for w in re.findall(r"[A-Za-z]+", x)}
        old = str(rng.choice(content_words(x)))
        replacements = [w for w in dict.fromkeys(content_words(donor)) if w.lower() not in present]
        new = str(rng.choice(replacements)) if replacements else "Jerusalem" if "jerusalem" not in present else "Egypt"
        verse = f"{frame.at[row, 'book']} {frame.at[row, 'chapter']}:{frame.at[row, 'verse']}"
        for kind, output in (("rewrite", frame.at[row, target]), ("word_swap", swap_word(x, old, new)),
                             ("adjacent", frame.at[row + 1, target])):
            rows.append({"item": item, "verse": verse, "kind": kind, "input": x, "output": output,
                         "target_version": source if kind == "word_swap" else target,
                         "keeps_content": KNOWN_ANSWER_KINDS[kind]})
    return pd.DataFrame(rows)
