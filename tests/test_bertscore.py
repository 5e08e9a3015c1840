"""BERTScore: equal to the ``bert-score`` package with the same local model and layer, scored through every front
end and engine, and part of the meta-evaluation."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from bert_score import score as bert_score

import tsteval
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.blocks import blocks as blocks_of
from tsteval.experiment.run.execute import execute
from tsteval.metaeval.tables import registered_columns
from tsteval.metrics.content.bertscore import bertscore, token_states
from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model
from tsteval.metrics.registry import METRICS

COLUMNS = ("bertscore_p", "bertscore_r", "bertscore_f1")


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[str]]:
    """120 of Mir et al.'s transfers (inputs repeat across systems, as in any comparison)."""
    from tsteval.readers.mir import load_mir

    frame = load_mir().frame.groupby("system", sort=False).head(40)
    return frame["input"].tolist(), frame["output"].tolist()


def _per_pair(refs: list[str], hyps: list[str], idf: bool, clamp: bool = False) -> np.ndarray:
    """P, R, F1 pair by pair from the token states with bert-score's weights (CLS/SEP 0; IDF ln((M+1)/(df+1))
    over the references), as tsteval computed them before the padded tensor matching; with ``clamp`` every token's
    best cosine raised to at least 0: what bert-score computes for a pair whose text was padded in its batch (its
    padded similarities are 0 and take part in the max)."""
    stored = token_states([*refs, *hyps], SentenceEncoder(cache=False))
    ids = {t: stored.of(t)[0] for t in stored.rows}
    unit = {t: s / np.linalg.norm(s, axis=1, keepdims=True) for t in stored.rows for s in [stored.of(t)[1]]}
    df: dict[int, int] = {}
    for ref in refs:
        for piece in set(ids[ref]):
            df[piece] = df.get(piece, 0) + 1

    def weights(text: str) -> np.ndarray:
        pieces = ids[text]
        w = np.array([np.log((len(refs) + 1) / (df.get(i, 0) + 1)) if idf else 1.0 for i in pieces])
        w[[0, -1]] = 0.0
        return w

    floor = 0.0 if clamp else -np.inf
    out = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for ref, hyp in zip(refs, hyps, strict=True):
            sim = unit[hyp] @ unit[ref].T
            wh, wr = weights(hyp), weights(ref)
            p = (np.maximum(sim.max(1), floor) * wh).sum() / wh.sum()
            r = (np.maximum(sim.max(0), floor) * wr).sum() / wr.sum()
            out.append((p, r, 2 * p * r / (p + r)))
    return np.nan_to_num(np.array(out))


@pytest.mark.parametrize("idf", [False, True])
def test_the_padded_matching_equals_the_per_pair_loop(pairs: tuple[list[str], list[str]], idf: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The greedy matching as padded tensor operations equals the per-pair loop to 1e-9 on varied pairs: empty and
    one-piece texts, texts cut at 512 pieces, repeated texts, texts of very different lengths side by side; and to
    1e-6 in matching steps of a few pairs with the texts tokenised (so batched) a few at a time."""
    from tsteval.metrics.content import bertscore as module
    from tsteval.metrics.content import sentence_embedding

    long = " ".join(["delicious"] * 300 + ["awful"] * 300)
    refs = [*pairs[0][:30], "", "a", "", "good", long, "the food was good", pairs[0][0]]
    hyps = [*pairs[1][:30], "", "", "b", long, "good", "the food was good .", "!"]
    expected = _per_pair(refs, hyps, idf)
    assert (expected[30] == 0).all() and (expected[30:33, 2] == 0).all()  # empty: weights sum to 0, NaN -> 0
    assert expected[31, 1] != 0 and expected[32, 0] != 0 and (expected[:30] != 0).all()
    module._LAST.clear()
    whole = bertscore(refs, hyps, SentenceEncoder(cache=False), idf=idf)
    np.testing.assert_allclose(whole, expected, atol=1e-9, rtol=0)
    monkeypatch.setattr(module, "MATCH_TOKENS", 40)
    monkeypatch.setattr(sentence_embedding, "TOKENISE_CHUNK", 5)
    module._LAST.clear()  # other encoder batches (texts of 5 at a time): float32 rounding of the states
    np.testing.assert_allclose(bertscore(refs, hyps, SentenceEncoder(cache=False), idf=idf), expected, atol=1e-6,
                               rtol=0)


@pytest.mark.parametrize("idf", [False, True])
def test_equals_the_bert_score_package(pairs: tuple[list[str], list[str]], idf: bool) -> None:
    """Equal to 1e-5 on every pair, except where bert-score's padding raises a negative best match to 0: there
    it equals the same computation with that clamp (a batching artefact of the package; ours takes the max over
    the real tokens only, as the paper defines it)."""
    refs, hyps = pairs
    with torch.inference_mode():
        p, r, f = bert_score(hyps, refs, model_type=default_model(), num_layers=6, idf=idf, nthreads=0,
                             batch_size=64)
    theirs = np.stack([p.numpy(), r.numpy(), f.numpy()], axis=1)
    ours = bertscore(refs, hyps, SentenceEncoder(cache=False), idf=idf)
    same = np.isclose(ours, theirs, atol=1e-5).all(axis=1)
    assert same.mean() > 0.95
    np.testing.assert_allclose(_per_pair(refs, hyps, idf, clamp=True)[~same], theirs[~same], atol=1e-5)
    card = tsteval.evaluate(refs, hyps, source_style="0", target_style="1",
                            metrics=[f"{c}:idf={str(idf).lower()}" for c in COLUMNS])
    for k, column in enumerate(COLUMNS):
        np.testing.assert_allclose(card.frame[f"{column}@none"].to_numpy(float), ours[:, k], atol=1e-9)
        assert f"idf:{idf}" in card.signatures[f"{column}@none"].split("|")


def test_padded_gpu_batches_give_the_same_states(pairs: tuple[list[str], list[str]]) -> None:
    """The GPU path (length-sorted padded batches with a mask) on the CPU: the same token states."""
    texts = sorted(set(pairs[0]))[:40]
    encoder = SentenceEncoder(cache=False, batch_size=16)
    plain, padded = token_states(texts, encoder), token_states(texts, encoder, padded=True)
    for text in texts:
        assert plain.of(text)[0] == padded.of(text)[0]
        np.testing.assert_allclose(plain.of(text)[1], padded.of(text)[1], atol=1e-5)


def test_policy_and_erase(pairs: tuple[list[str], list[str]]) -> None:
    """Empty texts follow the policy; the erase modification scores the BERTScore columns too."""
    result = METRICS["bertscore_f1"].compute(["", "good food", ""], ["", "", "tasty"])
    assert result.values.tolist() == [1.0, 0.0, 0.0] and result.counts["n_one_empty"] == 2
    corpus = {"0": ["the food was awful", "terrible service", "i hated it", "bad and cold"],
              "1": ["the food was great", "lovely service", "i loved it", "good and warm"]}
    card = tsteval.evaluate(pairs[0][:4], pairs[1][:4], source_style="0", target_style="1", corpus=corpus,
                            metrics=["bertscore_f1"], modifications=["none", "erase"])
    assert {"bertscore_f1@none", "bertscore_f1@erase"} <= set(card.metrics)
    assert "eraser:leace-sentence-" in card.signatures["bertscore_f1@erase"]


def test_runs_on_ray_and_is_meta_evaluated(pairs: tuple[list[str], list[str]], capfd: pytest.CaptureFixture) -> None:
    """... and Ray's processes, started after the tokenizer ran its threads here, fork nothing that warns of it."""
    transfers = tsteval.Transfers.from_pairs(pairs[0][:30], pairs[1][:30], source_style="0", target_style="1")
    # with IDF, F1 depends on every input of the call: Ray scores it on the whole table, not per block (4 blocks)
    options = {"content": ("bertscore_f1", "bertscore_p"), "params": {"bertscore_f1": {"idf": True}}}
    local = execute(Plan(transfers, **options)).card
    ray = execute(Plan(transfers, **options, engine="ray", workers=1)).card
    for column in ("bertscore_f1@none", "bertscore_p@none"):
        np.testing.assert_allclose(ray.frame[column], local.frame[column], atol=1e-6)
    assert ray.signatures == local.signatures and "idf:True" in ray.signatures["bertscore_f1@none"]
    blocks = blocks_of(transfers.frame, workers=1)
    assert len(blocks) > 1  # per block, IDF would count each block's inputs only
    assert "bertscore_f1@none" in [c.column for c in registered_columns(local)]
    assert "just got forked" not in "".join(capfd.readouterr())


def test_tokenizers_parallelism_is_left_alone() -> None:
    """tsteval sets no ``TOKENIZERS_PARALLELISM`` (the tokenizer keeps its threads, beside the background thread
    that tokenises the next texts), and a child process started after them neither warns nor hangs."""
    code = ("import os, subprocess, sys\n"
            "from tsteval.metrics.content.bertscore import bertscore\n"
            "from tsteval.metrics.content.sentence_embedding import SentenceEncoder\n"
            "print(bertscore(['good food'] * 50, ['bad food'] * 50, SentenceEncoder(cache=False))[0, 2] > 0)\n"
            "subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
            "print('TOKENIZERS_PARALLELISM' in os.environ)\n")
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.split() == ["True", "False"], run.stderr
    assert "forked" not in run.stderr
