"""How the transfers are written, and text restored to the form a neural language model was trained on.

Much style-transfer data is lower-cased and tokenised (``i did n't like it , sorry .``), which a modern language
model reads as broken English: its fluency scores then measure the tokenisation.  ``tokenised-lowercase`` text is
detokenised with ``sacremoses`` (Moses' English rules) plus the Penn Treebank contractions Moses leaves apart
(``did n't`` -> ``didn't``, ``ca n't`` -> ``can't``), and sentence-cased: the first letter of each sentence and
the pronoun ``i`` upper-cased.  Proper nouns stay lower-case (nothing can tell them apart without a model).
``auto`` decides per call from the texts themselves (:func:`detect`); ``as-is`` leaves them alone.

>>> restore("i did n't like the food , it was cold . we 'll be back ? i 'm not sure !")
"I didn't like the food, it was cold. We'll be back? I'm not sure!"
>>> detect(["the food was great .", "i did n't like it"]), detect(["The food was great.", "I liked it"])
('tokenised-lowercase', 'as-is')

The other way, :func:`tokenise_lowercase` writes text as such corpora do (Penn Treebank tokens, lower case), for a
classifier trained on them:

>>> tokenise_lowercase("I didn't say no, you're wrong. Can't I?")
"i did n't say no , you 're wrong . ca n't i ?"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

TEXT_FORMS = ("auto", "as-is", "tokenised-lowercase")
# A token that tokenisation split off: punctuation or a clitic after a space.
_SPLIT = re.compile(r"(?:^|\s)(?:[.,!?;:)]|n't|'s|'re|'ll|'ve|'m|'d)(?=\s|$)")
_CONTRACTION = re.compile(r"\b(\w+) n't\b", re.IGNORECASE)
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PRONOUN_I = re.compile(r"\bi\b(?=$|\s|')")


@cache
def _detokenizer() -> object:
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang="en")


@cache
def _treebank() -> object:
    from nltk.tokenize import TreebankWordTokenizer

    return TreebankWordTokenizer()


def match_key(text: str) -> str:
    """How a rated text is found again in a corpus that writes it otherwise (tokenised, lower-cased, re-punctuated):
    lower case without punctuation or spaces.

    >>> match_key("Fuck , I can't!") == match_key("fuck, i can t")
    True
    """
    return re.sub(r"\W+", "", text.lower())


def tokenise_lowercase(text: str) -> str:
    """``text`` lower-cased and split into Penn Treebank tokens (``don't`` -> ``do n't``, double quotes -> two
    backquotes / two apostrophes), sentence by sentence (split after ``.``, ``!`` or ``?`` and a space, so that
    every full stop is split off), joined by spaces: the form of DualRL's
    GYAFC release; ``text`` itself when it has no token."""
    sentences = _SENTENCE_END.split(text.lower().strip())
    return " ".join(token for sentence in sentences for token in _treebank().tokenize(sentence)) or text


def detect(texts: Sequence[str]) -> str:
    """``tokenised-lowercase`` when at least half the texts with letters have no upper-case letter and at least a
    fifth show split-off punctuation or clitics, else ``as-is``."""
    lettered = [t for t in texts if re.search(r"[A-Za-z]", t)]
    if not lettered:
        return "as-is"
    lower = sum(t == t.lower() for t in lettered) / len(lettered)
    split = sum(bool(_SPLIT.search(t)) for t in lettered) / len(lettered)
    return "tokenised-lowercase" if lower >= 0.5 and split >= 0.2 else "as-is"


def restore(text: str) -> str:
    """``text`` (lower-cased, tokenised) detokenised and sentence-cased (see the module docstring)."""
    joined = _detokenizer().detokenize(text.split())
    joined = _CONTRACTION.sub(r"\1n't", joined)
    joined = _PRONOUN_I.sub("I", joined)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), joined)


def as_written(texts: Sequence[str], form: str) -> tuple[list[str], str]:
    """``texts`` in the form a language model reads (restored when ``form`` is, or is detected as,
    ``tokenised-lowercase``) and the form applied."""
    if form not in TEXT_FORMS:
        raise ValueError(f"unknown text form {form!r}; known: {TEXT_FORMS}")
    applied = detect(texts) if form == "auto" else form
    if applied == "as-is":
        return list(texts), applied
    restored = {t: restore(t) for t in dict.fromkeys(texts)}  # an input repeats once per system
    return [restored[t] for t in texts], applied
