"""The remote LM backend's speed: ``judge_content`` and ``lp_mean`` through llama-cpp-python's server (``make
llama-server``, SmolLM2-135M-Instruct Q4_1, ``--n_threads`` as given) at each concurrency, against the in-process
model on the same GGUF (de-quantised, the same threads), on the first ``--pairs`` DualRL Yelp pairs.

Each remote pass starts from an empty answer cache.  Per pass: pairs/s, requests, and per request the client's
wall time, the time inside the HTTP call, the client's own overhead (the difference: cache lookup and write, JSON,
the thread pool) and the server's own time as it reports it (llama.cpp's ``llama_print_timings: total time``
lines in the server's log, summed over the pass).  The 1-minute load average at the start of each pass is
recorded: on a shared machine the figures move with it.  Results: ``results/speed_remote.{json,md}``.

Run: ``python -m benchmarks.speed.speed_remote [--pairs 24] [--threads 2] [--concurrency 1,2,4,8]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from benchmarks.speed.speed_lm_judges import _pairs
from tsteval.backends.llama_server import LlamaServer
from tsteval.backends.remote import RemoteLM
from tsteval.core import markdown as md
from tsteval.metrics.judges.rating import judge_matrix
from tsteval.metrics.naturalness.causal_lm import CausalLM, smollm2_path

RESULTS = Path(__file__).resolve().parents[1] / "results"
START = "<|im_start|>"
METRICS = ("judge_content", "lp_mean")
SERVER_TIME = re.compile(r"llama_print_timings:\s+total time =\s+([0-9.]+) ms")


def score(metric: str, lm: object, inputs: list[str], outputs: list[str], targets: list[str]) -> np.ndarray:
    """``metric``'s values (``judge_content`` its first template)."""
    if metric == "lp_mean":
        return np.array([v.mean() for v in lm.token_log_probs(outputs)])
    return judge_matrix(metric, inputs, outputs, targets, lm, which=[1])[:, 0]


class Timed:
    """Wall time of the client's requests (``Client.post``) and of the HTTP calls inside them, summed."""

    def __init__(self, lm: RemoteLM) -> None:
        self.post = self.http = 0.0
        client, post, http_post = lm.client, lm.client.post, lm.client.http.post

        def timed_post(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return post(*args, **kwargs)
            finally:
                self.post += time.perf_counter() - start

        def timed_http(*args: object, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return http_post(*args, **kwargs)
            finally:
                self.http += time.perf_counter() - start

        client.post, client.http.post = timed_post, timed_http


def server_ms(server: LlamaServer, since: int) -> tuple[float, int]:
    """The server's reported total milliseconds in its log after byte ``since``, and the log's length now (read with
    ``pread``: the server writes through the same open file, whose offset a seek would move)."""
    data = os.pread(server.log.fileno(), 1 << 26, since)
    return sum(float(v) for v in SERVER_TIME.findall(data.decode("utf-8", "replace"))), since + len(data)


def _row(row: dict[str, object]) -> dict[str, str]:
    """One row of the page's table (the HTTP columns blank for the in-process backend)."""
    remote = row["backend"] == "server"
    ms = {name: f"{row[key]:.1f}" if remote else "" for name, key in (
        ("client ms/request", "client_ms"), ("HTTP ms/request", "http_ms"),
        ("client overhead ms/request", "overhead_ms"), ("server-reported ms/request", "server_ms"))}
    return {"metric": row["metric"], "backend": row["backend"], "concurrency": row.get("concurrency", ""),
            "pairs/s": f"{row['pairs_per_s']:.2f}", "requests": row.get("requests", ""), **ms,
            "load avg": f"{row['load']:.2f}"}


def page(results: dict[str, object]) -> str:
    """The Markdown page of ``results``."""
    lines = ["# The remote LM backend's speed (llama-cpp-python 0.2.62 server against in-process)", "",
             f"Made by `python -m benchmarks.speed.speed_remote`: {results['pairs']} DualRL Yelp pairs, SmolLM2-135M-"
             f"Instruct Q4_1, {results['threads']} threads on each side, {results['machine']}.  Client overhead: the "
             "client's wall time per request less the time inside its HTTP call; server: the time llama.cpp reports "
             "per request (`llama_print_timings`).", "",
             md.table(pd.DataFrame([_row(row) for row in results["rows"]]))]
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    """The command line."""
    built = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    built.add_argument("--pairs", type=int, default=24)
    built.add_argument("--threads", type=int, default=2)
    built.add_argument("--concurrency", default="1,2,4,8")
    return built


def main() -> None:
    args = parser().parse_args()
    inputs, outputs, targets = _pairs(args.pairs)
    local = CausalLM("smollm2", threads=args.threads)
    rows: list[dict[str, object]] = []
    for metric in METRICS:
        score(metric, local, inputs[:2], outputs[:2], targets[:2])  # warm
        load, start = os.getloadavg()[0], time.perf_counter()
        score(metric, local, inputs, outputs, targets)
        seconds = time.perf_counter() - start
        rows.append({"metric": metric, "backend": "in-process", "seconds": seconds, "pairs_per_s": args.pairs / seconds,
                     "load": load})
        print(rows[-1], flush=True)
    with LlamaServer(smollm2_path(), "smollm2-q4", threads=args.threads) as server:
        logged = server_ms(server, 0)[1]
        for metric in METRICS:
            for concurrency in (int(c) for c in args.concurrency.split(",")):
                with tempfile.TemporaryDirectory() as scratch:
                    lm = RemoteLM(server.url, "smollm2-q4", start_text=START, cache_dir=Path(scratch),
                                  max_concurrency=concurrency)
                    lm.require([metric])  # the probe outside the timing
                    logged = server_ms(server, logged)[1]
                    timed, sent = Timed(lm), lm.usage["requests"]
                    load, start = os.getloadavg()[0], time.perf_counter()
                    score(metric, lm, inputs, outputs, targets)
                    seconds = time.perf_counter() - start
                    spent, logged = server_ms(server, logged)
                    requests = lm.usage["requests"] - sent
                    lm.close()
                rows.append({"metric": metric, "backend": "server", "concurrency": concurrency, "seconds": seconds,
                             "pairs_per_s": args.pairs / seconds, "requests": requests,
                             "client_ms": 1000 * timed.post / requests, "http_ms": 1000 * timed.http / requests,
                             "overhead_ms": 1000 * (timed.post - timed.http) / requests,
                             "server_ms": spent / requests, "load": load})
                print(rows[-1], flush=True)
    results = {"pairs": args.pairs, "threads": args.threads, "rows": rows,
               "machine": f"{platform.machine()}, {os.cpu_count()} CPUs"}
    publish(RESULTS, "speed_remote", results, page)


if __name__ == "__main__":
    main()
