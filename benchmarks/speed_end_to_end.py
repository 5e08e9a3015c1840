"""``tsteval score`` end to end: CPU time, wall time, pairs per second and peak memory at 2k, 20k and 100k pairs.

Pairs: the DualRL Yelp release (15 systems x 1,000 test inputs, both directions: 15,000 real pairs), repeated
in order to reach 20,000 and 100,000 rows (there are no more real DualRL Yelp pairs): past 15,000 rows the texts
repeat, so the sentence encoder sees no new text and the lexical metrics' work grows with the rows.  Metrics:
style with a fastText classifier trained on Yelp dev+test (``tsteval train-classifier fasttext --yelp``), content
``bleu,chrf,rougeL,sbert`` at ``none,mask`` with the Yelp lexicon of ``benchmarks/results/yelp_lexicon.json``.

Every run is a fresh process (``tsteval score --table``) with an empty cache folder (``TSTEVAL_CACHE``), timed by
``os.wait4`` (user + system CPU seconds, peak resident memory of that process).  After: this code with
``--threads 1`` (the right setting on a shared 2-core machine).  Before: the code of commit ``59cd92c`` (main
before the speed work), unpacked from git and imported from ``PYTHONPATH``, with torch's default threads (it had
no ``--threads``), on the same 20k table in the same run.  A second 20k run on the warm cache shows what a rerun
costs.  The projection to 10M pairs scales the measured per-pair costs (see the notes in the output).

Run: ``python -m benchmarks.speed_end_to_end [--sizes 2000 20000 100000]`` (about half an hour on 2 busy cores).
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
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.datapaths import portable
from tsteval.readers.published import load_dualrl

OUT = Path(__file__).parent / "results"
REPO = Path(__file__).resolve().parent.parent
LEXICON = OUT / "yelp_lexicon.json"
BEFORE = "59cd92c"
CONTENT = "bleu,chrf,rougeL,sbert"
MODIFICATIONS = "none,mask"
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


def score(pairs: Path, classifier: Path, out: Path, cache: Path, before: Path | None = None) -> dict[str, object]:
    """One ``tsteval score`` process; ``before``: a folder holding the old ``tsteval`` package to import."""
    env = dict(os.environ, TSTEVAL_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    args = [sys.executable, "-c", MAIN, "score", "--table", str(pairs), "--classifier", f"ft={classifier}",
            "--content", CONTENT, "--modification", MODIFICATIONS, "--lexicon", str(LEXICON), "--out", str(out),
            "--overwrite"]
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
    return result


def cached_embeddings(cache: Path) -> int:
    """How many embeddings the cache folder holds (rows of every entry's ``keys.npy``)."""
    return sum(len(np.load(path, allow_pickle=False)) for path in cache.glob("embeddings/*/*/keys.npy"))


def old_package(folder: Path) -> Path:
    """The ``tsteval`` package of commit :data:`BEFORE`, laid out for ``PYTHONPATH`` (package-dir mapping)."""
    source = folder / "src"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE, "harness", "classifiers", "lexicons"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    package = folder / "pkg" / "tsteval"
    shutil.copytree(source / "harness", package)
    shutil.copytree(source / "classifiers", package / "classifiers")
    shutil.copytree(source / "lexicons", package / "lexicons")
    return folder / "pkg"


def train_classifier(folder: Path) -> Path:
    """fastText on Yelp dev+test (the data root's Yelp corpus), saved under ``folder``."""
    out = folder / "ft"
    env = dict(os.environ, TSTEVAL_CACHE=str(folder / "train-cache"), OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", MAIN, "train-classifier", "fasttext", "--yelp", "--out", str(out),
                    "--quiet"], check=True, env=env, capture_output=True)
    return out


def projection(rows: list[dict[str, object]], encoder_rate: float | None) -> dict[str, object] | None:
    """10M pairs from the largest measured run: CPU-s per pair without the encoder, plus 4 encodes per pair."""
    measured = [r for r in rows if r["code"] == "after" and r["cache"] == "cold"]
    if not measured:
        return None
    largest = max(measured, key=lambda r: r["pairs"])
    encoded = largest["texts_encoded"] or 0
    rate = encoder_rate or 95.0
    rest = max(largest["cpu_s"] - encoded / rate, 0.0) / largest["pairs"]
    pairs, texts_per_pair = 10_000_000, 4
    cpu_only = pairs * (rest + texts_per_pair / rate)
    return {"pairs": pairs, "from_run_pairs": largest["pairs"], "non_encoder_cpu_s_per_pair": rest,
            "encoder_texts_per_cpu_s": rate, "texts_per_pair": texts_per_pair,
            "cpu_only_cpu_hours": cpu_only / 3600, "cpu_only_days_on_2_cores": cpu_only / 2 / 86400,
            "gpu_assumed_texts_per_s": 20_000, "gpu_hours_one_core_rest": (pairs * rest + pairs * texts_per_pair
                                                                           / 20_000) / 3600}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--before-at", type=int, default=20_000, help="pairs of the before/after comparison")
    parser.add_argument("--classifier", type=Path, help="a saved fastText classifier (default: trained here)")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tsteval-e2e-") as tmp:
        folder = Path(tmp)
        classifier = args.classifier or train_classifier(folder)
        before = old_package(folder / "before")
        runs = []
        for n in sorted(set(args.sizes)):
            runs += [(n, "after", "cold")] + ([(n, "after", "warm")] if n == args.before_at else [])
        runs.append((args.before_at, "before", "cold"))
        tables: dict[int, Path] = {}
        for n, code, state in runs:  # the before run last: the slowest, and only a reference point
            if n not in tables:
                tables[n] = table(n, folder)
            cache = folder / f"cache_{n}"
            if state == "cold" and cache.exists():
                shutil.rmtree(cache)
            if state == "warm" and not cache.exists():
                score(tables[n], classifier, folder / f"run_{n}_fill", cache)
            result = score(tables[n], classifier, folder / f"run_{n}_{code}", cache,
                           before if code == "before" else None)
            rows.append({"pairs": n, "code": code, "cache": state, **result,
                         "pairs_per_s": n / result["wall_s"], "pairs_per_cpu_s": n / result["cpu_s"]})
            print(json.dumps(rows[-1]), flush=True)
            write(rows)
    print((OUT / "speed_end_to_end.md").read_text())


def write(rows: list[dict[str, object]]) -> None:
    """The results so far (after every run, so a long benchmark stopped early keeps what it measured)."""
    encoder = OUT / "speed_encoder.json"
    rate = json.loads(encoder.read_text())["encoder"]["texts_per_cpu_s"] if encoder.exists() else None
    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "processor": platform.processor() or platform.machine()},
              "content": CONTENT, "modifications": MODIFICATIONS, "style": "fastText (Yelp dev+test)",
              "lexicon": portable(LEXICON), "before": BEFORE, "rows": rows, "projection": projection(rows, rate)}
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_end_to_end.json").write_text(json.dumps(report, indent=2))
    (OUT / "speed_end_to_end.md").write_text(markdown(report))


def markdown(report: dict[str, object]) -> str:
    """The committed table."""
    rows = report["rows"]
    lines = ["# `tsteval score` end to end (DualRL Yelp pairs)", "",
             f"Style: {report['style']}; content `{report['content']}` at `{report['modifications']}`; "
             f"{report['machine']['cpus']} CPUs shared with other work (wall times are noisy, CPU seconds are "
             "the comparable figure). Rows past 15,000 repeat the 15,000 real pairs.", "",
             "| pairs | code | cache | CPU s | wall s | pairs / CPU s | peak RSS (MB) | texts encoded |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['pairs']:,} | {r['code']} | {r['cache']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | "
              f"{r['pairs_per_cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | "
              f"{'-' if r['texts_encoded'] is None else format(r['texts_encoded'], ',')} |" for r in rows]
    missing = sorted(set(SIZES) - {r["pairs"] for r in rows})
    if missing:
        big = max(rows, key=lambda r: r["pairs"])
        lines += ["", "Not run on this shared machine: " + ", ".join(f"{n:,}" for n in missing) + " pairs (the "
                  f"{big['pairs']:,}-pair run took {big['wall_s'] / 60:.0f} minutes of wall time for "
                  f"{big['cpu_s']:.0f} CPU-seconds under other work's load)."]
    lines += ["", "`texts encoded` counts the embeddings the run added to the cache (the before code has none)."]
    before = [r for r in rows if r["code"] == "before"]
    after = [r for r in rows if r["code"] == "after" and r["cache"] == "cold" and before
             and r["pairs"] == before[0]["pairs"]]
    if before and after:
        lines += ["", f"Before/after at {before[0]['pairs']:,} pairs (same table, same run): "
                      f"{before[0]['cpu_s'] / after[0]['cpu_s']:.2f}x less CPU time "
                      f"({before[0]['cpu_s']:.0f} -> {after[0]['cpu_s']:.0f} CPU s); before = commit "
                      f"{report['before']} with torch's default threads, after = this code with --threads 1."]
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
              f"- With a GPU for the encoder (assumed, not measured here: {p['gpu_assumed_texts_per_s']:,} "
              f"MiniLM texts/s): {p['gpu_hours_one_core_rest']:,.0f} hours on one CPU core for the rest; the "
              "lexical metrics and style classifier then dominate.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
