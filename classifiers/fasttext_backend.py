"""fastText supervised classifier (Joulin et al., 2017): bag of words and word n-grams, very fast.

Training is deterministic only with one thread (fastText's Hogwild updates race otherwise), so
``threads=1`` is the default.  The model is saved in fastText's own ``.bin`` format, which holds
only arrays and the dictionary and is read without pickle.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import fasttext
import numpy as np

from classifiers.base import TextClassifier
from harness.errors import TstevalError

MODEL_FILE = "fasttext.bin"
# An unusual label prefix, so that a word such as "__label__x" inside a text is not read as a label.
LABEL_PREFIX = "__tsteval_label__"
# fasttext-numpy2 0.10.4 trains on uninitialised memory when its input matrix is small enough to come
# from reused heap memory (below glibc's 32 MiB mmap ceiling): same-seed models then differ within one
# process and training can fail with "Encountered NaN".  Larger matrices get fresh zeroed pages and train
# reproducibly, so bucket x dim must reach 32 MiB of float32 (dim=100 with bucket=200,000 does).
MIN_INPUT_FLOATS = 2**23
_LINE_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\x0b": " ", "\x0c": " ", "\x00": " "})


def _one_line(text: str) -> str:
    """fastText reads one example per line; line breaks inside a text become spaces."""
    return text.translate(_LINE_BREAKS)


class FastTextClassifier(TextClassifier):
    """fastText softmax classifier; ``threads=1`` (default) makes training reproducible for a seed.

    ``lr=0.1`` is fastText's own default; 0.5 occasionally diverges ("Encountered NaN") on small corpora,
    and on 10,000 Yelp sentences 10 epochs at 0.1 reach the same held-out accuracy (0.947).

    ``bucket`` is the number of hashed n-gram rows; fastText's default of 2,000,000 would make every
    model (and file) about 800 MB at ``dim=100``, far more than style corpora need.  It may not go
    much lower either: see :data:`MIN_INPUT_FLOATS`.
    """

    backend = "fasttext"
    libraries = ("fasttext-numpy2", "numpy")

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

    def _check_params(self) -> None:
        if self.word_ngrams < 2 or self.bucket * self.dim < MIN_INPUT_FLOATS:
            raise TstevalError(
                f"fastText with word_ngrams={self.word_ngrams}, bucket={self.bucket}, dim={self.dim} would train "
                "irreproducibly (fasttext-numpy2 reads uninitialised memory when its input matrix is small); "
                f"keep word_ngrams >= 2 and bucket * dim >= {MIN_INPUT_FLOATS:,}")

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        self._check_params()
        with tempfile.TemporaryDirectory(prefix="tsteval-fasttext-") as tmp:
            path = Path(tmp) / "train.txt"
            # fastText reads the file in order without shuffling; a corpus grouped by style would bias it.
            order = np.random.default_rng(self.seed).permutation(len(texts))
            with open(path, "w", encoding="utf-8") as handle:
                for i in order:
                    handle.write(f"{LABEL_PREFIX}{y[i]} {_one_line(texts[i])}\n")
            try:
                self.model_ = fasttext.train_supervised(
                    input=str(path), epoch=self.epoch, lr=self.lr, dim=self.dim, wordNgrams=self.word_ngrams,
                    minCount=self.min_count, seed=self.seed, thread=self.threads, bucket=self.bucket,
                    label=LABEL_PREFIX, loss="softmax", verbose=0)
            except RuntimeError as error:
                hint = f"; training diverged at lr={self.lr}, lower it (e.g. 0.1)" if "NaN" in str(error) else ""
                raise TstevalError(f"fastText training failed: {error}{hint}") from error

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
