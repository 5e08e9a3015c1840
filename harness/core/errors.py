"""User-facing errors: every bad input names the file, the line and the fix."""

from __future__ import annotations

import difflib
import json
import re
import reprlib
from collections.abc import Iterable, Sized
from pathlib import Path


class TstevalError(Exception):
    """Base class for errors caused by the user's input or configuration, not by a bug."""


class InputError(TstevalError):
    """Bad input data, located to a file (and line, when there is one)."""

    def __init__(self, message: str, *, path: str | Path | None = None,
                 line: int | None = None, fix: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.fix = fix
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        text = f"{where}{message}"
        if fix:
            text += f" (fix: {fix})"
        super().__init__(text)


class DataNotFoundError(TstevalError):
    """A dataset expected under the data root is missing."""


class LabelMismatchError(TstevalError):
    """A style label, or a saved model's label set, does not match what the caller expects."""


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple = 2, 4, 4, 4
_REPR.maxset, _REPR.maxfrozenset, _REPR.maxdeque, _REPR.maxarray = 4, 4, 4, 4
_REPR.maxstring, _REPR.maxother = 40, 40


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def clip(text: str, limit: int = 200) -> str:
    """``text`` for a one-line error message: control characters (newlines included) escaped, and at most
    ``limit`` characters, a longer text cut with its length noted."""
    shown = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text[:limit])
    return shown if len(text) <= limit else f"{shown}… ({len(text)} chars)"


def quote(value: object, limit: int = 80) -> str:
    """A user's value quoted for a one-line error message: its ``repr``, cut to about ``limit`` characters.

    Strings are cut before quoting and keep their full length in the note (``'aaa'… (12345 chars)``);
    containers go through :mod:`reprlib`, which never walks more than a few items and levels, so quoting an
    expanded YAML alias bomb or a huge cell costs next to nothing.
    """
    if isinstance(value, (str, bytes)):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value)} {'chars' if isinstance(value, str) else 'bytes'})"
    try:
        text = _REPR.repr(value)
    except ValueError:  # an int past Python's digit limit for str()
        return f"<{type(value).__name__} too large to print>"
    if len(text) <= limit:
        return text
    size = f" ({len(value)} items)" if isinstance(value, Sized) else ""
    return f"{text[:limit]}…{size}"


# A known name is suggested when its similarity ratio to the unknown one is at least _CUTOFF (difflib's default) and
# within _MARGIN of the closest name's ("tradof": tradeoff .86, threads .62 -> tradeoff alone).
_CUTOFF, _MARGIN = 0.6, 0.1


def did_you_mean(name: str, known: Iterable[object], prefix: str = "", limit: int = 3) -> str:
    """The nearest-name suggestion for an unknown ``name`` among the ``known`` names, for an error message:
    ``"did you mean 'chrf'? (only the case differs)"`` when ``name`` differs from known names only in case,
    ``"did you mean 'a', 'b' or 'c'?"`` for up to ``limit`` close spellings (difflib's similarity ratio, compared
    case-folded, at least :data:`_CUTOFF` as :func:`difflib.get_close_matches` asks and within :data:`_MARGIN` of the
    closest, closest first), after ``prefix``; ``""`` when none is close.  Every "unknown NAME" error calls it.

    >>> did_you_mean("chrF", ["bleu", "chrf"])
    "did you mean 'chrf'? (only the case differs)"
    >>> did_you_mean("bertscore", ["bertscore_f1", "bertscore_p", "bertscore_r", "bleu"])
    "did you mean 'bertscore_p', 'bertscore_r' or 'bertscore_f1'?"
    >>> did_you_mean("Formall", ["formal", "informal"])
    "did you mean 'formal'?"
    >>> did_you_mean("tradof", ["threads", "tradeoff"])
    "did you mean 'tradeoff'?"
    >>> did_you_mean("zzz", ["bleu", "chrf"], prefix="; ")
    ''
    """
    text = str(name)
    names = list(dict.fromkeys(str(k) for k in known if str(k) != text))
    cased = [k for k in names if k.casefold() == text.casefold()]
    if cased:
        return f"{prefix}did you mean {_one_of(cased)}? (only the case differs)"
    folded: dict[str, list[str]] = {}
    for k in names:
        folded.setdefault(k.casefold(), []).append(k)
    ratios = {k: difflib.SequenceMatcher(None, text.casefold(), k).ratio() for k in folded}
    best = max(ratios.values(), default=0.0)
    close = sorted((k for k, r in ratios.items() if r >= max(_CUTOFF, best - _MARGIN)), key=lambda k: -ratios[k])
    return f"{prefix}did you mean {_one_of([k for c in close for k in folded[c]][:limit])}?" if close else ""


def _one_of(names: list[str]) -> str:
    """``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'``."""
    quoted = [quote(n, 60) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def read_json(path: str | Path, what: str = "file", fix: str | None = None) -> object:
    """The JSON value in ``path``; unreadable bytes, invalid JSON or absurd nesting is one :class:`InputError`
    naming the file (and line), never a decoder traceback.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"a": [1, 2')
    >>> try:
    ...     read_json(f.name, "lexicon")
    ... except InputError as error:
    ...     print(str(error).split(": ", 1)[1])
    the lexicon is not valid JSON: Expecting ',' delimiter (column 12)
    >>> os.unlink(f.name)
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"the {what} is not UTF-8 text ({error.reason} at byte {error.start})", path=path,
                         fix=fix) from error
    except json.JSONDecodeError as error:
        raise InputError(f"the {what} is not valid JSON: {error.msg} (column {error.colno})", path=path,
                         line=error.lineno, fix=fix) from error
    except RecursionError as error:
        raise InputError(f"the {what} nests too deeply to be read", path=path, fix=fix) from error
    except OSError as error:
        raise InputError(f"cannot read the {what}: {error.strerror or error}", path=path, fix=fix) from error

