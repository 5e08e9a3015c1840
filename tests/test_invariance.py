"""Style-invariance probe: the similarity matrix, counts, permutation test, linear probe and variance share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import read_slice

from tsteval.core.errors import InputError
from tsteval.metrics.content.word_vectors import WordVectors, load_glove
from tsteval.probes.invariance import (
    between_share,
    most_similar,
    permutation_test,
    probe_accuracy,
    similarity_matrix,
    style_invariance,
    summed_word_vectors,
)

K = 11


def _synthetic(separation: float, n: int = 60, d: int = 20, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """n texts per style around a style centre (``separation`` x a random centre) plus unit noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(K, d)) * separation
    codes = np.repeat(np.arange(K), n)
    x = rng.normal(size=(K * n, d)) + centres[codes] + 3.0  # a shared offset, as real embeddings have
    return x, [f"style{c:02d}" for c in codes]


def test_separable_styles_are_found() -> None:
    x, labels = _synthetic(separation=3.0)
    report = style_invariance(x, labels, n_permutations=200, seed=1)
    assert report.self_count == 11 and report.self_share == 1.0 and report.chance == pytest.approx(1 / 11)
    assert report.probe is not None and report.probe.accuracy > 0.98
    assert report.between_share > 0.5 > report.between_chance
    assert report.permutation.self_count_p == pytest.approx(1 / 201)
    assert report.permutation.gap_p == pytest.approx(1 / 201)
    matrix = report.matrix.to_numpy()
    assert np.allclose(matrix, matrix.T)


def test_random_embeddings_are_near_chance() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(K * 60, 20)) + 3.0
    labels = [f"style{c:02d}" for c in rng.integers(0, K, size=len(x))]
    report = style_invariance(x, labels, n_permutations=300, seed=3)
    assert report.self_count <= 4
    assert report.permutation.self_count_p > 0.05 and report.permutation.gap_p > 0.05
    assert report.probe is not None and report.probe.accuracy < 0.2
    assert report.between_share == pytest.approx(report.between_chance, rel=0.5)
    assert 0.3 < report.permutation.self_count_null_mean < 2.5  # about 1 = 11 x 1/11


def test_within_style_mean_excludes_self_pairs_by_hand() -> None:
    # style a: e1, e1, e2; style b: e2, -e1.  Pairs within a: (e1,e1)=1, (e1,e2)=0 twice -> 1/3.
    x = np.array([[1.0, 0], [2.0, 0], [0, 3.0], [0, 1.0], [-1.0, 0]])
    labels = ["a", "a", "a", "b", "b"]
    m = similarity_matrix(x, labels)
    assert m.loc["a", "a"] == pytest.approx(1 / 3)
    assert m.loc["b", "b"] == pytest.approx(0.0)  # (e2, -e1) only
    # between: a x b = {e1,e1,e2} x {e2,-e1}: 0,-1,0,-1,1,0 -> -1/6
    assert m.loc["a", "b"] == m.loc["b", "a"] == pytest.approx(-1 / 6)
    assert most_similar(m) == {"a": ["a"], "b": ["b"]}


def test_ties_are_all_listed() -> None:
    x = np.array([[1.0, 0], [1.0, 0], [1.0, 0], [1.0, 0]])
    m = similarity_matrix(x, ["a", "a", "b", "b"])
    assert most_similar(m) == {"a": ["a", "b"], "b": ["a", "b"]}


def test_permutation_is_seeded() -> None:
    x, labels = _synthetic(separation=0.05, seed=4)
    assert permutation_test(x, labels, 100, seed=7) == permutation_test(x, labels, 100, seed=7)


def test_bad_input() -> None:
    x, labels = _synthetic(separation=1.0, n=6)
    with pytest.raises(InputError, match="labels"):
        similarity_matrix(x, labels[:-1])
    with pytest.raises(InputError, match="at least 2 styles"):
        similarity_matrix(x, ["one"] * len(x))
    with pytest.raises(InputError, match="zero vectors"):
        similarity_matrix(np.vstack([x, np.zeros(x.shape[1])]), [*labels, "style00"])
    with pytest.raises(InputError, match="2-D"):
        similarity_matrix(x[0], labels[:1])
    with pytest.raises(InputError, match="fewer than"):
        probe_accuracy(x[:44], labels[:44], folds=5)
    with pytest.raises(InputError, match="zero"):
        between_share(np.ones((4, 3)), ["a", "a", "b", "b"])


def test_summed_word_vectors() -> None:
    vectors = WordVectors({"good": 0, "food": 1}, np.array([[1.0, 0.0], [0.0, 2.0]]))
    embed = summed_word_vectors(vectors)
    assert embed(["Good food good", "unknown"]).tolist() == [[2.0, 2.0], [0.0, 0.0]]


def test_three_cds_styles_with_glove(data_root: Path) -> None:
    styles = ("bible", "english_tweets", "shakespeare")
    texts, labels = [], []
    for style in styles:
        lines = read_slice(data_root / "cds" / f"{style}.txt", 100)
        texts += lines
        labels += [style] * len(lines)
    x = summed_word_vectors(load_glove())(texts)
    keep = np.linalg.norm(x, axis=1) > 0
    report = style_invariance(x[keep], [lab for lab, k in zip(labels, keep, strict=True) if k], n_permutations=200)
    assert report.styles == sorted(styles)
    assert report.matrix.shape == (3, 3) and np.allclose(report.matrix, report.matrix.T)
    assert report.matrix.to_numpy().min() > 0.3  # summed GloVe vectors share a large common direction
    assert report.probe is not None and report.probe.accuracy > 0.7  # style is linearly readable even so
    assert report.between_share > report.between_chance
