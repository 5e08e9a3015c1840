"""The sentence encoder's fast path: same embeddings as sentence-transformers, a cache shared between runs, one
encode over every modification's texts, and ``--device``/``--threads`` checked before anything runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tsteval import evaluate
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.plan.plan import Plan
from tsteval.lexicons.lexicon import Lexicon
from tsteval.metrics.content import sentence_embedding
from tsteval.metrics.content.embedding_cache import EmbeddingCache
from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model, token_counts
from tsteval.readers.dualrl import load_dualrl


@pytest.fixture(scope="module")
def yelp_texts(data_root: Path) -> list[str]:
    """60 distinct real DualRL Yelp texts of mixed lengths (inputs and system outputs), one empty."""
    frame = load_dualrl("yelp").frame
    texts = list(dict.fromkeys([*frame["input"][::250], *frame["output"][::250]]))[:59]
    return [*texts, ""]


def test_embeddings_match_sentence_transformers(yelp_texts: list[str]) -> None:
    from sentence_transformers import SentenceTransformer

    ours = SentenceEncoder(threads=1, cache=False, batch_size=16).embed(yelp_texts)
    theirs = SentenceTransformer(default_model(), device="cpu").encode(yelp_texts, normalize_embeddings=True)
    cosine = (ours * theirs).sum(1)
    assert np.abs(cosine - 1.0).max() <= 1e-6
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_word_pieces_from_tokenizer_json_match_transformers(yelp_texts: list[str]) -> None:
    """The folder's tokenizer.json read by the tokenizers library gives AutoTokenizer's ids: real texts, the empty
    text, accents, CJK, control characters and a text past the 256-token truncation."""
    from transformers import AutoTokenizer

    loaded = sentence_embedding.loaded_encoder(default_model(), "cpu")
    tokenizer = AutoTokenizer.from_pretrained(default_model())
    texts = [*yelp_texts, "Café CRÈME brûlée 東京 naïve\x00 \t\u200b ok", "good " * 300]
    ids, counts = token_counts(texts, loaded)
    assert ids == tokenizer(texts, truncation=True, max_length=256)["input_ids"]
    assert counts.tolist() == [len(i) for i in ids] and counts.min() == 2 and counts.max() == 256


def test_plain_bert_folder_loads_without_transformers(tmp_path: Path) -> None:
    """The packaged MiniLM runs from its own files (transformers never imported); a folder whose
    tokenizer_config.json disagrees with tokenizer.json's normaliser, or whose model the lean pass does not cover,
    goes through transformers."""
    import json
    import shutil
    import subprocess
    import sys

    code = ("import sys; from tsteval.metrics.content.sentence_embedding import SentenceEncoder; "
            "v = SentenceEncoder(cache=False, threads=1).embed(['good food']); "
            "print(v.shape, 'transformers' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[0] == "(1, 384) False"
    folder = tmp_path / "model"
    shutil.copytree(default_model(), folder)
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps({**settings, "do_lower_case": False}))
    assert sentence_embedding._word_pieces(folder) is None
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    from tsteval.metrics.content.bert_forward import bert_folder

    assert bert_folder(folder, "cpu") is None and bert_folder(tmp_path / "missing", "cpu") is None


def test_cache_second_run_encodes_nothing_and_damage_is_skipped(yelp_texts: list[str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path))
    texts = yelp_texts[:12]
    first = SentenceEncoder(threads=1)
    vectors = first.embed([*texts, texts[0]])
    assert first.encoded == 12
    second = SentenceEncoder(threads=1)
    again = second.embed(texts)
    assert second.encoded == 0 and np.array_equal(again, vectors[:12])
    entry = next((tmp_path / "embeddings").glob("*/*/vectors.npy"))
    entry.write_bytes(entry.read_bytes()[:-8] + b"\x00" * 8)
    third = SentenceEncoder(threads=1)
    np.testing.assert_allclose(third.embed(texts), vectors[:12], atol=1e-6)
    assert third.encoded == 12 and "skipped" in capsys.readouterr().err


def test_cache_keys_by_model(tmp_path: Path) -> None:
    a, b = EmbeddingCache("model-a", root=tmp_path), EmbeddingCache("model-b", root=tmp_path)
    a.add(["good food"], np.ones((1, 4), dtype=np.float32))
    assert "good food" in a.lookup(["good food"]) and b.lookup(["good food"]) == {}


def test_one_encode_over_every_modification(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path))
    calls: list[list[str]] = []
    original = SentenceEncoder._encode

    def counting(self: SentenceEncoder, texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return original(self, texts)

    monkeypatch.setattr(SentenceEncoder, "_encode", counting)
    inputs, outputs = ["the food was awful", "great service"], ["the food was great", "great service"]
    lexicon = Lexicon({"neg": [["awful", -1.0]], "pos": [["great", 1.0]]}, "test")
    card = evaluate(inputs, outputs, source_style="neg", target_style="pos", metrics=["sbert", "bleu"],
                    lexicon=lexicon, modifications=("none", "mask"), threads=1)
    assert len(calls) == 1
    assert sorted(calls[0]) == sorted({*inputs, *outputs, "the food was <masked>", "<masked> service"})
    assert card.frame["sbert@none"].iloc[1] == pytest.approx(1.0, abs=1e-6)
    evaluate(inputs, outputs, source_style="neg", target_style="pos", metrics=["sbert"], threads=1)
    assert len(calls) == 1  # the second run found every embedding in the cache


def test_device_and_threads_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    from tsteval.cli import main

    transfers = load_dualrl("yelp").frame.iloc[:2]
    with pytest.raises(TstevalError, match="device must be one of"):
        evaluate(transfers["input"].tolist(), transfers["output"].tolist(), source_style="0", target_style="1",
                 metrics=["sbert"], device="tpu")
    with pytest.raises(TstevalError, match="threads must be an integer of at least 1, not .0."):
        evaluate(["a"], ["b"], source_style="0", target_style="1", metrics=["bleu"], threads=0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(TstevalError, match="no CUDA device"):
        SentenceEncoder(device="cuda", cache=False)
    assert SentenceEncoder(device="auto", cache=False).device == "cpu"
    # the command line reads --threads through the same option reader: one error line, exit 2
    assert main(["score", "--dualrl", "yelp", "--content", "bleu", "--threads", "0", "--out", str(tmp_path / "o")]) == 2


def test_manifest_device_and_threads(tmp_path: Path, data_root: Path) -> None:
    text = ("transfers: {published: mir, sample: 2}\nmetrics: {content: {metrics: [bleu]}}\n")
    good = tmp_path / "good.yaml"
    good.write_text(text + "device: auto\nthreads: 1\n")
    manifest = load_manifest(good)
    assert (manifest.options.device, manifest.options.threads) == ("auto", 1)
    assert Plan.from_manifest(manifest).threads == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + "threads: 0\n")
    with pytest.raises(ManifestError, match="threads"):
        load_manifest(bad)


def test_lean_bert_forward_matches_transformers(yelp_texts: list[str]) -> None:
    """The lean forward (fused QKV, in-place residual and GELU, reused buffers) gives BertModel's hidden states on
    padded batches of different shapes, buffers reused between them; a model it does not cover gets None."""
    import torch
    from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel

    from tsteval.metrics.content.bert_forward import bert_forward

    tokenizer, model = AutoTokenizer.from_pretrained(default_model()), AutoModel.from_pretrained(default_model())
    forward = bert_forward(model)
    assert forward is not None
    for texts in (yelp_texts[:7], yelp_texts[7:40], yelp_texts[40:42]):
        batch = tokenizer(texts, padding=True, return_tensors="pt")
        real = batch["attention_mask"].bool()
        with torch.inference_mode():
            ours = forward(batch["input_ids"], real)
            theirs = model(**batch).last_hidden_state
        assert ours.shape == theirs.shape
        assert float((ours - theirs)[real].abs().max()) <= 1e-4
    tiny = dict(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    assert bert_forward(BertModel(BertConfig(**tiny, hidden_act="relu"))) is None
    assert bert_forward(BertModel(BertConfig(**tiny, position_embedding_type="relative_key"))) is None
    assert bert_forward(torch.nn.Linear(2, 2)) is None


def test_encoder_takes_the_lean_path_in_equal_length_batches(yelp_texts: list[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch holds texts of one WordPiece count (no padding), at most ``batch_size`` of them."""
    from tsteval.metrics.content.bert_forward import BertForward

    calls = []
    original = BertForward.__call__
    monkeypatch.setattr(BertForward, "__call__", lambda self, ids, mask: calls.append(tuple(ids.shape)) or
                        original(self, ids, mask))
    SentenceEncoder(threads=1, cache=False, batch_size=4).embed(yelp_texts[:20])
    ids, _ = token_counts(yelp_texts[:20], sentence_embedding.loaded_encoder(default_model(), "cpu"))
    per_length = Counter(len(i) for i in ids)
    expected = [(min(4, n - start), length) for length, n in per_length.items() for start in range(0, n, 4)]
    assert sorted(calls) == sorted(expected) and sum(n for n, _ in calls) == 20


def test_padded_batches_of_the_gpu_path_give_the_equal_length_embeddings(yelp_texts: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU's batching (texts sorted by count, cut every ``batch_size``, padded with a mask and pooled over the
    real tokens), run here on the CPU, gives the embeddings of equal-length batches and of sentence-transformers;
    a CPU encoder defaults to batches of 64, a GPU one to 1,024."""
    from sentence_transformers import SentenceTransformer

    from tsteval.metrics.content.bert_forward import BertForward

    loaded = sentence_embedding.loaded_encoder(default_model(), "cpu")
    ids, counts = token_counts(yelp_texts, loaded)
    shapes = []
    original = BertForward.__call__
    monkeypatch.setattr(BertForward, "__call__", lambda self, i, mask: shapes.append((tuple(i.shape),
                        mask.sum(1).tolist())) or original(self, i, mask))
    padded = sentence_embedding._encode_ids(ids, loaded, "cpu", 16, padded=True)
    monkeypatch.setattr(BertForward, "__call__", original)
    order = sorted(range(len(ids)), key=lambda k: counts[k])
    assert [shape for shape, _ in shapes] == [(len(order[s:s + 16]), int(max(counts[order[s:s + 16]])))
                                              for s in range(0, len(order), 16)]
    assert [real for _, real in shapes] == [sorted(counts[order[s:s + 16]].tolist()) for s in range(0, len(order), 16)]
    assert any(min(real) < width for (_, width), real in shapes)  # some batches are padded
    equal = sentence_embedding._encode_ids(ids, loaded, "cpu", 16)
    theirs = SentenceTransformer(default_model(), device="cpu").encode(yelp_texts, normalize_embeddings=True)
    assert np.abs((padded * equal).sum(1) - 1.0).max() <= 1e-6
    assert np.abs((padded * theirs).sum(1) - 1.0).max() <= 1e-6
    assert SentenceEncoder(cache=False).batch_size == 64
    with pytest.raises(TstevalError, match="batch_size must be >= 1, not 0"):
        SentenceEncoder(cache=False, batch_size=0)


def test_a_gpu_encoder_takes_padded_batches_of_1024(yelp_texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """On CUDA (resolved device faked here; the forward pass runs on the CPU) the encoder asks for padded batches
    of 1,024 texts; on the CPU for equal-length batches of 64."""
    loaded = sentence_embedding.loaded_encoder(default_model(), "cpu")
    encode, calls = sentence_embedding._encode_ids, []
    monkeypatch.setattr(sentence_embedding, "loaded_encoder", lambda model, device, precision: loaded)
    monkeypatch.setattr(sentence_embedding, "_encode_ids", lambda ids, enc, device, size, padded=False: calls.append(
        (device, size, padded)) or encode(ids, enc, "cpu", size, padded))
    SentenceEncoder(cache=False).embed(yelp_texts[:5])
    monkeypatch.setattr(sentence_embedding, "resolve_device", lambda device: "cuda:0")
    SentenceEncoder(device="cuda", cache=False).embed(yelp_texts[:5])
    assert calls == [("cpu", 64, False), ("cuda:0", 1024, True)]
