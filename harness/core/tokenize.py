"""The one tokenizer shared by lexicons, text modification and word-level content metrics.

Text is NFC-normalised, then split into lower-cased tokens (Python's ``str.lower``, Unicode's default case rules:
Turkish ``I`` becomes ``i``, ``İ`` becomes ``i̇``, ``ı`` stays):

* words of any script: runs of Unicode letters, combining marks and digits (``décor``, ``straße``, ``ıssız``,
  ``مرحبا``), with inner hyphens, underscores or apostrophes (``red-haired``, ``didn't``, ``l’uomo``);
* each CJK ideograph on its own, as sacreBLEU's ``zh`` tokenizer splits Chinese characters; kana and hangul are
  letters, so the kana between two ideographs are one word, as ``zh`` leaves them (BLEU at ``@none`` on Chinese or
  Japanese text is sacreBLEU's with ``tokenize="zh"``);
* the mask placeholder ``<masked>``-style tokens;
* runs of one repeated symbol (``!!!``, ``😂😂``), each symbol a whole grapheme (``👍🏽``, ``❤️``), as Mir et al.'s
  DeepMoji-derived tokenizer does.

Scripts written without spaces other than CJK (Thai, Lao, Khmer, Burmese) are not segmented: a run of letters is
one word.  On ASCII text this is Mir et al.'s tokenizer: pre-tokenized corpora such as Yelp come out unchanged
apart from case.  :func:`dominant_script` says which script most letters of some texts are in, by their Unicode
names, for the lines that say a model does not read it.

>>> tokenize("Le décor était très beau ! C’est l’été...")
['le', 'décor', 'était', 'très', 'beau', '!', 'c’est', 'l’été', '...']
>>> tokenize("我喜欢東京のラーメン。")
['我', '喜', '欢', '東', '京', 'のラーメン', '。']
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    import numpy as np

_LETTERS = r"[[\p{L}\p{M}\p{N}]--\p{Ideographic}]+"
_INNER = r"[-_'’‐‑]"  # hyphen-minus, underscore, apostrophe, right single quotation mark, hyphen, non-breaking hyphen
_CONTINUES = r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=SpacingMark}]"
_SPACE = r"[\s\x1c-\x1f]"  # white space as str.isspace() and Python's re see it (regex's \s omits \x1c-\x1f)
_TOKEN = regex.compile(rf"(?V1)<[A-Za-z_]+>|{_LETTERS}(?:{_INNER}{_LETTERS})*|\p{{Ideographic}}\p{{M}}*"
                       rf"|(?!{_SPACE})(\X)(?:\1(?!{_CONTINUES}))*")


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens of ``text`` after NFC normalisation."""
    return [m.group(0).lower() for m in _TOKEN.finditer(unicodedata.normalize("NFC", text))]


def normal_form(word: str) -> str:
    """``word`` written as tokens are: NFC-normalised and lower-cased (for word lists matched against tokens).

    >>> normal_form("Cafe\u0301") == tokenize("Cafe\u0301")[0] == "café"
    True
    """
    return unicodedata.normalize("NFC", word).lower()


def cache_key_part(texts: Sequence[str]) -> tuple[str, ...]:
    """What the cache key of anything fitted on the tokens of ``texts`` adds: nothing for ASCII text, which every
    tsteval tokenised alike (so cached fits and the signatures naming them stay valid), the tokenizer's version
    otherwise (before it, letters outside ASCII were tokens of their own).

    >>> cache_key_part(["good food !"]), cache_key_part(["très bon !"])
    ((), ('tokenizer:unicode-1',))
    """
    return () if all(t.isascii() for t in texts) else ("tokenizer:unicode-1",)


def tokens_of(texts: Sequence[str]) -> list[list[str]]:
    """:func:`tokenize` of each text, each distinct text tokenised once (repeats share one list: do not mutate).

    >>> tokens_of(["Good food !", "good food !"])
    [['good', 'food', '!'], ['good', 'food', '!']]
    """
    distinct: dict[str, list[str]] = {}
    return [distinct[t] if t in distinct else distinct.setdefault(t, tokenize(t)) for t in texts]


def dominant_script(texts: Sequence[str], limit: int = 2000) -> tuple[str | None, float]:
    """The script most letters of the first ``limit`` texts are in (the first word of the letters' Unicode names:
    ``LATIN``, ``CYRILLIC``, ``DEVANAGARI``, ``CJK``...) and its share of the letters; (None, 0) with no letter.

    >>> dominant_script(["Привет", "ok"])
    ('CYRILLIC', 0.75)
    """
    counts: Counter[str] = Counter()
    for text in texts[:limit]:
        for char in text:
            if char.isalpha():
                counts[unicodedata.name(char, "UNKNOWN").split(" ")[0]] += 1
    if not counts:
        return None, 0.0
    script, count = counts.most_common(1)[0]
    return script, count / sum(counts.values())


def cut_ids(tokenizer: object, texts: Sequence[str] | Sequence[Sequence[str]], max_length: int,
            **options: object) -> tuple[list[list[int]], np.ndarray]:
    """``tokenizer``'s ids of ``texts`` cut at ``max_length`` (special tokens included) and, per text, whether it
    was cut; ``options`` go to the tokenizer (``is_split_into_words=True`` for texts given as their words).  A fast
    tokenizer keeps what it cut as each encoding's overflow (no second pass); a slow one has none, so a text is cut
    when it has more than ``max_length`` tokens at ``max_length + 1`` (the special tokens kept either way).  Counted
    per scorecard column by :mod:`tsteval.metrics.truncation`."""
    import numpy as np

    batch = tokenizer(list(texts), truncation=True, max_length=max_length, **options)
    if batch.encodings is not None:
        cut = [bool(encoding.overflowing) for encoding in batch.encodings]
    else:
        longer = tokenizer(list(texts), truncation=True, max_length=max_length + 1, **options)["input_ids"]
        cut = [len(ids) > max_length for ids in longer]
    return batch["input_ids"], np.array(cut, dtype=bool)
