"""A content-addressed cache of expensive artefacts (trained classifiers, embeddings).

An entry is a directory named by a content hash of data + config + seed.  It is built in a
temporary sibling directory and renamed into place, so a reader never sees a half-written entry;
temporaries left by killed builds are removed by the next build beside them.
The completion marker records the key and the size and sha256 of every file of the entry; a reader
verifies them all before the entry is used, so a caller may read any file of a returned entry
without further checks.  An entry that is half-written (no marker), damaged, altered, or whose
marker names another key is rebuilt, with a one-line notice on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from tsteval.core.atomic import remove_stale_temporaries, temporary_sibling
from tsteval.core.errors import TstevalError
from tsteval.core.integrity import file_problem, files_under, record_files, records_problem

MARKER = "tsteval-cache.json"


def cache_root() -> Path:
    """``$TSTEVAL_CACHE``, else ``~/.cache/tsteval``."""
    return Path(os.environ.get("TSTEVAL_CACHE", Path.home() / ".cache" / "tsteval"))


def entry_problem(target: Path, key: str) -> str | None:
    """Why the entry at ``target`` cannot be used (the file and what is wrong), or None when it verifies."""
    marker = target / MARKER
    if not marker.is_file():
        return f"{MARKER} missing: half-written"
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return f"{MARKER} unreadable"
    if not isinstance(data, dict) or data.get("key") != key:
        return f"{MARKER} names another key"
    if "files" not in data:
        return f"{MARKER} has no file hashes: written by an older tsteval"
    problem = records_problem(data["files"])
    if problem:
        return f"{MARKER}: {problem}"
    damaged = file_problem(target, data["files"])
    return None if damaged is None else f"{damaged[0]}: {damaged[1]}"


def cached_dir(kind: str, key: str, build: Callable[[Path], None], root: Path | None = None) -> Path:
    """The directory for ``kind/key``, calling ``build(tmpdir)`` to fill it when absent or invalid.

    Every file of a returned entry matches the hash recorded when it was built.
    """
    target = (root or cache_root()) / kind / key
    if target.exists():
        problem = entry_problem(target, key)
        if problem is None:
            return target
        print(f"tsteval: cache entry {kind}/{key} was damaged ({problem}); rebuilding", file=sys.stderr)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TstevalError(f"cannot write the cache: {error.filename or target.parent}: {error.strerror or error}; "
                           "set TSTEVAL_CACHE to a folder you can write") from error
    remove_stale_temporaries(target.parent)
    tmp = temporary_sibling(target)
    try:
        build(tmp)
        files = record_files(tmp, files_under(tmp, exclude=[MARKER]))
        (tmp / MARKER).write_text(json.dumps({"key": key, "kind": kind, "files": files}, indent=1))
        if target.exists():
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            if entry_problem(target, key) is not None:  # not a concurrent build's complete entry
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
