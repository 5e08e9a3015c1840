"""The causal-LM batch planner (:func:`tsteval.metrics.judges.prefix_scoring.plan_batches`) under fake device costs:
prompts shaped like ``judge_content``'s (one instruction, then the input, then the scored text), where sharing
leaves one small batch per input.  A zero fixed cost gives the token-minimal sharing plan; a large one fewer,
larger, plainly padded batches; every plan covers each row once within the budget."""

from __future__ import annotations

import pytest

from tsteval.metrics.judges.prefix_scoring import TOKEN_MINIMAL, Batch, PassCost, plan_batches

INSTRUCTION = list(range(100, 112))  # 12 tokens every prompt starts with
BUDGET = 4096


def _prompts() -> tuple[list[list[int]], list[int]]:
    """8 inputs (10 tokens each) x 6 outputs (4-9 tokens), each prompt ending with 2 tokens."""
    prompts, lengths = [], []
    for x in range(8):
        for y in range(6):
            prompt = [*INSTRUCTION, *range(1000 + 10 * x, 1010 + 10 * x), 7, 8]
            prompts.append(prompt)
            lengths.append(len(prompt) + 4 + (x + y) % 6)
    return prompts, lengths


def _positions(plan: list[Batch], lengths: list[int]) -> int:
    return sum(TOKEN_MINIMAL.of(b, lengths) for b in plan)


def _check(plan: list[Batch], lengths: list[int], budget: int) -> None:
    assert sorted(i for b in plan for i in b.rows) == list(range(len(lengths)))
    for b in plan:
        assert len(b.rows) * (max(lengths[i] for i in b.rows) - b.shared) <= budget


@pytest.mark.parametrize("per_token", [1.0, 0.003])
def test_no_fixed_cost_is_the_token_minimal_sharing(per_token: float) -> None:
    prompts, lengths = _prompts()
    plan = plan_batches(prompts, lengths, BUDGET, PassCost(fixed=0.0, per_token=per_token))
    _check(plan, lengths, BUDGET)
    # one batch per input, sharing the whole prompt but its last token
    assert sorted((sorted(b.rows), b.shared) for b in plan) == [(list(range(6 * x, 6 * x + 6)), 23) for x in range(8)]
    plain = plan_batches(prompts, lengths, BUDGET, PassCost(fixed=1e6, per_token=1.0))
    assert _positions(plan, lengths) < _positions(plain, lengths)


def test_a_large_fixed_cost_gives_fewer_larger_plain_batches() -> None:
    prompts, lengths = _prompts()
    sharing = plan_batches(prompts, lengths, BUDGET)
    plan = plan_batches(prompts, lengths, BUDGET, PassCost(fixed=1e6, per_token=1.0))
    _check(plan, lengths, BUDGET)
    assert len(plan) == 1 < len(sharing) == 8
    assert plan[0].shared == 0
    # under a tight budget the rows are padded plainly, in as few batches as the budget allows
    tight = plan_batches(prompts, lengths, 300, PassCost(fixed=1e6, per_token=1.0))
    _check(tight, lengths, 300)
    assert all(b.shared == 0 for b in tight) and len(tight) == 6


def test_a_moderate_fixed_cost_is_the_cheapest_of_sharing_and_padding() -> None:
    prompts, lengths = _prompts()
    cost = PassCost(fixed=150.0, per_token=1.0)
    plan = plan_batches(prompts, lengths, BUDGET, cost)
    _check(plan, lengths, BUDGET)

    def total(p: list[Batch]) -> float:
        return sum(cost.of(b, lengths) for b in p)

    candidates = [plan_batches(prompts, lengths, BUDGET), [Batch(list(range(len(lengths))), 0)],
                  [Batch(list(range(len(lengths))), len(INSTRUCTION))]]
    assert all(total(plan) <= total(other) for other in candidates)
