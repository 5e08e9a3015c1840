"""Speed of the LM metrics (``cond_lp``, ``judge_*``) with SmolLM2-135M, or another packaged LM: pairs per second
of tsteval's scoring (prompts sharing a beginning computed once per batch,
:mod:`tsteval.metrics.judges.prefix_scoring`) against the straightforward transformers call on the same prompts
(each whole sequence in length-sorted padded batches of the same token budget, no cache), with the largest
difference of their values, and the model's share of the machine's limit (forward-pass FLOPs per second over the
CPU's fp32 FMA peak, or the GPU's dense fp32 peak).

Data: the first ``--pairs`` DualRL Yelp transfers (every system's output for each input, as a researcher scores
them; text restored to sentence case), target style named ``positive``/``negative``.  One template per metric
(``template=1``), as the issue's aim counts them.  CPU seconds are the process's (``time.process_time``), wall
seconds beside them.  Results: ``results/speed_lm_judges.{md,json}``; with another ``--model``,
``results/speed_lm_judges_MODEL.{md,json}`` with its load time and the process's peak memory (the recommended
naturalness column, Qwen's ``judge_fluency`` template 2: ``--model qwen2.5-coder-1.5b --metrics judge_fluency
--template 2``).

Run: ``python -m benchmarks.speed.speed_lm_judges [--pairs 600] [--threads 2] [--device cpu|cuda] [--model NAME]
[--metrics cond_lp,judge_style,...] [--template K]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish, timed
from tsteval.core import markdown as md
from tsteval.core.devices import length_batches
from tsteval.core.text_form import as_written
from tsteval.metrics.judges.answers import answer_tokens
from tsteval.metrics.judges.cond_lp import continuations
from tsteval.metrics.judges.prefix_scoring import (
    PassCost,
    continuation_log_probs,
    next_token_log_probs,
    pass_cost,
    plan_batches,
)
from tsteval.metrics.judges.prompts import fill, render, templates
from tsteval.metrics.naturalness.causal_lm import CausalLM, padded_batch
from tsteval.readers.dualrl import load_dualrl

RESULTS = Path(__file__).resolve().parents[1] / "results"
NAMES = {"0": "negative", "1": "positive"}
METRICS = ("cond_lp", "judge_style", "judge_content", "judge_fluency")
SMOLLM2 = "smollm2"


def _pairs(n: int) -> tuple[list[str], list[str], list[str]]:
    frame = load_dualrl("yelp").frame.sort_values(["item", "system"], kind="stable").head(n)
    texts, _ = as_written(frame["input"].tolist() + frame["output"].tolist(), "tokenised-lowercase")
    return texts[:n], texts[n:], [NAMES[str(s)] for s in frame["target_style"]]


def _plain_log_probs(lm: CausalLM, sequences: list[list[int]], starts: list[int]) -> list[np.ndarray]:
    """Each sequence's log-probabilities from position ``start`` on: whole sequences, padded, no shared prefix."""
    import torch

    out: list[np.ndarray] = [np.empty(0)] * len(sequences)
    with torch.inference_mode():
        for batch in length_batches([len(s) for s in sequences], budget=lm.batch_tokens):
            tokens, mask = padded_batch(sequences, batch)
            logits = lm.model(input_ids=tokens.to(lm.device), attention_mask=mask.to(lm.device)).logits
            for row, i in enumerate(batch):
                seq = sequences[i]
                logp = torch.log_softmax(logits[row, starts[i] - 1:len(seq) - 1].double(), dim=-1)
                out[i] = logp.gather(1, torch.tensor(seq[starts[i]:], device=logp.device)[:, None]).squeeze(1).cpu(
                    ).numpy()
    return out


def _positions(prompts: list[list[int]], lengths: list[int], budget: int, cost: PassCost) -> int:
    """Token positions the shared-prefix scoring computes (prefixes once per batch, padded remainders)."""
    total = 0
    for batch in plan_batches(prompts, lengths, budget, cost):
        total += batch.shared + len(batch.rows) * (max(lengths[i] for i in batch.rows) - batch.shared)
    return total


def _peak_flops(device: str) -> tuple[float | None, str]:
    """fp32 peak FLOP/s of the machine's limit and how it was computed."""
    if device.startswith("cuda"):
        return 67e12, "H100 SXM dense fp32 (non-tensor) 67 TFLOP/s"
    cores = len(os.sched_getaffinity(0))
    mhz = None
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("cpu MHz"):
                mhz = float(line.split(":")[1])
                break
    flags = open("/proc/cpuinfo").read()
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    if mhz is None:
        return None, "unknown clock"
    peak = cores * mhz * 1e6 * lanes * 2 * 2  # 2 FMA units, 2 FLOPs per FMA
    return peak, f"{cores} cores x {mhz:.0f} MHz x {lanes} fp32 lanes x 2 FMA units x 2"


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=600)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default=SMOLLM2, help="a packaged causal LM (default: SmolLM2-135M)")
    parser.add_argument("--metrics", default=",".join(METRICS), help="comma-separated, of " + ", ".join(METRICS))
    parser.add_argument("--template", type=int, default=1, help="the template each metric scores")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    load_before = os.getloadavg()[0]
    chosen = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not chosen or set(chosen) - set(METRICS):
        raise SystemExit(f"--metrics: choose from {', '.join(METRICS)}")
    lm, load_s, _ = timed(lambda: CausalLM(args.model, device=args.device, threads=args.threads, precision="fp32"))
    import torch

    torch.set_num_threads(args.threads)
    params = sum(p.numel() for p in lm.model.parameters()) - lm.model.get_input_embeddings().weight.numel()
    params += lm.model.get_output_embeddings().weight.numel()  # the head runs (tied to the input embeddings)
    inputs, outputs, targets = _pairs(args.pairs)
    cost, calibration, _ = timed(lambda: pass_cost(lm))  # once per process, reported apart from the metrics
    rows = []
    k = args.template
    if "cond_lp" in chosen:
        rows.append(_cond_lp_row(lm, inputs, outputs, targets, k, cost))
    answers, ending = answer_tokens(lm)
    for metric in (m for m in chosen if m != "cond_lp"):
        template = templates()[metric][k - 1]
        judged = [render(lm, fill(template["prompt"], input=x, output=y, style=s, source="") + ending, True)
                  for x, y, s in zip(inputs, outputs, targets, strict=True)]
        ours, wall, cpu = timed(lambda judged=judged: next_token_log_probs(lm, judged, answers))

        def plain_next(judged: list[list[int]] = judged) -> np.ndarray:
            with torch.inference_mode():
                out = np.zeros((len(judged), len(answers)))
                for batch in length_batches([len(p) for p in judged], budget=lm.batch_tokens):
                    tokens, mask = padded_batch(judged, batch)
                    logits = lm.model(input_ids=tokens.to(lm.device), attention_mask=mask.to(lm.device)).logits
                    for row, i in enumerate(batch):
                        logp = torch.log_softmax(logits[row, len(judged[i]) - 1].double(), dim=-1)
                        out[i] = logp[answers].cpu().numpy()
            return out

        plain, wall_b, cpu_b = timed(plain_next)
        lengths = [len(p) for p in judged]
        rows.append((f"{metric} (template {k})", wall, cpu, wall_b, cpu_b, float(np.abs(ours - plain).max()),
                     _positions(judged, lengths, lm.batch_tokens, cost), sum(lengths)))
    peak, peak_note = _peak_flops(lm.device)
    table = []
    for name, wall, cpu, wall_b, cpu_b, diff, computed, whole in rows:
        flops = 2 * params * computed / wall
        table.append({"metric": name, "pairs": args.pairs, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                      "pairs_per_wall_s": round(args.pairs / wall, 1), "pairs_per_cpu_s": round(args.pairs / cpu, 1),
                      "plain_wall_s": round(wall_b, 2), "plain_cpu_s": round(cpu_b, 2),
                      "speedup_wall": round(wall_b / wall, 2), "speedup_cpu": round(cpu_b / cpu, 2),
                      "max_abs_diff": diff, "positions_computed": computed, "positions_whole": whole,
                      "share_of_peak": round(flops / peak, 3) if peak else None})
    meta = {"device": lm.device, "threads": args.threads, "model": lm.model_id, "params_counted": params,
            "peak": peak_note, "machine": platform.processor() or platform.machine(),
            "load_average_before": load_before, "pass_fixed_s": cost.fixed, "pass_per_token_s": cost.per_token,
            "calibration_s": round(calibration, 2)}
    if args.model != SMOLLM2:  # the first report (SmolLM2) predates these
        meta |= {"model_name": args.model, "load_s": round(load_s, 1),
                 "max_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2)}
    report = {"meta": meta, "pairs": args.pairs, "rows": table}
    name = "speed_lm_judges" + ("" if args.model == SMOLLM2 else f"_{args.model}")
    publish(RESULTS, name, report, markdown)


def _cond_lp_row(lm: CausalLM, inputs: list[str], outputs: list[str], targets: list[str], k: int,
                 cost: PassCost) -> tuple:
    """cond_lp's row: each output scored with and without the input, ours against whole sequences."""
    cond = templates()["cond_lp"][k - 1]
    chat = bool(cond.get("chat"))
    conts = continuations(lm, outputs, chat)
    given = [render(lm, fill(cond["conditional"], input=x, output="", style=s, source=""), chat)
             for x, s in zip(inputs, targets, strict=True)]
    alone = [render(lm, fill(cond["marginal"], input="", output="", style=s, source=""), chat) for s in targets]
    prompts, cont_all = given + alone, conts + conts
    ours, wall, cpu = timed(lambda: continuation_log_probs(lm, prompts, cont_all))
    plain, wall_b, cpu_b = timed(lambda: _plain_log_probs(lm, [p + c for p, c in zip(prompts, cont_all, strict=True)],
                                                            [len(p) for p in prompts]))
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ours, plain, strict=True))
    lengths = [len(p) + len(c) for p, c in zip(prompts, cont_all, strict=True)]
    return (f"cond_lp (template {k})", wall, cpu, wall_b, cpu_b, diff,
            _positions(prompts, lengths, lm.batch_tokens, cost), sum(lengths))


def markdown(report: dict) -> str:
    """The results page of ``report`` (what :func:`main` writes to ``speed_lm_judges.json``)."""
    meta = report["meta"]
    loaded = (f" Loading the model took {meta['load_s']} s; the process's peak memory was {meta['max_rss_gb']} GB."
              if "load_s" in meta else "")
    lines = [f"# Speed of the LM metrics ({meta.get('model_name', 'SmolLM2-135M')})", "",
             f"{report['pairs']} DualRL Yelp pairs, one template per metric, device {meta['device']}, "
             f"{meta['threads']} threads, load average {meta['load_average_before']} before the run.{loaded} "
             "`plain`: the "
             "same prompts as whole sequences in length-sorted padded batches of the same token budget (one "
             "transformers forward pass each, no cache). `share_of_peak`: 2 x parameters x computed positions per "
             f"second over the peak ({meta['peak']})." + (
                 " cond_lp scores each output twice (with and without the input)."
                 if any(r["metric"].startswith("cond_lp") for r in report["rows"]) else ""), "",
             md.table(pd.DataFrame([{
                 "metric": r["metric"], "pairs/s (wall)": str(r["pairs_per_wall_s"]),
                 "pairs/CPU-s": str(r["pairs_per_cpu_s"]),
                 "plain pairs/s (wall)": str(round(r["pairs"] / r["plain_wall_s"], 1)),
                 "speed-up wall": f"{r['speedup_wall']}x", "speed-up CPU": f"{r['speedup_cpu']}x",
                 "max abs diff": f"{r['max_abs_diff']:.1e}",
                 "positions computed / whole": f"{r['positions_computed']:,} / {r['positions_whole']:,}",
                 "share of peak": str(r["share_of_peak"])} for r in report["rows"]]))]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
