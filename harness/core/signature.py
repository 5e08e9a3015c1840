"""Signatures, as in sacreBLEU: a string on every score that says exactly how it was computed.

Two scores with the same signature are comparable.  A signature lists the metric, its parameters,
the hashes of the model and the data it used, the seed and the versions of the libraries involved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata


def content_hash(*parts: object, length: int = 12) -> str:
    """A short, stable hash of JSON-serialisable parts (texts, labels, configs, seeds)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(json.dumps(part, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:length]


def texts_hash(texts: Iterable[str], length: int = 12) -> str:
    """Hash of a sequence of texts, streamed so large corpora are not serialised at once."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()[:length]


def package_version(name: str) -> str:
    """Installed version of a distribution, or ``none``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "none"


@dataclass(frozen=True)
class Signature:
    """Ordered ``key:value`` fields joined by ``|``; ``tsteval`` and numpy versions are always included."""

    metric: str
    fields: Mapping[str, object] = field(default_factory=dict)
    libraries: tuple[str, ...] = ("numpy",)

    def __str__(self) -> str:
        parts = [f"metric:{self.metric}"]
        parts += [f"{key}:{value}" for key, value in self.fields.items()]
        parts += [f"{lib}:{package_version(lib)}" for lib in self.libraries]
        parts.append(f"tsteval:{package_version('tsteval')}")
        return "|".join(parts)
