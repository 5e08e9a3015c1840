"""Compliancy logic on a hand example and on real Bible verses (gold upper bound above a random-verse system)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.classifiers.base import make_classifier
from tsteval.classifiers.pairs import MATCH, NO_MATCH, FeaturePairClassifier
from tsteval.cli.pairs import add_compliancy_parser
from tsteval.core.errors import InputError
from tsteval.core.records import Transfers
from tsteval.metrics.compatibility.compliancy import compliancy_decisions, compliancy_table, score_compliancy
from tsteval.readers.bible import chapter_documents, parallel_verses


def test_decisions_all_combinations() -> None:
    # HH x main-reversed, with AH true; then AH false alone; then AH omitted.
    hh = [True, True, False, False, True]
    ah = [True, True, True, True, False]
    style_in = ["a", "a", "a", "a", "a"]
    style_out = ["b", "a", "b", "a", "b"]
    out = compliancy_decisions(hh, ah, style_in, style_out, ["b"] * 5)
    assert out["main"].tolist() == [True, False, True, False, True]
    assert out["compliant"].tolist() == [True, False, False, False, False]
    no_ah = compliancy_decisions(hh, None, style_in, style_out, ["b"] * 5)
    assert no_ah["compliant"].tolist() == [True, False, False, False, True] and no_ah["ah"].isna().all()
    # The output's style must be the target, not merely differ from the input's.
    assert not compliancy_decisions([True], None, ["a"], ["c"], ["b"])["main"].iat[0]


@pytest.fixture(scope="module")
def bible(data_root: Path) -> pd.DataFrame:
    frame = parallel_verses(["KJV", "BBE"])
    return frame[frame.book.isin(["Genesis", "Exodus", "Ruth"])].reset_index(drop=True)


def test_gold_beats_random_verse(bible: pd.DataFrame, tmp_path: Path) -> None:
    train, test = bible[bible.book != "Ruth"].reset_index(drop=True), bible[bible.book == "Ruth"]
    test = test.reset_index(drop=True)
    style = make_classifier("tfidf-lr").fit(train.KJV.tolist() + train.BBE.tolist(),
                                           ["KJV"] * len(train) + ["BBE"] * len(train))
    rng = np.random.default_rng(0)
    rows = rng.choice(len(train), 800, replace=False)
    shift = rng.integers(1, len(train), 800)
    pairs = [(train.KJV.iat[i], train.BBE.iat[i]) for i in rows]
    pairs += [(train.KJV.iat[i], train.BBE.iat[(i + s) % len(train)]) for i, s in zip(rows, shift, strict=True)]
    hh = FeaturePairClassifier().fit(pairs, [MATCH] * 800 + [NO_MATCH] * 800)
    documents = chapter_documents(test, "KJV")
    frames = []
    for system, outputs in {"gold": test.BBE.tolist(), "random": test.BBE.sample(frac=1, random_state=0).tolist(),
                            "copy": test.KJV.tolist()}.items():
        part = Transfers.from_pairs(test.KJV.tolist(), outputs, source_style="KJV", target_style="BBE",
                                    system=system).frame
        part["document"] = documents
        frames.append(part)
    transfers = Transfers(pd.concat(frames, ignore_index=True))
    scored = score_compliancy(transfers, style, hh)
    table = compliancy_table(scored).set_index(["system", "direction"])
    assert table.loc[("gold", "avg"), "Compl."] >= 0.6
    assert table.loc[("gold", "avg"), "Compl."] > table.loc[("random", "avg"), "Compl."] + 0.4
    assert table.loc[("copy", "avg"), "Main"] < 0.1 and table.loc[("copy", "avg"), "BLEU-in"] == pytest.approx(1.0)
    with pytest.raises(InputError, match="document"):
        score_compliancy(Transfers(transfers.frame.drop(columns="document")), style, hh, hh)


def test_cli_parser_and_run(bible: pd.DataFrame, tmp_path: Path) -> None:
    import argparse

    ruth = bible[bible.book == "Ruth"].reset_index(drop=True)
    style = make_classifier("tfidf-lr").fit(bible.KJV.tolist() + bible.BBE.tolist(),
                                           ["KJV"] * len(bible) + ["BBE"] * len(bible))
    pairs = list(zip(ruth.KJV, ruth.BBE, strict=True)) + list(zip(ruth.KJV, ruth.BBE[::-1], strict=True))
    pair_model = FeaturePairClassifier().fit(pairs, [MATCH] * len(ruth) + [NO_MATCH] * len(ruth))
    style.save(tmp_path / "style")
    pair_model.save(tmp_path / "hh")
    pd.DataFrame({"input": ruth.KJV, "output": ruth.BBE, "source_style": "KJV", "target_style": "BBE",
                  "item": range(len(ruth))}).to_csv(tmp_path / "t.csv", index=False)
    pd.DataFrame({"item": range(len(ruth)), "document": chapter_documents(ruth, "KJV")}).to_json(
        tmp_path / "docs.jsonl", orient="records", lines=True)
    parser = argparse.ArgumentParser()
    add_compliancy_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["compliancy", "--transfers", str(tmp_path / "t.csv"), "--style-classifier",
                              str(tmp_path / "style"), "--hh", str(tmp_path / "hh"), "--ah", str(tmp_path / "hh"),
                              "--documents", str(tmp_path / "docs.jsonl"), "--out", str(tmp_path / "run")])
    assert args.func(args) == 0
    summary = pd.read_csv(tmp_path / "run" / "summary.csv")
    assert {"HH", "AH", "Main", "Compl."} <= set(summary.columns)
    assert len(pd.read_csv(tmp_path / "run" / "compliancy.csv")) == len(ruth)


def test_a_run_reads_the_ah_pairs_as_the_compliancy_command_does(bible: pd.DataFrame, tmp_path: Path) -> None:
    """AH pairs are (output, source document) in ``tsteval compliancy`` and in a scoring run alike: the lexical pair
    classifier is asymmetric (containment each way, each text's length), so a run that read (document, output)
    scored other probabilities."""
    import tsteval
    from tsteval.metrics.compatibility.compliancy import pair_rows

    ruth = bible[bible.book == "Ruth"].reset_index(drop=True)
    documents = chapter_documents(ruth, "KJV")
    shifted = documents[40:] + documents[:40]  # another chapter for most verses: the non-matching pairs
    pairs = list(zip(ruth.BBE, documents, strict=True)) + list(zip(ruth.BBE, shifted, strict=True))
    model = FeaturePairClassifier().fit(pairs, [MATCH] * len(ruth) + [NO_MATCH] * len(ruth))
    model.save(tmp_path / "ah")
    frame = pd.DataFrame({"system": "bbe", "setting": "default", "input": ruth.KJV, "output": ruth.BBE,
                          "source_style": "KJV", "target_style": "BBE", "item": range(len(ruth)),
                          "document": documents})
    card = tsteval.run(tsteval.Plan(Transfers(frame), ah={"doc": str(tmp_path / "ah")}, quiet=True))
    match = list(model.classes_).index(MATCH)
    expected = model.predict_proba(list(zip(frame.output, frame.document, strict=True)))[:, match]
    np.testing.assert_allclose(card.frame["ah@doc"], expected, rtol=0, atol=1e-12)
    swapped = model.predict_proba(list(zip(frame.document, frame.output, strict=True)))[:, match]
    assert np.abs(swapped - expected).max() > 0.05  # the order matters to this classifier: the test can tell
    style = make_classifier("tfidf-lr").fit(ruth.KJV.tolist() + ruth.BBE.tolist(), ["KJV"] * len(ruth) + ["BBE"] *
                                            len(ruth))
    command = score_compliancy(Transfers(frame), style, model, model)
    np.testing.assert_allclose(command["ah_prob"], card.frame["ah@doc"], rtol=0, atol=1e-12)
    assert pair_rows(frame, "ah")[0] == (frame.output[0], frame.document[0])
