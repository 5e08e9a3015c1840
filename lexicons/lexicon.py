"""A style lexicon: words with signed weights, grouped by style, stored as JSON.

The file format is ``{style: [[word, weight], ...]}``, the format of Mir et al.'s published lexicon
(``style_words_and_weights.json``, whose single key ``"binary sentiment"`` is read as a style name).
Every word must be one token of :func:`tsteval.core.tokenize.tokenize`, so that lexicon look-ups, text
modification and word-level metrics all agree on what a word is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tsteval.core.errors import InputError, TstevalError, read_json
from tsteval.core.tokenize import tokenize

Entries = tuple[tuple[str, float], ...]


def _ranked(pairs: Sequence[tuple[str, float]], style: str, origin: str) -> Entries:
    """``pairs`` validated and sorted by |weight| descending (ties by word, for a stable order)."""
    seen: set[str] = set()
    out: list[tuple[str, float]] = []
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InputError(f"style {style!r}, entry {i}: expected [word, weight], got {pair!r}", path=origin)
        word, weight = pair
        if not isinstance(word, str) or tokenize(word) != [word]:
            raise InputError(f"style {style!r}, entry {i}: {word!r} is not one lower-cased token in Unicode's NFC "
                             "form", path=origin, fix="store words as tsteval.core.tokenize.tokenize produces them")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise InputError(f"style {style!r}, word {word!r}: the weight {weight!r} is not a finite number",
                             path=origin)
        if word in seen:
            raise InputError(f"style {style!r}: the word {word!r} appears twice", path=origin)
        seen.add(word)
        out.append((word, float(weight)))
    return tuple(sorted(out, key=lambda p: (-abs(p[1]), p[0])))


@dataclass(frozen=True)
class Lexicon:
    """Style words with signed weights per style, each style's list sorted by |weight| descending."""

    entries: Mapping[str, Entries]
    origin: str = field(default="<lexicon>", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.entries, Mapping):
            raise InputError(f"a lexicon maps style -> [[word, weight], ...], not {type(self.entries).__name__}",
                             path=self.origin)
        entries = {}
        for style, pairs in self.entries.items():
            if not isinstance(style, str) or not style:
                raise InputError(f"style names must be non-empty strings, not {style!r}", path=self.origin)
            if not isinstance(pairs, (list, tuple)):
                raise InputError(f"style {style!r}: expected a list of [word, weight], got {type(pairs).__name__}",
                                 path=self.origin)
            entries[style] = _ranked(pairs, style, self.origin)
        object.__setattr__(self, "entries", entries)

    @property
    def styles(self) -> list[str]:
        """The style names, sorted."""
        return sorted(self.entries)

    @property
    def words(self) -> set[str]:
        """Every word of every style."""
        return {word for pairs in self.entries.values() for word, _ in pairs}

    def for_style(self, style: str) -> list[tuple[str, float]]:
        """The ``(word, weight)`` pairs of ``style``, by |weight| descending."""
        if style not in self.entries:
            raise TstevalError(f"the lexicon has no style {style!r}; it has {self.styles}")
        return list(self.entries[style])

    def __len__(self) -> int:
        return len(self.words)

    def to_json(self) -> dict[str, list[list[str | float]]]:
        """The JSON-ready form ``{style: [[word, weight], ...]}``."""
        return {style: [[word, weight] for word, weight in self.entries[style]] for style in self.styles}

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the lexicon as JSON, atomically (a temporary file beside ``path``, then ``os.replace``); parent
        directories are created.  An existing file is replaced only with ``overwrite`` and only when it is a
        lexicon (see :func:`is_lexicon_file`): any other file, or a directory, is refused."""
        from tsteval.core.atomic import output_file

        with output_file(path, "a style lexicon", is_lexicon_file, overwrite=overwrite) as tmp:
            tmp.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> Lexicon:
        """Read a lexicon saved by :meth:`save`, or Mir et al.'s published file; malformed files name the file."""
        path = Path(path)
        if not path.is_file():
            raise InputError("no lexicon file here", path=path)
        data = read_json(path, "lexicon", fix="the format is {style: [[word, weight], ...]}")
        if not isinstance(data, dict):
            raise InputError(f"expected a JSON object {{style: [[word, weight], ...]}}, got {type(data).__name__}",
                             path=path)
        if not data:
            raise InputError("the lexicon has no styles, so it would modify nothing", path=path,
                             fix="the format is {style: [[word, weight], ...]}; build one with tsteval build-lexicon")
        return cls(data, str(path))


_LARGEST_LEXICON = 256 * 2**20  # bytes; a larger file is not read to find out whether it is a lexicon


def is_lexicon_file(path: Path) -> bool:
    """Whether ``path`` loads as a lexicon: the only kind of file :meth:`Lexicon.save` may replace."""
    try:
        if path.stat().st_size > _LARGEST_LEXICON:
            return False
        Lexicon.load(path)
    except (TstevalError, OSError):
        return False
    return True
