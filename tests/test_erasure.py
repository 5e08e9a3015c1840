"""Style erasure (LEACE) behind the ``@erase`` content columns, and the HH pair classifier as a content metric."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tsteval
from tsteval.core.errors import TstevalError
from tsteval.core.records import Corpus
from tsteval.lexicons.erasure import StyleEraser, fit_eraser
from tsteval.metrics.content.erasure import Erasure, erasure_sample, mean_word_vectors
from tsteval.metrics.content.word_vectors import WordVectors

CORPUS = {"neg": ["the food was awful", "terrible service", "i hated it", "bad and cold", "worst place ever",
                  "rude staff", "the soup was bland"],
          "pos": ["the food was great", "lovely service", "i loved it", "good and warm", "best place ever",
                  "kind staff", "the soup was tasty"]}
INPUTS = ["the food was awful", "the staff was rude", "i hated the soup"]
OUTPUTS = ["the food was great", "the staff was kind", "i hated the soup"]


def _synthetic(n: int = 600, d: int = 8, c: float = 3.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str],
                                                                                      np.ndarray]:
    """Embeddings = content + c * (+-1) * u: the content is orthogonal to a known style direction u and, in this
    sample, uncorrelated with the style (so the style signal is exactly c * u)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    content = rng.normal(size=(n, d))
    content -= np.outer(content @ u, u)
    content -= np.outer(sign, sign @ content / n)
    return content + c * sign[:, None] * u[None, :], content, ["a" if s > 0 else "b" for s in sign], u


def _probe_accuracy(x: np.ndarray, labels: list[str]) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    return float(cross_val_score(LogisticRegression(max_iter=1000), x, labels, cv=5).mean())


def test_eraser_equals_the_concept_erasure_reference() -> None:
    from concept_erasure import LeaceEraser

    x, _, labels, _ = _synthetic(n=300, d=6)
    z = torch.from_numpy(np.eye(2)[[0 if s == "a" else 1 for s in labels]])
    reference = LeaceEraser.fit(torch.from_numpy(x), z)(torch.from_numpy(x)).numpy()
    ours = fit_eraser(x, labels)
    np.testing.assert_allclose(ours(x), reference, atol=1e-10)
    assert ours.styles == ("a", "b") and ours.n == 300


def test_known_style_direction_is_erased_and_content_kept() -> None:
    x, content, labels, u = _synthetic()
    assert _probe_accuracy(x, labels) > 0.99
    eraser = fit_eraser(x, labels)
    erased = eraser(x)
    assert _probe_accuracy(erased, labels) < 0.6  # chance is 0.5
    # The style part is gone: the erased rows are the content part up to a constant shift ...
    shift = erased - content
    np.testing.assert_allclose(shift, np.broadcast_to(shift.mean(0), shift.shape), atol=1e-8)
    # ... and the map removes the style direction u only: rank-1 LEACE, I - P = u u^T.
    np.testing.assert_allclose(eraser.left @ eraser.right, np.outer(u, u), atol=1e-8)
    # LEACE's guarantee on the fitting data: equal class means.
    a = np.array(labels) == "a"
    np.testing.assert_allclose(erased[a].mean(0), erased[~a].mean(0), atol=1e-8)


def test_eraser_saves_and_loads(tmp_path) -> None:
    x, _, labels, _ = _synthetic(n=100, d=4)
    eraser = fit_eraser(x, labels)
    eraser.save(tmp_path)
    loaded = StyleEraser.load(tmp_path)
    np.testing.assert_array_equal(loaded(x), eraser(x))
    assert loaded.identity == eraser.identity
    with pytest.raises(TstevalError, match="4-dimensional"):
        eraser(np.zeros((2, 3)))
    with pytest.raises(TstevalError, match="at least 2 styles"):
        fit_eraser(x, ["a"] * len(x))


def test_sample_is_seeded_and_capped() -> None:
    corpus = Corpus([f"t{i}" for i in range(30)], ["a"] * 20 + ["b"] * 10)
    texts, labels = erasure_sample(corpus, per_style=5, seed=1)
    assert labels.count("a") == 5 and labels.count("b") == 5
    assert (texts, labels) == erasure_sample(corpus, per_style=5, seed=1)


def test_sbert_and_word_vector_metrics_at_erase_equal_a_direct_computation() -> None:
    from tsteval.metrics.content.sentence_embedding import encode
    from tsteval.metrics.content.wmd import wmd

    words = sorted({w for t in [*INPUTS, *OUTPUTS, *CORPUS["neg"], *CORPUS["pos"]] for w in t.split()})
    toy = WordVectors({w: i for i, w in enumerate(words)},
                      np.random.default_rng(0).normal(size=(len(words), 6)).astype(np.float32), "toy")
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos",
                            metrics=["sbert", "wmd", "embed_avg", "bleu"], corpus=CORPUS,
                            modifications=["none", "erase"], vectors=toy)
    assert "bleu@erase" not in card.metrics and {"sbert@erase", "wmd@erase", "embed_avg@erase"} <= set(card.metrics)
    erasure = Erasure(Corpus([t for s in CORPUS for t in CORPUS[s]], [s for s in CORPUS for _ in CORPUS[s]]))
    eraser = erasure.sentence()  # a cache hit: the same sample, model and method
    assert eraser.identity in card.signatures["sbert@erase"]
    a, b = eraser(encode(INPUTS)), eraser(encode(OUTPUTS))
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(card.frame["sbert@erase"].to_numpy(float), cosine, atol=1e-6)
    assert card.frame["sbert@erase"].iloc[2] == pytest.approx(1.0) and card.signatures["sbert@erase"] != \
        card.signatures["sbert@none"]

    vectors, word_eraser = erasure.word_vectors(toy)
    assert word_eraser.identity in card.signatures["wmd@erase"]
    # The erased vocabulary is the eraser applied to every unit word vector.
    np.testing.assert_allclose(vectors.vectors, word_eraser(toy.unit), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(card.frame["wmd@erase"].to_numpy(float), wmd(INPUTS, OUTPUTS, vectors).values)


def test_word_eraser_fits_on_mean_unit_word_vectors() -> None:
    vectors = WordVectors({"good": 0, "bad": 1, "food": 2}, np.array([[2.0, 0], [0, 3.0], [1.0, 1.0]]), "toy")
    features, kept = mean_word_vectors(["good food", "zzz", "bad"], vectors)
    assert kept == [True, False, True]
    np.testing.assert_allclose(features, [[(1 + 0.5 ** 0.5) / 2, 0.5 ** 0.5 / 2], [0.0, 1.0]])


def test_erase_needs_a_corpus_and_an_embedding_metric() -> None:
    with pytest.raises(TstevalError, match="style-labelled corpus"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["sbert"],
                         modifications=["erase"])
    with pytest.raises(TstevalError, match="embedding metrics only"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["bleu"],
                         modifications=["erase"], corpus=CORPUS)


def test_cli_erase_needs_erase_style(tmp_path, capsys) -> None:
    from tsteval.cli.main import main

    (tmp_path / "in.txt").write_text("\n".join(INPUTS) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(OUTPUTS) + "\n")
    args = ["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "neg",
            "--target-style", "pos", "--content", "sbert", "--modification", "erase", "--out", str(tmp_path / "run")]
    assert main(args) != 0
    assert "--erase-style NAME=FILE" in capsys.readouterr().err


def test_hh_content_is_the_pair_classifiers_probability() -> None:
    from tsteval.classifiers.pairs import MATCH, NO_MATCH, make_pair_classifier

    pairs = list(zip(CORPUS["neg"], CORPUS["pos"], strict=True))
    shuffled = list(zip(CORPUS["neg"], np.roll(CORPUS["pos"], 2), strict=True))
    pair = make_pair_classifier("features", seed=0).fit(pairs + shuffled,
                                                        [MATCH] * len(pairs) + [NO_MATCH] * len(shuffled))
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["hh_content"],
                            hh={"pc": pair})
    expected = pair.predict_proba(list(zip(INPUTS, OUTPUTS, strict=True)))[:, list(pair.classes_).index(MATCH)]
    np.testing.assert_allclose(card.frame["hh_content@pc"].to_numpy(float), expected)
    assert tsteval.METRICS["hh_content"].aspect == "content"
    assert card.signatures["hh_content@pc"].startswith("metric:hh_content|")
    with pytest.raises(TstevalError, match="hh="):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="neg", target_style="pos", metrics=["hh_content"])


@pytest.mark.parametrize(("content", "fragment"), [
    ("{metrics: [sbert], modifications: [none, erase]}", "the erase modification need the training corpus"),
    ("{metrics: [bleu], modifications: [erase]}", "erase applies to the embedding metrics only"),
])
def test_manifest_erase_is_validated(tmp_path, content: str, fragment: str) -> None:
    from tsteval.experiment.manifest.loader import ManifestError, load_manifest

    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\na b,c d,0,1\n")
    (tmp_path / "m.yaml").write_text(f"transfers: {{table: t.csv}}\nmetrics: {{content: {content}}}\n")
    with pytest.raises(ManifestError, match=fragment):
        load_manifest(tmp_path / "m.yaml")


def test_manifest_with_erase_runs(tmp_path) -> None:
    from tsteval.experiment.manifest.loader import load_manifest
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\n" + "".join(
        f"{a},{b},neg,pos\n" for a, b in zip(INPUTS, OUTPUTS, strict=True)))
    for style, texts in CORPUS.items():
        (tmp_path / f"{style}.txt").write_text("\n".join(texts) + "\n")
    (tmp_path / "m.yaml").write_text(
        "transfers: {table: t.csv}\ncorpus: {style: {neg: neg.txt, pos: pos.txt}, exclude_inputs: false}\n"
        "metrics: {content: {metrics: [sbert, bleu], modifications: [none, erase]}}\n")
    card = run(Plan.from_manifest(load_manifest(tmp_path / "m.yaml")))
    assert card.metrics == ["sbert@none", "bleu@none", "sbert@erase"]
