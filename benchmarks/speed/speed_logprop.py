"""Speed of ``logprop_content`` with each packaged causal LM: pairs per second of tsteval's scoring (the three
instructions' prompts sharing the system prompt, and each instruction's prompts sharing it up to the input,
computed once per batch) against the straightforward transformers loop on the same sequences (fp32, whole
sequences in padded batches of 16, nothing shared), with the largest difference of their values; then the same
model in bfloat16 and with int8 dynamic quantisation of its linear layers (``torch.ao.quantization.
quantize_dynamic``, per-tensor int8 weights, activations quantised per batch), their speed and how far their
``logprop_content`` is from fp32's.

Data: the first ``--pairs`` DualRL Yelp transfers (text restored to sentence case), target style named
``positive``/``negative``.  Wall and process CPU seconds.  bf16's speed depends on the CPU (native with AVX512-BF16
or AMX, emulated and tens of times slower without: docs/precision.md), so the page names torch's CPU capability
and whether bf16 was native.  Results: ``results/speed_logprop.{md,json}``.

Run: ``python -m benchmarks.speed.speed_logprop [--pairs 32] [--models smollm2,gemma3-270m,qwen2.5-coder-1.5b]
[--device cpu|cuda] [--tag TAG]`` (``--tag``: a comparison run, e.g. the tree before and after a change, written beside
the results as ``speed_logprop_TAG.{md,json}``).
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish, timed
from benchmarks.speed.speed_lm_judges import _pairs
from tsteval.core import markdown as md
from tsteval.core.devices import cpu_capability, native_bf16
from tsteval.metrics.judges.logprop import logprop_from_log_probs, logprop_prompts, logprop_scores
from tsteval.metrics.judges.prompts import end_of_turn
from tsteval.metrics.naturalness.causal_lm import CausalLM

RESULTS = Path(__file__).resolve().parents[1] / "results"
PLAIN_BATCH = 16


def plain_logprop(lm: CausalLM, inputs: list[str], outputs: list[str], targets: list[str]) -> np.ndarray:
    """``logprop_content`` by the plain loop: every (instruction, pair) sequence whole, padded batches of
    :data:`PLAIN_BATCH` in length order, one forward pass each, log-softmax over the continuation positions."""
    import torch

    end = end_of_turn(lm)
    conts = [[*lm.tokenizer(y, add_special_tokens=False)["input_ids"], end] for y in outputs]
    prompts = [p for role in logprop_prompts(lm, inputs, targets, [""] * len(inputs)) for p in role]
    sequences = [p + conts[k % len(conts)] for k, p in enumerate(prompts)]
    order = np.argsort([len(s) for s in sequences], kind="stable")
    logps: list[np.ndarray] = [np.empty(0)] * len(sequences)
    with torch.inference_mode():
        for start in range(0, len(order), PLAIN_BATCH):
            batch = order[start:start + PLAIN_BATCH]
            width = max(len(sequences[i]) for i in batch)
            tokens = torch.zeros((len(batch), width), dtype=torch.long)
            mask = torch.zeros_like(tokens)
            for row, i in enumerate(batch):
                tokens[row, :len(sequences[i])], mask[row, :len(sequences[i])] = torch.tensor(sequences[i]), 1
            logits = lm.model(input_ids=tokens.to(lm.device), attention_mask=mask.to(lm.device)).logits
            for row, i in enumerate(batch):
                first, cont = len(prompts[i]), conts[i % len(conts)]
                logp = torch.log_softmax(logits[row, first - 1:first - 1 + len(cont)].double(), dim=-1)
                logps[i] = logp.gather(1, torch.tensor(cont, device=logp.device)[:, None]).squeeze(1).cpu().numpy()
    n = len(conts)
    return np.array([logprop_from_log_probs(np.stack([logps[k * n + i] for k in range(3)]))[0] for i in range(n)])


def measure(model: str, pairs: int, device: str, threads: int) -> dict:
    """One model's row: tsteval fp32, the plain loop, bf16 and int8 dynamic."""
    import torch

    torch.set_num_threads(threads)
    inputs, outputs, targets = _pairs(pairs)
    lm = CausalLM(model, device=device, threads=threads, precision="fp32")
    ours, wall, cpu = timed(lambda: logprop_scores(inputs, outputs, targets, lm)["logprop_content"])
    plain, wall_p, cpu_p = timed(lambda: plain_logprop(lm, inputs, outputs, targets))
    row = {"model": model, "model_id": lm.model_id, "pairs": pairs, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
           "pairs_per_s": round(pairs / wall, 2), "plain_wall_s": round(wall_p, 2),
           "plain_pairs_per_s": round(pairs / wall_p, 2), "speedup": round(wall_p / wall, 2),
           "max_abs_diff_plain": float(np.abs(ours - plain).max())}
    half = CausalLM(model, device=device, threads=threads, precision="bf16")
    variants = {"bf16": half}
    if device == "cpu":
        variants["int8-dynamic"] = lm
        lm.model = torch.ao.quantization.quantize_dynamic(lm.model, {torch.nn.Linear}, dtype=torch.qint8,
                                                              inplace=True)
    for name, variant in variants.items():
        values, wall_v, _ = timed(lambda v=variant: logprop_scores(inputs, outputs, targets, v)["logprop_content"])
        row[name] = {"wall_s": round(wall_v, 2), "pairs_per_s": round(pairs / wall_v, 2),
                     "speedup_vs_fp32": round(wall / wall_v, 2), "max_abs_diff": float(np.abs(values - ours).max()),
                     "pearson_with_fp32": float(np.corrcoef(values, ours)[0, 1])}
    return row


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--models", default="smollm2,gemma3-270m,qwen2.5-coder-1.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tag", help="write speed_logprop_TAG.{json,md} (a comparison run) instead of the results")
    return parser


def _row(r: dict) -> dict[str, str]:
    """One model's row of the page's table."""
    b, q = r.get("bf16", {}), r.get("int8-dynamic", {})
    return {"model": r["model"], "pairs/s": str(r["pairs_per_s"]), "plain pairs/s": str(r["plain_pairs_per_s"]),
            "speed-up": f"{r['speedup']}x", "max diff vs plain": f"{r['max_abs_diff_plain']:.1e}",
            "bf16 pairs/s (x fp32)": f"{b.get('pairs_per_s')} ({b.get('speedup_vs_fp32')}x)",
            "bf16 max diff": f"{b.get('max_abs_diff', float('nan')):.3f}",
            "int8 pairs/s (x fp32)": f"{q.get('pairs_per_s')} ({q.get('speedup_vs_fp32')}x)",
            "int8 max diff": f"{q.get('max_abs_diff', float('nan')):.3f}"}


def markdown(report: dict) -> str:
    """The results page of ``report`` (what :func:`main` writes to ``speed_logprop.json``)."""
    meta = report["meta"]
    bf16 = "native" if meta["native_bf16"] else "emulated"
    recorded = f" CPU capability recorded {meta['capability_recorded']}." if "capability_recorded" in meta else ""
    lines = ["# Speed of logprop_content", "",
             f"{report['pairs']} DualRL Yelp pairs (three prompts each), device {meta['device']} ({meta['machine']}, "
             f"torch CPU capability {meta['cpu_capability']}, bf16 {bf16}), {meta['threads']} threads, load average "
             f"{meta['load_average_before']} before the run. `plain`: the same sequences whole, padded batches of "
             f"{PLAIN_BATCH} in length order, fp32, nothing shared. bf16 and int8: the same model cast to bfloat16 / "
             "with int8 dynamic quantisation of its linear layers, scored by tsteval's code; their difference is "
             f"from tsteval's fp32 values.{recorded}", "",
             md.table(pd.DataFrame([_row(r) for r in report["rows"]]))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    load = os.getloadavg()[0]
    rows = [measure(m, args.pairs, args.device, args.threads) for m in args.models.split(",") if m]
    meta = {"device": args.device, "threads": args.threads, "machine": platform.processor() or platform.machine(),
            "cpu_capability": cpu_capability(), "native_bf16": native_bf16(args.device),
            "load_average_before": round(load, 2)}
    report = {"meta": meta, "pairs": args.pairs, "rows": rows}
    suffix = ("" if args.device == "cpu" else "_gpu") + (f"_{args.tag}" if args.tag else "")
    publish(RESULTS, f"speed_logprop{suffix}", report, markdown)


if __name__ == "__main__":
    main()
