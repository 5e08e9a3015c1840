"""fastText supervised classifier (Joulin et al., 2017): bag of words and word n-grams, very fast.

The model is saved in fastText's own ``.bin`` format, which holds only arrays and the dictionary and is
read without pickle.

**Why training is deterministic.**  With ``threads=1`` (the default) everything fastText computes follows
from the training file (written here in a seeded order), ``seed`` and the starting contents of its two
weight matrices: one thread means no Hogwild races, and its random draws come from generators seeded with
``seed``.  The output matrix is explicitly zeroed.  The input matrix (one row per word and per hashed
n-gram bucket) is not: fasttext-numpy2 0.10.4 allocates it with ``posix_memalign`` (``intgemm::AlignedVector``,
never cleared) and ``DenseMatrix::uniform`` with one thread fills only its first tenth (block 0 of 10);
the other nine tenths start as whatever the heap last held, so same-seed models differed, or failed with
"Encountered NaN", depending on what the process had allocated and freed before.  Upstream fastText keeps
the matrix in a ``std::vector``, which zero-fills, so those rows are meant to start at 0.

:func:`zeroed_heap` restores that: while fastText trains, glibc's ``mallopt(M_PERTURB, 0xFF)`` (documented
in mallopt(3)) makes ``malloc`` and ``posix_memalign`` fill every block they hand out with the byte
``0xFF ^ 0xFF = 0``, whether the block is fresh or reused, so the untouched rows are exactly 0.0 whatever
the allocation history.  glibc's per-thread cache serves blocks of at most :data:`TCACHE_MAX_BYTES` without
that fill, so a model whose input matrix is that small is refused after training.  A lock keeps two
trainings from switching the process-wide setting under each other.  Other C libraries have no such
setting and fastText training stops with an error there.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import fasttext
import numpy as np

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, TextClassifier
from tsteval.core.errors import TstevalError

MODEL_FILE = "fasttext.bin"
# An unusual label prefix, so that a word such as "__label__x" inside a text is not read as a label.
LABEL_PREFIX = "__tsteval_label__"
# mallopt(3)'s parameter number (malloc.h): fill allocated blocks with the complement of the given byte.
M_PERTURB = -6
# Largest block glibc may serve from its per-thread cache, which M_PERTURB leaves unfilled (1,032 bytes on
# 64-bit systems unless the glibc.malloc.tcache_max tunable raises it).
TCACHE_MAX_BYTES = 1032
_ZEROED_HEAP = threading.Lock()
_LINE_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\x0b": " ", "\x0c": " ", "\x00": " "})


def _one_line(text: str) -> str:
    """fastText reads one example per line; line breaks inside a text become spaces."""
    return text.translate(_LINE_BREAKS)


def _glibc_mallopt() -> Callable[[int, int], int]:
    """glibc's ``mallopt``, or an error naming why fastText cannot train reproducibly without it."""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # no confstr (Windows) or no such name (macOS, musl)
        libc = ""
    if not libc.startswith("glibc"):
        raise TstevalError("fastText training needs glibc (Linux): fasttext-numpy2 leaves most of its input "
                           "matrix uninitialised and tsteval zero-fills it through glibc's mallopt(M_PERTURB); "
                           "train on a glibc system or use another backend (tfidf-lr, textcnn, transformer)")
    return ctypes.CDLL(None).mallopt


@contextmanager
def zeroed_heap() -> Iterator[None]:
    """While inside, every block above :data:`TCACHE_MAX_BYTES` that glibc's allocator hands out is zero-filled.

    The setting is process-wide, so the block holds a lock; on leaving, glibc's default (no fill) returns.
    """
    mallopt = _glibc_mallopt()
    with _ZEROED_HEAP:
        if mallopt(M_PERTURB, 0xFF) != 1:
            raise TstevalError("glibc refused mallopt(M_PERTURB); fastText cannot be trained reproducibly here")
        try:
            yield
        finally:
            mallopt(M_PERTURB, 0)


class FastTextClassifier(TextClassifier):
    """fastText softmax classifier; ``threads=1`` (default) makes training reproducible for a seed.

    ``lr=0.1`` is fastText's own default; on 10,000 Yelp sentences 10 epochs at 0.1 reach the same held-out
    accuracy (0.947) as at 0.5.

    ``bucket`` is the number of hashed n-gram rows; fastText's default of 2,000,000 would make every
    model (and file) about 800 MB at ``dim=100``, far more than style corpora need.
    """

    backend = "fasttext"
    libraries = ("fasttext-numpy2", "numpy")
    _parameter_constraints = {
        "epoch": [AT_LEAST_ONE],
        "lr": [POSITIVE],
        "dim": [AT_LEAST_ONE],
        "word_ngrams": [AT_LEAST_ONE],
        "min_count": [AT_LEAST_ONE],
        "seed": [SEED],
        "threads": [AT_LEAST_ONE],
        # fastText hashes word n-grams modulo bucket, so 0 would divide by zero whenever word_ngrams > 1.
        "bucket": [AT_LEAST_ONE],
    }

    def __init__(self, epoch: int = 10, lr: float = 0.1, dim: int = 100, word_ngrams: int = 2, min_count: int = 1,
                 seed: int = 0, threads: int = 1, bucket: int = 200_000) -> None:
        self.epoch = epoch
        self.lr = lr
        self.dim = dim
        self.word_ngrams = word_ngrams
        self.min_count = min_count
        self.seed = seed
        self.threads = threads
        self.bucket = bucket

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        with tempfile.TemporaryDirectory(prefix="tsteval-fasttext-") as tmp:
            path = Path(tmp) / "train.txt"
            # fastText reads the file in order without shuffling; a corpus grouped by style would bias it.
            order = np.random.default_rng(self.seed).permutation(len(texts))
            with open(path, "w", encoding="utf-8") as handle:
                for i in order:
                    handle.write(f"{LABEL_PREFIX}{y[i]} {_one_line(texts[i])}\n")
            try:
                with zeroed_heap():
                    model = fasttext.train_supervised(
                        input=str(path), epoch=self.epoch, lr=self.lr, dim=self.dim, wordNgrams=self.word_ngrams,
                        minCount=self.min_count, seed=self.seed, thread=self.threads, bucket=self.bucket,
                        label=LABEL_PREFIX, loss="softmax", verbose=0)
            except RuntimeError as error:
                if "NaN" in str(error):
                    lower = 0.1 if self.lr > 0.1 else self.lr / 2  # fastText's default, else half the rate
                    raise TstevalError(f"fastText training diverged (Encountered NaN) at lr={self.lr:g}; lower the "
                                       f"learning rate, e.g. --param lr={lower:g}") from error
                raise TstevalError(f"fastText training failed: {error}") from error
        # Memory that small may have come from glibc's per-thread cache, which zeroed_heap() does not fill.
        matrix = memoryview(model.f.getInputMatrix())
        if matrix.nbytes <= TCACHE_MAX_BYTES:
            raise TstevalError(f"fastText's input matrix ({matrix.shape[0]} rows x {self.dim}) is too small to "
                               f"start zero-filled ({matrix.nbytes} <= {TCACHE_MAX_BYTES} bytes); raise dim or bucket")
        self.model_ = model

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        labels, probs = self.model_.predict([_one_line(t) for t in texts], k=-1)
        # fastText orders each row by probability; map its label names back to class columns in one go.
        names = np.array([f"{LABEL_PREFIX}{i}" for i in range(len(self.classes_))])
        sorter = np.argsort(names)
        columns = sorter[np.searchsorted(names, np.array(labels), sorter=sorter)]
        proba = np.zeros((len(texts), len(self.classes_)))
        np.put_along_axis(proba, columns, np.array(probs), axis=1)
        return proba

    def _save_state(self, directory: Path) -> None:
        self.model_.save_model(str(directory / MODEL_FILE))

    def _load_state(self, directory: Path) -> None:
        self.model_ = fasttext.load_model(str(directory / MODEL_FILE))
