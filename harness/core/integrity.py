"""File records (size + sha256) that let tsteval verify saved models and cache entries before any reader sees them.

A record set maps a file's POSIX path, relative to its directory, to ``{"sha256": HEX, "size": BYTES}``.  Every
file is checked against its record before a library (fastText's C++ reader, safetensors, torch, numpy) is handed
it, so a truncated, damaged or altered file is an error (or, in the cache, a rebuild), never a crash, a hang or a
silently different model.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path, PurePosixPath

_SHA256 = re.compile(r"[0-9a-f]{64}")


def sha256_file(path: Path) -> str:
    """The hex sha256 of a file's bytes, streamed."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@cache
def _sha256_in_state(path: str, size: int, modified: int) -> str:
    """The sha256 of the file ``path`` in the state (size, modification time) given: each state hashed once."""
    return sha256_file(Path(path))


def sha256_once(path: Path) -> str:
    """:func:`sha256_file` of ``path``, read once per process while its size and modification time stay (a model
    named in several signatures, or loaded twice, is hashed once)."""
    state = path.stat()
    return _sha256_in_state(str(path.resolve()), state.st_size, state.st_mtime_ns)


def files_hash(directory: Path, names: Iterable[str]) -> str:
    """The hex sha256 over the names and sha256s (:func:`sha256_once`) of the named files under ``directory``: a
    model folder's content identity, the same wherever the folder lies."""
    parts = [f"{name}:{sha256_once(directory / name)}" for name in sorted(names)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def files_under(directory: Path, exclude: Iterable[str] = ()) -> list[str]:
    """Relative POSIX paths of the regular files under ``directory`` (recursively), sorted, minus ``exclude``."""
    skip = set(exclude)
    names = (p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
    return sorted(name for name in names if name not in skip)


def record_files(directory: Path, names: Iterable[str]) -> dict[str, dict[str, object]]:
    """``{name: {"sha256", "size"}}`` of the named files under ``directory``."""
    return {name: {"sha256": sha256_file(directory / name), "size": (directory / name).stat().st_size}
            for name in sorted(names)}


def records_problem(records: object) -> str | None:
    """Why ``records`` (read from JSON) is not a well-formed record set, or None when it is."""
    if not isinstance(records, Mapping):
        return f"the file list is a {type(records).__name__}, not an object"
    for name, record in records.items():
        path = PurePosixPath(name)
        if not name or path.is_absolute() or ".." in path.parts or "\\" in name:
            return f"the file list names {name!r}, which is not a path inside the directory"
        if (not isinstance(record, Mapping) or not isinstance(record.get("sha256"), str)
                or not _SHA256.fullmatch(record["sha256"]) or isinstance(record.get("size"), bool)
                or not isinstance(record.get("size"), int) or record["size"] < 0):
            return f"the record of {name!r} is not {{\"sha256\": 64 hex digits, \"size\": bytes}}"
    return None


def file_problem(directory: Path, records: Mapping[str, Mapping[str, object]]) -> tuple[str, str] | None:
    """The first recorded file that is missing or differs from its record, as ``(name, reason)``; None if all match.

    Sizes are compared first (cheap; catches truncation without reading), then sha256, each file's once per process
    while its size and modification time stay (:func:`sha256_once`: a 6 GB model loaded four times is read once).
    """
    for name, record in records.items():
        path = directory / name
        if not path.is_file():
            return name, "missing"
        size = path.stat().st_size
        if size != record["size"]:
            return name, f"size {size:,} bytes, recorded {record['size']:,}"
    for name, record in records.items():
        try:
            digest = sha256_once(directory / name)
        except OSError as error:
            return name, f"unreadable: {error.strerror}"
        if digest != record["sha256"]:
            return name, "sha256 mismatch"
    return None


def integrity_hash(payload: object) -> str:
    """sha256 of the canonical JSON of ``payload`` (sorted keys, no spaces, ASCII)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()
