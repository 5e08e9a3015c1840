"""Text in every language's letters: French, Italian, German, Spanish, Turkish, Chinese, Japanese, Arabic and emoji
keep their words whole in tokens, lexicons, masking and the word-level content metrics (checked against sacreBLEU,
NLTK, rouge-score, gensim and a whitespace split of text written with spaces between tokens), the neural metrics
read the text as written (checked against sentence-transformers and bert-score), and the scorecard keeps every
text as given."""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu

import tsteval
from tsteval.cli.main import main
from tsteval.core.errors import InputError
from tsteval.core.records import Corpus
from tsteval.core.tokenize import tokenize
from tsteval.lexicons.builder import LexiconModel
from tsteval.lexicons.evaluate import read_word_list
from tsteval.lexicons.lexicon import Lexicon
from tsteval.lexicons.modify import modify_texts
from tsteval.metrics.content.overlap import meteor, rouge_l
from tsteval.metrics.content.sentence_embedding import default_model
from tsteval.metrics.content.wmd import wmd
from tsteval.metrics.content.word_vectors import WordVectors

# (language, input, output): every token of these texts has spaces around it, apart from the Chinese and Japanese
# ones, which sacreBLEU's ``zh`` tokenizer (SACREBLEU_TOKENIZER) splits as tsteval does.
PAIRS = [
    ("fr", "Le décor était très beau .", "Le décor était vraiment très beau ."),
    ("it", "Perché la città è così bella ?", "Perché la città è così brutta ?"),
    ("de", "Die Straße in München war schön und ruhig .", "Die Straße in München war hässlich und laut ."),
    ("es", "El niño comió una piña muy dulce , señor .", "El niño comió una piña muy ácida , señor ."),
    ("tr", "İstanbul çok güzel ve ılık bir şehir .", "İstanbul çok kalabalık ve ılık bir şehir ."),
    ("zh", "今天的天气很好，我们去公园吧！", "今天的天气非常好，我们去公园吧！"),
    ("ja", "私はこの店のラーメンが好きです。", "私はこの店のラーメンが大好きです。"),
    ("ar", "كان الطَّعَامُ لذيذا جدا .", "كان الطَّعَامُ سيئا جدا ."),
    ("emoji", "the food was great 😂😂 👍🏽 !", "the food was awful 😂😂 👎🏽 !"),
]
SACREBLEU_TOKENIZER = {"zh": "zh", "ja": "zh"}
INPUTS = [p[1] for p in PAIRS]
OUTPUTS = [p[2] for p in PAIRS]


def _words(text: str) -> list[str]:
    """The tokens of text written with spaces between them: NFC, lower case, split at spaces."""
    return unicodedata.normalize("NFC", text).lower().split()


def _spaced(language: str, text: str) -> str:
    """``text`` with spaces between its tokens, sacreBLEU's way (``zh``: each Chinese character on its own)."""
    if language in SACREBLEU_TOKENIZER:
        from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

        return TokenizerZh()(text)
    return text


@pytest.mark.parametrize(("language", "source", "output"), PAIRS)
def test_words_of_every_script_stay_whole(language: str, source: str, output: str) -> None:
    for text in (source, output):
        assert tokenize(text) == _words(_spaced(language, text))


def test_ascii_text_is_tokenised_as_before() -> None:
    """Every two ASCII characters, alone and between letters, and 20,000 random ASCII strings: the tokens of the
    ASCII pattern tsteval (and Mir et al.'s reproduction) used before every script was read."""
    before = re.compile(r"<[a-z_]+>|[a-z0-9]+(?:[-_'][a-z0-9]+)*|(\S)\1*", re.IGNORECASE)
    ascii_ = [chr(i) for i in range(128)]
    rng = random.Random(0)
    texts = [t for a, b in itertools.product(ascii_, ascii_) for t in (a + b, f"x{a}{b}y", a + b + a)]
    texts += ["".join(rng.choices(ascii_, k=rng.randint(1, 12))) for _ in range(20_000)]
    assert [tokenize(t) for t in texts] == [[m.group(0).lower() for m in before.finditer(t)] for t in texts]


@pytest.mark.parametrize(("text", "expected"), [
    ("cafe\u0301 tre\u0300s", ["café", "très"]),  # decomposed accents, composed by NFC
    ("a\u0332b hi\u0307", ["a\u0332b", "hi\u0307"]),  # marks with no composed form stay inside the word
    ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # Devanagari vowel signs (Mc) and virama (Mn)
    ("GROSSE Straße ıssız İzmir", ["grosse", "straße", "ıssız", "i\u0307zmir"]),
    ("l’homme c'est peut-être", ["l’homme", "c'est", "peut-être"]),
    ("😂😂😂 ❤️❤️ 👍🏽👍🏽 👍👍🏽 !!! ?!", ["😂😂😂", "❤️❤️", "👍🏽👍🏽", "👍", "👍🏽", "!!!", "?", "!"]),
    ("wow😂 bon,très", ["wow", "😂", "bon", ",", "très"]),
])
def test_marks_apostrophes_and_emoji(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_a_lexicon_from_an_accented_corpus_holds_whole_words() -> None:
    positive = ["le repas était délicieux", "un décor très réussi", "perché è così bella", "una città bellissima",
                "die Straße ist schön", "el niño está feliz", "très délicieux , vraiment réussi"]
    negative = ["le repas était froid", "un décor très raté", "perché è così brutta", "una città orribile",
                "die Straße ist hässlich", "el niño está triste", "très froid , vraiment raté"]
    corpus = Corpus(positive + negative, ["pos"] * 7 + ["neg"] * 7)
    model = LexiconModel(use_cache=False).fit(corpus)
    assert set(model.vocabulary_) == {w for text in corpus.texts for w in _words(text)}
    lexicon = model.select(0.5)
    assert lexicon.words <= set(model.vocabulary_)
    assert {"délicieux", "réussi"} & lexicon.words and {"raté", "hässlich"} & lexicon.words


@pytest.mark.parametrize(("language", "source", "output"), PAIRS)
def test_masking_masks_whole_words(language: str, source: str, output: str) -> None:
    words = _words(_spaced(language, output))
    style = set(words[1::3])  # every third word is a "style word"
    expected = " ".join("<masked>" if w in style else w for w in words)
    assert modify_texts([output], style, "mask") == [expected]
    assert modify_texts([output], style, "remove") == [" ".join(w for w in words if w not in style)]


def test_word_lists_and_lexicon_files_are_matched_in_nfc(tmp_path: Path) -> None:
    (tmp_path / "words.txt").write_text("Cafe\u0301\nTRÈS\n", encoding="utf-8")
    assert read_word_list(tmp_path / "words.txt") == {"café", "très"}
    assert modify_texts(["un cafe\u0301 très bon"], {"CAFE\u0301"}, "mask") == ["un <masked> très bon"]
    (tmp_path / "lex.json").write_text('{"pos": [["cafe\\u0301", 1.0]]}', encoding="utf-8")
    with pytest.raises(InputError, match="not one lower-cased token in Unicode's NFC form"):
        Lexicon.load(tmp_path / "lex.json")


def test_bleu_and_chrf_at_none_equal_sacrebleu_on_the_lower_cased_texts() -> None:
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="a", target_style="b", metrics=["bleu", "chrf"])
    for k, (language, source, output) in enumerate(PAIRS):
        tokenizer = SACREBLEU_TOKENIZER.get(language, "13a")
        bleu = sacrebleu.sentence_bleu(output.lower(), [source.lower()], tokenize=tokenizer).score
        chrf = sacrebleu.sentence_chrf(output.lower(), [source.lower()]).score
        assert card.frame.loc[k, "bleu@none"] == pytest.approx(bleu, abs=1e-9), language
        assert card.frame.loc[k, "chrf@none"] == pytest.approx(chrf, abs=1e-9), language
        assert card.frame.loc[k, "bleu@none"] < 100


def test_issue_example_through_the_api_and_the_cli(tmp_path: Path) -> None:
    """``bleu@none`` of the issue's French pair is sacreBLEU's 41.11, not the 73.49 of letters split off."""
    source, output = "le décor était très beau .", "le décor était vraiment très beau ."
    expected = sacrebleu.sentence_bleu(output, [source]).score
    assert expected == pytest.approx(41.11, abs=5e-3)
    card = tsteval.evaluate([source], [output], source_style="a", target_style="b", metrics=["bleu"])
    assert card.frame.loc[0, "bleu@none"] == pytest.approx(expected, abs=1e-6)
    (tmp_path / "in.txt").write_text(source + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text(output + "\n", encoding="utf-8")
    assert main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "a",
                 "--target-style", "b", "--content", "bleu", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "run" / "scorecard.csv").loc[0, "bleu@none"] == pytest.approx(expected, abs=1e-6)


def test_meteor_and_rouge_l_see_whole_words() -> None:
    from nltk.translate.meteor_score import meteor_score
    from rouge_score.rouge_scorer import RougeScorer

    from tsteval.metrics.content.wordnet import load_wordnet

    class Whitespace:
        """rouge-score's tokenizer interface, splitting at spaces (its default drops every letter outside ASCII)."""

        @staticmethod
        def tokenize(text: str) -> list[str]:
            return text.split()

    refs = [_spaced(language, source) for language, source, _ in PAIRS]
    hyps = [_spaced(language, output) for language, _, output in PAIRS]
    wordnet, scorer = load_wordnet(), RougeScorer(["rougeL"], tokenizer=Whitespace())
    meteor_theirs = [meteor_score([_words(r)], _words(h), wordnet=wordnet) for r, h in zip(refs, hyps, strict=True)]
    rouge_theirs = [scorer.score(" ".join(_words(r)), " ".join(_words(h)))["rougeL"].fmeasure
                    for r, h in zip(refs, hyps, strict=True)]
    np.testing.assert_array_equal(meteor(INPUTS, OUTPUTS).values, meteor_theirs)
    np.testing.assert_allclose(rouge_l(INPUTS, OUTPUTS).values, rouge_theirs, atol=1e-12)


def test_wmd_sees_whole_words() -> None:
    """WMD with vectors for the whole words only equals gensim's on the whitespace words; split-off letters would
    be out of vocabulary."""
    from gensim.models import KeyedVectors

    refs = [_spaced(language, source) for language, source, _ in PAIRS]
    hyps = [_spaced(language, output) for language, _, output in PAIRS]
    words = sorted({w for text in refs + hyps for w in _words(text)})
    vectors = np.random.default_rng(0).normal(size=(len(words), 8)).astype(np.float32)
    ours = wmd(INPUTS, OUTPUTS, WordVectors({w: i for i, w in enumerate(words)}, vectors, "toy")).values
    kv = KeyedVectors(vector_size=8)
    kv.add_vectors(words, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    theirs = [kv.wmdistance(_words(r), _words(h)) for r, h in zip(refs, hyps, strict=True)]
    np.testing.assert_allclose(ours, theirs, atol=1e-6)
    assert (ours > 0).all()


def test_neural_metrics_at_none_read_the_text_as_written() -> None:
    """``sbert@none`` and ``bertscore_f1@none`` equal sentence-transformers and bert-score on the raw texts (an
    emoji attached to a word is one WordPiece [UNK] there, two tokens once re-tokenised)."""
    import torch
    from bert_score import score as bert_score
    from sentence_transformers import SentenceTransformer

    refs = [*INPUTS, "the décor was beautiful", "C'était trop bon😂"]
    hyps = [*OUTPUTS, "the décor was really beautiful", "C'était trop mauvais😂"]
    card = tsteval.evaluate(refs, hyps, source_style="a", target_style="b", metrics=["sbert", "bertscore_f1"])
    model = SentenceTransformer(default_model(), device="cpu")
    a, b = (model.encode(texts, normalize_embeddings=True) for texts in (refs, hyps))
    np.testing.assert_allclose(card.frame["sbert@none"].to_numpy(float), (a * b).sum(1), atol=1e-5)
    with torch.inference_mode():
        _, _, f1 = bert_score(hyps, refs, model_type=default_model(), num_layers=6, nthreads=0, batch_size=1)
    np.testing.assert_allclose(card.frame["bertscore_f1@none"].to_numpy(float), f1.numpy(), atol=1e-5)


def test_the_scorecard_keeps_every_text_as_given(tmp_path: Path) -> None:
    inputs = [*INPUTS, "un cafe\u0301  TRÈS bon"]  # decomposed, two spaces, capitals
    outputs = [*OUTPUTS, "un café très bon"]
    card = tsteval.evaluate(inputs, outputs, source_style="a", target_style="b", metrics=["bleu"])
    assert card.frame["input"].tolist() == inputs and card.frame["output"].tolist() == outputs
    assert card.frame["bleu@none"].iloc[-1] == 100.0  # the same words once normalised
    (tmp_path / "in.txt").write_text("\n".join(inputs) + "\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("\n".join(outputs) + "\n", encoding="utf-8")
    assert main(["score", "--pairs", str(tmp_path / "in.txt"), str(tmp_path / "out.txt"), "--source-style", "a",
                 "--target-style", "b", "--content", "bleu", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    written = pd.read_parquet(tmp_path / "run" / "scorecard.parquet")
    assert written["input"].tolist() == inputs and written["output"].tolist() == outputs
