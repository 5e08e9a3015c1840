"""Reading a parsed manifest: :class:`ManifestError`, located to the manifest file and the dotted key (or the
line), and :class:`Reader`, typed access to the YAML's values with such errors."""

from __future__ import annotations

import re
from pathlib import Path

from tsteval.core.errors import TstevalError, clip, did_you_mean, quote

_VAR = re.compile(r"\$\{([^}]*)\}")


class ManifestError(TstevalError):
    """A manifest problem, located to the manifest file and the dotted key (or the line, for YAML problems)."""

    def __init__(self, path: Path, key: str, message: str, fix: str | None = None, *,
                 line: int | None = None) -> None:
        self.path = path
        self.key = key
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        text = f"{where}: {clip(key)}: {message}" if key else f"{where}: {message}"
        super().__init__(text + (f" (fix: {clip(fix, 400)})" if fix else ""))


class Reader:
    """Typed access to the parsed YAML with errors naming the manifest file and the dotted key."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.base = path.parent

    def error(self, key: str, message: str, fix: str | None = None) -> ManifestError:
        return ManifestError(self.path, key, message, fix)

    def mapping(self, value: object, key: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping with keys {list(allowed)}, got {type(value).__name__}")
        for name in value:
            if name not in allowed:
                raise self.error(_join(key, str(name)), "unknown key" + did_you_mean(str(name), allowed, "; "),
                                 fix=f"use one of {list(allowed)}")
        for name in required:
            if name not in value:
                raise self.error(_join(key, name), "missing required key")
        return value

    def free_mapping(self, value: object, key: str) -> dict:
        if not isinstance(value, dict):
            raise self.error(key, f"expected a mapping, got {type(value).__name__}")
        return value

    def string(self, value: object, key: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or str(value) == "":
            raise self.error(key, f"expected a non-empty string, got {quote(value)}")
        return str(value)

    def strings(self, value: object, key: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {type(value).__name__}")
        return tuple(self.string(v, f"{key}[{i}]") for i, v in enumerate(value))

    def integer(self, value: object, key: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"expected an integer >= {minimum}, got {quote(value)}")
        return value

    def number(self, value: object, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number, got {quote(value)}")
        return float(value)

    def choice(self, value: object, key: str, choices: tuple[str, ...] | list[str], what: str) -> str:
        text = self.string(value, key)
        if text not in choices:
            raise self.error(key, f"unknown {what} {quote(text)}{did_you_mean(text, choices, '; ')}",
                             fix=f"choose one of {sorted(choices)}")
        return text

    def expand(self, value: object, key: str) -> Path:
        """A path: ``${TSTEVAL_DATA}`` expanded, relative paths taken from the manifest's folder."""
        text = self.string(value, key)

        def substitute(match: re.Match) -> str:
            if match.group(1) != "TSTEVAL_DATA":
                raise self.error(key, f"unknown variable ${{{clip(match.group(1), 40)}}}",
                                 fix="only ${TSTEVAL_DATA} expands")
            from tsteval.core.datapaths import data_root

            try:
                return str(data_root())
            except TstevalError as error:
                raise self.error(key, str(error)) from error

        path = Path(_VAR.sub(substitute, text)).expanduser()
        return path if path.is_absolute() else (self.base / path).resolve()

    def file(self, value: object, key: str, directory: bool = False) -> Path:
        path = self.expand(value, key)
        if not (path.is_dir() if directory else path.is_file()):
            raise self.error(key, f"no such {'directory' if directory else 'file'}: {clip(str(path))}",
                             fix="paths are relative to the manifest file; ${TSTEVAL_DATA} is the data root")
        return path


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name
