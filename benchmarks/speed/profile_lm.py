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
import json
import tempfile
from pathlib import Path

import pandas as pd

from benchmarks.speed import bench_gpu, speed_gpu
from tsteval.core import markdown as md

SYNC_EVENTS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")
COPY_EVENTS = ("cudaMemcpyAsync", "cudaMemcpy")


def profile_metric(name: str, frame: pd.DataFrame, lm: object, model: str) -> dict[str, object]:
    """One metric on ``frame``'s pairs: timed alone, then once more under ``torch.profiler`` (the GPU's kernels and
    the host-device calls; the host's own operators are not recorded, which would swamp the report) with the host
    phases clocked (see the module)."""
    from torch.profiler import ProfilerActivity, profile

    device = str(lm.device)
    bench_gpu.lm_column(name, frame.head(64), lm, model)  # warm-up: calibration, imports, kernels
    values, wall = bench_gpu.timed(lambda: bench_gpu.lm_column(name, frame, lm, model), device)
    activities = [ProfilerActivity.CUDA] if device.startswith("cuda") else [ProfilerActivity.CPU]
    with bench_gpu.phase_clock() as (phases, plans), profile(activities=activities) as prof:
        _, profiled = bench_gpu.timed(lambda: bench_gpu.lm_column(name, frame, lm, model), device)
    events = prof.key_averages()

    def device_us(event: object) -> float:
        return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))

    kernels = [e for e in events if device_us(e) > 0 and not e.key.startswith(("cuda", "Memcpy", "Memset"))]
    busy = sum(device_us(e) for e in kernels) / 1e6
    runtime = {e.key: (e.count, e.cpu_time_total / 1e6) for e in events if e.key in SYNC_EVENTS + COPY_EVENTS}
    params = sum(p.numel() for n, p in lm.model.named_parameters() if "embed" not in n)
    positions = bench_gpu.padding(plans)
    top = sorted(kernels, key=device_us, reverse=True)[:6]
    return {"pairs": len(frame), "wall_s": wall, "pairs_per_s": len(frame) / wall, "profiled_wall_s": profiled,
            "gpu_busy_s": busy, "host_phases_s": dict(phases),
            "runtime_calls": {k: {"count": c, "cpu_s": t} for k, (c, t) in runtime.items()},
            "positions": positions, "non_embedding_params": params,
            "tflops_per_busy_s": 2 * params * positions["computed"] / busy / 1e12 if busy else None,
            "top_kernels": [{"name": e.key[:90], "count": e.count, "s": device_us(e) / 1e6} for e in top],
            "precision": getattr(lm, "precision", "fp32"), "values": values}


def markdown(report: dict[str, dict[str, object]]) -> str:
    """A table of :func:`profile_metric` reports (keyed ``PRECISION:METRIC``)."""
    rows = []
    for key, r in report.items():
        precision, metric = key.split(":", 1)
        h, pos, calls = r["host_phases_s"], r["positions"], r["runtime_calls"]
        rows.append({
            "metric": metric, "precision": precision, "pairs/s": f"{r['pairs_per_s']:,.0f}",
            "wall s": f"{r['wall_s']:.2f}", "GPU busy s": f"{r['gpu_busy_s']:.2f}",
            "prompts s": f"{h.get('prompts', 0):.2f}", "restore s": f"{h.get('text restore', 0):.2f}",
            "planning s": f"{h.get('planning', 0):.2f}",
            "forward (host) s": f"{h.get('forward passes (host)', 0):.2f}",
            "syncs": sum(calls[k]["count"] for k in calls if k in SYNC_EVENTS),
            "copies": sum(calls[k]["count"] for k in calls if k in COPY_EVENTS),
            "computed / real positions": f"{pos['computed']:,} / {pos['real']:,}",
            "TFLOP/s while busy": f"{r['tflops_per_busy_s']:.1f}" if r["tflops_per_busy_s"] else "-"})
    return md.table(pd.DataFrame(rows)) + "\n"


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
                print("\n".join(markdown({f"{precision}:{name}": row}).splitlines()[2:]), flush=True)
    print(markdown(report["metrics"]), flush=True)
    return report


if __name__ == "__main__":
    main()
