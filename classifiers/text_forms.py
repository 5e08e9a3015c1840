"""The text form a style classifier was trained on, and texts put into that form before it scores them.

Much style-transfer data is tokenised and lower-cased (DualRL's Yelp and GYAFC: ``i did n't like it .``), other data
is cased as written.  A classifier learns from the form it is given, and fed the other form it reads a different
language (capitals it never saw, contractions whole that it knew split).  So ``fit`` records the training form
(:func:`training_form`; a corpus with capitals trains cased) and ``predict_proba`` puts every text into it
(:func:`in_form`):

* ``as-written``: texts are scored as they are (the form of any corpus with capitals, and of a model saved before
  the form was recorded);
* ``lowercase``: lower-cased only (a lower-case corpus without tokenisation);
* ``tokenised-lowercase``: lower-cased and split into Penn Treebank tokens sentence by sentence
  (:func:`tsteval.core.text_form.tokenise_lowercase`); a text without capitals is taken to come from such a corpus
  and only Treebank-tokenised as a whole (no sentence split, which would part ``dr. smith``), and Treebank quote
  tokens (two backquotes, two apostrophes) are kept as they are, so that a text already in the form is left
  unchanged.

>>> training_form(["the food was great .", "i did n't like it ."]), training_form(["The food was great."])
('tokenised-lowercase', 'as-written')
>>> in_form(["I didn't like the \\"fish\\"."], "tokenised-lowercase")
["i did n't like the `` fish '' ."]
>>> in_form(["i did n't like the `` fish '' ."], "tokenised-lowercase")
["i did n't like the `` fish '' ."]
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from tsteval.core.errors import InputError, read_json
from tsteval.core.text_form import _treebank, detect, tokenise_lowercase

FORMS = ("as-written", "lowercase", "tokenised-lowercase")
# A corpus trains cased when more than this share of its texts with letters has a capital letter (a few stray
# capitals in a lower-cased corpus do not make it cased).
CASED_SHARE = 0.01
QUOTES = ("``", "''")
TEXT_FORM = "text-form.json"  # in a saved classifier's folder
# A token Treebank tokenisation leaves as it is: lower-case letters and digits, a run of punctuation it does not
# rewrite, a clitic it splits off, a Treebank quote.
_PLAIN = re.compile(r"[a-z0-9_]+|[.,!?;:$&%*/+=-]+|n't|'(?:s|re|ll|ve|m|d)|``|''")


def training_form(texts: Sequence[str]) -> str:
    """``as-written`` when more than :data:`CASED_SHARE` of the texts with letters have a capital, else
    ``tokenised-lowercase`` when they show split-off punctuation or clitics (:func:`detect`), else ``lowercase``."""
    lettered = [t for t in texts if any(c.isalpha() for c in t)]
    cased = sum(t != t.lower() for t in lettered)
    if cased > CASED_SHARE * len(lettered):
        return "as-written"
    return "tokenised-lowercase" if detect(lettered) == "tokenised-lowercase" else "lowercase"


def _tokenised(text: str) -> str:
    """``text`` lower-cased and Treebank-tokenised (sentence by sentence when it has capitals), its Treebank quote
    tokens kept as they are; a lower-case text of plain tokens only (:data:`_PLAIN`) is returned at once."""
    if all(_PLAIN.fullmatch(token) for token in text.split()):
        return text
    tokenise = tokenise_lowercase if text != text.lower() else lambda t: " ".join(_treebank().tokenize(t)) or t
    out, run = [], []
    for token in text.split():
        if token in QUOTES:
            if run:
                out.append(tokenise(" ".join(run)))
                run = []
            out.append(token)
        else:
            run.append(token)
    if run:
        out.append(tokenise(" ".join(run)))
    return " ".join(out) or text


def in_form(texts: Sequence[str], form: str) -> list[str]:
    """``texts`` written in ``form`` (one of :data:`FORMS`)."""
    if form == "as-written":
        return list(texts)
    if form == "lowercase":
        return [t.lower() for t in texts]
    if form == "tokenised-lowercase":
        return [_tokenised(t) for t in texts]
    raise ValueError(f"unknown text form {form!r}; one of {list(FORMS)}")


def all_lowercase(texts: Sequence[str]) -> list[bool | None]:
    """Per text, whether it has letters and none of them is a capital (None for a text without letters).

    >>> all_lowercase(["i did it .", "I did it.", "123 ."])
    [True, False, None]
    """
    return [None if not any(c.isalpha() for c in t) else t == t.lower() for t in texts]


def write_text_form(directory: Path, form: str) -> None:
    """Write ``text-form.json`` (the training form) into a classifier's ``directory``."""
    (directory / TEXT_FORM).write_text(json.dumps({"text_form": form}), encoding="utf-8")


def read_text_form(directory: Path) -> str:
    """The form in ``directory``'s ``text-form.json`` (already verified against the manifest's sha256); a malformed
    file is an :class:`InputError` naming it."""
    path = directory / TEXT_FORM
    data = read_json(path, "text form", fix="retrain the classifier")
    form = data.get("text_form") if isinstance(data, dict) else None
    if form not in FORMS:
        raise InputError(f"the text form {form!r} is not one of {list(FORMS)}", path=path, fix="retrain the classifier")
    return form
