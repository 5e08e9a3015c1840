"""Content-preservation metrics against independent computations, published values and the empty/OOV policy."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import ot
import pandas as pd
import pytest
import sacrebleu
from nltk.corpus.reader.wordnet import WordNetCorpusReader
from nltk.translate.meteor_score import meteor_score

from tsteval.core.errors import TstevalError
from tsteval.core.tokenize import tokenize
from tsteval.lexicons.lexicon import Lexicon
from tsteval.lexicons.modify import modify_texts
from tsteval.metrics.content import embedding_metrics as em
from tsteval.metrics.content.overlap import MIR_BLEU, corpus_bleu, meteor, rouge_l, sentence_bleu, sentence_chrf
from tsteval.metrics.content.policy import MAX_DISTANCE
from tsteval.metrics.content.scorer import score_content
from tsteval.metrics.content.sentence_embedding import encode, sentence_cosine
from tsteval.metrics.content.wmd import mir_normalized_inverse, wmd, wmd_similarity
from tsteval.metrics.content.word_vectors import WordVectors, load_glove, train_word2vec
from tsteval.metrics.content.wordnet import load_wordnet, wordnet_dir
from tsteval.metrics.resources import ResourceOptions, Resources
from tsteval.scorecard import Scorecard

PAIRS = [("the food was good and cheap .", "the food was bad and cheap ."),
         ("i love this place !", "i hate this place !"),
         ("service was slow", "the service was really slow today"),
         ("great pizza", "great pizza")]


def _j(text: str) -> str:
    return " ".join(tokenize(text))


@pytest.fixture(scope="module")
def mir(data_root: Path) -> tuple[list[str], list[str], dict[str, np.ndarray]]:
    """Mir et al.'s CAAE rho=0.5 inputs, outputs and stored unmasked sentence scores."""
    root = data_root / "mir2019"
    ins = [line.strip() for f in "01" for line in open(root / f"data/sentiment.test.{f}", encoding="utf-8")]
    outs = [line.rstrip("\n") for f in "01"
            for line in open(root / f"transfer_model_outputs/CAAE/rho_0_5/sentiment.test.{f}.tsf", encoding="utf-8")]
    path = root / "evaluations/automated/content_preservation/sentence_level/CAAE_rho_0_5.npz"
    stored = np.load(path, allow_pickle=True)["unmasked"].item()
    return ins, outs, {k: np.asarray(v) for k, v in stored.items()}


@pytest.fixture(scope="module")
def glove() -> WordVectors:
    return load_glove()


@pytest.fixture(scope="module")
def toy() -> WordVectors:
    """Tiny 2-D vocabulary for hand computations."""
    return WordVectors({"a": 0, "b": 1, "c": 2}, np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32), "toy")


def test_bleu_equals_sacrebleu() -> None:
    refs, hyps = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    for smooth in ("exp", "floor", "add-k", "none"):
        ours = sentence_bleu(refs, hyps, smooth_method=smooth).values
        theirs = [sacrebleu.sentence_bleu(_j(h), [_j(r)], smooth_method=smooth, tokenize="none").score
                  for r, h in zip(refs, hyps, strict=True)]
        np.testing.assert_allclose(ours, theirs, atol=1e-9)
    expected = sacrebleu.corpus_bleu([_j(h) for h in hyps], [[_j(r) for r in refs]], tokenize="none").score
    assert corpus_bleu(refs, hyps) == pytest.approx(expected, abs=1e-9)


def test_chrf_equals_sacrebleu() -> None:
    refs, hyps = [p[0] for p in PAIRS], [p[1] for p in PAIRS]
    theirs = [sacrebleu.sentence_chrf(_j(h), [_j(r)]).score for r, h in zip(refs, hyps, strict=True)]
    np.testing.assert_allclose(sentence_chrf(refs, hyps).values, theirs, atol=1e-9)


def test_rouge_l_hand_example() -> None:
    # LCS("the cat sat on the mat", "the cat lay on a mat") = the cat on mat = 4; P = R = 4/6.
    assert rouge_l(["the cat sat on the mat"], ["the cat lay on a mat"]).values[0] == pytest.approx(4 / 6)


def test_wordnet_from_debian_files() -> None:
    wn = load_wordnet()
    assert "domestic_dog" in wn.synset("dog.n.01").lemma_names()
    assert wn.synset("dog.n.01").lexname() == "noun.animal"
    assert (wordnet_dir() / "lexnames").read_text().count("\n") == 45


def test_wordnet_is_read_and_verified_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from tsteval.metrics.content import wordnet

    first = load_wordnet()
    checks = []
    monkeypatch.setattr(wordnet, "wordnet_dir", lambda source=None: checks.append(source) or wordnet_dir(source))
    assert load_wordnet() is first
    meteor(["the auto was red"], ["the car was red"])
    assert checks == []  # no second verification of the ~30 MB cached copy, no second reader


class NltkWordNet(WordNetCorpusReader):
    """NLTK's own reader (its own parse of the index and exception files), without the nltk_data mapping."""

    def map_wn(self, version: str = "wordnet") -> None:
        return None


def _open_wordnet(reader: type[WordNetCorpusReader], root: str) -> WordNetCorpusReader:
    """``reader`` over the database at ``root``, without NLTK's notice that multilingual data is absent."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return reader(root, None)


def test_wordnet_index_is_parsed_once_per_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lemma index parsed from the four index files is kept in the cache; a later process (here: a new
    reader) reads it from there.  Parsed or read back, it equals NLTK's own parse of the same files in every
    lemma, part of speech and offset list and in their order, as do the satellite offsets and exception lists."""
    import nltk.data

    from tsteval.metrics.content import wordnet

    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path))
    root = str(wordnet_dir())
    monkeypatch.setattr(nltk.data, "path", [*nltk.data.path, root])  # NLTK reads only below its data path
    parses, parse = [], wordnet.lemma_index
    monkeypatch.setattr(wordnet, "lemma_index", lambda *args: parses.append(1) or parse(*args))
    first, second = (_open_wordnet(wordnet.DebianWordNetReader, root) for _ in range(2))
    assert parses == [1] and len(list((tmp_path / "wordnet-index").iterdir())) == 1
    theirs = _open_wordnet(NltkWordNet, root)
    expected = theirs._lemma_pos_offset_map
    for ours in (first, second):
        index = ours._lemma_pos_offset_map
        assert type(index) is type(expected) and index.default_factory is dict
        assert index == expected and list(index) == list(expected)
        assert all(list(index[lemma]) == list(poses) for lemma, poses in expected.items())
        assert ours.satellite_offsets == theirs.satellite_offsets
        assert ours._exception_map == theirs._exception_map and ours._exception_map["s"] is ours._exception_map["a"]
    assert expected["dog"]["n"] and expected["galore"]["s"] and expected["good"]["s"] != expected["good"]["a"]
    assert second.synsets("quick") == theirs.synsets("quick") and second.synsets("quick")


def test_lemma_names_of_equals_nltk_synsets(mir: tuple) -> None:
    """The lemma names read from the data files equal those of NLTK's ``Synset`` objects, for every word and
    Porter stem of Mir's pairs, irregular and inflected forms, words with syntactic markers (``galore(ip)``) and
    every 40th lemma of the index."""
    from nltk.stem.porter import PorterStemmer

    wn = load_wordnet()
    ins, outs, _ = mir
    tokens = {token for text in ins + outs for token in tokenize(text)}
    stemmer = PorterStemmer()
    words = (tokens | {stemmer.stem(token) for token in tokens} | set(list(wn._lemma_pos_offset_map)[::40])
             | {"geese", "better", "ran", "Dogs", "quickest", "feet", "went", "galore", "outback", "handy", "", "'s"})
    for word in sorted(words):
        assert wn.lemma_names_of(word) == {lemma.name() for s in wn.synsets(word) for lemma in s.lemmas()}, word
    assert "galore" in wn.lemma_names_of("abounding") and "outback" in wn.lemma_names_of("remote")


def test_lemma_index_names_a_malformed_line(tmp_path: Path) -> None:
    """A line whose sense count is not its synset count stops the parse with the file and line, as in NLTK."""
    from nltk.corpus.reader.wordnet import WordNetError

    from tsteval.metrics.content.wordnet import lemma_index

    for suffix in ("adj", "adv", "noun", "verb"):
        (tmp_path / f"index.{suffix}").write_text("  licence line\ndog n 1 0 1 0 02084071\n")
    assert lemma_index(tmp_path, set())["dog"] == {"n": [2084071]}
    (tmp_path / "index.noun").write_text("  licence line\ndog n 1 0 1 0 02084071\ncat n 2 0 1 0 02121620 02121808\n")
    with pytest.raises(WordNetError, match="file index.noun, line 3"):
        lemma_index(tmp_path, set())


def test_collector_paused_restores_its_state() -> None:
    import gc

    from tsteval.metrics.content.wordnet import collector_paused

    enabled = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            with collector_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is state
    finally:
        (gc.enable if enabled else gc.disable)()


def test_wordnet_missing_names_package(tmp_path: Path) -> None:
    with pytest.raises(TstevalError, match="wordnet-base"):
        wordnet_dir(tmp_path)


def test_meteor_equals_nltk_and_uses_synonyms(mir: tuple, data_root: Path) -> None:
    """Bit-identical to NLTK's meteor_score on Mir's pairs, plain and with style words masked, and on pairs with
    repeated words and several synonyms of one word."""
    ins, outs, _ = mir
    lexicon = Lexicon.load(data_root / "mir2019/style_lexicon/style_words_and_weights.json")
    masked_ins, masked_outs = (modify_texts(texts, lexicon, "mask") for texts in (ins, outs))
    tricky = [("the the cat sat on the mat the", "the cat the mat on sat the the"),
              ("the automobile car auto was red red", "auto car the car was crimson red"),
              ("good good food", "well good nice beneficial food good")]
    refs = ins + masked_ins + [r for r, _ in tricky]
    hyps = outs + masked_outs + [h for _, h in tricky]
    wn = load_wordnet()
    theirs = [meteor_score([tokenize(r)], tokenize(h), wordnet=wn) for r, h in zip(refs, hyps, strict=True)]
    np.testing.assert_array_equal(meteor(refs, hyps).values, theirs)
    refs, hyps = ["the auto was red", "the auto was red"], ["the car was red", "the bus was red"]
    with_synonym, without = meteor(refs, hyps).values
    assert with_synonym == pytest.approx(meteor(["the car was red"], ["the car was red"]).values[0])
    assert with_synonym > without


def test_mir_stored_bleu_reproduced(mir: tuple) -> None:
    """sacreBLEU floor smoothing 0.01 without effective order on our tokens reproduces Mir's stored BLEU.

    243/244 agree to 1e-3; item 16 differs because Mir's tokenizer splits ``9pm`` (ref length 11, not 10).
    """
    ins, outs, stored = mir
    agree = np.abs(sentence_bleu(ins, outs, **MIR_BLEU).values - stored["BLEU"]) < 1e-3
    assert agree.sum() >= 243


def test_mir_stored_meteor_only_correlates(mir: tuple) -> None:
    """No NLTK METEOR variant reproduces Mir's stored METEOR (their values are far lower: an identical-but-one
    -word pair scores 0.26); they are different definitions (likely the METEOR 1.5 jar).  Observed on CAAE
    rho=0.5: Pearson 0.82, Spearman 0.92 with NLTK defaults."""
    ins, outs, stored = mir
    ours = meteor(ins, outs).values
    assert np.corrcoef(ours, stored["METEOR"])[0, 1] > 0.8
    assert pd.Series(ours).corr(pd.Series(stored["METEOR"]), method="spearman") > 0.9


def test_wmd_hand_and_ot(toy: WordVectors) -> None:
    # "a a b" vs "c": half... a->c costs 2 (weight 2/3), b->c costs sqrt(2) (1/3).
    value = wmd(["a a b"], ["c"], toy).values[0]
    assert value == pytest.approx(2 * 2 / 3 + np.sqrt(2) / 3)
    direct = ot.emd2(np.array([2 / 3, 1 / 3]), np.array([1.0]), np.array([[2.0], [np.sqrt(2)]]))
    assert value == pytest.approx(direct)
    assert wmd(["a b"], ["b a"], toy).values[0] == 0.0


def test_wmd_matches_gensim(glove: WordVectors, mir: tuple) -> None:
    from gensim.models import KeyedVectors

    ins, outs, _ = mir
    words = sorted({t for text in ins + outs for t in tokenize(text) if t in glove.vocab})
    kv = KeyedVectors(vector_size=glove.vectors.shape[1])
    kv.add_vectors(words, glove.vectors[[glove.vocab[w] for w in words]])
    theirs = np.array([kv.wmdistance(tokenize(r), tokenize(h)) for r, h in zip(ins[:60], outs[:60], strict=True)])
    ours = wmd(ins[:60], outs[:60], glove).values
    finite = np.isfinite(theirs) & (theirs > 0)
    np.testing.assert_allclose(ours[finite], theirs[finite], atol=1e-6)


def test_embedding_metrics_hand(toy: WordVectors) -> None:
    # "a b" vs "a": average (1,1)/2 vs (1,0) -> cos 1/sqrt2; greedy: a->1, b->0 => 0.5; back a->1 => 1; mean 0.75.
    assert em.embedding_average(["a b"], ["a"], toy).values[0] == pytest.approx(1 / np.sqrt(2))
    assert em.greedy_matching(["a b"], ["a"], toy).values[0] == pytest.approx(0.75)
    # extrema of "b c": dim0 -1 (|-1| > 0), dim1 1 -> (-1, 1); of "a": (1, 0) -> cos -1/sqrt2.
    assert em.vector_extrema(["b c"], ["a"], toy).values[0] == pytest.approx(-1 / np.sqrt(2))


def test_embedding_metrics_batched_equal_loop(glove: WordVectors, mir: tuple) -> None:
    ins, outs, _ = mir
    for fn in (em.embedding_average, em.greedy_matching, em.vector_extrema):
        batched = fn(ins[:40], outs[:40], glove).values
        single = [fn([r], [h], glove).values[0] for r, h in zip(ins[:40], outs[:40], strict=True)]
        np.testing.assert_allclose(batched, single, atol=1e-6)


@pytest.mark.parametrize("name", ["bleu", "chrf", "meteor", "rougeL", "embed_avg", "greedy", "extrema", "wmd",
                                  "sbert"])
def test_empty_and_oov_policy(name: str, toy: WordVectors) -> None:
    from tsteval.metrics.registry import METRICS

    spec = METRICS[name]
    kwargs = {"word_vectors": toy} if "word_vectors" in spec.needs else {}
    refs, hyps = ["", "", "a b", "zz", "zz"], ["", "a", "", "a", "zz"]
    result = spec.function()(refs, hyps, **kwargs)
    best, worst = (0.0, MAX_DISTANCE) if name == "wmd" else ((100.0 if name in ("bleu", "chrf") else 1.0), 0.0)
    expected = [best, worst, worst]
    assert result.values[:3].tolist() == expected
    assert result.counts.n_both_empty == 1 and result.counts.n_one_empty == 2
    if "word_vectors" in spec.needs:
        assert result.values[3:].tolist() == [worst, best] and result.counts.n_all_oov == 2


def test_mir_normalized_inverse_and_similarity() -> None:
    out = mir_normalized_inverse([1.0, 2.0])
    np.testing.assert_allclose(out, np.array([1.0, 0.5]) / np.sqrt(1.25))
    with pytest.raises(TstevalError):
        mir_normalized_inverse([0.0, 1.0])
    np.testing.assert_allclose(wmd_similarity([0.0, 2.0]), [1.0, 0.0])


def test_sentence_embedding_unit_and_identity() -> None:
    emb = encode(["the food was good", "the food was good", "parking is impossible"])
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    values = sentence_cosine(["the food was good", "the food was good"], ["the food was good", "parking"]).values
    assert values[0] == pytest.approx(1.0, abs=1e-5) and values[1] < 0.6


def test_identical_texts_tie_at_the_maximum_of_every_neural_metric(data_root: Path) -> None:
    """A float32 cosine of a text with itself is 1 only up to its last digit, by text (measured here on Lai's inputs:
    numpy's dot of the unit embeddings); the policy makes every identical pair 1 exactly, so identical pairs tie."""
    from tsteval.metrics.content.bertscore import bertscore_f1
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder

    texts = list(dict.fromkeys(pd.read_json(data_root / "lai2022" / "fluency.json", lines=True)["src"]
                               .astype(str)))[:60]
    units = encode(texts)
    assert len(np.unique((units * units).sum(1))) > 1  # what the metric would tie without the policy
    assert np.array_equal(sentence_cosine(texts, texts).values, np.ones(len(texts)))
    assert np.array_equal(bertscore_f1(texts, texts, SentenceEncoder(None)).values, np.ones(len(texts)))
    other = sentence_cosine(texts[:3], texts[1:4]).values
    assert np.allclose(other, (units[:3] * units[1:4]).sum(1), atol=1e-6) and np.all(other < 1)


def test_train_word2vec_cached_and_deterministic(yelp_slice: tuple) -> None:
    texts = yelp_slice[0][:800]
    first = train_word2vec(texts, seed=0, vector_size=16, min_count=3, epochs=2)
    second = train_word2vec(texts, seed=0, vector_size=16, min_count=3, epochs=2)
    assert first.hash == second.hash and np.array_equal(first.vectors, second.vectors)
    assert "the" in first.vocab and first.vectors.dtype == np.float32


def test_score_content_columns_and_signatures(toy: WordVectors) -> None:
    frame = pd.DataFrame({"system": "s", "setting": "x", "item": [0, 1],
                          "input": ["a good b", "good"], "output": ["a bad b", "bad"]})
    card = Scorecard(frame)
    counts = score_content(card, ["bleu", "wmd"], modification="remove", lexicon={"good", "bad"},
                           resources=Resources(ResourceOptions(vectors=toy)))
    assert set(card.metrics) == {"bleu@remove", "wmd@remove"}
    assert counts["wmd@remove"]["n_both_empty"] == 1
    assert card.frame["wmd@remove"].tolist() == [0.0, 0.0]
    assert "mod:remove" in card.signatures["wmd@remove"] and "vectors:toy#" in card.signatures["wmd@remove"]
    score_content(card, ["bleu"], modification="mask", lexicon={"good", "bad"})
    assert card.frame["bleu@mask"].iloc[1] == pytest.approx(100.0)
