"""User-facing errors: every bad input names the file, the line and the fix."""

from __future__ import annotations

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
