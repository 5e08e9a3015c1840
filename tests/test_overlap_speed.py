"""BLEU, chrF and ROUGE-L on tokens computed once, streamed in chunks: the same values as the per-pair library calls
(sacreBLEU ``BLEU``/``CHRF.sentence_score``, rouge-score ``RougeScorer.score``) on real DualRL Yelp pairs."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU, CHRF

from tsteval.core.tokenize import tokens_of
from tsteval.metrics.content import char_ngrams, overlap
from tsteval.metrics.content.overlap import MIR_BLEU, lcs_length, rouge_l, sentence_bleu, sentence_chrf
from tsteval.readers.dualrl import load_dualrl


class _Split:
    """rouge-score tokenizer for already-tokenised, space-joined text."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


@pytest.fixture(scope="module")
def pairs(data_root: Path) -> tuple[list[str], list[str], tuple[list[list[str]], list[list[str]]]]:
    """1,875 real DualRL Yelp (input, output) pairs, every eighth row, and their tokens."""
    frame = load_dualrl("yelp").frame.iloc[::8]
    refs, hyps = frame["input"].tolist(), frame["output"].tolist()
    return refs, hyps, (tokens_of(refs), tokens_of(hyps))


def _joined(tokens: list[list[str]]) -> list[str]:
    return [" ".join(t) for t in tokens]


def test_bleu_equals_sacrebleu_sentence_score(pairs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    refs, hyps, tokens = pairs
    monkeypatch.setattr(overlap, "CHUNK", 700)  # several chunks, one not full
    ours = sentence_bleu(refs, hyps, tokens=tokens).values
    bleu = BLEU(tokenize="none", force=True, effective_order=True)
    theirs = [bleu.sentence_score(h, [r]).score for r, h in zip(_joined(tokens[0]), _joined(tokens[1]), strict=True)]
    both = np.array([bool(r) and bool(h) for r, h in zip(*tokens, strict=True)])
    np.testing.assert_allclose(ours[both], np.array(theirs)[both], rtol=0, atol=1e-9)
    mir = BLEU(tokenize="none", force=True, smooth_method="floor", smooth_value=0.01)
    theirs = [mir.sentence_score(h, [r]).score for r, h in zip(_joined(tokens[0]), _joined(tokens[1]), strict=True)]
    np.testing.assert_allclose(sentence_bleu(refs, hyps, **MIR_BLEU).values[both], np.array(theirs)[both], atol=1e-9)


def test_chrf_equals_sacrebleu_sentence_score(pairs: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    refs, hyps, tokens = pairs
    chrf = CHRF()
    theirs = np.array([chrf.sentence_score(h, [r]).score
                       for r, h in zip(_joined(tokens[0]), _joined(tokens[1]), strict=True)])
    both = np.array([bool(r) and bool(h) for r, h in zip(*tokens, strict=True)])
    assert np.array_equal(sentence_chrf(refs, hyps, tokens=tokens).values[both], theirs[both])
    monkeypatch.setattr(char_ngrams, "_LIMIT", 10)  # the codes "overflow": sacreBLEU's own per-segment path
    assert np.array_equal(sentence_chrf(refs, hyps, tokens=tokens).values[both], theirs[both])
    plus = CHRF(word_order=2)
    theirs = [plus.sentence_score(h, [r]).score for r, h in zip(_joined(tokens[0][:300]), _joined(tokens[1][:300]),
                                                                  strict=True)]
    np.testing.assert_array_equal(sentence_chrf(refs[:300], hyps[:300], word_order=2).values[both[:300]],
                                  np.array(theirs)[both[:300]])


def test_char_statistics_equal_sacrebleu_counts(pairs: tuple) -> None:
    refs, hyps, tokens = pairs
    joined_refs, joined_hyps = _joined(tokens[0][:500]), _joined(tokens[1][:500])
    chrf = CHRF()
    theirs = [chrf._compute_segment_statistics(h, chrf._extract_reference_info([r]))
              for r, h in zip(joined_refs, joined_hyps, strict=True)]
    assert char_ngrams.char_statistics(joined_refs, joined_hyps, 6).tolist() == theirs


def test_rouge_l_equals_rouge_score(pairs: tuple) -> None:
    refs, hyps, tokens = pairs
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Split())
    theirs = [scorer.score(r, h)["rougeL"].fmeasure for r, h in zip(_joined(tokens[0]), _joined(tokens[1]),
                                                                    strict=True)]
    both = np.array([bool(r) and bool(h) for r, h in zip(*tokens, strict=True)])
    assert np.array_equal(rouge_l(refs, hyps, tokens=tokens).values[both], np.array(theirs)[both])


def test_lcs_length_equals_the_dynamic_programme() -> None:
    rng = random.Random(0)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        table = rouge_scorer._lcs_table(a, b)
        assert lcs_length(a, b) == table[-1][-1]


def test_tokens_must_match_the_texts() -> None:
    with pytest.raises(ValueError, match="one token list per"):
        sentence_bleu(["a b"], ["a b"], tokens=([], [["a", "b"]]))
