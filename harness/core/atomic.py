"""Safe outputs: the one rule every ``--out`` follows.  tsteval never destroys a file it did not create.

* Output is written into a new temporary sibling of the target (``.NAME.tsteval-tmp-PID-RANDOM``) and moved
  into place only when complete, so nothing half-written is ever visible; on failure, Ctrl-C or SIGTERM the
  temporary is removed, and one left by a killed run (its PID no longer alive) is removed by the next run
  that writes beside it (:func:`remove_stale_temporaries`).
* An output folder carries a marker, ``.tsteval-output.json``: its kind (``style-classifier``,
  ``pair-classifier``, ``scorecard``, ``run``, ``compliancy``), the tsteval version and the files written.
  An existing target is accepted only when it is empty, or when it holds an output of the same kind, has no
  file beyond those its marker lists, and ``overwrite`` is given: the folder is then replaced whole.  A
  folder without a marker, or with another kind's, is always refused.
* A file output (a lexicon) replaces an existing file only with ``overwrite`` and only when the caller
  recognises it as its own kind of file; it is written to a temporary file beside it and ``os.replace``-d.
* Every check, including writability (by creating the temporary sibling: ``os.access`` is no guide when
  running as root), runs before the work: call :func:`check_output_directory` / :func:`check_output_file`
  at the start of a command, then write with :func:`output_directory` / :func:`output_file`, which check
  again just before moving the result into place.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tsteval.core.errors import TstevalError

MARKER = ".tsteval-output.json"
KINDS = {"style-classifier": "a style classifier", "pair-classifier": "a pair classifier",
         "scorecard": "a scorecard", "run": "an experiment run", "compliancy": "compliancy results",
         "meta-eval": "a meta-evaluation", "study": "a rating study"}
OVERWRITE_HELP = ("replace an existing tsteval output of the same kind at --out (replaced whole; a folder "
                  "holding files tsteval did not write is never touched)")
_TEMPORARY = re.compile(r"\.tsteval-tmp-(\d+)-[0-9a-f]{8}$")
_SHOWN_FOREIGN = 3
_WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}


def _describe(kind: object) -> str:
    return KINDS.get(kind, f"a {kind!r} output") if isinstance(kind, str) else "an unknown kind of output"


def _temporary_name(target: Path) -> Path:
    """A fresh sibling name for ``target`` that records this process's PID."""
    return target.parent / f".{target.name[:100]}.tsteval-tmp-{os.getpid()}-{secrets.token_hex(4)}"


def temporary_sibling(target: str | Path, *, directory: bool = True) -> Path:
    """Create an empty temporary directory (or file) beside ``target``, named ``.NAME.tsteval-tmp-PID-RANDOM``.

    The PID in the name lets :func:`remove_stale_temporaries` tell a killed run's leftovers from a live one's.
    """
    target = Path(target)
    while True:
        path = _temporary_name(target)
        try:
            if directory:
                path.mkdir()
            else:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return path


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, OSError):
        return False
    return True


def remove_stale_temporaries(directory: str | Path) -> list[Path]:
    """Remove the ``.NAME.tsteval-tmp-PID-RANDOM`` entries of ``directory`` whose PID is no longer alive.

    Temporaries of live processes (this one included) are kept.  Returns the paths removed.
    """
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    removed = []
    for entry in entries:
        match = _TEMPORARY.search(entry.name)
        if not entry.name.startswith(".") or match is None or _pid_alive(int(match[1])):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
            except OSError:  # a folder we may not write: the leftover stays, and the writability check says why
                continue
        removed.append(Path(entry.path))
    return removed


@contextmanager
def _access_errors(shown: str) -> Iterator[None]:
    """An OSError while checking an output path (a folder the user may not enter or read: ``stat`` fails with
    EACCES) is one line naming the path, like an unwritable folder, never an internal error."""
    try:
        yield
    except OSError as error:
        where = f"cannot check {error.filename} " if error.filename else ""
        raise TstevalError(f"cannot write {shown}: {where}({error.strerror or error}); choose another --out") from error


def _refuse_unusable(target: Path, shown: str, what: str) -> None:
    if shown == "-":
        raise TstevalError(f"standard output is not supported for --out; give {what}")
    if target.is_symlink():
        raise TstevalError(f"{shown} is a symbolic link; give the path it points to, or a new --out")
    if not target.name:
        raise TstevalError(f"{shown} cannot be an output; give {what}")


def _make_parents(parent: Path, shown: str) -> list[Path]:
    """Create the missing ancestors of an output; returns those created (deepest last)."""
    missing = []
    ancestor = parent
    while not ancestor.exists():
        missing.append(ancestor)
        if ancestor.parent == ancestor:
            break
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        raise TstevalError(f"cannot write {shown}: {ancestor} is a file, not a directory; choose another --out")
    created = []
    try:
        for path in reversed(missing):
            path.mkdir()
            created.append(path)
    except OSError as error:
        _remove_empty(created)
        raise TstevalError(f"cannot write {shown}: cannot create {error.filename or path}: "
                           f"{error.strerror or error}; choose another --out") from error
    return created


def _remove_empty(created: list[Path]) -> None:
    for path in reversed(created):
        try:
            path.rmdir()
        except OSError:
            return


def _new_temporary(target: Path, shown: str, directory: bool) -> Path:
    """The temporary sibling of ``target``, after removing dead runs' leftovers; unwritable -> a clear error."""
    remove_stale_temporaries(target.parent)
    try:
        return temporary_sibling(target, directory=directory)
    except OSError as error:
        raise TstevalError(f"cannot write {shown}: {target.parent} is not writable ({error.strerror or error}); "
                           "choose another --out") from error


def read_marker(directory: str | Path) -> dict | None:
    """The marker of a tsteval output folder (``kind``, ``tsteval``, ``files``), or None without one."""
    marker = Path(directory) / MARKER
    if not marker.is_file():
        return None
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TstevalError(f"{marker} is unreadable ({error}); choose a new --out") from error
    if not (isinstance(info, dict) and isinstance(info.get("files"), list)
            and all(isinstance(f, str) for f in info["files"])):
        raise TstevalError(f"{marker} is not a tsteval output marker; choose a new --out")
    return info


def _foreign(directory: Path, listed: list[str]) -> list[str]:
    """Entries of ``directory`` that its marker does not account for (a foreign folder is named once)."""
    allowed_files = {*listed, MARKER}
    allowed_dirs = {str(parent) for name in listed for parent in Path(name).parents if str(parent) != "."}
    foreign = []
    for root, dirs, files in os.walk(directory):
        base = Path(root).relative_to(directory)
        for name in sorted(dirs):
            if (base / name).as_posix() not in allowed_dirs or os.path.islink(Path(root) / name):
                foreign.append(f"{(base / name).as_posix()}/")
                dirs.remove(name)
        foreign += [(base / name).as_posix() for name in files if (base / name).as_posix() not in allowed_files]
    return sorted(foreign)


def _check_directory(target: Path, shown: str, kind: str, overwrite: bool) -> bool:
    """Raise unless ``target`` may receive an output of ``kind``; True when it holds one to replace."""
    _refuse_unusable(target, shown, "a directory")
    if not target.exists():
        return False
    if not target.is_dir():
        raise TstevalError(f"{shown} is a file, not a directory; give a new directory for --out")
    try:
        empty = next(os.scandir(target), None) is None
    except OSError as error:
        raise TstevalError(f"cannot read {shown}: {error.strerror or error}; choose another --out") from error
    if empty:
        return False
    info = read_marker(target)
    if info is None:
        raise TstevalError(f"{shown} exists and was not written by tsteval; choose a new --out "
                           "(tsteval never writes into a folder it did not create)")
    if info.get("kind") != kind:
        raise TstevalError(f"{shown} holds {_describe(info.get('kind'))}, not {_describe(kind)}; "
                           "choose another --out")
    foreign = _foreign(target, info["files"])
    if foreign:
        more = f" and {len(foreign) - _SHOWN_FOREIGN} more" if len(foreign) > _SHOWN_FOREIGN else ""
        raise TstevalError(f"{shown} holds files tsteval did not write ({', '.join(foreign[:_SHOWN_FOREIGN])}"
                           f"{more}); move them away or choose a new --out")
    if not overwrite:
        raise TstevalError(f"{shown} already holds {_describe(kind)}; pass --overwrite to replace it, "
                           "or choose a new --out")
    return True


def check_output_directory(target: str | Path, kind: str, overwrite: bool = False) -> None:
    """Refuse now, before any work, what :func:`output_directory` would refuse, writability included."""
    shown, target = str(target), Path(os.path.abspath(target))
    with _access_errors(shown):
        _check_directory(target, shown, kind, overwrite)
        created = _make_parents(target.parent, shown)
    try:
        _new_temporary(target, shown, directory=True).rmdir()
    finally:
        _remove_empty(created)


def _files(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if not p.is_dir())


@contextmanager
def _write_errors(tmp: Path, shown: str) -> Iterator[None]:
    """An OSError writing the temporary (a full disk, a quota, a permission taken away) comes from the user's
    machine, not a bug: one line.  Errors naming another file are left to their caller; one naming no file (a
    writer library's) is the output's when it says no space or no permission."""
    try:
        yield
    except OSError as error:
        if isinstance(error.filename, (str, Path)):
            ours = Path(os.path.abspath(error.filename)).is_relative_to(tmp)
        else:
            ours = error.filename is None and error.errno in _WRITE_ERRNOS
        if ours:
            raise TstevalError(f"could not write {shown}: {error.strerror or error}; choose another --out") from error
        raise


def _move_into_place(tmp: Path, target: Path, shown: str, replace: bool) -> None:
    """``os.replace`` the finished temporary onto ``target``; an existing ``target`` is first moved aside."""
    try:
        if not replace:
            os.replace(tmp, target)
            return
        aside = _temporary_name(target)
        os.replace(target, aside)
        try:
            os.replace(tmp, target)
        except BaseException:
            os.replace(aside, target)
            raise
        shutil.rmtree(aside, ignore_errors=True)
    except OSError as error:
        raise TstevalError(f"could not move the finished output into {shown}: {error.strerror or error}") from error


@contextmanager
def output_directory(target: str | Path, kind: str, overwrite: bool = False) -> Iterator[Path]:
    """Yield a new temporary folder beside ``target``; on success mark it as ``kind`` and move it into place.

    ``target`` must be absent, empty, or (with ``overwrite``) an output of the same ``kind`` holding only the
    files its marker lists; it is then replaced whole.  On any failure the temporary is removed and
    ``target`` is left as it was.
    """
    from tsteval.core.signature import package_version

    shown, target = str(target), Path(os.path.abspath(target))
    with _access_errors(shown):
        _check_directory(target, shown, kind, overwrite)
        created = _make_parents(target.parent, shown)
    tmp = None
    try:
        tmp = _new_temporary(target, shown, directory=True)
        with _write_errors(tmp, shown):
            yield tmp
            marker = {"kind": kind, "tsteval": package_version("tsteval"), "files": _files(tmp)}
            (tmp / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        with _access_errors(shown):
            replace = _check_directory(target, shown, kind, overwrite)
        _move_into_place(tmp, target, shown, replace)
        tmp = created = None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if created:
            _remove_empty(created)


def _check_file(target: Path, shown: str, what: str, is_ours: Callable[[Path], bool], overwrite: bool) -> None:
    _refuse_unusable(target, shown, "a file name")
    if not target.exists():
        return
    if target.is_dir():
        raise TstevalError(f"{shown} is a directory; --out takes a file name (e.g. {shown}/lexicon.json)")
    if not target.is_file() or not is_ours(target):
        raise TstevalError(f"{shown} exists and is not {what}; tsteval replaces only {what} it wrote; "
                           "choose a new --out")
    if not overwrite:
        raise TstevalError(f"{shown} already holds {what}; pass --overwrite to replace it, or choose a new --out")


def check_output_file(target: str | Path, what: str, is_ours: Callable[[Path], bool],
                      overwrite: bool = False) -> None:
    """Refuse now, before any work, what :func:`output_file` would refuse, writability included."""
    shown, target = str(target), Path(os.path.abspath(target))
    with _access_errors(shown):
        _check_file(target, shown, what, is_ours, overwrite)
        created = _make_parents(target.parent, shown)
    try:
        _new_temporary(target, shown, directory=False).unlink()
    finally:
        _remove_empty(created)


@contextmanager
def output_file(target: str | Path, what: str, is_ours: Callable[[Path], bool],
                overwrite: bool = False) -> Iterator[Path]:
    """Yield a new empty temporary file beside ``target``; on success ``os.replace`` it onto ``target``.

    An existing ``target`` is replaced only with ``overwrite`` and only when ``is_ours(target)`` (it is
    ``what``, e.g. "a style lexicon"); a directory or anything else there is refused.
    """
    shown, target = str(target), Path(os.path.abspath(target))
    with _access_errors(shown):
        _check_file(target, shown, what, is_ours, overwrite)
        created = _make_parents(target.parent, shown)
    tmp = None
    try:
        tmp = _new_temporary(target, shown, directory=False)
        with _write_errors(tmp, shown):
            yield tmp
        with _access_errors(shown):
            _check_file(target, shown, what, is_ours, overwrite)
        _move_into_place(tmp, target, shown, replace=False)
        tmp = created = None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        if created:
            _remove_empty(created)


def add_to_marker(directory: str | Path, name: str) -> None:
    """Record a file written later into a tsteval output folder (an explorer page) in its marker, so that an
    ``overwrite`` still recognises the folder as tsteval's; a folder without a marker is left alone."""
    info = read_marker(directory)
    if info is not None and name not in info["files"]:
        info["files"] = sorted([*info["files"], name])
        (Path(directory) / MARKER).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
