"""The rating server under load: ``python -m benchmarks.speed.annotate_speed [--clients 50] [--seconds 60]``.

Starts ``tsteval annotate serve`` on 127.0.0.1 (its own process) for a study of 1,000 inputs x 3 systems, and
runs ``--clients`` annotator clients at once (keep-alive HTTP/1.1 on asyncio streams, in this process), each loading
its next page and submitting a rating of every question, as fast as the server answers, for ``--seconds``.  Then it
counts the database's rows: every acknowledged submission must be there, and no request may have failed.  Writes
``benchmarks/results/annotate_speed.{json,md}``: submissions per second and the page and submission latencies
(median, 95th percentile), with the machine's core count and load average.  ``tests/test_annotate_load.py`` runs the
same clients for a few seconds, and kills the server mid-study.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.core import markdown as md

RESULTS = Path(__file__).resolve().parents[1] / "results"
FIELDS = re.compile(r'data-(pair|csrf|post)="([^"]*)"')
QUESTIONS = ("style", "content", "fluency")


def load_study(folder: Path, inputs: int = 500, annotators: int = 50, seed: int = 0) -> tuple[Path, list[str]]:
    """A study of every input of a synthetic run (``inputs`` per direction x 3 systems) with ``annotators`` invited;
    returns the study folder and their tokens."""
    from tsteval.annotate.study import plan_study
    from tsteval.scorecard import Scorecard

    rows = [{"system": system, "setting": "default", "item": d * inputs + i, "input": f"input {d} {i} was fine .",
             "output": f"{system} output {d} {i} <b>&</b>", "source_style": str(d), "target_style": str(1 - d),
             "target_name": ("positive", "negative")[d]}
            for d in (0, 1) for i in range(inputs) for system in ("a", "b", "c")]
    frame = pd.DataFrame(rows)
    frame["bleu@none"] = np.random.default_rng(seed).uniform(0, 100, len(frame))
    Scorecard(frame, {"bleu@none": "metric:bleu"}).save(folder / "run")
    study = plan_study(folder / "run", folder / "study", items=2 * inputs, seed=seed)
    store = study.store()
    try:
        tokens = [token for _, token in store.add_annotators(study.pair_ids, seed=seed, count=annotators)]
    finally:
        store.close()
    return folder / "study", tokens


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(study: Path, port: int, timeout: float = 60.0) -> Iterator[subprocess.Popen]:
    """``tsteval annotate serve`` on 127.0.0.1:``port`` in its own process, ready when yielded; killed at exit."""
    process = subprocess.Popen([sys.executable, "-m", "tsteval.cli.main", "annotate", "serve", str(study), "--port",
                                str(port), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {process.stderr.read().decode()[-500:]}") from None
                time.sleep(0.1)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass
class Load:
    """What the clients saw: acknowledged submissions (token, pair, ratings), latencies in seconds, errors."""

    acked: list[tuple[str, str, dict]] = field(default_factory=list)
    pages: list[float] = field(default_factory=list)
    posts: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Connection:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1 on asyncio streams: a load generator light enough that the
    server, not the client, is what is measured (httpx spends ~5 ms of CPU per page and submission, six times the
    server's)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"", headers: str = "") -> tuple[int, str]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{headers}"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        return status, (await self.reader.readexactly(length)).decode()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def _client(port: int, token: str, stop: float, load: Load, rng: np.random.Generator) -> None:
    http = Connection(port)
    try:
        while time.monotonic() < stop:
            start = time.perf_counter()
            status, page = await http.request("GET", f"/a/{token}")
            load.pages.append(time.perf_counter() - start)
            fields = dict(FIELDS.findall(page))
            if status != 200:
                load.errors.append(f"page {status}")
                return
            if "pair" not in fields:
                return  # every pair rated
            ratings = {q: int(v) for q, v in zip(QUESTIONS, rng.integers(1, 6, len(QUESTIONS)), strict=True)}
            body = json.dumps({"pair_id": fields["pair"], "ratings": ratings}).encode()
            start = time.perf_counter()
            status, answer = await http.request("POST", fields["post"], body, "Content-Type: application/json\r\n"
                                                f"X-CSRF-Token: {fields['csrf']}\r\n")
            load.posts.append(time.perf_counter() - start)
            if status != 200:
                load.errors.append(f"post {status}: {answer[:100]}")
                return
            load.acked.append((token, fields["pair"], ratings))
    except (OSError, asyncio.IncompleteReadError, ValueError, AttributeError) as error:
        load.errors.append(f"{type(error).__name__}: {error}")
    finally:
        http.close()


async def _run(port: int, tokens: list[str], seconds: float, seed: int) -> Load:
    load = Load()
    start = time.monotonic()
    rngs = np.random.default_rng(seed).spawn(len(tokens))
    await asyncio.gather(*(_client(port, t, start + seconds, load, r) for t, r in zip(tokens, rngs, strict=True)))
    load.seconds = time.monotonic() - start
    return load


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_clients(port: int, tokens: list[str], seconds: float, seed: int = 0) -> Load:
    """One client per token against the server on 127.0.0.1:``port`` for ``seconds`` (each stops at its first
    error)."""
    return asyncio.run(_run(port, tokens, seconds, seed))


def stored(study: Path) -> tuple[dict[tuple[str, str, str], float], int]:
    """The study's current ratings keyed by (annotator name, pair, question), and the history's row count."""
    from tsteval.annotate.study import Study

    store = Study.open(study).store()
    try:
        ratings = store.ratings()
        return ({(r.annotator, r.pair_id, r.question): r.value for r in ratings.itertuples()},
                store.history_count())
    finally:
        store.close()


def summary(load: Load, rows: int, history: int, clients: int) -> dict:
    """The figures of a load run."""
    def ms(values: list[float], q: float) -> float:
        return round(float(np.percentile(values, q)) * 1000, 1) if values else float("nan")

    return {"clients": clients, "seconds": round(load.seconds, 1), "submissions": len(load.acked),
            "submissions_per_s": round(len(load.acked) / load.seconds, 1), "errors": len(load.errors),
            "page_ms_median": ms(load.pages, 50), "page_ms_p95": ms(load.pages, 95),
            "submit_ms_median": ms(load.posts, 50), "submit_ms_p95": ms(load.posts, 95),
            "rating_rows": rows, "history_rows": history, "expected_rows": len(load.acked) * len(QUESTIONS),
            "cores": os.cpu_count(), "load_average_before": round(os.getloadavg()[0], 2)}


def parser() -> argparse.ArgumentParser:
    """The benchmark's command line."""
    command = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    command.add_argument("--clients", type=int, default=50, help="concurrent annotator clients (default 50)")
    command.add_argument("--seconds", type=float, default=60.0, help="how long they submit (default 60)")
    command.add_argument("--out", type=Path, default=RESULTS, help="where the results go (default "
                         "benchmarks/results)")
    return command


def main(argv: list[str] | None = None) -> int:
    """Run the load and write the results."""
    args = parser().parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        study, tokens = load_study(Path(tmp), annotators=args.clients)
        port = free_port()
        load_before = os.getloadavg()[0]
        with server(study, port) as process:
            server_start, client_start = cpu_seconds(process.pid), time.process_time()
            load = run_clients(port, tokens, args.seconds)
            server_cpu, client_cpu = cpu_seconds(process.pid) - server_start, time.process_time() - client_start
        rows, history = stored(study)
    result = summary(load, len(rows), history, args.clients)
    result["load_average_before"] = round(load_before, 2)
    # CPU time per submission (its page load included): what the figures above would be on idle cores
    result["server_cpu_ms_per_submission"] = round(1000 * server_cpu / max(1, len(load.acked)), 2)
    result["client_cpu_ms_per_submission"] = round(1000 * client_cpu / max(1, len(load.acked)), 2)
    result["server_capacity_per_core_per_s"] = round(len(load.acked) / max(server_cpu, 1e-9), 1)
    result["errors_seen"] = load.errors[:5]
    args.out.mkdir(parents=True, exist_ok=True)
    publish(args.out, "annotate_speed", result, lambda r: page(r, args.seconds))
    return 0 if not load.errors and len(rows) == result["expected_rows"] else 1


def page(result: dict[str, object], seconds: float) -> str:
    """The results page of ``annotate_speed.json`` from a run of ``--seconds SECONDS``."""
    figures = md.table(pd.DataFrame([{"figure": k, "value": str(v)} for k, v in result.items() if k != "errors_seen"]))
    return "\n".join([
        "# The rating server under load", "",
        f"`python -m benchmarks.speed.annotate_speed --clients {result['clients']} --seconds {seconds:g}`: "
        "`tsteval annotate serve` (Starlette on uvicorn, SQLite WAL, one transaction per submission) in its own "
        f"process on 127.0.0.1, {result['clients']} annotator clients (keep-alive HTTP/1.1 on asyncio streams) in the "
        "benchmark's process, each loading its next page and submitting three ratings as fast as the server "
        f"answers. {result['cores']} cores, load average {result['load_average_before']} before the run.", "",
        figures, "",
        f"Every acknowledged submission is in the database: {result['rating_rows']} current rating rows = "
        f"{result['expected_rows']} expected, {result['history_rows']} history rows.", ""])


if __name__ == "__main__":
    sys.exit(main())
