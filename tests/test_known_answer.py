"""The known-answer content pairs built from parallel Bible verses (``tsteval.readers.bible.known_answer_pairs``)."""

from __future__ import annotations

import pandas as pd
import pytest

from tsteval.core.errors import TstevalError
from tsteval.readers.bible import content_words, known_answer_pairs, swap_word

VERSES = pd.DataFrame({
    "book": ["Ruth"] * 4 + ["Jonah"] * 2,
    "chapter": [1, 1, 1, 2, 1, 1],
    "verse": [1, 2, 3, 1, 1, 2],
    "KJV": ["Naomi went unto Moab", "Ruth clave unto Naomi", "Boaz took Ruth", "Then Boaz went up to the gate",
            "The word of the LORD came unto Jonah", "Arise, go to Nineveh"],
    "BBE": ["Naomi went to Moab", "Ruth kept near Naomi", "Boaz took Ruth as wife", "Boaz went up to the door",
            "The word of the Lord came to Jonah", "Up! go to Nineveh"],
})


def test_pairs_have_the_known_relation() -> None:
    pairs = known_answer_pairs(VERSES, "KJV", ["BBE"], n=3, seed=0)
    # Candidates: verses with a next verse in the same chapter: Ruth 1:1, 1:2 and Jonah 1:1.
    assert sorted(pairs["verse"].unique()) == ["Jonah 1:1", "Ruth 1:1", "Ruth 1:2"]
    assert pairs.groupby("item")["kind"].apply(list).tolist() == [["rewrite", "word_swap", "adjacent"]] * 3
    by = pairs.set_index(["verse", "kind"])
    assert by.loc[("Ruth 1:1", "rewrite"), "output"] == "Naomi went to Moab"
    assert by.loc[("Ruth 1:1", "adjacent"), "output"] == "Ruth kept near Naomi"
    assert by.loc[("Jonah 1:1", "adjacent"), "output"] == "Up! go to Nineveh"
    assert pairs["keeps_content"].tolist() == [True, False, False] * 3
    for row in pairs[pairs["kind"] == "word_swap"].itertuples():
        old, new = row.input.split(), row.output.split()
        changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
        assert len(changed) == 1 and changed[0][0] in content_words(row.input), changed
        assert changed[0][1].lower() not in row.input.lower().split()
        assert row.target_version == "KJV"
    assert pairs.equals(known_answer_pairs(VERSES, "KJV", ["BBE"], n=3, seed=0))


def test_content_words_and_swap() -> None:
    assert content_words("The word of the LORD came unto Jonah") == ["word", "LORD", "Jonah"]
    assert swap_word("Boaz took Ruth", "Ruth", "naomi") == "Boaz took Naomi"
    assert swap_word("the gate of the city", "gate", "Nineveh") == "the Nineveh of the city"


def test_too_few_verses_is_an_error() -> None:
    with pytest.raises(TstevalError, match="only 3 verses"):
        known_answer_pairs(VERSES, "KJV", ["BBE"], n=4)
