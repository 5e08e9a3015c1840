"""``tsteval score`` end to end: CPU time, wall time, pairs per second and peak memory at 2k, 20k and 100k pairs.

Pairs: the DualRL Yelp release (15 systems x 1,000 test inputs, both directions: 15,000 real pairs), repeated
in order to reach 20,000 and 100,000 rows (there are no more real DualRL Yelp pairs): past 15,000 rows the texts
repeat, so the sentence encoder sees no new text and the lexical metrics' work grows with the rows.  Metrics: the
set the speed issue measured -- style with fastText and TF-IDF LR classifiers trained on Yelp dev+test
(``tsteval train-classifier fasttext|tfidf-lr --yelp``), content ``bleu,chrf,meteor,rougeL,wmd,sbert`` at
``none,mask`` with the Yelp lexicon of ``benchmarks/results/yelp_lexicon.json``, naturalness ``unigram,kn3``
(human text: the inputs, the default).

Every run is a fresh process (``tsteval score --table``) with an empty cache folder (``TSTEVAL_CACHE``), timed by
``os.wait4`` (user + system CPU seconds, peak resident memory of that process).  After: this code with
``--threads 1`` (the right setting on a shared 2-core machine).  Before: the code of a commit of :data:`BEFORE`,
unpacked from git and imported from ``PYTHONPATH``, with torch's default threads (it had no ``--threads``), on the
same 20k table in the same run: ``b2ec621``, main before any item of the speed issue landed, and ``59cd92c``, the
same with the issue's item 4 (commit ``f027a1d``: POT only for matrix grounds, WordNet read once, one bootstrap
draw per group), which earlier runs of this benchmark took as the before.  The issue measured its before on a
*shared* 2-core machine (its 654 CPU-s of encoding ran at 43 instead of 77 encodes per CPU-s because torch's two
threads spin while the other core is busy), so the 20k before/after pair runs twice: on the otherwise idle
machine, and beside one busy process (:func:`other_work`: a Python loop started before the run, stopped after
it).  A second 20k run on the warm cache shows what a rerun costs.  Memory: beside each run's peak RSS, the
in-memory size of the data it holds (its scorecard read back with pandas, deep: the texts and every per-row
score), so that the growth of the peak from 20k to 100k pairs can be set against the growth of the data itself.
The projection to 10M pairs scales the measured per-pair costs.

Run: ``python -m benchmarks.speed.speed_end_to_end [--sizes 2000 20000 100000]`` (about 17 minutes on this 2-core
machine while idle, longer under load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.core import markdown as md
from tsteval.core.datapaths import portable
from tsteval.readers.dualrl import load_dualrl

OUT = Path(__file__).resolve().parents[1] / "results"
REPO = Path(__file__).resolve().parents[2]
LEXICON = OUT / "yelp_lexicon.json"
BEFORE = {"b2ec621": "main before the speed issue's items",
          "59cd92c": "b2ec621 with the issue's item 4, commit f027a1d"}
CONTENT = "bleu,chrf,meteor,rougeL,wmd,sbert"
MODIFICATIONS = "none,mask"
NATURALNESS = "unigram,kn3"
BACKENDS = {"ft": "fasttext", "lr": "tfidf-lr"}
SIZES = (2_000, 20_000, 100_000)
ITEM_OFFSET = 100_000  # item ids of the k-th repeat: item + k * ITEM_OFFSET (one row per system and item)
MAIN = "import sys; from tsteval.cli import main; sys.exit(main(sys.argv[1:]))"


def table(n: int, folder: Path) -> Path:
    """The first ``n`` rows of the DualRL Yelp pairs, repeated in order past the 15,000 real ones."""
    frame = load_dualrl("yelp").frame
    repeats = -(-n // len(frame))
    copies = [frame.assign(item=frame["item"] + copy * ITEM_OFFSET) for copy in range(repeats)]
    rows = pd.concat(copies, ignore_index=True).iloc[:n]
    path = folder / f"pairs_{n}.parquet"
    rows.to_parquet(path)
    return path


def timed_process(args: list[str], env: dict[str, str]) -> dict[str, object]:
    """Run ``args``; its CPU seconds (user + system), wall seconds, peak RSS (MB) and standard error."""
    start = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(args[3:])} failed ({process.returncode}):\n{stderr[-2000:]}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024,
            "stderr": stderr}


def score(pairs: Path, classifiers: dict[str, Path], out: Path, cache: Path, before: Path | None = None
          ) -> dict[str, object]:
    """One ``tsteval score`` process; ``before``: a folder holding the old ``tsteval`` package to import."""
    env = dict(os.environ, TSTEVAL_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    args = [sys.executable, "-c", MAIN, "score", "--table", str(pairs), "--content", CONTENT, "--modification",
            MODIFICATIONS, "--lexicon", str(LEXICON), "--naturalness", NATURALNESS, "--out", str(out), "--overwrite"]
    for name, folder in classifiers.items():
        args += ["--classifier", f"{name}={folder}"]
    if before is None:
        args += ["--threads", "1"]
        env["OMP_NUM_THREADS"] = "1"
    else:
        env["PYTHONPATH"] = str(before)
        env.pop("OMP_NUM_THREADS", None)
    cached = cached_embeddings(cache)
    result = timed_process(args, env)
    result.pop("stderr")
    result["texts_encoded"] = None if before is not None else cached_embeddings(cache) - cached
    result["data_mb"] = data_megabytes(out)
    return result


def data_megabytes(out: Path) -> float:
    """In-memory size (MB, pandas deep) of the scorecard a run wrote: its texts and every per-row score."""
    return float(pd.read_parquet(out / "scorecard.parquet").memory_usage(deep=True).sum()) / 2**20


def cached_embeddings(cache: Path) -> int:
    """How many embeddings the cache folder holds (rows of every entry's ``keys.npy``)."""
    return sum(len(np.load(path, allow_pickle=False)) for path in cache.glob("embeddings/*/*/keys.npy"))


def old_package(folder: Path, commit: str) -> Path:
    """The ``tsteval`` package of ``commit``, laid out for ``PYTHONPATH`` (package-dir mapping)."""
    source = folder / "src"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "harness", "classifiers", "lexicons"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    package = folder / "pkg" / "tsteval"
    shutil.copytree(source / "harness", package)
    shutil.copytree(source / "classifiers", package / "classifiers")
    shutil.copytree(source / "lexicons", package / "lexicons")
    return folder / "pkg"


def train_classifiers(folder: Path) -> dict[str, Path]:
    """fastText and TF-IDF LR on Yelp dev+test (the data root's Yelp corpus), saved under ``folder`` (kept when
    already there)."""
    env = dict(os.environ, TSTEVAL_CACHE=str(folder / "train-cache"), OMP_NUM_THREADS="1")
    trained = {}
    for name, backend in BACKENDS.items():
        out = folder / name
        if not out.exists():
            subprocess.run([sys.executable, "-c", MAIN, "train-classifier", backend, "--yelp", "--out", str(out),
                            "--quiet"], check=True, env=env, capture_output=True)
        trained[name] = out
    return trained


def projection(rows: list[dict[str, object]], encoder_rate: float | None,
               gpu: dict[str, object] | None = None) -> dict[str, object] | None:
    """10M pairs from the largest measured run: CPU-s per pair without the encoder, plus 4 encodes per pair, on
    this CPU and (``gpu``: :func:`gpu_encoder`) with the encoder on the GPU measured by ``speed_gpu``."""
    measured = cold_after(rows)
    if not measured:
        return None
    largest = measured[max(measured)]
    encoded = largest["texts_encoded"] or 0
    rate = encoder_rate or 95.0
    rest = max(largest["cpu_s"] - encoded / rate, 0.0) / largest["pairs"]
    pairs, texts_per_pair = 10_000_000, 4
    cpu_only = pairs * (rest + texts_per_pair / rate)
    result = {"pairs": pairs, "from_run_pairs": largest["pairs"], "non_encoder_cpu_s_per_pair": rest,
              "encoder_texts_per_cpu_s": rate, "texts_per_pair": texts_per_pair,
              "cpu_only_cpu_hours": cpu_only / 3600, "cpu_only_days_on_2_cores": cpu_only / 2 / 86400}
    if gpu is not None:
        encoding = pairs * texts_per_pair / gpu["texts_per_s"]
        result["gpu"] = {**gpu, "encoder_hours": encoding / 3600, "rest_cpu_hours": pairs * rest / 3600,
                         "hours_one_core_beside_the_gpu": (pairs * rest + encoding) / 3600}
    return result


def gpu_encoder() -> dict[str, object] | None:
    """The GPU encoder's measured texts/s (``SentenceEncoder.embed`` at its GPU default batch size) and the GPU,
    from ``results/speed_gpu.json`` when a GPU machine has written it."""
    path = OUT / "speed_gpu.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    encoder = report["encoder"]
    return {"device": report["machine"]["gpu"],
            "texts_per_s": encoder["sentence_encoder"][str(encoder["default_batch_size"])]["texts_per_s"]}


@contextmanager
def other_work(shared: bool) -> Iterator[None]:
    """With ``shared``, one busy Python process beside the block (the issue's shared 2-core machine)."""
    if not shared:
        yield
        return
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)  # it has its core before the run starts
        yield
    finally:
        process.kill()
        process.wait()


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--before-at", type=int, default=20_000, help="pairs of the before/after comparison")
    parser.add_argument("--classifiers", type=Path, help="a folder for the trained classifiers (ft/, lr/), reused "
                        "when they are there (default: trained in a temporary folder)")
    return parser


def main() -> None:
    args = parser().parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tsteval-e2e-") as tmp:
        folder = Path(tmp)
        classifiers = train_classifiers(args.classifiers or folder)
        befores = {commit: old_package(folder / f"before_{commit}", commit) for commit in BEFORE}
        runs: list[tuple[int, str | None, str, bool]] = []  # pairs, before commit (None: after), cache, shared
        for n in sorted(set(args.sizes)):
            runs += [(n, None, "cold", False)] + ([(n, None, "warm", False)] if n == args.before_at else [])
        runs += [(args.before_at, commit, "cold", False) for commit in BEFORE]
        runs += [(args.before_at, None, "cold", True), (args.before_at, next(iter(BEFORE)), "cold", True)]
        tables: dict[int, Path] = {}
        for n, commit, state, shared in runs:
            if n not in tables:
                tables[n] = table(n, folder)
            cache = folder / f"cache_{n}"
            if state == "cold" and cache.exists():
                shutil.rmtree(cache)
            if state == "warm" and not cache.exists():
                score(tables[n], classifiers, folder / f"run_{n}_fill", cache)
            with other_work(shared):
                load = os.getloadavg()[0]
                result = score(tables[n], classifiers, folder / f"run_{n}_{commit or 'after'}", cache,
                               befores.get(commit))
                load_after = os.getloadavg()[0]
            rows.append({"pairs": n, "code": "after" if commit is None else "before", "commit": commit,
                         "cache": state, "shared": shared, **result, "load_before": load, "load_after": load_after,
                         "pairs_per_s": n / result["wall_s"], "pairs_per_cpu_s": n / result["cpu_s"]})
            print(json.dumps(rows[-1]), flush=True)
            write(rows)
    print((OUT / "speed_end_to_end.md").read_text())


def cold_after(rows: list[dict[str, object]]) -> dict[int, dict[str, object]]:
    """The after runs on an empty cache and an otherwise idle machine, by pairs."""
    return {r["pairs"]: r for r in rows if r["code"] == "after" and r["cache"] == "cold" and not r.get("shared")}


def speedups(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """Each before run against the cold after run on the same pairs in the same condition (idle or shared):
    ``{"commit", "pairs", "shared", "before_cpu_s", "after_cpu_s", "ratio"}``."""
    out = []
    for before in (r for r in rows if r["code"] == "before"):
        after = [r for r in rows if r["code"] == "after" and r["cache"] == "cold" and r["pairs"] == before["pairs"]
                 and bool(r.get("shared")) == bool(before.get("shared"))]
        if after:
            out.append({"commit": before["commit"], "pairs": before["pairs"], "shared": bool(before.get("shared")),
                        "before_cpu_s": before["cpu_s"], "after_cpu_s": after[0]["cpu_s"],
                        "ratio": before["cpu_s"] / after[0]["cpu_s"]})
    return out


def write(rows: list[dict[str, object]]) -> None:
    """The results so far (after every run, so a long benchmark stopped early keeps what it measured)."""
    encoder = OUT / "speed_encoder.json"
    rate = json.loads(encoder.read_text())["encoder"]["texts_per_cpu_s"] if encoder.exists() else None
    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "processor": platform.processor() or platform.machine()},
              "content": CONTENT, "modifications": MODIFICATIONS, "naturalness": NATURALNESS,
              "style": "fastText and TF-IDF LR (Yelp dev+test)",
              "lexicon": portable(LEXICON), "before": BEFORE, "rows": rows, "speedups": speedups(rows),
              "projection": projection(rows, rate, gpu_encoder())}
    OUT.mkdir(exist_ok=True)
    publish(OUT, "speed_end_to_end", report, markdown)


def markdown(report: dict[str, object]) -> str:
    """The committed table."""
    rows = report["rows"]
    lines = ["# `tsteval score` end to end (DualRL Yelp pairs)", "",
             f"Style: {report['style']}; content `{report['content']}` at `{report['modifications']}`; naturalness "
             f"`{report['naturalness']}`; {report['machine']['cpus']} CPUs, otherwise idle except where `other work` "
             "says one busy process ran beside (the 1-minute load average before and after each run is in the "
             "table; CPU seconds are the comparable figure). Rows past 15,000 repeat the 15,000 real pairs.", "",
             md.table(pd.DataFrame([{
                 "pairs": f"{r['pairs']:,}", "code": r["code"] + (f" {r['commit']}" if r.get("commit") else ""),
                 "cache": r["cache"], "other work": "1 busy process" if r.get("shared") else "none",
                 "CPU s": f"{r['cpu_s']:.1f}", "wall s": f"{r['wall_s']:.1f}",
                 "pairs / CPU s": f"{r['pairs_per_cpu_s']:.1f}",
                 "peak RSS (MB)": f"{r['peak_rss_mb']:.0f}", "data (MB)": f"{r['data_mb']:.0f}",
                 "texts encoded": "-" if r["texts_encoded"] is None else f"{r['texts_encoded']:,}",
                 "load": f"{r['load_before']:.1f} / {r['load_after']:.1f}"} for r in rows]))]
    missing = sorted(set(SIZES) - {r["pairs"] for r in rows})
    if missing:
        big = max(rows, key=lambda r: r["pairs"])
        lines += ["", "Not run in this benchmark: " + ", ".join(f"{n:,}" for n in missing) + " pairs (the "
                  f"{big['pairs']:,}-pair run took {big['wall_s'] / 60:.0f} minutes of wall time for "
                  f"{big['cpu_s']:.0f} CPU-seconds under other work's load)."]
    lines += ["", "`data` is the run's scorecard in memory (pandas, deep: texts and per-row scores); `texts encoded` "
              "counts the embeddings the run added to the cache (the before code has none)."]
    cold = cold_after(rows)
    if 20_000 in cold and 100_000 in cold:
        small, big = cold[20_000], cold[100_000]
        peak, data = big["peak_rss_mb"] - small["peak_rss_mb"], big["data_mb"] - small["data_mb"]
        lines += ["", f"Memory from 20,000 to 100,000 pairs: the peak grows by {peak:.0f} MB, the data itself by "
                      f"{data:.0f} MB ({'within' if peak <= data else 'more than'} the data's growth; "
                      f"{peak / 80_000 * 1024:.1f} KB of peak per added pair)."]
    if report.get("speedups"):
        lines += ["", "Before/after (same table, same run; before = the commit with torch's default threads, after = "
                      "this code with --threads 1):", ""]
        lines += [f"- {s['pairs']:,} pairs, {'beside one busy process' if s['shared'] else 'idle'}, before = "
                  f"{s['commit']} ({report['before'][s['commit']]}): {s['before_cpu_s']:.1f} -> "
                  f"{s['after_cpu_s']:.1f} CPU s, **{s['ratio']:.2f}x** less CPU time" for s in report["speedups"]]
    p = report["projection"]
    if p is None:
        return "\n".join(lines)
    lines += ["", "## Projection to 10M pairs", "",
              f"From the {p['from_run_pairs']:,}-pair run: {p['non_encoder_cpu_s_per_pair'] * 1e3:.2f} CPU-ms per "
              f"pair outside the encoder; the encoder at {p['encoder_texts_per_cpu_s']:.0f} texts per CPU-s "
              f"(benchmarks/results/speed_encoder.md) on {p['texts_per_pair']} distinct texts per pair (input and "
              "output, unmodified and masked; real data repeats inputs, so this is an upper bound).",
              f"- CPU only: {p['cpu_only_cpu_hours']:,.0f} CPU-hours, {p['cpu_only_days_on_2_cores']:.1f} days on "
              "this 2-core machine.",
              ""]
    if "gpu" in p:
        g = p["gpu"]
        lines[-1:] = [f"- With the encoder on a GPU ({g['device']}: {g['texts_per_s']:,.0f} texts/s measured by "
                      f"benchmarks/results/speed_gpu.md): {g['encoder_hours']:.1f} hours of encoding and "
                      f"{g['rest_cpu_hours']:,.1f} CPU-hours for the rest on one core of this machine, "
                      f"{g['hours_one_core_beside_the_gpu']:,.1f} hours in all; the lexical metrics, style "
                      "classifiers and naturalness then dominate.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
