"""Remote against in-process values of the LM metrics on the same GGUF: SmolLM2-135M-Instruct Q4_1 served by
llama-cpp-python 0.2.62 (``make llama-server``; llama.cpp multiplies the Q4_1 weights by activations quantised to 8
bits) and read in process by transformers (the weights de-quantised to float32, float32 activations).

Per metric, on the first ``--pairs`` DualRL Yelp pairs (sorted by item, then system; text restored to sentence case):
the largest absolute difference, the mean one and Pearson's r, with the requests and tokens the server was sent and
the wall seconds.  ``lp_mean`` reads each output after SmolLM2's BOS ``<|im_start|>`` as text (``--lm-start-text``);
the judges and ``cond_lp`` their first template; ``logprop`` gives ``logprop_content`` and ``logprop_style`` from the
same requests.  ``cond_lp`` and LogProp render their prompts with the packaged SmolLM2 tokenizer (``--lm-tokenizer
smollm2``).  Each metric's figures are written as soon as they are measured, into
``results/remote_agreement.{json,md}``: the tolerances of ``tests/test_remote_lm.py`` come from here.

Run: ``python -m benchmarks.reproductions.remote_agreement [--pairs 200] [--metrics lp_mean,judge_fluency,...]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.speed.speed_lm_judges import _pairs
from tsteval.backends.llama_server import LlamaServer
from tsteval.backends.remote import RemoteLM
from tsteval.core import markdown as md
from tsteval.metrics.judges.cond_lp import cond_lp_matrix
from tsteval.metrics.judges.logprop import logprop_scores
from tsteval.metrics.judges.rating import judge_matrix
from tsteval.metrics.naturalness.causal_lm import CausalLM, smollm2_path

RESULTS = Path(__file__).resolve().parents[1] / "results"
START = "<|im_start|>"
METRICS = ("lp_mean", "judge_fluency", "judge_content", "judge_style", "cond_lp", "logprop")


def _values(metric: str, lm: object, inputs: list[str], outputs: list[str], targets: list[str],
            ) -> dict[str, np.ndarray]:
    """The metric's values by column name (``logprop``: both LogProp columns)."""
    if metric == "lp_mean":
        return {metric: np.array([v.mean() for v in lm.token_log_probs(outputs)])}
    if metric == "logprop":
        return logprop_scores(inputs, outputs, targets, lm)
    if metric == "cond_lp":
        return {metric: cond_lp_matrix(inputs, outputs, targets, lm, which=[1])[:, 0]}
    return {metric: judge_matrix(metric, inputs, outputs, targets, lm, which=[1])[:, 0]}


def page(rows: dict[str, dict[str, object]]) -> str:
    """The Markdown page of ``rows`` (metric -> figures)."""
    lines = ["# Remote (llama-cpp-python 0.2.62, Q4_1) against in-process (transformers, de-quantised) values",
             "", "SmolLM2-135M-Instruct, the first DualRL Yelp pairs (sorted by item, then system); `python -m "
             "benchmarks.reproductions.remote_agreement`.", "",
             md.table(pd.DataFrame([{
                 "metric": m, "pairs": r["pairs"], "max abs diff": f"{r['max_abs_diff']:.4f}",
                 "mean abs diff": f"{r['mean_abs_diff']:.4f}", "Pearson r": f"{r['pearson_r']:.5f}",
                 "requests": r["requests"], "prompt tokens": r["prompt_tokens"],
                 "remote s": f"{r['remote_seconds']:.0f}", "in-process s": f"{r['local_seconds']:.0f}"}
                 for m, r in rows.items()]))]
    return "\n".join(lines) + "\n"


def _write(rows: dict[str, dict[str, object]]) -> None:
    """Merge ``rows`` into the results (a metric measured again replaces its row)."""
    path = RESULTS / "remote_agreement.json"
    rows = {**(json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}), **rows}
    path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "remote_agreement.md").write_text(page(rows), encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    """The command line."""
    built = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    built.add_argument("--pairs", type=int, default=200)
    built.add_argument("--metrics", default=",".join(METRICS))
    built.add_argument("--cache", type=Path, default=None, help="keep the server's answers here (a rerun resumes)")
    return built


def main() -> None:
    args = parser().parse_args()
    inputs, outputs, targets = _pairs(args.pairs)
    local = CausalLM("smollm2", threads=1)
    rows: dict[str, dict[str, object]] = {}
    with LlamaServer(smollm2_path(), "smollm2-q4", threads=1) as server, tempfile.TemporaryDirectory() as scratch:
        for metric in args.metrics.split(","):
            lm = RemoteLM(server.url, "smollm2-q4", start_text=START, cache_dir=(args.cache or Path(scratch)) / metric,
                          max_concurrency=1, tokenizer="smollm2")
            start = time.perf_counter()
            far = _values(metric, lm, inputs, outputs, targets)
            remote_seconds = time.perf_counter() - start
            start = time.perf_counter()
            near = _values(metric, local, inputs, outputs, targets)
            local_seconds = time.perf_counter() - start
            for column, values in far.items():
                gaps = np.abs(values - near[column])
                rows[column] = {"pairs": len(values), "max_abs_diff": float(gaps.max()),
                                "mean_abs_diff": float(gaps.mean()),
                                "pearson_r": float(np.corrcoef(values, near[column])[0, 1]), **lm.usage,
                                "remote_seconds": remote_seconds, "local_seconds": local_seconds}
                print(column, rows[column], flush=True)
            _write(rows)
            lm.close()


if __name__ == "__main__":
    main()
