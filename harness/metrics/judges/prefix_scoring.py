"""Causal-LM forward passes over prompts that share their beginnings, each shared part computed once per batch.

Every LM metric that reads a prompt scores token sequences ``prompt + continuation``: :func:`continuation_log_probs`
gives the log-probability of each continuation token (``cond_lp``), :func:`next_token_log_probs` the
log-probabilities of a few candidate tokens after each prompt (the ``judge_*`` ratings).  Prompts built from one
template share their instruction, and the prompts of one input (every system's output for it) share the input too.

Batches are chosen by the device's cost of a batch (:class:`PassCost`): a fixed cost per forward pass plus a cost
per computed position, timed on the model once per process (:func:`pass_cost`).  Sequences are sorted by prompt,
so those sharing a beginning are neighbours, and cut greedily: a sequence joins the batch when that costs less
than starting a new batch, within a budget of padded positions.  A sharing batch that costs more than its rows'
share of full plain batches gives them up to plain padding (sorted by length, nothing shared); of that plan, the
sharing plan and every row plainly padded, the cheapest is run, so where the model holds no LM metric is slower
than plain padding.  With no fixed cost this is the token-minimal sharing; a large fixed cost (a GPU's ~40 ms a
pass, where an input before the scored text leaves ~18 rows sharing a prefix) gives fewer, larger, plain batches.
For a batch, the longest common prefix of its prompts (less one token, so the last
prompt position is always computed with the rest) runs once with batch size 1; its key/value cache is repeated
for the batch, and the remainders run right-padded with an attention mask over prefix and remainder, at positions
continuing the prefix's.  The LM head runs only where a log-probability is read.  The values equal a plain forward
pass over each whole sequence up to float rounding (tests/test_judges.py checks 1e-4).

Positions are counted in tokens of ``lm.tokenizer``; the sequences are token ids, built by
:mod:`tsteval.metrics.judges.prompts`.
"""

from __future__ import annotations

import inspect
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tsteval.core.devices import attention_kernels, length_batches, torch_threads
from tsteval.core.errors import TstevalError
from tsteval.core.progress import progress
from tsteval.metrics.naturalness.causal_lm import (
    HEAD_CHUNK,
    CausalLM,
    flat_ids,
    padded_batch,
    split_rows,
    to_device,
)

# A shared prefix shorter than this is not worth a separate pass.
MIN_SHARED = 4
# The calibration's passes: one row of SMALL tokens, and rows of WIDE tokens filling a 32nd of the budget (CPU) or
# the whole budget (GPU); on a GPU the wide pass doubles (up to WIDEST budgets) until it takes WIDER times the small
# one, so that the cost per token shows above the passes' fixed cost (in bf16 a pass of a whole budget can take no
# longer than one of 8 tokens: the host's launches, not the arithmetic, set its time).
SMALL, WIDE, REPEATS, WIDER, WIDEST = 8, 64, 3, 2.0, 16
# Float32 logits one LM-head call may hold on a GPU (1 GiB).
GPU_LOGITS = 2**28


@dataclass(frozen=True)
class Batch:
    """Rows of one forward pass and the number of prompt tokens they share."""

    rows: list[int]
    shared: int


@dataclass(frozen=True)
class PassCost:
    """Seconds a batch takes on a device: ``fixed`` per forward pass (two when the batch shares a prefix: the
    prefix, then the remainders) plus ``per_token`` per computed position.

    >>> PassCost(fixed=10.0, per_token=1.0).of(Batch([0, 1], shared=3), [8, 9])
    35.0
    """

    fixed: float
    per_token: float

    def of(self, batch: Batch, lengths: Sequence[int]) -> float:
        """The cost of ``batch`` (``lengths``: the whole sequences' lengths)."""
        return self.of_shape(batch.shared, len(batch.rows), max(lengths[i] for i in batch.rows))

    def of_shape(self, shared: int, rows: int, longest: int) -> float:
        """The cost of a batch of ``rows`` sequences of at most ``longest`` tokens sharing ``shared``.

        >>> PassCost(fixed=10.0, per_token=1.0).of_shape(3, 2, 9)
        35.0
        """
        passes = 2 if shared else 1
        return passes * self.fixed + (shared + rows * (longest - shared)) * self.per_token


# Token positions alone: the plan that computes the fewest positions.
TOKEN_MINIMAL = PassCost(fixed=0.0, per_token=1.0)


def _common(a: Sequence[int], b: Sequence[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    if a[:n] == b[:n]:  # the usual case after sorting, at C speed
        return n
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _emitted(rows: list[int], shared: int) -> Batch:
    """The batch of ``rows``: a single row shares nothing (its prefix would be one more pass for nothing)."""
    return Batch(rows, shared if len(rows) > 1 else 0)


def _sharing(prompts: Sequence[Sequence[int]], lengths: Sequence[int], budget: int, cost: PassCost) -> list[Batch]:
    """Rows sorted by prompt, cut greedily: a row joins the batch when that costs less than starting a new one
    (one pass over the rows: the open batch's longest sequence is kept as it grows)."""
    # big-endian bytes sort as the token lists do (a prefix first), compared at C speed
    keys = [struct.pack(f">{len(p)}I", *p) for p in prompts]
    order = sorted(range(len(prompts)), key=lambda i: (keys[i], lengths[i]))
    batches: list[Batch] = []
    rows: list[int] = []
    shared = longest = 0
    for i in order:
        if rows:
            common = _common(prompts[rows[0]], prompts[i], min(shared, len(prompts[i]) - 1))
            common = common if common >= MIN_SHARED else 0
            wider = max(longest, lengths[i])
            joined = cost.of_shape(common, len(rows) + 1, wider)
            apart = cost.of_shape(shared if len(rows) > 1 else 0, len(rows), longest) + cost.of_shape(0, 1, lengths[i])
            if joined <= apart and (len(rows) + 1) * (wider - common) <= budget:
                rows.append(i)
                shared, longest = common, wider
                continue
            batches.append(_emitted(rows, shared))
        rows, shared, longest = [i], len(prompts[i]) - 1, lengths[i]
        shared = shared if shared >= MIN_SHARED else 0
    if rows:
        batches.append(_emitted(rows, shared))
    return batches


def _padded(rows: Sequence[int], lengths: Sequence[int], budget: int) -> list[Batch]:
    """``rows`` as plain padded batches: sorted by length, at most ``budget`` padded positions each."""
    return [Batch([rows[k] for k in part], 0) for part in length_batches([lengths[i] for i in rows], budget=budget)]


def plan_batches(prompts: Sequence[Sequence[int]], lengths: Sequence[int], budget: int,
                 cost: PassCost = TOKEN_MINIMAL) -> list[Batch]:
    """Batches of rows (see the module docstring): ``prompts`` are the prompt ids, ``lengths`` the whole
    sequences' lengths, ``budget`` the padded positions a batch may hold beyond its shared prefix, ``cost`` the
    device's (:func:`pass_cost`; by default positions alone).

    >>> prompts, lengths = [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6], [9]], [8, 9, 2]
    >>> [(b.rows, b.shared) for b in plan_batches(prompts, lengths, 64)]
    [([0, 1], 5), ([2], 0)]
    >>> [(b.rows, b.shared) for b in plan_batches(prompts, lengths, 64, PassCost(fixed=100.0, per_token=1.0))]
    [([0, 1, 2], 0)]
    """
    shared = _sharing(prompts, lengths, budget, cost)
    per_position = cost.per_token + cost.fixed / budget  # a padded row's share of full plain batches
    kept = [b for b in shared if cost.of(b, lengths) <= per_position * sum(lengths[i] for i in b.rows)]
    pooled = sorted(set(range(len(prompts))) - {i for b in kept for i in b.rows})
    plans = (shared, kept + _padded(pooled, lengths, budget), _padded(range(len(prompts)), lengths, budget))
    return min(plans, key=lambda plan: sum(cost.of(b, lengths) for b in plan))  # ties: the first


_COSTS: dict[tuple[str, str], PassCost] = {}
# Each calibration's timed passes (model id, device) -> [(rows, tokens per row, best seconds), ...], for the reports.
CALIBRATIONS: dict[tuple[str, str], list[tuple[int, int, float]]] = {}


def pass_cost(lm: object) -> PassCost:
    """The cost of ``lm``'s forward passes on its device, calibrated on first use and kept for the process (one
    per model and device): the best of :data:`REPEATS` timings of a pass over one row of :data:`SMALL` tokens and
    of one over rows of :data:`WIDE` tokens (:func:`calibration_rows`; on a GPU widened until it is :data:`WIDER`
    times slower), the line through the two giving the fixed and the per-token seconds (:func:`line_cost`; about
    2 s on a CPU).  The passes timed are kept in :data:`CALIBRATIONS`."""
    key = (lm.model_id, str(lm.device))
    if key not in _COSTS:
        _COSTS[key] = _calibrated(lm, CALIBRATIONS.setdefault(key, []))
    return _COSTS[key]


def calibration_rows(batch_tokens: int, device: str) -> int:
    """Rows of :data:`WIDE` tokens in the first wide calibration pass: a 32nd of the budget on a CPU (a whole budget
    takes seconds there), the whole budget on a GPU, where a pass of a few hundred tokens costs what one of eight
    does (the launches, not the arithmetic) and only a full one shows the cost per token.

    >>> calibration_rows(2048, "cpu"), calibration_rows(16384, "cpu"), calibration_rows(16384, "cuda")
    (1, 8, 256)
    """
    return max(1, batch_tokens // (WIDE if device.startswith("cuda") else 32 * WIDE))


def line_cost(small: float, wide: float, wide_tokens: int, device: str) -> PassCost:
    """The cost through the timings of a pass of :data:`SMALL` tokens (``small`` s) and one of ``wide_tokens``
    (``wide`` s).  Where the wider pass is not the slower: on a CPU, timings swamped by other work, so positions
    alone (the token-minimal plan); on a GPU, a pass is all fixed cost, so passes alone (the fewest, widest
    batches).

    >>> line_cost(1.0, 3.0, 208, "cpu")
    PassCost(fixed=0.92, per_token=0.01)
    >>> line_cost(2.0, 1.0, 100, "cpu"), line_cost(2.0, 1.0, 100, "cuda")
    (PassCost(fixed=0.0, per_token=0.01), PassCost(fixed=2.0, per_token=0.0))
    """
    if wide <= small:
        return PassCost(fixed=small, per_token=0.0) if device.startswith("cuda") else \
            PassCost(fixed=0.0, per_token=wide / wide_tokens)
    per_token = (wide - small) / (wide_tokens - SMALL)
    return PassCost(fixed=max(small - SMALL * per_token, 0.0), per_token=per_token)


def widths(batch_tokens: int, device: str) -> list[int]:
    """The rows of :data:`WIDE` tokens of each wide pass the calibration may time, in order: on a GPU doubling from
    :func:`calibration_rows` up to :data:`WIDEST` budgets.

    >>> widths(2048, "cpu"), widths(1024, "cuda")
    ([1], [16, 32, 64, 128, 256])
    """
    rows = calibration_rows(batch_tokens, device)
    if not device.startswith("cuda"):
        return [rows]
    return [rows * 2**k for k in range(WIDEST.bit_length()) if rows * 2**k * WIDE <= WIDEST * batch_tokens]


def _calibrated(lm: object, timed: list[tuple[int, int, float]]) -> PassCost:
    """:func:`pass_cost`'s timings on ``lm`` (each wide pass timed appended to ``timed`` after the small one's) and
    the cost through them.  The two sizes are timed alternately, so that a change of load slows both alike; on a
    GPU each wide shape runs once untimed first (its first-use costs)."""
    import time

    import torch

    decoder, device = lm.model.get_decoder(), str(lm.device)
    gpu = device.startswith("cuda")
    sync = torch.cuda.synchronize if gpu else lambda: None

    def seconds(tokens: object) -> float:
        sync()
        start = time.perf_counter()
        decoder(input_ids=tokens)
        sync()
        return time.perf_counter() - start

    with torch_threads(lm.threads), torch.inference_mode(), attention_kernels(lm.device):
        small_tokens = torch.full((1, SMALL), lm.start_id, device=lm.device)
        decoder(input_ids=small_tokens)  # warm-up
        small = float("inf")
        for rows in widths(lm.batch_tokens, device):
            wide_tokens = torch.full((rows, WIDE), lm.start_id, device=lm.device)
            if gpu:
                decoder(input_ids=wide_tokens)
            wide = float("inf")
            for _ in range(REPEATS):
                small = min(small, seconds(small_tokens))
                wide = min(wide, seconds(wide_tokens))
            timed.append((rows, WIDE, wide))
            if wide >= WIDER * small:
                break
    timed.insert(0, (1, SMALL, small))
    return line_cost(small, wide, rows * WIDE, device)


def _hidden(lm: object, sequences: list[list[int]], batch: Batch) -> object:
    """Last-layer states of the batch's remainders (rows x width x hidden), right-padded."""
    import torch

    decoder, device = lm.model.get_decoder(), lm.device
    # transformers 5 calls the key/value cache ``cache``, earlier versions ``past_key_values``.
    keyword = "cache" if "cache" in inspect.signature(decoder.forward).parameters else "past_key_values"
    cache = None
    shared = batch.shared
    if shared:
        prefix = to_device(torch.tensor([sequences[batch.rows[0]][:shared]]), device)
        cache = getattr(decoder(input_ids=prefix, use_cache=True), keyword)
        cache.batch_repeat_interleave(len(batch.rows))
    rests = [sequences[i][shared:] for i in batch.rows]
    tokens, real = (to_device(t, device) for t in padded_batch(rests, range(len(rests))))
    mask = torch.cat([torch.ones((len(rests), shared), dtype=torch.long, device=device), real], dim=1)
    positions = torch.arange(shared, shared + tokens.shape[1], device=device)[None].expand(len(rests), -1)
    out = decoder(input_ids=tokens, attention_mask=mask, position_ids=positions, use_cache=cache is not None,
                  **{keyword: cache})
    return out.last_hidden_state


def _head_rows(lm: object) -> int:
    """Positions per LM-head call: :data:`HEAD_CHUNK` on a CPU; on a GPU as many as keep the float32 logits
    under :data:`GPU_LOGITS` elements."""
    if not str(lm.device).startswith("cuda"):
        return HEAD_CHUNK
    return max(HEAD_CHUNK, GPU_LOGITS // lm.model.get_output_embeddings().weight.shape[0])


def _run(lm: object, sequences: list[list[int]], prompt_lengths: Sequence[int],
         read: Callable[[object, Batch], object], what: str) -> tuple[list[int], np.ndarray]:
    """Batch ``sequences`` (prompt first) and call ``read(states, batch)`` per batch for a tensor of values on the
    device; the rows in the order read and every batch's values, joined and brought to the host once at the end
    (no wait for the GPU between batches).  A sequence longer than the model's context is refused before any pass:
    an LM metric's prompt cannot be cut without losing the question or the text, and past its context a model is
    not what it was trained to be."""
    import torch

    longer = sum(len(s) > lm.max_tokens + 1 for s in sequences)
    if longer:
        raise TstevalError(f"{longer} of {len(sequences)} prompts of {what} are longer than the context of "
                           f"{lm.model_id} ({lm.max_tokens + 1} tokens); an LM metric reads its prompt whole: score "
                           "shorter texts, or give a model with a longer context (--language-model, --lm-endpoint)")
    cost = pass_cost(lm) if len(sequences) > 1 else TOKEN_MINIMAL
    batches = plan_batches([s[:n] for s, n in zip(sequences, prompt_lengths, strict=True)],
                           [len(s) for s in sequences], lm.batch_tokens, cost)
    values, order = [], []
    with torch_threads(lm.threads), torch.inference_mode(), attention_kernels(lm.device):
        for batch in progress(batches, what, unit="batch"):
            values.append(read(_hidden(lm, sequences, batch), batch))
            order.extend(batch.rows)
        return order, torch.cat(values).double().cpu().numpy() if values else np.empty(0)


def continuation_log_probs(lm: object, prompts: Sequence[Sequence[int]],
                           continuations: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Natural-log probability of each continuation token given its prompt and the continuation before it (a model
    behind an LM server, :class:`~tsteval.backends.remote.RemoteLM`, answers it itself)."""
    import torch

    if hasattr(lm, "continuation_log_probs"):
        return lm.continuation_log_probs(prompts, continuations)
    if any(not p for p in prompts):
        raise ValueError("every prompt needs at least one token")
    sequences = [[*p, *c] for p, c in zip(prompts, continuations, strict=True)]
    head, chunk = lm.model.get_output_embeddings(), _head_rows(lm)

    def read(states: object, batch: Batch) -> object:
        sizes = np.array([len(continuations[i]) for i in batch.rows])
        # the position that predicts each continuation's first token, then the next ones
        starts = np.array([len(prompts[i]) - 1 - batch.shared for i in batch.rows])
        firsts = np.repeat(np.cumsum(sizes) - sizes, sizes)
        where = np.repeat(starts, sizes) + np.arange(sizes.sum()) - firsts
        rows = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes))
        picked = states[to_device(rows, states.device), to_device(torch.from_numpy(where), states.device)]
        targets = to_device(torch.from_numpy(flat_ids([continuations[i] for i in batch.rows])), states.device)
        return torch.cat([CausalLM._head_log_probs(head, picked[k:k + chunk], targets[k:k + chunk])
                          for k in range(0, len(targets), chunk)])

    order, flat = _run(lm, sequences, [len(p) for p in prompts], read, "LM continuations")
    return split_rows(flat, order, [len(c) for c in continuations], len(sequences))


def next_token_log_probs(lm: object, prompts: Sequence[Sequence[int]], candidates: Sequence[int]) -> np.ndarray:
    """(prompts x candidates): the natural-log probability of each candidate token right after each prompt."""
    import torch

    if any(not p for p in prompts):
        raise ValueError("every prompt needs at least one token")
    head, chunk = lm.model.get_output_embeddings(), _head_rows(lm)
    wanted = torch.tensor(list(candidates), device=lm.device)

    def read(states: object, batch: Batch) -> object:
        last = np.array([len(prompts[i]) - 1 - batch.shared for i in batch.rows])
        states = states[torch.arange(len(last), device=states.device), to_device(torch.from_numpy(last),
                                                                                   states.device)]
        parts = []
        for k in range(0, len(last), chunk):
            logits = head(states[k:k + chunk]).float()
            parts.append(logits[:, wanted] - torch.logsumexp(logits, dim=-1, keepdim=True))
        return torch.cat(parts)

    result = np.zeros((len(prompts), len(candidates)))
    order, values = _run(lm, [list(p) for p in prompts], [len(p) for p in prompts], read, "LM ratings")
    result[order] = values.reshape(len(order), len(candidates))
    return result
