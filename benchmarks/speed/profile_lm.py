"""Where an LM metric's time goes on a GPU (issue 35): every LM metric on the packed DualRL pairs, timed and profiled.

For each metric of :data:`benchmarks.speed.bench_gpu.LM_METRICS` on ``--pairs`` pairs, in fp32 and bf16 (the model
loaded and warmed up first): pairs/s timed alone; then, in a second run under ``torch.profiler``, the GPU's busy
time (the sum of the CUDA kernels' durations), the host-device synchronisations and copies, the host's phases
(timed by wrapping the functions that do them, whichever of their names the installed tsteval has: the prompts
rendered and tokenised, the texts restored, the batches planned, the forward passes enqueued), the padding the
plans computed beside the real tokens, and the model's arithmetic rate (2 x non-embedding parameters x computed
positions per GPU-busy second); fp32 against the CPU (the first pairs), bf16 against fp32.

Run on the GPU machine: ``python -m benchmarks.speed.profile_lm --lite DIR --out OUT`` (``DIR``: the pairs table and
SmolLM2's config and tokenizer, its weights drawn there, a few MiB); ``--smoke`` runs a few pairs on the CPU.
"""

from __future__ import annotations

import argparse
import importlib
import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import pandas as pd

from benchmarks.speed import bench_gpu, speed_gpu

# (module, function) -> the phase it does; a name missing from a tree is skipped.
PHASES = {("tsteval.metrics.judges.rating", "render"): "prompts", ("tsteval.metrics.judges.rating", "render_many"):
          "prompts", ("tsteval.metrics.judges.logprop", "render"): "prompts",
          ("tsteval.metrics.judges.logprop", "render_many"): "prompts",
          ("tsteval.metrics.judges.cond_lp", "render_many"): "prompts",
          ("tsteval.metrics.judges.scorer", "lm_texts"): "text restore",
          ("tsteval.metrics.judges.prefix_scoring", "plan_batches"): "planning",
          ("tsteval.metrics.judges.prefix_scoring", "_hidden"): "forward passes (host)"}
SYNC_EVENTS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")
COPY_EVENTS = ("cudaMemcpyAsync", "cudaMemcpy")


def _timed(fn: Callable, phase: str, seconds: dict[str, float], plans: list[tuple[list, list]]) -> Callable:
    """``fn`` adding its host seconds to ``seconds[phase]`` (and keeping what a planning call returns)."""

    def timed(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            value = fn(*args, **kwargs)
        finally:
            seconds[phase] += time.perf_counter() - start
        if phase == "planning":
            plans.append((value, list(args[1])))
        return value

    return timed


@contextmanager
def phase_clock() -> Iterator[tuple[dict[str, float], list[tuple[list, list]]]]:
    """Seconds spent in each phase of :data:`PHASES` within the block (host time: the device is not waited for),
    and each plan made there with its sequences' lengths."""
    seconds: dict[str, float] = defaultdict(float)
    plans: list[tuple[list, list]] = []
    with ExitStack() as stack:
        for (module_name, name), phase in PHASES.items():
            module = importlib.import_module(module_name)
            if hasattr(module, name):
                timed = _timed(getattr(module, name), phase, seconds, plans)
                stack.enter_context(mock.patch.object(module, name, timed))
        yield seconds, plans


def padding(plans: list[tuple[list, list]]) -> dict[str, int]:
    """Positions the plans computed, the real tokens among them and the sequences' whole token count.

    >>> from types import SimpleNamespace as B
    >>> padding([([B(rows=[0, 1], shared=2), B(rows=[2], shared=0)], [5, 4, 3])])
    {'computed': 11, 'real': 10, 'tokens': 12, 'batches': 2, 'sequences': 3}
    """
    computed = real = tokens = batches = sequences = 0
    for batches_of, lengths in plans:
        for b in batches_of:
            width = max(lengths[i] for i in b.rows) - b.shared
            computed += b.shared + len(b.rows) * width
            real += b.shared + sum(lengths[i] - b.shared for i in b.rows)
        tokens += sum(lengths)
        batches += len(batches_of)
        sequences += len(lengths)
    return {"computed": computed, "real": real, "tokens": tokens, "batches": batches, "sequences": sequences}


def profile_metric(name: str, frame: pd.DataFrame, lm: object, model: str) -> dict[str, object]:
    """One metric on ``frame``'s pairs: timed alone, then once more under ``torch.profiler`` (the GPU's kernels and
    the host-device calls; the host's own operators are not recorded, which would swamp the report) with the host
    phases clocked (see the module)."""
    from torch.profiler import ProfilerActivity, profile

    device = str(lm.device)
    bench_gpu.lm_column(name, frame.head(64), lm, model)  # warm-up: calibration, imports, kernels
    values, wall = bench_gpu.timed(lambda: bench_gpu.lm_column(name, frame, lm, model), device)
    activities = [ProfilerActivity.CUDA] if device.startswith("cuda") else [ProfilerActivity.CPU]
    with phase_clock() as (phases, plans), profile(activities=activities) as prof:
        _, profiled = bench_gpu.timed(lambda: bench_gpu.lm_column(name, frame, lm, model), device)
    events = prof.key_averages()

    def device_us(event: object) -> float:
        return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))

    kernels = [e for e in events if device_us(e) > 0 and not e.key.startswith(("cuda", "Memcpy", "Memset"))]
    busy = sum(device_us(e) for e in kernels) / 1e6
    runtime = {e.key: (e.count, e.cpu_time_total / 1e6) for e in events if e.key in SYNC_EVENTS + COPY_EVENTS}
    params = sum(p.numel() for n, p in lm.model.named_parameters() if "embed" not in n)
    positions = padding(plans)
    top = sorted(kernels, key=device_us, reverse=True)[:6]
    return {"pairs": len(frame), "wall_s": wall, "pairs_per_s": len(frame) / wall, "profiled_wall_s": profiled,
            "gpu_busy_s": busy, "host_phases_s": dict(phases),
            "runtime_calls": {k: {"count": c, "cpu_s": t} for k, (c, t) in runtime.items()},
            "positions": positions, "non_embedding_params": params,
            "tflops_per_busy_s": 2 * params * positions["computed"] / busy / 1e12 if busy else None,
            "top_kernels": [{"name": e.key[:90], "count": e.count, "s": device_us(e) / 1e6} for e in top],
            "precision": getattr(lm, "precision", "fp32"), "values": values}


def markdown(report: dict[str, dict[str, object]]) -> list[str]:
    """A table of :func:`profile_metric` reports (keyed ``PRECISION:METRIC``)."""
    lines = ["| metric | precision | pairs/s | wall s | GPU busy s | prompts s | restore s | planning s "
             "| forward (host) s | syncs | copies | computed / real positions | TFLOP/s while busy |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, r in report.items():
        precision, metric = key.split(":", 1)
        h, pos, calls = r["host_phases_s"], r["positions"], r["runtime_calls"]
        syncs = sum(calls[k]["count"] for k in calls if k in SYNC_EVENTS)
        copies = sum(calls[k]["count"] for k in calls if k in COPY_EVENTS)
        rate = f"{r['tflops_per_busy_s']:.1f}" if r["tflops_per_busy_s"] else "-"
        lines.append(f"| `{metric}` | {precision} | {r['pairs_per_s']:,.0f} | {r['wall_s']:.2f} | "
                     f"{r['gpu_busy_s']:.2f} | {h.get('prompts', 0):.2f} | {h.get('text restore', 0):.2f} | "
                     f"{h.get('planning', 0):.2f} | {h.get('forward passes (host)', 0):.2f} | {syncs} | {copies} | "
                     f"{pos['computed']:,} / {pos['real']:,} | {rate} |")
    return [*lines, ""]


def page(after: dict[str, object], before: dict[str, object], profile: dict[str, object]) -> str:
    """``results/bench_gpu.md``: the run of the tree before issue 35's changes and after them (one session, one
    machine), and :mod:`benchmarks.speed.profile_lm`'s profile of the LM metrics (a second session)."""
    lm_before, lm_after = before["lm"]["metrics"], after["lm"]["metrics"]
    steady = {key: row["pairs"] / row["profiled_wall_s"] for key, row in profile["metrics"].items()}
    return "\n".join([
        f"# GPU figures on {after['device']} (`make bench-gpu`, `python -m benchmarks.speed.profile_lm`)", "",
        "Random-weight models of the packaged shapes (SmolLM2-135M for the LM metrics; MiniLM and Gemma 3 270M "
        "in `score --metrics recommended`); 5,000 DualRL Yelp pairs for each LM metric, 15,000 for BERTScore, "
        "20,000 for `score`. fp32 runs with TF32 off.", "",
        "## Before and after (one session, the same machine)", "",
        "| part | before: fp32 pairs/s | after: fp32 pairs/s | ratio |", "|---|---:|---:|---:|",
        *(f"| `{name}` | {lm_before[name]['pairs_per_s']:,.0f} | {lm_after[name]['pairs_per_s']:,.0f} | "
          f"{lm_after[name]['pairs_per_s'] / lm_before[name]['pairs_per_s']:.2f}x |" for name in lm_after),
        f"| `score --metrics recommended` | {before['score']['pairs_per_s']:,.0f} | "
        f"{after['score']['pairs_per_s']:,.0f} | "
        f"{after['score']['pairs_per_s'] / before['score']['pairs_per_s']:.2f}x |",
        "", "What changed between the two: every metric's prompts rendered by one batched chat-template call and "
        "one batched tokenizer call (it had been one call per prompt); texts restored once per distinct text; the "
        "batch planner in one pass (it re-scanned the open batch for every row); token batches built with numpy "
        "in pinned memory and copied without waiting; the values read on the GPU and brought to the host once per "
        "call (it waited for the GPU after every batch). The second session's tree also renders each distinct "
        "prompt once (LogProp's and `cond_lp`'s prompts hold the input alone, so they repeat for every system).",
        "",
        *bench_gpu.markdown(after),
        "## Where the time goes (second session, the tree after the change)", "",
        "Each metric timed alone, then run again under `torch.profiler` (CUDA kernels and host-device calls) "
        "with the host's phases clocked. GPU busy: the kernels' summed time. TFLOP/s while busy: 2 x the model's "
        "non-embedding parameters x computed positions / GPU busy seconds. Second-pass pairs/s: the profiled run, "
        "every batch shape already seen once.", "",
        *markdown(profile["metrics"]),
        "| metric | precision | second-pass pairs/s |", "|---|---|---:|",
        *(f"| `{key.split(':', 1)[1]}` | {key.split(':', 1)[0]} | {value:,.0f} |" for key, value in steady.items()),
        "", "Reading of the profile:", "",
        "- **fp32 is bound by fp32 arithmetic.** The GPU is busy 66-79% of the wall time of `judge_content`, "
        "`cond_lp` and `logprop_content`, almost all of it in cuBLAS's fp32 GEMMs at 27-29 TFLOP/s (TF32 off; "
        "the H100's measured fp32 roofline on these shapes is 46 TFLOP/s, `speed_gpu.md`). `logprop_content` "
        "computes 654K positions for 5,000 pairs (three prompts each, the shared system prompt run once per batch): "
        "at this rate 2,000 pairs/s is out of reach in fp32; TF32 would change values by ~1e-3, beyond the 1e-5 "
        "equality with the CPU.",
        "- **bf16 is bound by the planner and by first-use costs, not by arithmetic.** The GPU is busy 0.3-1.8 s, "
        "at 87-129 TFLOP/s. (1) In bf16 the planner padded plainly instead of sharing prefixes: `logprop_content` "
        "computes 1.10M positions in bf16 against 0.65M in fp32, in 68 batches against 40 - what its calibration "
        "does when a pass of 16,384 tokens times no slower than one of 8 (the costs it timed were not recorded). "
        "(2) The first run over new batch "
        "shapes is slower than the second (`judge_style` bf16 964 pairs/s timed, 3,488 in the profiled second pass; "
        "`cond_lp` 1,439 against 2,669); the profile shows cuDNN's SDPA kernels (`cudnn_generated_fort_native_sdpa_"
        "sm90`) in bf16 and CUTLASS's attention in fp32, and cuDNN builds a plan per new shape: the likely cause, "
        "not isolated. Both are fixes for the next GPU session: "
        "calibrate with a wider pass until a per-token cost shows, and run these variable-shape passes on the "
        "memory-efficient attention kernel; neither was measured here.",
        "- **Host work is now small**: prompts 0.07-0.9 s (`cond_lp`'s were not clocked), text restoration "
        "0.12-0.17 s, planning 0.03-0.09 s per 5,000 pairs; in fp32 the host enqueues the forward passes faster "
        "than the GPU runs them.",
        "- **`score --metrics recommended`** runs at 2,446 pairs/s in fp32 and 1,499 in bf16 on 20,000 pairs (the "
        "10,000 aim is not met); it was not profiled (the second session's upload carried the LM metrics only).", ""])


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lite", type=Path, help="a folder with pairs_20000.parquet and smollm2/ (config, tokenizer)")
    parser.add_argument("--pairs", type=int, default=bench_gpu.SIZES["lm"])
    parser.add_argument("--out", type=Path, help="write profile_lm.json here (after each metric)")
    parser.add_argument("--smoke", action="store_true", help="a few pairs on the CPU with the packaged SmolLM2")
    return parser


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = parser().parse_args(argv)
    from tsteval.core.progress import quieted
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    report: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="tsteval-profile-") as work, quieted():
        if args.smoke:
            frame, model, device = pd.read_parquet(speed_gpu.table(40, Path(work))), "smollm2", "cpu"
        else:
            frame = pd.read_parquet(args.lite / f"pairs_{speed_gpu.SCORE_PAIRS}.parquet")
            model, device = speed_gpu.random_lm(args.lite / "smollm2", Path(work)), "cuda"
        frame = frame.head(args.pairs)
        import torch

        models = {"fp32": CausalLM(model, device=device, precision="fp32"),
                  **({"bf16": CausalLM(model, device=device, precision="bf16")} if device != "cpu" else {})}
        cpu = CausalLM(model, device="cpu", precision="fp32") if device != "cpu" else models["fp32"]
        report["device"] = torch.cuda.get_device_name(0) if device != "cpu" else "cpu (smoke run)"
        report["metrics"] = {}
        for name in bench_gpu.LM_METRICS:
            for precision, lm in models.items():
                row = profile_metric(name, frame, lm, model)
                values = row.pop("values")[:bench_gpu.SIZES["check"]]
                if precision == "fp32":
                    fp32 = values
                    row["max_abs_diff_vs_cpu"] = bench_gpu.gap(values, bench_gpu.lm_column(
                        name, frame.head(len(values)), cpu, model))
                else:
                    row["deviation_from_fp32"] = bench_gpu.gap(values, fp32)
                report["metrics"][f"{precision}:{name}"] = row
                if args.out:
                    args.out.mkdir(parents=True, exist_ok=True)
                    (args.out / "profile_lm.json").write_text(json.dumps(report, indent=1))
                print("\n".join(markdown({f"{precision}:{name}": row})[2:]), flush=True)
    print("\n".join(markdown(report["metrics"])), flush=True)
    return report


if __name__ == "__main__":
    main()
