"""The ``tsteval`` CLI end to end on a small real Yelp slice, and its handling of bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tsteval.cli.main import build_parser, main


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, yelp_slice: tuple[list[str], list[str]]) -> Path:
    """A TF-IDF + LR classifier trained through the CLI on 2 x 2,000 real Yelp sentences."""
    root = tmp_path_factory.mktemp("cli")
    texts, labels = yelp_slice
    for style in ("0", "1"):
        (root / f"train.{style}").write_text("\n".join(t for t, y in zip(texts, labels, strict=True) if y == style))
    assert main(["train-classifier", "tfidf-lr", "--style", f"0={root / 'train.0'}",
                 "--style", f"1={root / 'train.1'}", "--out", str(root / "clf"), "--quiet"]) == 0
    return root


def test_train_then_score_pairs(trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    inputs = tmp_path / "in.txt"
    outputs = tmp_path / "out.txt"
    inputs.write_text("the food was cold and the service was slow .\nworst pizza i have ever had .\n")
    outputs.write_text("the food was hot and the service was fast .\nbest pizza i have ever had .\n")
    out = tmp_path / "run"
    assert main(["score", "--classifier", f"lr={trained / 'clf'}", "--pairs", str(inputs), str(outputs),
                 "--source-style", "0", "--target-style", "1", "--system", "mine", "--out", str(out)]) == 0
    card = pd.read_csv(out / "scorecard.csv")
    assert len(card) == 2 and (card["system"] == "mine").all()
    assert (card["sti@lr"] > 0.2).all(), "negative-to-positive rewrites must move toward the target"
    assert (card["target_acc@lr"] == 1).all()
    signatures = json.loads((out / "signatures.json").read_text())
    assert signatures["sti@lr"].startswith("metric:sti|ground:nominal")
    assert "sti@lr" in capsys.readouterr().out


def test_mismatched_lines_fail_before_writing(trained: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_text("a b\nc d\n")
    (tmp_path / "out.txt").write_text("a b\n")
    out = tmp_path / "run"
    code = main(["score", "--classifier", f"lr={trained / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
                 str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "in.txt" in err and "out.txt" in err
    assert not out.exists()


def test_unknown_style_fails_before_writing(trained: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_text("a b\n")
    (tmp_path / "out.txt").write_text("c d\n")
    out = tmp_path / "run"
    code = main(["score", "--classifier", f"lr={trained / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
                 str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "formal", "--out", str(out)])
    assert code == 2
    assert "formal" in capsys.readouterr().err
    assert not out.exists()


def test_one_class_training_is_refused(tmp_path: Path, capsys) -> None:
    (tmp_path / "only.txt").write_text("good food\nnice place\n")
    code = main(["train-classifier", "tfidf-lr", "--style", f"pos={tmp_path / 'only.txt'}",
                 "--out", str(tmp_path / "clf")])
    assert code == 2
    assert "single class" in capsys.readouterr().err
    assert not (tmp_path / "clf").exists()


def test_undecodable_bytes_name_file_and_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.txt").write_bytes(b"fine line\nbad \xff byte\n")
    (tmp_path / "b.txt").write_text("other style\nmore text\n")
    code = main(["train-classifier", "tfidf-lr", "--style", f"a={tmp_path / 'a.txt'}",
                 "--style", f"b={tmp_path / 'b.txt'}", "--out", str(tmp_path / "clf")])
    assert code == 2
    err = capsys.readouterr().err
    assert "a.txt:2" in err


def test_help_mentions_every_command(capsys) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    assert "train-classifier" in text and "score" in text


def test_score_help_names_every_form_of_metrics(capsys) -> None:
    """``--metrics`` takes names, NAME@SCORER, ``recommended`` and a study's ``profile:FILE``: its help names each."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    start = text.rindex("--metrics NAMES")  # the option's entry, after the usage line
    metrics = text[start:text.index("--content METRICS", start)]
    assert "NAME@SCORER" in metrics and "recommended" in metrics and "recommended:FAMILY" in metrics
    assert "profile:FILE" in metrics


@pytest.fixture(scope="module")
def lexicon_file(trained: Path) -> Path:
    """A style lexicon built through the CLI from the same real Yelp slice."""
    (trained / "reference.txt").write_text("great\ndelicious\nworst\nrude\nhorrible\n")
    assert main(["build-lexicon", "--style", f"0={trained / 'train.0'}", "--style", f"1={trained / 'train.1'}",
                 "--reference", str(trained / "reference.txt"), "--out", str(trained / "lexicon.json")]) == 0
    return trained / "lexicon.json"


def test_build_lexicon_finds_sentiment_words(lexicon_file: Path, capsys) -> None:
    entries = json.loads(lexicon_file.read_text())
    assert set(entries) == {"0", "1"}
    positive = {word for word, weight in entries["1"]}
    negative = {word for word, weight in entries["0"]}
    assert "great" in positive and "worst" in negative
    assert all(weight > 0 for _, weight in entries["1"]) and all(weight < 0 for _, weight in entries["0"])


def test_score_content_columns(lexicon_file: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_text("the food was delicious and the staff was great .\nworst service ever .\n")
    (tmp_path / "out.txt").write_text("the food was horrible and the staff was terrible .\nworst service ever .\n")
    out = tmp_path / "run"
    assert main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "1",
                 "--target-style", "0", "--content", "bleu,meteor,wmd,sbert", "--modification", "none,mask",
                 "--lexicon", str(lexicon_file), "--out", str(out), "--quiet"]) == 0
    card = pd.read_csv(out / "scorecard.csv")
    for metric in ("bleu", "meteor", "wmd", "sbert"):
        for mode in ("none", "mask"):
            assert f"{metric}@{mode}" in card.columns
    assert card.loc[1, "bleu@none"] == pytest.approx(100.0) and card.loc[1, "wmd@none"] == 0.0
    # masking the swapped sentiment words (all four are in the lexicon) makes the first pair look more alike
    assert card.loc[0, "bleu@mask"] > card.loc[0, "bleu@none"]
    assert card.loc[0, "wmd@mask"] < card.loc[0, "wmd@none"]
    signatures = json.loads((out / "signatures.json").read_text())
    assert "mod:mask" in signatures["bleu@mask"] and "lex:" in signatures["bleu@mask"]


def test_masking_without_lexicon_fails_before_writing(tmp_path: Path, capsys) -> None:
    (tmp_path / "in.txt").write_text("a b\n")
    (tmp_path / "out.txt").write_text("c d\n")
    out = tmp_path / "run"
    code = main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "0",
                 "--target-style", "1", "--content", "bleu", "--modification", "mask", "--out", str(out)])
    assert code == 2
    assert "--lexicon" in capsys.readouterr().err
    assert not out.exists()


def test_train_pairs_then_compliancy_on_the_bible(tmp_path: Path, data_root: Path, capsys) -> None:
    """KJV -> BBE on real verses: the true BBE verse is more compliant than copying the KJV input."""
    from tsteval.readers.bible import load_bible

    books = ["Ruth", "Jonah", "Micah", "James"]
    kjv, bbe = (load_bible(v).loc[lambda f: f["book"].isin(books)] for v in ("KJV", "BBE"))
    joined = kjv.merge(bbe, on=["book", "chapter", "verse"], suffixes=("_kjv", "_bbe"))
    for name, column in (("kjv", "text_kjv"), ("bbe", "text_bbe")):
        (tmp_path / f"{name}.txt").write_text("\n".join(joined[column]) + "\n")
    assert main(["train-pairs", "features", "--left", str(tmp_path / "kjv.txt"), "--right", str(tmp_path / "bbe.txt"),
                 "--out", str(tmp_path / "hh")]) == 0
    assert main(["train-classifier", "tfidf-lr", "--style", f"KJV={tmp_path / 'kjv.txt'}",
                 "--style", f"BBE={tmp_path / 'bbe.txt'}", "--out", str(tmp_path / "style"), "--quiet"]) == 0
    test = joined[joined["book"] == "Ruth"].head(40)
    rows = [{"system": system, "setting": "-", "item": i, "input": a, "output": b, "source_style": "KJV",
             "target_style": "BBE"} for system, outputs in (("gold", test["text_bbe"]), ("copy", test["text_kjv"]))
            for i, (a, b) in enumerate(zip(test["text_kjv"], outputs, strict=True))]
    pd.DataFrame(rows).to_csv(tmp_path / "transfers.csv", index=False)
    out = tmp_path / "run"
    assert main(["compliancy", "--transfers", str(tmp_path / "transfers.csv"), "--style-classifier",
                 str(tmp_path / "style"), "--hh", str(tmp_path / "hh"), "--out", str(out)]) == 0
    scored = pd.read_csv(out / "compliancy.csv")
    rate = scored.groupby("system")["compliant"].mean()
    assert rate["gold"] > 0.5 and rate["copy"] == 0.0
    assert (out / "summary.md").read_text().count("gold") >= 1
    assert main(["score", "--table", str(tmp_path / "transfers.csv"), "--hh", f"hh={tmp_path / 'hh'}",
                 "--out", str(tmp_path / "scored"), "--quiet"]) == 0
    card = pd.read_csv(tmp_path / "scored" / "scorecard.csv")
    assert card["hh@hh"].between(0, 1).all() and card.loc[card["system"] == "gold", "hh@hh"].mean() > 0.5


def test_score_naturalness_columns(trained: Path, tmp_path: Path, yelp_slice: tuple[list[str], list[str]]) -> None:
    texts = yelp_slice[0][:30]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(" ".join(reversed(t.split())) for t in texts) + "\n")
    out = tmp_path / "run"
    assert main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "0",
                 "--target-style", "1", "--naturalness", "unigram,unigram-pooled,kn3", "--folds", "3",
                 "--human", str(trained / "train.1"), "--threads", "1", "--out", str(out), "--quiet"]) == 0
    card = pd.read_csv(out / "scorecard.csv")
    assert card["naturalness@unigram"].between(0, 1).all()
    assert card["naturalness_pooled@unigram"].between(0, 1).all()
    assert set(card["more_natural@unigram"]) <= {0.0, 0.5, 1.0}
    assert (card["ppl@kn3"] > 1).all() and card["ppl@kn3"].notna().all()
    assert (card["lp_mean@kn3"] < 0).all() and card["slor@kn3"].notna().all()
