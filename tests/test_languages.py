"""The run's language: one run option read by every front end, recorded in the signatures of language-dependent
metrics, a warning line for each metric whose model does not cover it and for texts in another script."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tsteval
from tsteval.core.errors import TstevalError
from tsteval.experiment.options import OPTIONS
from tsteval.metrics.languages import coverage, coverage_warnings, is_language_dependent

RU_IN = ["какой дебил это придумал", "ну и бред вы пишете"]
RU_OUT = ["кто это придумал", "это странно"]


def _score(capsys: pytest.CaptureFixture, **options: object) -> tuple[object, str]:
    card = tsteval.evaluate(RU_IN, RU_OUT, source_style="toxic", target_style="neutral", metrics=["chrf", "bleu",
                            "meteor"], **options)
    return card, capsys.readouterr().err


def test_the_language_is_one_run_option_of_every_front_end(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tsteval.cli.main import main
    from tsteval.experiment.manifest.loader import ManifestError, load_manifest
    from tsteval.experiment.plan.plan import Plan

    option = OPTIONS["language"]
    assert option.default == "en" and option.flag == "--language" and option.manifest == "language"
    assert option.read("RU") == "ru"
    with pytest.raises(TstevalError, match="language must be an ISO 639 language code such as en, ru, hi or zh, "
                                           "not 'Russian'"):
        option.read("Russian")
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "--language CODE" in capsys.readouterr().out
    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\nну и бред,это странно,0,1\n")
    (tmp_path / "m.yaml").write_text("transfers: {table: t.csv}\nmetrics: {content: {metrics: [chrf]}}\nlanguage: ru\n")
    assert Plan.from_manifest(load_manifest(tmp_path / "m.yaml")).language == "ru"
    (tmp_path / "m.yaml").write_text("transfers: {table: t.csv}\nmetrics: {content: {metrics: [chrf]}}\nlanguage: 7\n")
    with pytest.raises(ManifestError, match="language must be an ISO 639 language code"):
        load_manifest(tmp_path / "m.yaml")


def test_a_metric_whose_model_lacks_the_language_says_so_and_its_signature_records_it(
        capsys: pytest.CaptureFixture) -> None:
    card, err = _score(capsys, language="ru")
    meteor = [line for line in err.splitlines() if "meteor" in line]
    assert meteor == ["tsteval: warning: meteor: the Porter stemmer and WordNet 3.0 does not cover ru (it covers en "
                      "only), so its scores are not validated for ru text (scored anyway; its signature says "
                      "lang:ru)"]
    assert "chrf" not in err and "bleu:" not in err and "letters are" not in err
    assert card.signatures["meteor@none"].startswith("metric:meteor|lang:ru|")
    assert card.signatures["bleu@none"].startswith("metric:bleu|lang:ru|")
    assert "lang:" not in card.signatures["chrf@none"]  # characters: no model of a language


def test_the_default_english_on_cyrillic_text_says_so(capsys: pytest.CaptureFixture) -> None:
    card, err = _score(capsys)
    assert "tsteval: warning: 100% of the texts' letters are Cyrillic but the run's language is en: declare" in err
    assert "meteor:" not in err and card.signatures["meteor@none"].startswith("metric:meteor|lang:en|")


def test_coverage_of_the_models() -> None:
    assert not coverage("sbert").covers("hi") and coverage("sbert").covers("en")
    assert not coverage("bertscore_f1").covers("ru") and not coverage("wmd").covers("ru")
    assert coverage("wmd", vectors="word2vec") is None  # trained on the run's corpus
    assert not coverage("lp_mean").covers("ru")  # SmolLM2 by default
    assert coverage("lp_mean", language_model="gemma3-270m").covers("te")
    assert coverage("judge_content", language_model="qwen2.5-coder-1.5b").covers("ru")
    assert not coverage("judge_content", language_model="qwen2.5-coder-1.5b").covers("te")
    assert coverage("ppl", language_model="org/my-model").covers("te")  # a user's model: theirs to know
    assert not coverage("bleu").covers("th") and coverage("bleu").covers("hi")
    assert coverage_warnings(["chrf", "sti", "naturalness"], "zh") == []
    assert is_language_dependent("sbert") and not is_language_dependent("chrf")


def test_under_a_server_the_default_lm_is_the_served_one_and_not_warned_about() -> None:
    from tsteval.core.records import Transfers
    from tsteval.experiment.plan.plan import Plan
    from tsteval.metrics.languages import plan_warnings

    transfers = Transfers.from_pairs(RU_IN, RU_OUT, source_style="toxic", target_style="neutral")
    local = plan_warnings(Plan(transfers, judges=("judge_content",), language="ru"))
    assert [line.split(":")[0] for line in local] == ["judge_content"]  # SmolLM2 in process: English only
    served = Plan(transfers, judges=("judge_content",), language="ru", lm_endpoint="http://127.0.0.1:9/v1")
    assert plan_warnings(served) == []  # the server's model: its languages are not known here
    named = Plan(transfers, judges=("judge_content",), language="ru", lm_endpoint="http://127.0.0.1:9/v1",
                 language_model="smollm2")
    assert [line.split(":")[0] for line in plan_warnings(named)] == ["judge_content"]  # named: SmolLM2 served


def test_the_joint_score_hashes_its_parts_signatures_with_the_language(capsys: pytest.CaptureFixture) -> None:
    from tsteval.core.signature import content_hash

    corpus = {"toxic": ["какой дебил", "ну и бред", "тупой идиот", "заткнись дурак"],
              "neutral": ["кто это", "это странно", "добрый день", "спасибо большое"]}
    card = tsteval.evaluate(RU_IN, RU_OUT, source_style="toxic", target_style="neutral",
                            metrics=["target_acc", "meteor", "ppl"], classifier="tfidf-lr", corpus=corpus,
                            joint="j=target_acc@clf,meteor@none,ppl@kn3<=1000000", language="ru")
    parts = [card.signatures[c] for c in ("target_acc@clf", "meteor@none", "ppl@kn3")]
    assert "lang:ru" in parts[1]
    expected = content_hash("\n".join(parts), length=len(card.signatures["joint@j"].split("parts:")[1].split("|")[0]))
    assert f"parts:{expected}" in card.signatures["joint@j"]


def test_a_sentence_encoder_of_ones_own_scores_sbert_and_bertscore(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """``encoder=`` (``--encoder``, ``metrics.content.encoder``): a Hugging Face id or folder for sbert, BERTScore
    and erase, loaded through transformers.  Given the packaged MiniLM's files without the ``tokenizer.json`` the
    lean path reads (so transformers' own tokenizer and model load them), the scores are the default's and the
    signature names its files (``local@HASH``: not the packaged model's, one file fewer); the packaged encoder's
    English-only warning is not said of it (its languages are the user's to know); an encoder that cannot load is
    one error line, and nothing is written."""
    import shutil

    from tsteval.metrics.content.sentence_embedding import default_model

    folder = tmp_path / "my-encoder"
    shutil.copytree(default_model(), folder)
    (folder / "tokenizer.json").unlink()
    inputs, outputs = ["Еда была холодной.", "Персонал был груб."], ["Еда была горячей.", "Персонал был вежлив."]
    given = {"source_style": "0", "target_style": "1", "metrics": ["sbert", "bertscore_f1"], "language": "ru"}
    default = tsteval.evaluate(inputs, outputs, **given)
    assert "sbert: all-MiniLM-L6-v2 (packaged) does not cover ru" in capsys.readouterr().err
    mine = tsteval.evaluate(inputs, outputs, **given, encoder=str(folder))
    assert "does not cover" not in capsys.readouterr().err
    for column in ("sbert@none", "bertscore_f1@none"):
        np.testing.assert_allclose(mine.frame[column], default.frame[column], atol=1e-5)
        assert "model:local@" in mine.signatures[column] and "model:all-MiniLM" in default.signatures[column]
    missing = str(tmp_path / "missing" / "encoder")
    with pytest.raises(TstevalError, match="cannot load the sentence encoder"):
        tsteval.evaluate(inputs, outputs, **given, encoder=missing)
    (tmp_path / "in.txt").write_text("\n".join(inputs) + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    from tsteval.cli.main import main

    assert main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "0",
                 "--target-style", "1", "--content", "sbert", "--encoder", missing, "--out",
                 str(tmp_path / "run")]) == 2
    assert "cannot load the sentence encoder" in capsys.readouterr().err and not (tmp_path / "run").exists()
