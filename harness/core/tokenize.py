"""The one tokenizer shared by lexicons, text modification and word-level content metrics.

Lower-cased words (with inner hyphens, underscores or apostrophes: ``red-haired``, ``didn't``), numbers,
the mask placeholder ``<masked>``-style tokens, and runs of one repeated symbol (``!!!``), as Mir et al.'s
DeepMoji-derived tokenizer does.  Pre-tokenized corpora such as Yelp come out unchanged apart from case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"<[a-z_]+>|[a-z0-9]+(?:[-_'][a-z0-9]+)*|(\S)\1*", re.IGNORECASE)


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of ``text``."""
    return [m.group(0).lower() for m in _TOKEN.finditer(text)]


def tokens_of(texts: Sequence[str]) -> list[list[str]]:
    """:func:`tokenize` of each text, each distinct text tokenised once (repeats share one list: do not mutate).

    >>> tokens_of(["Good food !", "good food !"])
    [['good', 'food', '!'], ['good', 'food', '!']]
    """
    distinct: dict[str, list[str]] = {}
    return [distinct[t] if t in distinct else distinct.setdefault(t, tokenize(t)) for t in texts]
