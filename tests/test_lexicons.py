"""Lexicon building (Mir et al. 2019, A.1), storage, evaluation and text modification, on real data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import cds_corpus

from tsteval.core.cache import cache_root
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import Corpus
from tsteval.lexicons.builder import LexiconModel, build_lexicon
from tsteval.lexicons.evaluate import compare_to_reference, read_word_list
from tsteval.lexicons.lexicon import Lexicon
from tsteval.lexicons.modify import modify_texts, modify_texts_with_emptied

CDS_STYLES = ("bible", "shakespeare", "switchboard")


@pytest.fixture(scope="module")
def yelp_corpus(yelp_slice: tuple[list[str], list[str]]) -> Corpus:
    texts, labels = yelp_slice
    return Corpus(texts, labels, "yelp/sentiment.dev")


@pytest.fixture(scope="module")
def models(yelp_corpus: Corpus) -> dict[str | None, LexiconModel]:
    """One fit per penalty on the Yelp slice (4,000 sentences)."""
    return {penalty: LexiconModel(penalty, C=1.0).fit(yelp_corpus) for penalty in ("l1", "l2", None)}


# The unpenalised weights spread much wider (|w| up to ~40), so "rude" (-8.9) lies only beyond 1 sd there.
@pytest.mark.parametrize(("penalty", "d"), [("l1", 2.0), ("l2", 2.0), (None, 1.0)])
def test_builder_finds_sentiment_words_with_signs(models: dict, penalty: str | None, d: float) -> None:
    lexicon = models[penalty].select(d)
    positive, negative = dict(lexicon.for_style("1")), dict(lexicon.for_style("0"))
    for word in ("great", "delicious"):
        assert positive[word] > 0
    for word in ("worst", "rude"):
        assert negative[word] < 0
    assert all(w > 0 for w in positive.values()) and all(w < 0 for w in negative.values())
    assert not set(positive) & set(negative)


@pytest.mark.parametrize("penalty", ["l1", "l2", None])
def test_larger_d_gives_a_subset(models: dict, penalty: str | None) -> None:
    lexicons = [models[penalty].select(d) for d in (1.0, 1.5, 2.0, 2.5, 3.0)]
    for looser, stricter in zip(lexicons, lexicons[1:], strict=False):
        for style in ("0", "1"):
            assert set(stricter.for_style(style)) <= set(looser.for_style(style))
    assert len(lexicons[-1]) < len(lexicons[0])


def test_mean_and_sd_are_over_nonzero_weights(models: dict) -> None:
    model = models["l1"]
    weights = model.weights_[0]
    nonzero = weights[weights != 0]
    high = nonzero.mean() + 2 * nonzero.std()
    expected = {str(w) for w, x in zip(model.vocabulary_, weights, strict=True) if x >= high}
    assert set(dict(model.select(2.0).for_style("1"))) == expected


def test_l1_gives_fewer_nonzero_weights_than_l2(models: dict) -> None:
    assert models["l1"].nonzero_weights < models["l2"].nonzero_weights / 3
    assert models["l2"].nonzero_weights == models["l2"].weights_.size


def test_build_lexicon_equals_model_select_and_fit_is_cached(yelp_corpus: Corpus, models: dict) -> None:
    assert build_lexicon(yelp_corpus, "l2", C=1.0, D=2.0) == models["l2"].select(2.0)
    assert any((cache_root() / "lexicon-fits").iterdir())
    uncached = LexiconModel("l2", C=1.0, use_cache=False).fit(yelp_corpus)
    assert np.allclose(uncached.weights_, models["l2"].weights_)
    assert list(uncached.vocabulary_) == list(models["l2"].vocabulary_)


def test_one_style_corpus_is_a_clear_error() -> None:
    with pytest.raises(InputError, match="single style"):
        build_lexicon(Corpus(["good food", "bad food"], ["1", "1"], "one.txt"))


def test_bad_parameters_are_clear_errors(models: dict) -> None:
    with pytest.raises(TstevalError, match="penalty"):
        LexiconModel("l3")
    with pytest.raises(TstevalError, match="D must be positive"):
        models["l2"].select(0)


def test_one_vs_rest_on_three_cds_styles(data_root: Path) -> None:
    model = LexiconModel("l2").fit(cds_corpus(data_root, CDS_STYLES, 300))
    assert model.weights_.shape[0] == 3
    lexicon = model.select(2.0)
    assert lexicon.styles == sorted(CDS_STYLES)
    for style in CDS_STYLES:
        pairs = lexicon.for_style(style)
        assert len(pairs) >= 10 and all(weight > 0 for _, weight in pairs)
    assert "thou" in dict(lexicon.for_style("shakespeare")) or "thou" in dict(lexicon.for_style("bible"))
    assert "uh" in dict(lexicon.for_style("switchboard"))


def test_json_round_trip_keeps_order_and_weights(tmp_path: Path) -> None:
    lexicon = Lexicon({"1": [("good", 1.5), ("great", 3.0)], "0": [("bad", -2.0), ("awful", -4.0)]})
    assert [w for w, _ in lexicon.for_style("1")] == ["great", "good"]
    loaded = Lexicon.load(lexicon.save(tmp_path / "sub" / "lex.json"))
    assert loaded == lexicon
    assert loaded.words == {"good", "great", "bad", "awful"}
    assert json.loads((tmp_path / "sub" / "lex.json").read_text())["0"][0] == ["awful", -4.0]


def test_mir_published_lexicon_loads(data_root: Path) -> None:
    lexicon = Lexicon.load(data_root / "mir2019" / "style_lexicon" / "style_words_and_weights.json")
    assert lexicon.styles == ["binary sentiment"]
    assert len(lexicon.words) == 433
    pairs = lexicon.for_style("binary sentiment")
    assert [word for word, _ in pairs[:3]] == ["ruined", "refreshing", "worst"]
    assert pairs[0][1] == pytest.approx(-11.4853, abs=1e-4)
    assert dict(pairs)["worst"] < 0 < dict(pairs)["refreshing"]


@pytest.mark.parametrize(("content", "message"), [
    ('{"pos": [["good", 1.0],]}', r"lex\.json:1: the lexicon is not valid JSON"),
    ('[["good", 1.0]]', "expected a JSON object"),
    ('{"pos": [["good"]]}', r"expected \[word, weight\]"),
    ('{"pos": [["Good Food", 1.0]]}', "not one lower-cased token"),
    ('{"pos": [["good", "high"]]}', "not a finite number"),
    ('{"pos": [["good", 1.0], ["good", 2.0]]}', "appears twice"),
])
def test_malformed_lexicon_files_name_the_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "lex.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as error:
        Lexicon.load(path)
    assert "lex.json" in str(error.value)


def test_unknown_style_is_a_clear_error() -> None:
    with pytest.raises(TstevalError, match="no style 'neutral'"):
        Lexicon({"1": [("good", 1.0)]}).for_style("neutral")


def test_precision_recall_by_hand() -> None:
    lexicon = Lexicon({"1": [("a", 1.0), ("b", 2.0)], "0": [("c", -1.0), ("d", -3.0)]})
    result = compare_to_reference(lexicon, {"b", "c", "e"}, vocabulary={"a", "b", "c", "d", "x"})
    assert result["size"] == 4 and result["reference_size"] == 3 and result["overlap"] == 2
    assert result["precision"] == pytest.approx(0.5)
    assert result["recall"] == pytest.approx(2 / 3)
    assert result["f1"] == pytest.approx(4 / 7)
    assert result["reference_in_vocabulary"] == 2 and result["recall_in_vocabulary"] == pytest.approx(1.0)
    empty = compare_to_reference(set(), {"a"})
    assert empty["precision"] is None and empty["recall"] == 0.0 and empty["f1"] is None


def test_read_liu_word_lists_skips_comments_and_decodes_latin1(data_root: Path) -> None:
    folder = data_root / "wnc" / "lexicons"
    negative = read_word_list(folder / "negative_liu2005.txt")
    positive = read_word_list(folder / "positive_liu2005.txt")
    assert "naïve" in negative and "worst" in negative and "great" in positive
    assert not any(w.startswith(";") or not w for w in negative | positive)
    assert len(positive) > 2000 and len(negative) > 4700


def test_read_word_list_utf8_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_text("; comment\n\nCafé\r\nbad\n", encoding="utf-8")
    assert read_word_list(path) == {"café", "bad"}
    path.write_text("; only a comment\n")
    with pytest.raises(InputError, match="no words"):
        read_word_list(path)


def test_modify_texts_reproduces_mir_table_3_1() -> None:
    texts = ["I love ya , tomorrow!", "I hate ya , today!"]
    words = {"love", "hate"}
    assert modify_texts(texts, None, "none") == ["i love ya , tomorrow !", "i hate ya , today !"]
    assert modify_texts(texts, words, "remove") == ["i ya , tomorrow !", "i ya , today !"]
    assert modify_texts(texts, words, "mask") == ["i <masked> ya , tomorrow !", "i <masked> ya , today !"]
    lexicon = Lexicon({"1": [("love", 2.0)], "0": [("hate", -2.0)]})
    assert modify_texts(texts, lexicon, "mask", placeholder="<style>") == ["i <style> ya , tomorrow !",
                                                                         "i <style> ya , today !"]


def test_text_emptied_by_removal_becomes_empty_string_and_is_flagged() -> None:
    texts = ["Love , hate", "i love it", ""]
    modified, emptied = modify_texts_with_emptied(texts, {"love", "hate", ","}, "remove")
    assert modified == ["", "i it", ""]
    assert emptied.tolist() == [True, False, False]
    masked, none_emptied = modify_texts_with_emptied(texts, {"love", "hate"}, "mask")
    assert masked[0] == "<masked> , <masked>" and not none_emptied.any()


def test_repeated_texts_are_modified_once_and_share_the_result() -> None:
    """Repeats (an input scored against many systems' outputs) share one modified string; the values equal those
    of modifying each text alone, and the emptied flag follows every repeat."""
    texts = ["Love , hate", "i love it", "Love , hate", "i love it", "i love it"]
    modified, emptied = modify_texts_with_emptied(texts, {"love", "hate", ","}, "remove")
    assert modified == [modify_texts([t], {"love", "hate", ","}, "remove")[0] for t in texts]
    assert modified[1] is modified[3] is modified[4] and modified[0] is modified[2]
    assert emptied.tolist() == [True, False, True, False, False]


def test_modify_texts_errors() -> None:
    with pytest.raises(TstevalError, match="needs a lexicon"):
        modify_texts(["a"], None, "remove")
    with pytest.raises(TstevalError, match="mode must be"):
        modify_texts(["a"], {"a"}, "blank")  # type: ignore[arg-type]
    with pytest.raises(TstevalError, match="placeholder"):
        modify_texts(["a"], {"a"}, "mask", placeholder="[MASK] x")
    with pytest.raises(InputError, match="not one string"):
        modify_texts("a text", {"a"}, "remove")
