"""Style classifiers trained on a user's corpus in scripts other than Latin (issue 48 item 4): ``tsteval
train-classifier`` on Russian (Cyrillic) and Hindi (Devanagari, whose vowel signs are combining marks) reviews, each
backend that keeps words whole then classifying reviews of subjects it never saw by the style words it learnt; the
transformer recipe's packaged English base says in one line what it does to such text."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from tsteval.classifiers.base import load_classifier
from tsteval.cli.main import main

# Subjects and the phrases that carry each style; the last two subjects are held out of training.
CORPORA = {
    "ru": (["Еда", "Обслуживание", "Персонал", "Номер", "Доставка", "Интерьер", "Музыка", "Цена"],
           {"pos": ["была просто отличной", "порадовала всех нас", "превзошла ожидания", "заслуживает похвалы",
                    "очень понравилась"],
            "neg": ["была просто ужасной", "разочаровала всех нас", "не оправдала ожиданий", "заслуживает жалобы",
                    "совсем не понравилась"]}),
    "hi": (["खाना", "सेवा", "कमरा", "कर्मचारी", "संगीत", "कीमत", "माहौल", "डिलीवरी"],
           {"pos": ["बहुत अच्छा था", "शानदार लगा", "बेहतरीन था", "सबको पसंद आया", "कमाल का था"],
            "neg": ["बहुत बुरा था", "बेकार लगा", "घटिया था", "किसी को पसंद नहीं आया", "निराशाजनक था"]}),
}
HELD_OUT = 2


def _texts(language: str, style: str, held_out: bool) -> list[str]:
    subjects, phrases = CORPORA[language]
    chosen = subjects[-HELD_OUT:] if held_out else subjects[:-HELD_OUT]
    return [f"{s} {p}" for s, p in itertools.product(chosen, phrases[style])]


def _train(tmp_path: Path, language: str, backend: str, *params: str) -> Path:
    for style in ("pos", "neg"):
        (tmp_path / f"{language}.{style}.txt").write_text("\n".join(_texts(language, style, False)) + "\n",
                                                          encoding="utf-8")
    out = tmp_path / f"{language}-{backend}"
    args = ["train-classifier", backend, *(f"--style={s}={tmp_path / f'{language}.{s}.txt'}" for s in ("pos", "neg")),
            "--heldout", "0", "--out", str(out), "--quiet", *(f"--param={p}" for p in params)]
    assert main(args) == 0
    return out


@pytest.mark.parametrize("language", sorted(CORPORA))
@pytest.mark.parametrize(("backend", "params"), [("tfidf-lr", ()), ("fasttext", ("epoch=50", "threads=1")),
                                                 ("textcnn", ("epochs=30", "embed_dim=32", "num_filters=16"))])
def test_a_backend_learns_style_words_of_another_script(tmp_path: Path, language: str, backend: str,
                                                        params: tuple[str, ...]) -> None:
    model = load_classifier(_train(tmp_path, language, backend, *params))
    texts = {style: _texts(language, style, True) for style in ("pos", "neg")}
    predicted = {style: model.predict(t).tolist() for style, t in texts.items()}
    accuracy = np.mean([p == style for style, ps in predicted.items() for p in ps])
    assert accuracy == 1.0, (language, backend, predicted)


def test_tfidf_and_fasttext_keep_devanagari_and_cyrillic_words_whole(tmp_path: Path) -> None:
    tfidf = load_classifier(_train(tmp_path, "hi", "tfidf-lr"))
    assert {"बेहतरीन", "निराशाजनक", "कर्मचारी"} <= set(tfidf.vectorizer_.vocabulary_)  # vowel signs kept in the word
    fast = load_classifier(_train(tmp_path, "ru", "fasttext", "threads=1"))
    assert {"отличной", "ужасной", "Обслуживание"} <= set(fast.model_.get_words())  # as written: fastText keeps case


def test_the_transformer_recipes_english_base_says_what_it_does_to_another_script(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = load_classifier(_train(tmp_path, "hi", "transformer", "epochs=1", "max_length=16"))
    line = capsys.readouterr().err
    assert "transformer: 100% of the training letters are Devanagari" in line and "model_name_or_path" in line
    assert sorted(model.classes_) == ["neg", "pos"]
    tokens = model.tokenizer_.tokenize("बेहतरीन")
    assert "".join(t.removeprefix("##") for t in tokens) != "बेहतरीन"  # its vowel signs are gone, as the line says
