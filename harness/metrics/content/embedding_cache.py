"""A content-addressed cache of sentence embeddings, safe to share between runs and processes.

A vector's key is the model's identity (a hash of every file of the model folder, the truncation length and the
pooling) plus the sha256 of the text.  Each batch of new embeddings is one :func:`tsteval.core.cache.cached_dir`
entry under ``embeddings/MODEL/``: ``keys.npy`` (hex text hashes) and ``vectors.npy`` (float32 rows), written
in a temporary folder and renamed into place, with the sha256 of both files in the entry's marker.  A reader
verifies an entry before using it; a damaged or half-written entry is skipped with a one-line notice (its texts
are encoded again and stored as a new entry), never trusted.

>>> import tempfile
>>> cache = EmbeddingCache("model-x", root=Path(tempfile.mkdtemp()))
>>> cache.add(["good food"], np.ones((1, 3), dtype=np.float32))
>>> sorted(cache.lookup(["good food", "bad service"]))
['good food']
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from tsteval.core.cache import cache_root, cached_dir, entry_problem
from tsteval.core.integrity import files_under, record_files
from tsteval.core.signature import content_hash

KIND = "embeddings"


@lru_cache(maxsize=8)
def model_identity(model: str, max_length: int) -> str:
    """A hash naming the encoder: every file of a local model folder (else the model id), truncation, pooling."""
    path = Path(model)
    files = record_files(path, files_under(path)) if path.is_dir() else model
    return content_hash(files, max_length, "mean-l2", length=16)


def text_key(text: str) -> bytes:
    """The hex sha256 (first 128 bits) of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32].encode("ascii")


class EmbeddingCache:
    """Embeddings of one model, looked up by text."""

    def __init__(self, identity: str, root: Path | None = None) -> None:
        self.identity = identity
        self.root = root or cache_root()
        self.folder = self.root / KIND / identity

    def lookup(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vector of each text that has one (verified entries only)."""
        wanted: dict[bytes, list[str]] = {}
        for text in texts:
            wanted.setdefault(text_key(text), []).append(text)
        found: dict[str, np.ndarray] = {}
        if not self.folder.is_dir():
            return found
        for entry in sorted(p for p in self.folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if not wanted:
                break
            problem = entry_problem(entry, entry.name)
            if problem is not None:
                print(f"tsteval: embedding cache entry {entry.name} skipped ({problem})", file=sys.stderr)
                continue
            keys = np.load(entry / "keys.npy", allow_pickle=False)
            rows = [(k, key) for k, key in enumerate(keys.tolist()) if key in wanted]
            if not rows:
                continue
            vectors = np.load(entry / "vectors.npy", mmap_mode="r", allow_pickle=False)
            for k, key in rows:
                for text in wanted.pop(key, []):
                    found[text] = np.array(vectors[k])
        return found

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one entry holding ``vectors`` (a row per text)."""
        keys = np.array([text_key(t) for t in texts], dtype="S32")
        rows = np.ascontiguousarray(vectors, dtype=np.float32)

        def build(tmp: Path) -> None:
            tmp.mkdir(parents=True, exist_ok=True)
            np.save(tmp / "keys.npy", keys, allow_pickle=False)
            np.save(tmp / "vectors.npy", rows, allow_pickle=False)

        cached_dir(f"{KIND}/{self.identity}", hashlib.sha256(keys.tobytes()).hexdigest()[:24], build, self.root)
