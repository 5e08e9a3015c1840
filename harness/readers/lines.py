"""Plain-text files, strictly: lines, TSV pairs, style files and aligned input/output files.

The loaders of :mod:`tsteval.readers` (lines, :mod:`~tsteval.readers.tables`, :mod:`~tsteval.readers.huggingface`)
share this module's policy and helpers.

Every loader validates the whole input before returning anything, and every bad input raises an
``InputError`` that names the file (and the line or row) and how to fix it.

Line policy: files are UTF-8 (a leading BOM is ignored); ``\\n`` or ``\\r\\n`` ends a line and only that is
removed, so other whitespace is kept as written.  An empty file, and an empty or whitespace-only line, are
refused rather than skipped: in line-aligned data a blank line is almost always a missing output or a
misalignment, and dropping it silently would shift every later line onto the wrong partner.

The path ``-`` (``STDIN``) reads standard input, named ``<stdin>`` in messages; a table read from it needs its
format (``table_format``).  ``hints`` (a mapping from a keyword such as ``split`` or ``text_col`` to the command-line
flag that sets it, e.g. ``--split``) makes the fixes in messages name the flags; without it they name the keywords.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tsteval.core.errors import InputError
from tsteval.core.records import Corpus, Transfers

STDIN = "-"  # the path that reads standard input
STDIN_NAME = "<stdin>"
Hints = Mapping[str, str]


def argument_for(keyword: str, hints: Hints | None) -> str | None:
    """How a message names the argument ``keyword``: ``keyword=...`` in Python, its flag (or None: no flag) on the
    command line (``hints`` given)."""
    return f"{keyword}=..." if hints is None else hints.get(keyword)


def display_name(path: str | Path) -> str:
    """``path`` as messages and origins name it (``<stdin>`` for ``-``)."""
    return STDIN_NAME if str(path) == STDIN else str(path)


def read_bytes(path: str | Path) -> tuple[bytes, str | Path]:
    """The bytes of ``path`` (standard input for ``-``) and its name for messages."""
    if str(path) == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        return (stream.read() if stream is not None else sys.stdin.read().encode("utf-8")), STDIN_NAME
    path = Path(path)
    try:
        return path.read_bytes(), path
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=path) from exc


@dataclass(frozen=True)
class TextLines:
    """The lines of one text file, with the (1-based) numbers of lines decoded with a fallback encoding."""

    path: Path
    lines: list[str]
    reencoded: list[int] = field(default_factory=list)


def read_text_lines(path: str | Path, *, fallback_encoding: str | None = None,
                    allow_blank: bool = False) -> TextLines:
    """Read a UTF-8 file as lines, strictly.

    ``fallback_encoding`` decodes, line by line, only the lines that are not valid UTF-8 (for published files
    known to mix in another encoding); those line numbers are reported in ``reencoded``.  ``allow_blank`` lets
    empty lines through for callers that give them a meaning of their own.
    """
    raw, path = read_bytes(path)
    if not raw:
        raise InputError("the file is empty", path=path, fix="give the file at least one line of text")
    reencoded: list[int] = []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if fallback_encoding is None:
            line_no = raw.count(b"\n", 0, exc.start) + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1)
            raise InputError(f"byte 0x{raw[exc.start]:02x} at byte offset {exc.start} (byte {column} of the line) "
                             "is not valid UTF-8", path=path, line=line_no,
                             fix="re-encode the file as UTF-8, e.g. `iconv -f LATIN1 -t UTF-8`") from exc
        text = _decode_with_fallback(raw, path, fallback_encoding, reencoded)
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    if not allow_blank:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                raise InputError("the line is empty or only whitespace", path=path, line=number,
                                 fix="every line must hold one text; remove the line or fill it in")
    return TextLines(Path(path), lines, reencoded)


def _decode_with_fallback(raw: bytes, path: Path, encoding: str, reencoded: list[int]) -> str:
    parts = []
    for number, chunk in enumerate(raw.split(b"\n"), 1):
        try:
            parts.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            try:
                parts.append(chunk.decode(encoding))
            except UnicodeDecodeError as exc:
                raise InputError(f"the line is neither UTF-8 nor {encoding}", path=path, line=number,
                                 fix="re-encode the file as UTF-8") from exc
            reencoded.append(number)
    return "\n".join(parts)


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file without their newlines; empty files and blank lines are refused."""
    return read_text_lines(path).lines


def split_tsv_line(line: str, path: str | Path, number: int) -> tuple[str, str]:
    """``input<TAB>output`` split in two; any other number of TABs is an error naming the line."""
    parts = line.split("\t")
    if len(parts) != 2:
        raise InputError(f"expected input<TAB>output but found {len(parts) - 1} TABs", path=path, line=number,
                         fix="write exactly one TAB between the input and its transfer on every line")
    return parts[0], parts[1]


def load_style_files(files: Mapping[str, str | Path | Sequence[str | Path]]) -> Corpus:
    """A corpus from files of one style each (one sentence a line); ``files`` maps a style label to a path or to
    several paths, whose lines are concatenated in the order given."""
    if not files:
        raise InputError("no style files given", fix="pass {style: path, ...} with at least one entry")
    texts: list[str] = []
    labels: list[str] = []
    paths: list[str | Path] = []
    for style, given in files.items():
        for path in [given] if isinstance(given, (str, Path)) else given:
            lines = read_lines(path)
            texts += lines
            labels += [str(style)] * len(lines)
            paths.append(path)
    origin = os.path.commonpath([str(Path(p).resolve()) for p in paths])
    return Corpus(texts, labels, origin)


def load_style_dir(directory: str | Path, pattern: str = "*.txt") -> Corpus:
    """A corpus from every file in ``directory`` matching ``pattern``; each file's stem is its style."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("not a directory", path=directory, fix="pass the folder that holds one file per style")
    files: dict[str, Path] = {}
    for path in sorted(p for p in directory.glob(pattern) if p.is_file()):
        if path.stem in files:
            raise InputError(f"two files give the style {path.stem!r}: {files[path.stem].name} and {path.name}",
                             path=directory, fix="use a pattern that matches one file per style")
        files[path.stem] = path
    if not files:
        raise InputError(f"no file matches {pattern!r}", path=directory, fix="pass the pattern of the style files")
    return load_style_files(files)


def load_parallel_files(inputs_path: str | Path, outputs_path: str | Path, **transfer_kw: Any) -> Transfers:
    """Transfers from two aligned files: line i of the outputs is the transfer of line i of the inputs.

    ``transfer_kw`` goes to ``Transfers.from_pairs`` (``source_style``, ``target_style``, ``system``, ...).  One of
    the two (not both) may be ``-``, standard input.
    """
    if str(inputs_path) == STDIN and str(outputs_path) == STDIN:
        raise InputError("the inputs and the outputs cannot both be read from standard input", path=STDIN_NAME,
                         fix="give one of the two as a file, or both on one stream as input<TAB>output lines")
    # an empty line of the outputs is a system's failure, scored (tsteval.failures); of the inputs, an error
    inputs, outputs = read_text_lines(inputs_path), read_text_lines(outputs_path, allow_blank=True)
    if len(inputs.lines) != len(outputs.lines):
        raise InputError(f"{len(inputs.lines)} lines in {display_name(inputs_path)} but {len(outputs.lines)} lines in "
                         f"{display_name(outputs_path)}", path=display_name(outputs_path),
                         fix="line i of the outputs must be the transfer of line i of the inputs")
    return Transfers.from_pairs(inputs.lines, outputs.lines, origin=display_name(outputs_path), **transfer_kw)


def load_tsv_transfers(path: str | Path, **transfer_kw: Any) -> Transfers:
    """Transfers from ``input<TAB>output`` lines (an empty output, ``input<TAB>``, is a system's failure, scored);
    ``transfer_kw`` as for ``load_parallel_files``."""
    text = read_text_lines(path)
    pairs = [split_tsv_line(line, text.path, number) for number, line in enumerate(text.lines, 1)]
    return Transfers.from_pairs([p[0] for p in pairs], [p[1] for p in pairs], origin=display_name(path), **transfer_kw)
