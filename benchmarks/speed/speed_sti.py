"""Speed of vectorised STI against a per-pair POT loop: ``python -m benchmarks.speed.speed_sti``.

On 100,000 seeded random distribution pairs (2 and 5 classes) it times ``signed_emd`` (closed form,
nominal ground distance), the same scores from ``ot.emd2`` called once per pair with the nominal matrix,
and ``normalized_sti``; it checks the two signed EMDs agree and writes
``benchmarks/results/speed_sti.{md,json}``.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import ot
import pandas as pd

from benchmarks.common import publish
from tsteval.core import markdown as md
from tsteval.metrics.style.intensity import ground_matrix, normalized_sti, signed_emd

N_PAIRS = 100_000
CLASSES = (2, 5)
SEED = 0
REPEATS = 3  # vectorised timings: best of 3; the POT loop runs once
RESULTS = Path(__file__).resolve().parents[1] / "results"


def best_time(fn: Callable[[], np.ndarray], repeats: int) -> tuple[float, np.ndarray]:
    """Fastest wall time of ``repeats`` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def pot_signed_emd(P: np.ndarray, Q: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The baseline: ``ot.emd2`` per pair with the nominal matrix, signed as Mir et al. do."""
    M = ground_matrix("nominal", P.shape[1])
    rows = np.arange(P.shape[0])
    dist = np.array([ot.emd2(p, q, M) for p, q in zip(P, Q, strict=True)])
    return np.where(Q[rows, target] >= P[rows, target], 1.0, -1.0) * dist


def run_case(k: int, rng: np.random.Generator) -> dict[str, float | int]:
    """Time all three on ``N_PAIRS`` random pairs of ``k``-class distributions."""
    P = rng.dirichlet(np.ones(k), N_PAIRS)
    Q = rng.dirichlet(np.ones(k), N_PAIRS)
    target = rng.integers(0, k, N_PAIRS)
    ours_s, ours = best_time(lambda: signed_emd(P, Q, target), REPEATS)
    pot_s, pot = best_time(lambda: pot_signed_emd(P, Q, target), 1)
    norm_s, _ = best_time(lambda: normalized_sti(P, Q, target), REPEATS)
    return {
        "classes": k, "pairs": N_PAIRS,
        "signed_emd_s": ours_s, "signed_emd_pairs_per_s": N_PAIRS / ours_s,
        "pot_loop_s": pot_s, "pot_loop_pairs_per_s": N_PAIRS / pot_s,
        "speedup": pot_s / ours_s,
        "normalized_sti_s": norm_s, "normalized_sti_pairs_per_s": N_PAIRS / norm_s,
        "max_abs_diff_vs_pot": float(np.abs(ours - pot).max()),
    }


def machine() -> dict[str, str | int | None]:
    """What the timings were taken on."""
    return {"cpu_count": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "platform": platform.platform(), "python": platform.python_version(),
            "numpy": np.__version__, "POT": ot.__version__}


def page(results: dict) -> str:
    """The results page of ``speed_sti.json``."""
    columns = ["classes", "signed_emd s", "pairs/s", "POT loop s", "pairs/s", "speed-up", "normalized_sti s",
               "pairs/s", "max abs diff vs POT"]
    table = md.table(pd.DataFrame([[
        c["classes"], f"{c['signed_emd_s']:.4f}", f"{c['signed_emd_pairs_per_s']:,.0f}", f"{c['pot_loop_s']:.2f}",
        f"{c['pot_loop_pairs_per_s']:,.0f}", f"{c['speedup']:,.0f}x", f"{c['normalized_sti_s']:.4f}",
        f"{c['normalized_sti_pairs_per_s']:,.0f}", f"{c['max_abs_diff_vs_pot']:.1e}"] for c in results["cases"]],
        columns=columns))
    return "\n".join([
        "# STI speed: vectorised closed form vs per-pair `ot.emd2`", "",
        f"{N_PAIRS:,} random pairs per row (Dirichlet(1), seed {SEED}), nominal ground distance, random targets. "
        f"Vectorised timings are the best of {REPEATS} runs; the POT loop ran once over all pairs (no extrapolation). "
        "Produced by `python -m benchmarks.speed.speed_sti`.", "", table, "",
        "Machine: " + ", ".join(f"{key} {value}" for key, value in results["machine"].items()), ""])


def main() -> None:
    """Run the benchmark and write the results."""
    rng = np.random.default_rng(SEED)
    cases = [run_case(k, rng) for k in CLASSES]
    info = machine()
    RESULTS.mkdir(parents=True, exist_ok=True)
    results = {"machine": info, "cases": cases}
    publish(RESULTS, "speed_sti", results, page)


if __name__ == "__main__":
    main()
