"""fastText trains bit-identically under CPU load and heap churn (GitHub issue 8, item 3a).

fasttext-numpy2 allocates its input matrix without zeroing it and, with one thread, initialises only its
first tenth; the rest is whatever the heap held (see ``classifiers/fasttext_backend.py``).  The churn below
leaves large free heap blocks full of NaN and huge numbers behind, which is what made same-seed models
differ, or fail with "Encountered NaN", before the fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from tsteval.classifiers.base import make_classifier
from tsteval.core.errors import TstevalError

RUNS = 6
MIB_FLOATS = 2**18  # float32 values in one MiB
# Garbage left in freed heap blocks: NaN and a value whose square overflows float32.
GARBAGE = (np.nan, 1e30)


@pytest.fixture(scope="module")
def yelp_small(yelp_slice: tuple[list[str], list[str]]) -> tuple[list[str], list[str]]:
    """400 real Yelp sentences, half of each sentiment, interleaved."""
    texts, labels = yelp_slice
    return texts[:400], labels[:400]


@pytest.fixture
def busy_cpu() -> Iterator[None]:
    """A busy-loop process competing for the CPU while the test runs."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        process.kill()
        process.wait()


def churn_heap(fill: float) -> list[np.ndarray]:
    """Free large garbage-filled blocks inside glibc's heap and return small blocks pinning them there.

    Freeing a 31 MiB block raises glibc's mmap threshold to 31 MiB, so the next blocks of up to 31 MiB come
    from the heap; neighbours freed together merge into one free block of 60-100 MiB, larger than fastText's
    input matrix, and the small block allocated after them keeps it from being returned to the system.
    """
    np.full(31 * MIB_FLOATS, fill, dtype=np.float32)
    pins, blocks = [], []
    for count, mib in ((3, 30), (4, 25), (2, 31), (5, 20)):
        blocks += [np.full(mib * MIB_FLOATS, fill, dtype=np.float32) for _ in range(count)]
        pins.append(np.full(20_000, fill))
    del blocks
    return pins


@pytest.mark.parametrize("params", [{}, {"word_ngrams": 1}, {"dim": 20, "bucket": 50_000}],
                         ids=["default", "unigrams", "small-matrix"])
def test_training_is_bit_identical_under_load_and_heap_churn(
        params: dict, yelp_small: tuple[list[str], list[str]], busy_cpu: None) -> None:
    texts, labels = yelp_small
    probe = texts[:100]
    runs = []
    for run in range(RUNS):
        pins = churn_heap(GARBAGE[run % 2]) if run else []
        runs.append(make_classifier("fasttext", epoch=5, **params).fit(texts, labels).predict_proba(probe))
        del pins
    assert not np.isnan(runs[0]).any()
    for run, proba in enumerate(runs[1:], start=1):
        assert np.array_equal(proba, runs[0]), f"run {run} differs from run 0"


@pytest.mark.parametrize(("lr", "lower"), [(50.0, "0.1"), (0.1, "0.05")])
def test_divergence_names_a_lower_learning_rate(lr: float, lower: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import fasttext

    def diverge(**_: object) -> None:
        raise RuntimeError("Encountered NaN.")

    if lr <= 0.1:  # a real divergence at the default rate is rare; simulate fastText's error
        monkeypatch.setattr(fasttext, "train_supervised", diverge)
    with pytest.raises(TstevalError, match=rf"diverged \(Encountered NaN\) at lr={lr:g}; lower the learning rate, "
                                           rf"e\.g\. --param lr={lower}$"):
        make_classifier("fasttext", lr=lr).fit(["good food", "bad food"], ["1", "0"])


def test_training_without_glibc_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_glibc(name: str) -> str:
        raise ValueError(f"unrecognized configuration name {name!r}")

    monkeypatch.setattr(os, "confstr", no_glibc)
    with pytest.raises(TstevalError, match=r"fastText training needs glibc \(Linux\)"):
        make_classifier("fasttext").fit(["good food", "bad food"], ["1", "0"])


def test_input_matrix_too_small_to_zero_fill_is_refused() -> None:
    with pytest.raises(TstevalError, match=r"input matrix \(4 rows x 2\) is too small to start zero-filled"):
        make_classifier("fasttext", dim=2, word_ngrams=1).fit(["good food", "bad food"], ["1", "0"])
