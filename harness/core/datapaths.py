"""Where the real data lives: one data root, with one folder per published dataset.

The root is ``$TSTEVAL_DATA`` when set, else ``shared/data`` beside the checkout, so a fresh clone next to
the shared data works without configuration while a run elsewhere says exactly what to set.
"""

from __future__ import annotations

import os
from pathlib import Path

from tsteval.core.errors import DataNotFoundError

ENV_VAR = "TSTEVAL_DATA"


# The checkout this module lives in (harness/core/datapaths.py): the data root defaults to ../shared/data beside it.
CHECKOUT = Path(__file__).resolve().parents[2]


def _default_root() -> Path:
    return CHECKOUT.parent / "shared" / "data"


def data_root() -> Path:
    """The data root: ``$TSTEVAL_DATA`` if set, else ``<checkout>/../shared/data`` when it exists."""
    env = os.environ.get(ENV_VAR)
    root = Path(env).expanduser() if env else _default_root()
    if not root.is_dir():
        origin = f"{ENV_VAR}={env}" if env else f"the default {root} ({ENV_VAR} is not set)"
        raise DataNotFoundError(f"data root {root} is not a directory; looked at {origin}. "
                                f"Set {ENV_VAR} to the folder that holds the datasets (e.g. yelp/, mir2019/).")
    return root


def dataset_dir(name: str) -> Path:
    """The folder of dataset ``name`` under the data root; raises ``DataNotFoundError`` naming the path expected."""
    path = data_root() / name
    if not path.is_dir():
        raise DataNotFoundError(f"dataset {name!r} not found: expected the directory {path}. "
                                f"Set {ENV_VAR} to the data root that contains {name}/.")
    return path


def portable(path: str | Path, start: str | Path | None = None) -> str:
    """``path`` as written into results that others read: a file shipped in site-packages from its package folder,
    ``$TSTEVAL_DATA/...`` under the data root, relative to the checkout inside it, else relative to ``start`` (the
    folder the result is written to) when given, else as given.

    >>> portable(CHECKOUT / "manifests" / "mir.yaml")
    'manifests/mir.yaml'
    """
    text = str(path)
    resolved = Path(text).expanduser().resolve() if text and not text.startswith("<") else None
    if resolved is None:
        return text
    parts = resolved.parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1:])
    env = os.environ.get(ENV_VAR)
    for base, shown in ((Path(env).expanduser().resolve() if env else _default_root().resolve(), "$TSTEVAL_DATA"),
                        (CHECKOUT, None)):
        if resolved.is_relative_to(base):
            relative = resolved.relative_to(base).as_posix()
            return relative if shown is None else f"{shown}/{relative}"
    return os.path.relpath(resolved, Path(start).resolve()) if start is not None else text

