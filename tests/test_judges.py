"""The LM metrics (cond_lp, judge_*), checked against hand-built prompts scored by a direct transformers forward
pass, the expected rating computed by hand from the logits, and the text restorer against known pairs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tsteval
from tsteval.core.errors import TstevalError
from tsteval.core.text_form import as_written, detect, restore
from tsteval.metrics.judges import prefix_scoring
from tsteval.metrics.judges.cond_lp import cond_lp, cond_lp_matrix
from tsteval.metrics.judges.prefix_scoring import (
    PassCost,
    continuation_log_probs,
    next_token_log_probs,
    pass_cost,
    plan_batches,
)
from tsteval.metrics.judges.prompts import templates, templates_hash
from tsteval.metrics.judges.rating import judge_content, judge_fluency, judge_matrix, judge_style
from tsteval.metrics.naturalness.causal_lm import CausalLM

INPUTS = ["The food was cold and the staff were rude.", "I did not like it at all.",
          "The food was cold and the staff were rude."]
OUTPUTS = ["The food was warm and the staff were friendly.", "I loved it.", "The food was hot."]
TARGETS = ["positive", "positive", "positive"]


@pytest.fixture(scope="module")
def lm() -> CausalLM:
    return CausalLM("smollm2", threads=2)


def _ids(lm: CausalLM, text: str) -> list[int]:
    return lm.tokenizer(text, add_special_tokens=False)["input_ids"]


def _chat(lm: CausalLM, text: str) -> list[int]:
    rendered = lm.tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                                add_generation_prompt=True)
    return _ids(lm, rendered)


def _direct(lm: CausalLM, ids: list[int]) -> torch.Tensor:
    """Log-softmax over the vocabulary at every position of one plain forward pass (no cache, no batch)."""
    with torch.inference_mode():
        return torch.log_softmax(lm.model(torch.tensor([ids])).logits[0].double(), dim=-1)


@pytest.mark.parametrize("cost", [PassCost(fixed=0.0, per_token=1.0), PassCost(fixed=1e6, per_token=1.0)])
def test_shared_prefixes_give_the_plain_forward_pass_values(lm: CausalLM, cost: PassCost,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the plan: prefixes shared (no fixed cost), or one plain padded batch (a large one)."""
    head = _ids(lm, "Rewrite the following text so that it is formal.\nText:")
    prompts = [head + _ids(lm, f" {x}\nRewrite:") for x in ("hey u there", "gimme that", "hey u there")]
    conts = [_ids(lm, f" {y}") for y in ("Hello, are you there?", "Please give me that.", "Greetings.")]
    batches = plan_batches(prompts, [len(p) + len(c) for p, c in zip(prompts, conts, strict=True)], 4096, cost)
    if cost.fixed:
        assert [b.shared for b in batches] == [0]
    else:
        assert any(b.shared >= len(head) for b in batches)  # the shared part really is computed apart
    monkeypatch.setitem(prefix_scoring._COSTS, (lm.model_id, lm.device), cost)  # the plan _run makes
    got = continuation_log_probs(lm, prompts, conts)
    for prompt, cont, values in zip(prompts, conts, got, strict=True):
        logp = _direct(lm, prompt + cont)
        expected = [logp[len(prompt) - 1 + j, token].item() for j, token in enumerate(cont)]
        np.testing.assert_allclose(values, expected, atol=1e-4)
    candidates = _ids(lm, "12345")[:5] if len(_ids(lm, "12345")) == 5 else [_ids(lm, d)[0] for d in "12345"]
    nexts = next_token_log_probs(lm, prompts, candidates)
    for prompt, row in zip(prompts, nexts, strict=True):
        np.testing.assert_allclose(row, _direct(lm, prompt)[-1, candidates].numpy(), atol=1e-4)


def test_the_pass_cost_is_timed_once_per_model_and_device(lm: CausalLM) -> None:
    cost = pass_cost(lm)
    assert cost is pass_cost(lm) and cost.fixed >= 0 and cost.per_token > 0


def test_cond_lp_is_the_pmi_of_a_hand_built_prompt(lm: CausalLM) -> None:
    per_template = []
    matrix = cond_lp_matrix(INPUTS, OUTPUTS, TARGETS, lm)
    for k, template in enumerate(templates()["cond_lp"], 1):
        values = []
        for x, y, s in zip(INPUTS, OUTPUTS, TARGETS, strict=True):
            chat = template.get("chat", False)
            render = (lambda t: _chat(lm, t)) if chat else (lambda t: [lm.start_id, *_ids(lm, t)])
            cont = _ids(lm, y if chat else f" {y}") + [lm.tokenizer.eos_token_id]
            given = render(template["conditional"].format(input=x, style=s, output="", source=""))
            alone = render(template["marginal"].format(input="", style=s, output="", source=""))
            lp_given, lp_alone = _direct(lm, given + cont), _direct(lm, alone + cont)
            values.append(np.mean([lp_given[len(given) - 1 + j, t].item() - lp_alone[len(alone) - 1 + j, t].item()
                                   for j, t in enumerate(cont)]))
        np.testing.assert_allclose(matrix[:, k - 1], values, atol=1e-4)
        per_template.append(values)
    average = cond_lp(INPUTS, OUTPUTS, TARGETS, lm)
    np.testing.assert_allclose(average, np.mean(per_template, axis=0), atol=1e-4)
    np.testing.assert_allclose(cond_lp(INPUTS, OUTPUTS, TARGETS, lm, template=2), per_template[1], atol=1e-4)
    assert average[0] > 0  # the input explains its faithful rewrite beyond the style alone


@pytest.mark.parametrize("metric", ["judge_style", "judge_content", "judge_fluency"])
def test_a_judge_is_the_expected_rating_under_the_answer_logits(lm: CausalLM, metric: str) -> None:
    scorer = {"judge_style": judge_style, "judge_content": judge_content, "judge_fluency": judge_fluency}[metric]
    digits = [_ids(lm, d)[0] for d in "12345"]
    per_template = []
    matrix = judge_matrix(metric, INPUTS, OUTPUTS, TARGETS, lm)
    for k, template in enumerate(templates()[metric], 1):
        expected = []
        for x, y, s in zip(INPUTS, OUTPUTS, TARGETS, strict=True):
            logits = _direct(lm, _chat(lm, template["prompt"].format(input=x, output=y, style=s, source="")))[-1]
            p = torch.softmax(logits[digits], dim=0).numpy()  # log-softmax then renormalised over the answers
            expected.append(float(sum((i + 1) * p[i] for i in range(5))))
        np.testing.assert_allclose(matrix[:, k - 1], expected, atol=1e-4)
        per_template.append(expected)
    average = scorer(INPUTS, OUTPUTS, TARGETS, lm)
    np.testing.assert_allclose(average, np.mean(per_template, axis=0), atol=1e-4)
    np.testing.assert_allclose(scorer(INPUTS, OUTPUTS, TARGETS, lm, template=3), per_template[2], atol=1e-4)
    assert ((average >= 1) & (average <= 5)).all()


def test_evaluate_names_the_styles_in_the_prompts_and_signs_the_columns(lm: CausalLM) -> None:
    lowered = [" ".join(t.lower().replace(".", " .").split()) for t in INPUTS]
    card = tsteval.evaluate(lowered, OUTPUTS, source_style="0", target_style="1", metrics=["judge_style", "cond_lp"],
                            style_labels={"0": "negative", "1": "positive"}, text_form="as-is")
    assert {"judge_style@smollm2", "cond_lp@smollm2"} <= set(card.metrics)
    np.testing.assert_allclose(card.frame["judge_style@smollm2"], judge_style(lowered, OUTPUTS, TARGETS, lm),
                               atol=1e-4)
    signature = card.signatures["cond_lp@smollm2"]
    assert f"templates:{templates_hash()}" in signature and "text:as-is" in signature and "template:0" in signature
    restored = tsteval.evaluate(lowered, OUTPUTS, source_style="0", target_style="1", metrics=["cond_lp"],
                                style_labels="0=negative,1=positive")
    assert "text:tokenised-lowercase" in restored.signatures["cond_lp@smollm2"]
    inputs, _ = as_written(lowered + OUTPUTS, "tokenised-lowercase")
    np.testing.assert_allclose(restored.frame["cond_lp@smollm2"],
                               cond_lp(inputs[:3], [restore(o) for o in OUTPUTS], TARGETS, lm), atol=1e-4)


def test_each_lm_metric_keeps_its_range_and_signs_its_parameters(lm: CausalLM) -> None:
    """The registry contract (tests/test_metric_contract.py) for the LM metrics, one template each to stay cheap.
    Runs refuse empty outputs; called directly, an empty output is scored as the model reads it (the end token
    alone), a finite score."""
    from tsteval.metrics.registry import METRICS, metric_of

    names = ["cond_lp:template=1", "judge_style:template=1", "judge_content:template=1", "judge_fluency:template=1"]
    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="negative", target_style="positive", metrics=names)
    for name in ("cond_lp", "judge_style", "judge_content", "judge_fluency"):
        metric = METRICS[name]
        column = f"{name}@smollm2"
        values = card.frame[column].to_numpy(float)
        low, high = metric.range
        assert np.isfinite(values).all() and (values >= low).all() and (values <= high).all(), (column, values)
        signature = card.signatures[column]
        assert metric_of(column, signature) is metric
        fields = signature.split("|")
        assert fields[0] == f"metric:{name}" and "template:1" in fields
        for key, value in metric.settings.items():
            assert f"{key}:{value}" in fields
        for library in metric.libraries:
            assert any(f.startswith(f"{library}:") for f in fields)
    assert np.isfinite(cond_lp(INPUTS[:1], [""], TARGETS[:1], lm, template=1)).all()


def test_lm_metrics_refuse_another_model_and_a_bad_template() -> None:
    with pytest.raises(TstevalError, match="give --language-model gpt2"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="a", target_style="b", metrics=["cond_lp@gpt2"])
    with pytest.raises(TstevalError, match=r"template='7' is not one of \[0, 1, 2, 3\]"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="a", target_style="b", metrics=["judge_style:template=7"])


@pytest.mark.parametrize("tokenised, restored", [
    ("i did n't like the food , it was cold .", "I didn't like the food, it was cold."),
    ("we ca n't go , i wo n't ! it 's my life .", "We can't go, I won't! It's my life."),
    ("the staff 's attitude was \" great \" ( not ) !", "The staff's attitude was \"great\" (not)!"),
    ("i 'm sure . you 'll see ? yes", "I'm sure. You'll see? Yes"),
    ("prices are $ 5 and 20 % off", "Prices are $5 and 20% off"),
])
def test_the_restorer_on_known_pairs(tokenised: str, restored: str) -> None:
    assert restore(tokenised) == restored


def test_the_text_form_is_detected_from_the_texts() -> None:
    assert detect(["the food was great .", "i did n't like it", "rude staff !"]) == "tokenised-lowercase"
    assert detect(["The food was great.", "I didn't like it", "Rude staff!"]) == "as-is"
    assert detect(["ok", "1 2 3"]) == "as-is"
    assert as_written(["The food."], "auto") == (["The food."], "as-is")


def test_the_lm_style_probe_is_the_log_odds_of_two_hand_built_prompts(lm: CausalLM) -> None:
    from benchmarks.evidence.lm_style_probe import style_log_odds

    sources = ["negative"] * len(OUTPUTS)
    for template in templates()["cond_lp"]:
        chat = template.get("chat", False)
        render = (lambda t: _chat(lm, t)) if chat else (lambda t: [lm.start_id, *_ids(lm, t)])
        expected = []
        for y, s, r in zip(OUTPUTS, TARGETS, sources, strict=True):
            cont = _ids(lm, y if chat else f" {y}") + [lm.tokenizer.eos_token_id]
            means = []
            for style in (s, r):
                prompt = render(template["marginal"].format(input="", style=style, output="", source=""))
                logp = _direct(lm, prompt + cont)
                means.append(np.mean([logp[len(prompt) - 1 + j, t].item() for j, t in enumerate(cont)]))
            expected.append(means[0] - means[1])
        np.testing.assert_allclose(style_log_odds(OUTPUTS, TARGETS, sources, lm, template), expected, atol=1e-4)


class _Timed:
    """A stand-in decoder whose pass takes ``fixed`` s below ``knee`` tokens, ``per_token`` s a token above: a GPU
    whose passes cost their launches until the batch is large."""

    def __init__(self, fixed: float, per_token: float, knee: int) -> None:
        self.fixed, self.per_token, self.knee, self.shapes = fixed, per_token, knee, []

    def __call__(self, input_ids: torch.Tensor) -> None:
        import time

        self.shapes.append(tuple(input_ids.shape))
        time.sleep(max(self.fixed, input_ids.numel() * self.per_token) if input_ids.numel() >= self.knee
                   else self.fixed)


def test_the_gpu_calibration_widens_until_a_per_token_cost_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU the wide pass doubles until it takes twice the small one (each new shape run once untimed), and
    the passes timed are kept: with a pass all fixed cost up to 2 budgets, the line comes from the widest."""
    from types import SimpleNamespace

    decoder = _Timed(fixed=0.01, per_token=1e-6, knee=2 * 4096)  # 8,192 tokens: 10 ms; 16,384: 16 ms; 32,768: 33
    model = SimpleNamespace(get_decoder=lambda: decoder)
    lm = SimpleNamespace(model=model, model_id="stand-in", device="cuda", batch_tokens=4096, threads=None,
                         start_id=0)
    full = torch.full
    monkeypatch.setattr(torch, "full", lambda shape, value, device=None: full(shape, value))  # on this CPU
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(prefix_scoring, "attention_kernels", lambda device: __import__("contextlib").nullcontext())
    timed: list[tuple[int, int, float]] = []
    cost = prefix_scoring._calibrated(lm, timed)
    assert [(rows, tokens) for rows, tokens, _ in timed] == [(1, 8), (64, 64), (128, 64), (256, 64), (512, 64)]
    assert timed[-1][2] >= prefix_scoring.WIDER * timed[0][2] > timed[-2][2]  # stopped at the first wide enough
    assert decoder.shapes.count((512, 64)) == 1 + prefix_scoring.REPEATS  # once untimed, then timed
    assert cost.per_token == pytest.approx((timed[-1][2] - timed[0][2]) / (512 * 64 - 8))


def test_a_gpu_forward_pass_uses_no_cudnn_attention() -> None:
    """cuDNN's attention builds a plan per batch shape: on CUDA the LM and encoder passes leave it out."""
    from tsteval.core.devices import attention_kernels

    with attention_kernels("cuda"):
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
    with attention_kernels("cpu"):  # nothing changes on a CPU
        assert torch.backends.cuda.cudnn_sdp_enabled() == torch.backends.cuda.flash_sdp_enabled()


def test_a_model_is_loaded_once_for_repeated_runs(lm: CausalLM) -> None:
    """A second CausalLM of the same model, precision and device reuses the loaded weights (no second load)."""
    again = CausalLM("smollm2", threads=1, batch_tokens=64)
    assert again.model is lm.model and again.tokenizer is lm.tokenizer and again.batch_tokens == 64
