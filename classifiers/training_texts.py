"""The hash set of a classifier's training texts, saved beside its weights so that a run can count how many of
the texts it scores the classifier was trained on (:mod:`tsteval.experiment.run.leakage`).

A text is normalised (case folded, every whitespace removed, so ``"I do n't"`` and ``"i don't"`` agree) and hashed
with sha256; the first :data:`DIGEST_BYTES` bytes of each distinct digest, sorted and packed, are stored base64 in
``training-texts.json`` (about 11 bytes per text).  The file is one of the saved model's files, so its sha256 is
recorded in the manifest and verified before it is read.  A model saved before this file existed has no hash set:
its overlap is ``unknown``.

>>> digests = text_digests(["The food was great .", "the  food was great."])
>>> len(digests)
1
>>> sorted(unpack(pack(digests))) == sorted(digests)
True
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from tsteval.core.errors import InputError, read_json

TRAINING_TEXTS = "training-texts.json"
DIGEST_BYTES = 8
NORMALISATION = "casefold, whitespace removed; sha256, first 8 bytes"


def normalised(text: str) -> str:
    """``text`` case folded with every whitespace character removed."""
    return "".join(str(text).casefold().split())


def digest(text: str) -> bytes:
    """The truncated sha256 of ``text`` normalised."""
    return hashlib.sha256(normalised(text).encode("utf-8")).digest()[:DIGEST_BYTES]


def text_digests(texts: Iterable[str]) -> frozenset[bytes]:
    """The distinct truncated digests of ``texts``."""
    return frozenset(digest(t) for t in texts)


def pack(digests: Iterable[bytes]) -> str:
    """The digests, sorted and concatenated, as base64."""
    return base64.b64encode(b"".join(sorted(digests))).decode("ascii")


def unpack(text: str) -> frozenset[bytes]:
    """The digests packed by :func:`pack`."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) % DIGEST_BYTES:
        raise ValueError(f"{len(raw)} bytes is not a whole number of {DIGEST_BYTES}-byte digests")
    return frozenset(raw[i:i + DIGEST_BYTES] for i in range(0, len(raw), DIGEST_BYTES))


def write_training_texts(directory: Path, digests: frozenset[bytes]) -> None:
    """Write ``training-texts.json`` into ``directory``."""
    body = {"normalisation": NORMALISATION, "count": len(digests), "digests": pack(digests)}
    (directory / TRAINING_TEXTS).write_text(json.dumps(body), encoding="utf-8")


def read_training_texts(directory: Path) -> frozenset[bytes]:
    """The hash set in ``directory``'s ``training-texts.json`` (already verified against the manifest's sha256);
    a malformed file is an :class:`InputError` naming it."""
    path = directory / TRAINING_TEXTS
    data = read_json(path, "training-text hash set")
    try:
        if data["normalisation"] != NORMALISATION:
            raise ValueError(f"unknown normalisation {data['normalisation']!r}")
        digests = unpack(data["digests"])
        if len(digests) != data["count"]:
            raise ValueError(f"{len(digests)} digests, but count says {data['count']}")
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"the training-text hash set is malformed: {error}", path=path,
                         fix="retrain the classifier") from None
    return digests


def overlap(texts: Iterable[str], digests: frozenset[bytes] | None) -> int | None:
    """How many of ``texts`` (each counted) are in ``digests``; None when the hash set is unknown."""
    if digests is None:
        return None
    return sum(digest(t) in digests for t in texts)
