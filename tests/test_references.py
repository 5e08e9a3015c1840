"""Content metrics against human references (``metric@ref``): multi-reference BLEU/chrF as sacreBLEU computes
them, best-of for the other metrics, corpus BLEU per system and direction, and reference files that do not fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import sacrebleu

import tsteval
from tests.badinput import expect_error, run_cli
from tsteval.core.records import Transfers
from tsteval.core.tokenize import tokenize
from tsteval.metrics.content.references import multi_reference, resolve_references
from tsteval.metrics.content.word_vectors import WordVectors
from tsteval.readers.dualrl import load_dualrl, load_dualrl_references


def _joined(text: str) -> str:
    return " ".join(tokenize(text))


@pytest.fixture(scope="module")
def gyafc() -> Transfers:
    """Two DualRL GYAFC systems, 40 items of each direction."""
    transfers = load_dualrl("GYAFC", systems=["DualRL", "UnsuperMT_Zhang"])
    frame = transfers.frame
    keep = frame[(frame["item"] % 500) < 40].reset_index(drop=True)
    return Transfers(keep, transfers.origin)


def test_sentence_bleu_and_chrf_at_ref_equal_sacrebleu_with_four_references(gyafc: Transfers) -> None:
    references = resolve_references("dualrl:GYAFC", gyafc)
    assert len(references) == 4
    hyps = gyafc.frame["output"].tolist()
    bleu = multi_reference("bleu", references, hyps).values
    chrf = multi_reference("chrf", references, hyps).values
    for i, hyp in enumerate(hyps):
        refs = [_joined(r[i]) for r in references]
        expected = sacrebleu.sentence_bleu(_joined(hyp), refs, smooth_method="exp", tokenize="none",
                                           use_effective_order=True).score
        assert bleu[i] == pytest.approx(expected, abs=1e-9)
        assert chrf[i] == pytest.approx(sacrebleu.sentence_chrf(_joined(hyp), refs).score, abs=1e-9)
    # an output equal to one of its references scores 100, whichever reference it is
    first = tuple(refs[:1] for refs in references)
    assert multi_reference("bleu", first, [references[2][0]]).values[0] == pytest.approx(100.0)


def test_corpus_bleu_at_ref_for_published_systems_equals_sacrebleu_corpus_bleu(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    outcome = run_cli(["score", "--dualrl", "GYAFC", "--content", "bleu", "--references", "dualrl", "--out", out,
                       "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    card = pd.read_csv(out / "scorecard.csv")
    signatures = (out / "signatures.json").read_text()
    assert "bleu@ref" in card.columns and "bleu@none" in card.columns
    assert "ref:4" in signatures and "refhash:" in signatures
    corpus = pd.read_csv(out / "references.csv", dtype={"direction": str})
    refs = load_dualrl_references("GYAFC").set_index("item")
    for system in ("DualRL", "UnsuperMT_Zhang", "DeleteOnly_Li"):
        rows = card[card["system"] == system]
        for direction in ("formal-informal", "informal-formal", "all"):
            part = rows if direction == "all" else rows[rows["source_style"] == direction.split("-")[0]]
            expected = sacrebleu.corpus_bleu([_joined(h) for h in part["output"]],
                                             [[_joined(r) for r in refs.loc[part["item"], f"reference{k}"]]
                                              for k in range(4)], tokenize="none").score
            got = corpus[(corpus["system"] == system) & (corpus["direction"] == direction)]["corpus_bleu"]
            assert got.item() == pytest.approx(expected, abs=1e-9), (system, direction)


def test_vector_metrics_keep_the_best_reference_and_wmd_the_smallest() -> None:
    vectors = WordVectors({"cat": 0, "dog": 1, "car": 2}, np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]), "toy")
    card = tsteval.evaluate(["cat", "cat"], ["dog", "car"], source_style="a", target_style="b",
                            metrics=["embed_avg", "wmd"], vectors=vectors,
                            references=[["car", "car"], ["dog", "cat"]])
    frame = card.frame
    # row 0: "dog" vs "car" (cos 0.6) or "dog" (1.0) -> 1.0; row 1: "car" vs "car" (1.0) or "cat" (0.0) -> 1.0
    assert frame["embed_avg@ref"].tolist() == pytest.approx([1.0, 1.0])
    assert frame["wmd@ref"].tolist() == pytest.approx([0.0, 0.0], abs=1e-6)
    assert frame["embed_avg@none"].tolist() == pytest.approx([0.8, 0.0])
    assert "ref:2" in card.signatures["wmd@ref"]
    one = tsteval.evaluate(["cat"], ["dog"], source_style="a", target_style="b", metrics=["embed_avg"],
                           vectors=vectors, references=[["car"]])
    assert one.frame["embed_avg@ref"].tolist() == pytest.approx([0.6])


def test_reference_file_with_wrong_number_of_lines_is_one_error_naming_it(tmp_path, capsys) -> None:
    inputs, outputs, refs = tmp_path / "in.txt", tmp_path / "out.txt", tmp_path / "ref.txt"
    inputs.write_text("the food was bad\nrude staff\nslow service\n")
    outputs.write_text("the food was good\nfriendly staff\nfast service\n")
    refs.write_text("the food was great\nlovely staff\n")
    expect_error(["score", "--pairs", inputs, outputs, "--source-style", "neg", "--target-style", "pos",
                  "--content", "bleu", "--references", refs, "--out", tmp_path / "run"], capsys,
                 f"{refs}: 2 references but the transfers have 3 items")
    assert not (tmp_path / "run").exists()
    expect_error(["score", "--pairs", inputs, outputs, "--source-style", "neg", "--target-style", "pos",
                  "--content", "bleu", "--references", "dualrl", "--out", tmp_path / "run"], capsys,
                 "--references dualrl gives the DualRL references of --dualrl DATASET")


def test_manifest_references_dualrl_add_ref_columns(tmp_path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text("transfers: {published: dualrl, dataset: GYAFC, systems: [DualRL], sample: 20}\n"
                        "metrics: {content: {metrics: [bleu, rougeL], references: dualrl}}\n")
    plan = tsteval.Plan.from_manifest(tsteval.load_manifest(manifest))
    card = tsteval.run(plan)
    assert {"bleu@ref", "rougeL@ref", "bleu@none"} <= set(card.frame.columns)
    assert "ref:4" in card.signatures["rougeL@ref"]


def test_identical_reference_scores_are_clipped_to_the_declared_range() -> None:
    from tsteval.metrics.content.references import score_references
    from tsteval.metrics.content.scorer import score_content
    from tsteval.metrics.registry import METRICS
    from tsteval.scorecard import Scorecard

    texts = ["the food was great and the staff were friendly .", "i would not go back there again , ever ."]
    raw = multi_reference("bleu", [texts], texts).values
    assert (raw > 100).all()  # floating error: 100.00000000000004, above BLEU's declared range
    card = Scorecard.from_transfers(Transfers.from_pairs(texts, texts, source_style="0", target_style="1"))
    score_references(card, ["bleu", "chrf"], [texts])
    score_content(card, ["bleu"], modification="none")
    for column in ("bleu@ref", "chrf@ref", "bleu@none"):
        assert card.frame[column].tolist() == [METRICS[column.split("@")[0]].range[1]] * 2 == [100.0] * 2
    assert METRICS["bleu"].compute(texts, texts).values.tolist() == [100.0, 100.0]
