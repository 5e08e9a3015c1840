"""``make bench-gpu``: the GPU figures (issues 30 and 35) in one prepared run of at most 8 minutes.

On the GPU (CUDA, fp32 and bf16, a SmolLM2-shaped model):

* the LM metrics (:data:`LM_METRICS`, one template each) on 5,000 DualRL Yelp pairs, pairs/s against
  :data:`TARGETS` in fp32 and in bf16 (the model loaded before the clock starts);
* BERTScore (F1, P and R from one call, no IDF) on 15,000 pairs, pairs/s;
* ``--metrics recommended`` (``style_strength@ft`` from a fastText classifier trained beforehand, ``sbert@none``,
  ``lp_mean@gemma3-270m`` with a Gemma-3-270M-shaped model of random weights, J's ``naturalness@unigram``) on 20,000
  pairs (:data:`SIZES`) in fp32 and in bf16, from the table read to the scorecard written, beside the
  interpreter's start-up (``import tsteval`` in a fresh process) and the models' loading (a warm-up run on other
  pairs), which are not counted;
* every GPU column against the same column on the CPU (the first 200 pairs; equal to 1e-5 in fp32)
  and the largest deviation of bf16 and fp16 from fp32 on the GPU.

The report goes into ``results/bench_gpu.json`` (with the device's name); :func:`markdown` renders its table
(``results/bench_gpu.md``, with :mod:`benchmarks.speed.profile_lm`'s profile: its :func:`page`).

The GPU machines lent here receive at most 64 MiB per command, working tree included, so ``--pack DIR`` (here)
writes what :func:`benchmarks.speed.speed_gpu.pack` writes (texts, pairs, MiniLM rounded to fp16 for the journey,
SmolLM2's config and tokenizer; its weights are drawn at random there), Gemma 3 270M's config and tokenizer (its
weights drawn there too) and the wheels of :data:`WHEELS` for the GPU machine's Python (:data:`GPU_PYTHON`: its
image lacks them, and the last run lost the ``score`` figure to a missing fastText) split into ``DIR/part1`` and
``DIR/part2``, each small enough to travel beside the tree.  Two calls then: one carrying ``part1`` (kept on the
warm machine, as ignored files are), one carrying ``part2`` that runs ``make bench-gpu && cp
benchmarks/results/speed_gpu.* "$OUT"`` (``--packed DIR`` for another folder than ``.gpu_pack``).
``--smoke`` runs every step on the CPU on a few pairs with the packaged models and writes nothing (a test runs it).

Run: ``make bench-gpu`` (packs where torch sees no GPU, measures where it does).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd

from benchmarks.speed import speed_gpu
from tsteval.core.progress import quieted

PACK = Path(__file__).resolve().parents[2] / ".gpu_pack"
UPLOAD = 64 * 2**20  # bytes a GPU machine receives per command, the working tree included
LM_METRICS = ("judge_style", "judge_fluency", "judge_content", "cond_lp", "logprop_content")
SIZES = {"lm": 5_000, "bertscore": 15_000, "score": 20_000, "check": 200, "warm": 64}  # pairs of each part
SMOKE = {"lm": 6, "bertscore": 12, "score": 60, "check": 5, "warm": 8}  # check: at least the 5 folds of J's factor
TARGETS = {"lm": 2_000, "bertscore": 25_000, "score": 10_000}  # pairs/s
PRECISIONS = ("bf16", "fp16")
# What the GPU machine's image lacks for the score part (its Python: benchmarks/results/speed_gpu.json "machine").
WHEELS = ("fasttext-numpy2", "sacremoses", "click", "joblib")
GPU_PYTHON = "3.12"
GEMMA = "gemma3-270m"
STYLES = {"0": "negative", "1": "positive"}


def split(files: list[Path], budget: int, parts: int = 2) -> list[list[Path]]:
    """``files`` in at most ``parts`` groups of at most ``budget`` bytes each, largest first into the first that
    has room; a :class:`ValueError` when they do not fit.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name, size in (("a", 5), ("b", 3), ("c", 4)):
    ...     _ = (folder / name).write_bytes(b"x" * size)
    >>> [[f.name for f in group] for group in split(sorted(folder.iterdir()), 8)]
    [['a', 'b'], ['c']]
    """
    groups: list[list[Path]] = [[] for _ in range(parts)]
    room = [budget] * parts
    for file in sorted(files, key=lambda f: -f.stat().st_size):
        size = file.stat().st_size
        fits = [k for k in range(parts) if room[k] >= size]
        if not fits:
            raise ValueError(f"{file.name} ({size / 2**20:.1f} MiB) fits in no upload of {budget / 2**20:.1f} MiB")
        groups[fits[0]].append(file)
        room[fits[0]] -= size
    return [group for group in groups if group]


def tree_bytes() -> int:
    """Bytes of the working tree that travels with every command (tracked and untracked, not ignored files)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True, check=True,
                            cwd=PACK.parent).stdout.decode().split("\0")
    return sum((PACK.parent / f).stat().st_size for f in listed if f and (PACK.parent / f).is_file())


def pack_gemma_and_wheels(folder: Path) -> None:
    """Gemma 3 270M's config and tokenizer into ``folder/gemma3-270m`` and the :data:`WHEELS` for
    :data:`GPU_PYTHON` into ``folder/wheels`` (from the package registry)."""
    from tsteval.metrics.naturalness.causal_lm import converted_gguf, gemma3_path

    gemma = converted_gguf(gemma3_path())
    (folder / GEMMA).mkdir(parents=True, exist_ok=True)
    for name in speed_gpu.LM_FILES:
        if (gemma / name).is_file():
            shutil.copy(gemma / name, folder / GEMMA / name)
    platforms = [arg for tag in ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
                 for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--no-deps",
                    "--python-version", GPU_PYTHON, *platforms, "-d", str(folder / "wheels"), *WHEELS], check=True)


def install_wheels(folder: Path) -> None:
    """Install the packed wheels where fastText is missing (the GPU machine), without the network."""
    try:
        import fasttext  # noqa: F401
    except ImportError:
        wheels = sorted(str(w) for w in (folder / "wheels").glob("*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", *wheels],
                       check=True)


def pack(folder: Path) -> list[Path]:
    """:func:`benchmarks.speed.speed_gpu.pack` and :func:`pack_gemma_and_wheels` into ``folder/part1`` and
    ``folder/part2`` (each fits one upload beside the working tree, 1 MiB spare); the parts' folders."""
    with tempfile.TemporaryDirectory(prefix="tsteval-pack-") as work:
        speed_gpu.pack(Path(work))
        pack_gemma_and_wheels(Path(work))
        files = [f for f in Path(work).rglob("*") if f.is_file()]
        shutil.rmtree(folder, ignore_errors=True)
        parts = []
        for k, group in enumerate(split(files, UPLOAD - tree_bytes() - 2**20), 1):
            parts.append(folder / f"part{k}")
            for file in group:
                target = parts[-1] / file.relative_to(work)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(file, target)
    return parts


def merged(folder: Path, work: Path) -> Path:
    """One folder, under ``work``, of every part of a :func:`pack` folder (hard links)."""
    whole = work / "packed"
    for part in sorted(folder.glob("part*")):
        for file in (f for f in part.rglob("*") if f.is_file()):
            target = whole / file.relative_to(part)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(file, target)
    return whole


def synchronize(device: str) -> None:
    """Wait for the GPU's queued work (nothing to wait for on the CPU)."""
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn: Callable[[], object], device: str) -> tuple[object, float]:
    """``fn()`` and its wall seconds, the device synchronised before each clock read."""
    synchronize(device)
    start = time.perf_counter()
    value = fn()
    synchronize(device)
    return value, time.perf_counter() - start


def gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest absolute difference of two columns."""
    return float(np.abs(np.asarray(a, float) - np.asarray(b, float)).max())


def card_of(frame: pd.DataFrame) -> object:
    """A scorecard of ``frame``'s pairs (styles named as DualRL's Yelp reader names them)."""
    from tsteval.core.records import Transfers
    from tsteval.core.styles import with_style_names
    from tsteval.scorecard import Scorecard

    transfers = Transfers.from_pairs(frame["input"].tolist(), frame["output"].tolist(),
                                     source_style=frame["source_style"].astype(str).tolist(),
                                     target_style=frame["target_style"].astype(str).tolist())
    return Scorecard(with_style_names(transfers.frame, lambda label: STYLES.get(label, label)))


def lm_column(name: str, frame: pd.DataFrame, lm: object, model: str) -> np.ndarray:
    """LM metric ``name`` (template 1) of ``frame``'s pairs with the loaded causal LM ``lm``."""
    from tsteval.metrics.judges.logprop import LOGPROP
    from tsteval.metrics.judges.scorer import score_judges
    from tsteval.metrics.resources import Built, Resources

    card = card_of(frame)
    resources = Resources()
    resources.built[("language_model", "")] = Built(lm, lm.model_id)
    before = set(card.frame.columns)
    score_judges(card, [name], resources, {} if name in LOGPROP else {name: {"template": "1"}}, "auto",
                 lambda label: STYLES.get(label, label), model)
    column, = sorted(set(card.frame.columns) - before)
    return card.frame[column].to_numpy(float)


def lm_figures(frame: pd.DataFrame, model: str, device: str, sizes: dict[str, int]) -> dict[str, object]:
    """Pairs/s of each LM metric on ``device``, its gap to the CPU and bf16/fp16's deviation (see the module)."""
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    pairs, check = frame.head(sizes["lm"]), sizes["check"]
    lm, load_s = timed(lambda: CausalLM(model, device=device, precision="fp32"), device)
    cpu = lm if device == "cpu" else CausalLM(model, device="cpu", precision="fp32")
    halves = {p: CausalLM(model, device=device, precision=p) for p in PRECISIONS if device != "cpu"}
    rows = {}
    for name in LM_METRICS:
        per_s = {}
        for precision, model_in in (("fp32", lm), *halves.items()):
            lm_column(name, pairs.head(sizes["warm"]), model_in, model)  # warm-up
            values_in, seconds = timed(lambda name=name, m=model_in: lm_column(name, pairs, m, model), device)
            per_s[precision] = len(pairs) / seconds
            if precision == "fp32":
                values, fp32_seconds = values_in, seconds
        first = values[:check]
        rows[name] = {"pairs": len(pairs), "seconds": fp32_seconds, "pairs_per_s": per_s["fp32"],
                      "pairs_per_s_by_precision": per_s,
                      "max_abs_diff_vs_cpu": gap(first, lm_column(name, pairs.head(check), cpu, model)),
                      "deviation": {p: gap(first, lm_column(name, pairs.head(check), half, model))
                                    for p, half in halves.items()}}
    return {"load_s": load_s, "metrics": rows}


def bertscore_figures(frame: pd.DataFrame, minilm: str, device: str, sizes: dict[str, int]) -> dict[str, object]:
    """BERTScore's pairs/s on ``device``, its gap to the CPU and bf16/fp16's deviation (see the module)."""
    from tsteval.metrics.content.bertscore import bertscore
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder

    def scores(pairs: pd.DataFrame, on: str = device, precision: str = "fp32") -> np.ndarray:
        encoder = SentenceEncoder(minilm, device=on, cache=False, precision=precision)
        return bertscore(pairs["input"].tolist(), pairs["output"].tolist(), encoder)

    n, check = sizes["bertscore"], sizes["check"]
    _, load_s = timed(lambda: scores(frame.tail(sizes["warm"])), device)
    values, seconds = timed(lambda: scores(frame.head(n)), device)
    first = scores(frame.head(check))
    return {"pairs": n, "load_s": load_s, "seconds": seconds, "pairs_per_s": n / seconds,
            "max_abs_diff_vs_cpu": gap(first, scores(frame.head(check), "cpu")),
            "max_abs_diff_subset_vs_whole": gap(first, values[:check]),
            "deviation": {p: gap(first, scores(frame.head(check), precision=p))
                          for p in PRECISIONS if device != "cpu"}}


def score_figures(frame: pd.DataFrame, minilm: str, training: dict[str, list[str]], device: str,
                  sizes: dict[str, int], work: Path, gemma: Path | None = None) -> dict[str, object]:
    """``--metrics recommended`` on ``n`` pairs from the table read to the scorecard written (see the module);
    ``gemma``: a folder read in place of the packaged Gemma 3 270M (:func:`benchmarks.speed.speed_gpu.random_lm`)."""
    import tsteval
    from tsteval.classifiers.base import make_classifier
    from tsteval.metrics.content import sentence_embedding
    from tsteval.metrics.naturalness import causal_lm

    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tsteval"], check=True)
    startup_s = time.perf_counter() - start
    classifier, train_s = timed(lambda: make_classifier("fasttext").fit(training["texts"], training["labels"]),
                                "cpu")

    def run(pairs: pd.DataFrame, name: str, on: str = device, precision: str = "fp32") -> pd.DataFrame:
        table = work / f"{name}.parquet"
        pairs.to_parquet(table)
        card = tsteval.evaluate(table=table, metrics=["recommended"], classifier={"ft": classifier}, device=on,
                                style_labels=STYLES, precision=precision)
        card.save(work / name)
        return card.frame

    n, check = sizes["score"], sizes["check"]
    columns = ("sbert@none", f"lp_mean@{GEMMA}")
    converted = causal_lm.converted_gguf
    stand_in = {GEMMA: lambda: gemma / "stand-in"} if gemma is not None else {}  # read as a folder, not converted
    # the packed MiniLM (its package need not be installed there); no embedding found from an earlier run
    with (mock.patch.object(sentence_embedding, "default_model", lambda: minilm),
          mock.patch.dict(causal_lm.PACKAGED_GGUF, stand_in),
          mock.patch.object(causal_lm, "converted_gguf", lambda p: p.parent if p.name == "stand-in" else converted(p)),
          mock.patch.dict(os.environ, {"TSTEVAL_CACHE": str(work / "cache")})):
        _, load_s = timed(lambda: run(frame.tail(sizes["warm"]).assign(system="warm-up"), "warm"), device)
        card, seconds = timed(lambda: run(frame.head(n), "scored"), device)
        on_cpu = run(frame.head(check).assign(system="check"), "cpu", "cpu")  # one system: enough rows to cross-fit
        halves = {}
        for precision in PRECISIONS if device != "cpu" else ():
            run(frame.tail(sizes["warm"]).assign(system="warm-up"), f"warm-{precision}", device, precision)
            half, half_s = timed(lambda p=precision: run(frame.head(n), f"scored-{p}", device, p), device)
            halves[precision] = {"pairs_per_s": n / half_s,
                                 "deviation": max(gap(half[c], card[c]) for c in columns)}
    return {"pairs": n, "startup_s": startup_s, "classifier_train_s": train_s, "load_s": load_s,
            "seconds": seconds, "pairs_per_s": n / seconds, "by_precision": halves,
            "max_abs_diff_vs_cpu": {column: gap(card[column][:check], on_cpu[column]) for column in columns}}


def measure(frame: pd.DataFrame, minilm: str, lm: str, training: dict[str, list[str]], device: str,
            sizes: dict[str, int], work: Path, gemma: Path | None = None) -> dict[str, object]:
    """Every figure of the module on ``device`` with ``sizes`` (pairs per part, see :data:`SMOKE`)."""
    import torch

    name = torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu (smoke run)"
    parts = {"lm": lambda: lm_figures(frame, lm, device, sizes),
             "bertscore": lambda: bertscore_figures(frame, minilm, device, sizes),
             "score": lambda: score_figures(frame, minilm, training, device, sizes, work, gemma)}
    report: dict[str, object] = {"device": name, "fp32_tf32": torch.backends.cuda.matmul.allow_tf32,
                                 "targets_pairs_per_s": TARGETS}
    for part, figures in parts.items():
        try:
            report[part] = figures()
        except Exception as error:  # noqa: BLE001 - a GPU machine may lack a library one part needs: keep the others
            if device == "cpu":
                raise
            report[part] = {"error": f"{type(error).__name__}: {error}"}
    return report


def markdown(report: dict[str, object]) -> list[str]:
    """The lines of a :func:`measure` report's table (``results/bench_gpu.md``)."""
    lm, bert, score = report["lm"]["metrics"], report["bertscore"], report["score"]
    target = report["targets_pairs_per_s"]

    def row(name: str, x: dict[str, object], goal: int, vs_cpu: object, bf16: object) -> str:
        if "error" in x:  # a part the GPU machine could not run (a library it lacks)
            return f"| {name} | - | not measured: {x['error']} | - | {goal:,} | - | - | - | - |"
        deviation = " | ".join(f"{x['deviation'][p]:.1e}" if p in x.get("deviation", {}) else "-" for p in PRECISIONS)
        fast = f"**{bf16:,.0f}**" if bf16 else "-"
        return (f"| {name} | {x['pairs']:,} | **{x['pairs_per_s']:,.0f}** | {fast} | {goal:,} | "
                f"{'yes' if max(x['pairs_per_s'], bf16 or 0) >= goal else 'no'} | {vs_cpu():.1e} | {deviation} |")

    score_bf16 = score.get("by_precision", {}).get("bf16", {})
    return [f"## `make bench-gpu` on {report['device']}", "",
            "Pairs per wall second (fp32, and bf16 weights with float32 log-softmax), models loaded before the clock "
            "starts; the largest difference from the CPU's values (fp32, first pairs) and bf16/fp16's deviation from "
            "fp32 on the GPU. Met: the target reached in either precision.", "",
            "| part | pairs | fp32 pairs/s | bf16 pairs/s | target | met | fp32 vs CPU | bf16 | fp16 |",
            "|---|---:|---:|---:|---:|---|---:|---:|---:|",
            *(row(f"`{name}`", x, target["lm"], lambda x=x: x["max_abs_diff_vs_cpu"],
                  x.get("pairs_per_s_by_precision", {}).get("bf16")) for name, x in lm.items()),
            row("BERTScore", bert, target["bertscore"], lambda: bert["max_abs_diff_vs_cpu"], None),
            row("`score --metrics recommended`", {**score, "deviation": {
                p: v["deviation"] for p, v in score.get("by_precision", {}).items()}}, target["score"],
                lambda: max(score["max_abs_diff_vs_cpu"].values()), score_bf16.get("pairs_per_s")),
            "", *([] if "error" in score else [
                f"Not counted: interpreter start-up {score['startup_s']:.1f} s, loading (a warm-up run) "
                f"{score['load_s']:.1f} s, the fastText classifier's training {score['classifier_train_s']:.1f} s; "
                f"SmolLM2 loaded in {report['lm']['load_s']:.1f} s.", ""])]


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pack", type=Path, help="write the two uploads for a GPU machine into this folder")
    parser.add_argument("--packed", type=Path, help="measure on the GPU from a folder written by --pack")
    parser.add_argument("--smoke", action="store_true", help="every step on the CPU on a few pairs; nothing written")
    return parser


def main(argv: list[str] | None = None) -> dict[str, object] | None:
    args = parser().parse_args(argv)
    import torch

    if args.pack or not (args.smoke or torch.cuda.is_available()):
        parts = pack(args.pack or PACK)
        print("\n".join(["bench_gpu: packed the uploads for a GPU machine (one call carrying each, the last one "
                         "running `make bench-gpu`):",
                         *(f"  {p}: {sum(f.stat().st_size for f in p.rglob('*')) / 2**20:.1f} MiB" for p in parts)]))
        return None
    with tempfile.TemporaryDirectory(prefix="tsteval-bench-gpu-") as work, quieted():
        if args.smoke:
            from tsteval.metrics.content.sentence_embedding import default_model

            frame = speed_gpu.table(max(SMOKE.values()) * 4, Path(work))
            training = speed_gpu.yelp_training()
            minilm, lm, sizes, device, gemma = default_model(), "smollm2", SMOKE, "cpu", None
        else:
            packed = merged(args.packed or PACK, Path(work))
            install_wheels(packed)
            _, minilm, lm = speed_gpu.unpack(packed, Path(work))
            gemma = Path(speed_gpu.random_lm(packed / GEMMA, Path(work)))
            frame = packed / f"pairs_{speed_gpu.SCORE_PAIRS}.parquet"
            training = json.loads((packed / "yelp_train.json").read_text())
            sizes, device = SIZES, "cuda"
        report = measure(pd.read_parquet(frame), minilm, lm, training, device, sizes, Path(work), gemma)
    print(json.dumps(report, indent=1), flush=True)
    if not args.smoke:
        speed_gpu.OUT.mkdir(exist_ok=True)
        (speed_gpu.OUT / "bench_gpu.json").write_text(json.dumps(report, indent=1))
        print("\n".join(markdown(report)))
    return report


if __name__ == "__main__":
    main()
