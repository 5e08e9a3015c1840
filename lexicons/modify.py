"""Style removal and style masking of texts before content-preservation metrics (Mir et al. 2019, 3.2.2).

Every mode, ``"none"`` included, re-tokenizes with :func:`tsteval.core.tokenize.tokenize` and joins the tokens
with single spaces, as Mir et al.'s ``mark_style_words`` does, so BLEU and the other metrics see one
tokenization whichever modification is compared.  Tokens are lower-cased by the tokenizer, and a token is
a style word when it is in the lexicon.

A text whose every token is a style word becomes ``""`` under removal.  It is returned as ``""`` (the
metrics' documented empty-text policy decides its score); :func:`modify_texts_with_emptied` also says
which texts were emptied, so a caller can count or drop them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

import numpy as np

from tsteval.core.errors import InputError, TstevalError
from tsteval.core.tokenize import normal_form, tokenize
from tsteval.lexicons.lexicon import Lexicon

Mode = Literal["none", "remove", "mask"]
MODES = ("none", "remove", "mask")
PLACEHOLDER = "<masked>"


def _style_words(lexicon: Lexicon | Collection[str] | None, mode: str) -> set[str]:
    if mode not in MODES:
        raise TstevalError(f"mode must be one of {MODES}, not {mode!r}")
    if mode == "none":
        return set()
    if lexicon is None:
        raise TstevalError(f"mode {mode!r} needs a lexicon (a Lexicon or a set of words)")
    if isinstance(lexicon, str):
        raise TstevalError("the lexicon must be a Lexicon or a collection of words, not one string")
    return lexicon.words if isinstance(lexicon, Lexicon) else {normal_form(word) for word in lexicon}


def check_placeholder(placeholder: str) -> str:
    """``placeholder`` if the shared tokenizer keeps it as one token (so metrics see one word), else an error."""
    if not isinstance(placeholder, str) or tokenize(placeholder) != [placeholder]:
        raise TstevalError(f"the placeholder {placeholder!r} is not a single lower-cased token of "
                           "tsteval.core.tokenize; use e.g. '<masked>'")
    return placeholder


def modify_texts_with_emptied(texts: Sequence[str], lexicon: Lexicon | Collection[str] | None,
                              mode: Mode = "remove", placeholder: str = PLACEHOLDER) -> tuple[list[str], np.ndarray]:
    """The modified texts and a boolean array: True where removal left nothing of a non-empty text.  Each
    distinct text is modified once and its repeats share the result (one string object, not one per row)."""
    if isinstance(texts, str):
        raise InputError("texts must be a sequence of strings, not one string")
    style_words = _style_words(lexicon, mode)
    if mode == "mask":
        check_placeholder(placeholder)
    out: list[str] = []
    emptied = np.zeros(len(texts), dtype=bool)
    done: dict[str, tuple[str, bool]] = {}
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"text {i} is {type(text).__name__}, not a string")
        if text not in done:
            tokens = tokenize(text)
            if mode == "remove":
                kept = [token for token in tokens if token not in style_words]
            elif mode == "mask":
                kept = [placeholder if token in style_words else token for token in tokens]
            else:
                kept = tokens
            done[text] = (" ".join(kept), mode == "remove" and bool(tokens) and not kept)
        out.append(done[text][0])
        emptied[i] = done[text][1]
    return out, emptied


def modify_texts(texts: Sequence[str], lexicon: Lexicon | Collection[str] | None, mode: Mode = "remove",
                 placeholder: str = PLACEHOLDER) -> list[str]:
    """Texts re-tokenized, with lexicon words removed (``"remove"``), replaced by ``placeholder`` (``"mask"``)
    or kept (``"none"``)."""
    return modify_texts_with_emptied(texts, lexicon, mode, placeholder)[0]
