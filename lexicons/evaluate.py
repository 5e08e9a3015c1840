"""Compare a lexicon's words with a reference word list (e.g. Mir et al.'s lexicon, Liu's opinion words).

Precision, recall and F1 are set-based over distinct words.  An undefined ratio (an empty lexicon or an
empty reference) is ``None`` rather than NaN, so results stay valid JSON.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from tsteval.core.errors import InputError
from tsteval.core.tokenize import normal_form
from tsteval.lexicons.lexicon import Lexicon


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def compare_to_reference(lexicon: Lexicon | Collection[str], reference_words: Collection[str],
                         vocabulary: Iterable[str] | None = None) -> dict[str, float | int | None]:
    """Precision, recall and F1 of the lexicon's words against ``reference_words``, with the set sizes.

    With ``vocabulary`` (the words the lexicon could have picked, e.g. a corpus vocabulary), also
    ``recall_in_vocabulary``: recall against the reference words that occur in it, since a reference list
    written independently of the corpus holds many words no corpus-built lexicon can contain.
    """
    words = lexicon.words if isinstance(lexicon, Lexicon) else set(lexicon)
    reference = set(reference_words)
    overlap = len(words & reference)
    precision, recall = _ratio(overlap, len(words)), _ratio(overlap, len(reference))
    f1 = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    result: dict[str, float | int | None] = {
        "size": len(words), "reference_size": len(reference), "overlap": overlap,
        "precision": precision, "recall": recall, "f1": f1,
    }
    if vocabulary is not None:
        reachable = reference & set(vocabulary)
        result["reference_in_vocabulary"] = len(reachable)
        result["recall_in_vocabulary"] = _ratio(len(words & reachable), len(reachable))
    return result


def read_word_list(path: str | Path) -> set[str]:
    """The words of a one-word-a-line list such as Liu's opinion lexicon, written as tokens are (NFC, lower case).

    Lines starting with ``;`` (comments) and blank lines are skipped.  The file is decoded as UTF-8
    when it is valid UTF-8, otherwise as Latin-1: Liu's ``negative-words.txt`` holds one Latin-1 byte
    (``na\\xefve``), and every byte sequence is valid Latin-1, so the fallback cannot fail.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no word list here", path=path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    words = set()
    for line in text.splitlines():
        word = line.strip()
        if word and not word.startswith(";"):
            words.add(normal_form(word))
    if not words:
        raise InputError("the word list has no words (only comments or blank lines)", path=path)
    return words
