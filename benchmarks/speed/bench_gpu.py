"""``make bench-gpu``: the GPU figures (issues 30, 35 and 40) in one prepared run of at most 9 minutes.

On the GPU (CUDA, a SmolLM2-shaped model for the LM metrics):

* each LM metric (:data:`LM_METRICS`, one template each) on 5,000 DualRL Yelp pairs in fp32 and in bf16: pairs/s of
  the first pass over the pairs (every batch shape new) and of a second one, the positions the planner computed
  beside the real tokens, and the same in bf16 with the code's behaviour before issue 40 (:func:`before_issue_40`:
  cuDNN's attention allowed, one wide calibration pass); the planner's calibration timings
  (:data:`tsteval.metrics.judges.prefix_scoring.CALIBRATIONS`);
* BERTScore (F1, P and R from one call, no IDF) on 15,000 pairs, pairs/s;
* ``--metrics recommended:formality`` (:data:`PROFILE`: ``style_strength@ft`` from a fastText classifier trained
  beforehand, ``sbert@none`` (the content column and J's), ``naturalness@unigram``, and Gemma 3 270M's columns
  with a Gemma-3-270M-shaped model of random weights; the profile's naturalness column is Gemma's too) on 20,000
  pairs (:data:`SIZES`) in fp32 and in bf16 (what ``--precision auto`` picks on a GPU that computes it natively),
  from the table read to the scorecard written, the models loaded by a warm-up run before the clock; then a bf16
  run profiled (:data:`SCORE_PHASES` clocked on the host, the GPU's kernels summed by ``torch.profiler``), and a
  bf16 run as before issue 40 (models loaded by every run, the unigram classifiers in one process);
* every GPU column against the same column on the CPU (the first 200 pairs; equal to 1e-5 in fp32)
  and the largest deviation of bf16 and fp16 from fp32 on the GPU.

The report goes into ``results/bench_gpu.json`` (with the device's name); :func:`page` renders it
(``results/bench_gpu.md``).

The GPU machines lent here receive at most 64 MiB per command, working tree included, so ``--pack DIR`` (here)
writes what :func:`benchmarks.speed.speed_gpu.pack` writes without MiniLM's weights (texts, pairs, MiniLM's and
SmolLM2's configs and tokenizers; their weights are drawn at random there), Gemma 3 270M's config and its tokenizer
compressed with xz (its weights drawn there too) and the wheels of :data:`WHEELS` for the GPU machine's Python
(:data:`GPU_PYTHON`: its image lacks them), in ``DIR/part1`` (and ``part2`` should it not fit one upload).  One call
carrying ``.gpu_pack`` then runs ``make bench-gpu`` (``--packed DIR`` for another folder than ``.gpu_pack``).
``--smoke`` runs every step on the CPU on a few pairs with the packaged models and writes nothing (a test runs it).
Throughput does not depend on the weights' values, and each agreement figure compares two paths on the same weights.

Run: ``make bench-gpu`` (packs where torch sees no GPU, measures where it does).
"""

from __future__ import annotations

import argparse
import importlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd

from benchmarks.speed import speed_gpu
from tsteval.core import markdown as md
from tsteval.core.progress import quieted

PACK = Path(__file__).resolve().parents[2] / ".gpu_pack"
RESULT = speed_gpu.OUT / "bench_gpu.json"
UPLOAD = 64 * 2**20  # bytes a GPU machine receives per command, the working tree included
LM_METRICS = ("judge_style", "judge_fluency", "judge_content", "cond_lp", "logprop_content")
SIZES = {"lm": 5_000, "bertscore": 15_000, "score": 20_000, "check": 200, "warm": 64}  # pairs of each part
SMOKE = {"lm": 3, "bertscore": 6, "score": 20, "check": 5, "warm": 5}  # check, warm: at least J's 5 folds
TARGETS = {"lm": 2_000, "bertscore": 25_000, "score": 10_000}  # pairs/s
PRECISIONS = ("bf16", "fp16")
PARTS = ("lm", "bertscore", "score")
# What the GPU machine's image lacks for the score part (its Python: benchmarks/results/speed_gpu.json "machine").
WHEELS = ("fasttext-numpy2", "sacremoses", "click", "joblib")
GPU_PYTHON = "3.12"
GEMMA = "gemma3-270m"
# The profile the score part measures: the pooled one's naturalness judge reads Qwen2.5-Coder-1.5B, which no upload
# holds; the formality family's reads Gemma 3 270M (its stand-in here), and its other columns are the pooled ones.
PROFILE = "recommended:formality"
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
    """Gemma 3 270M's config and tokenizer (``tokenizer.json`` compressed with xz) into ``folder/gemma3-270m`` and
    the :data:`WHEELS` for :data:`GPU_PYTHON` into ``folder/wheels`` (from the package registry)."""
    from tsteval.metrics.naturalness.causal_lm import gemma3_path
    from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

    gemma = converted_gguf(gemma3_path())
    (folder / GEMMA).mkdir(parents=True, exist_ok=True)
    for name in speed_gpu.LM_FILES:
        if (gemma / name).is_file() and name != "tokenizer.json":
            shutil.copy(gemma / name, folder / GEMMA / name)
    (folder / GEMMA / "tokenizer.json.xz").write_bytes(lzma.compress((gemma / "tokenizer.json").read_bytes()))
    platforms = [arg for tag in ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
                 for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--no-deps",
                    "--python-version", GPU_PYTHON, *platforms, "-d", str(folder / "wheels"), *WHEELS], check=True)


def gemma_folder(packed: Path, work: Path) -> Path:
    """The packed Gemma config and tokenizer in a folder under ``work``, the tokenizer decompressed."""
    folder = work / "unpacked" / GEMMA
    shutil.copytree(packed / GEMMA, folder, ignore=shutil.ignore_patterns("*.xz"))
    (folder / "tokenizer.json").write_bytes(lzma.decompress((packed / GEMMA / "tokenizer.json.xz").read_bytes()))
    return folder


def install_wheels(folder: Path) -> None:
    """Install the packed wheels where fastText is missing (the GPU machine), without the network."""
    try:
        import fasttext  # noqa: F401
    except ImportError:
        wheels = sorted(str(w) for w in (folder / "wheels").glob("*.whl"))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", *wheels],
                       check=True)


def pack(folder: Path) -> list[Path]:
    """:func:`benchmarks.speed.speed_gpu.pack` (MiniLM without its weights) and :func:`pack_gemma_and_wheels` into
    ``folder/part1`` (and ``part2`` where they do not fit one upload beside the working tree, 1 MiB spare); the
    parts' folders."""
    with tempfile.TemporaryDirectory(prefix="tsteval-pack-") as work:
        speed_gpu.pack(Path(work), encoder_weights=False)
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


# (module, attribute) -> the phase it does, clocked on the host by :func:`phase_clock`; a name missing from a tree
# is skipped.  PHASES: the LM metrics' (benchmarks.speed.profile_lm); SCORE_PHASES: ``score --metrics PROFILE``'s.
PHASES = {("tsteval.metrics.judges.rating", "render"): "prompts", ("tsteval.metrics.judges.rating", "render_many"):
          "prompts", ("tsteval.metrics.judges.logprop", "render"): "prompts",
          ("tsteval.metrics.judges.logprop", "render_many"): "prompts",
          ("tsteval.metrics.judges.cond_lp", "render_many"): "prompts",
          ("tsteval.metrics.judges.scorer", "lm_texts"): "text restore",
          ("tsteval.metrics.judges.prefix_scoring", "plan_batches"): "planning",
          ("tsteval.metrics.judges.prefix_scoring", "_hidden"): "forward passes (host)"}
SCORE_PHASES = {("tsteval.experiment.run.execute", "_execute"): "run",
                ("tsteval.experiment.run.execute", "_score"): "scoring (resources ready)",
                ("tsteval.experiment.run.overlap.Overlap", "sentences"): "per-sentence columns",
                ("tsteval.metrics.content.sentence_embedding.SentenceEncoder", "_encode"): "sentence encoder",
                ("tsteval.experiment.run.overlap.Overlap", "naturalness"): "CPU naturalness (wait)",
                ("tsteval.experiment.run.overlap.Overlap", "start_sentences"): "CPU per-sentence (start)",
                ("tsteval.experiment.run.overlap.Overlap", "start_naturalness"): "CPU naturalness (start)",
                ("tsteval.metrics.naturalness.lm_scores", "score_language_model"): "LM scores",
                ("tsteval.metrics.naturalness.causal_lm.CausalLM", "fit_unigram"): "SLOR unigram",
                ("tsteval.core.text_form", "as_written"): "text restore",
                ("tsteval.metrics.naturalness.causal_lm.CausalLM", "token_ids"): "LM tokenising",
                ("tsteval.metrics.naturalness.causal_lm.CausalLM", "_log_probs_of"): "LM forward (host)",
                ("tsteval.experiment.run.execute", "_joint"): "joint score",
                ("tsteval.scorecard.Scorecard", "save"): "writing"}


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


def _owner(path: str) -> object:
    """The module or class at dotted ``path`` (a class: its module, then the class's name)."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)


@contextmanager
def phase_clock(phases: dict[tuple[str, str], str] | None = None
                ) -> Iterator[tuple[dict[str, float], list[tuple[list, list]]]]:
    """Seconds spent in each phase of ``phases`` (default :data:`PHASES`) within the block (host time: the device
    is not waited for), and each plan made there with its sequences' lengths."""
    seconds: dict[str, float] = defaultdict(float)
    plans: list[tuple[list, list]] = []
    with ExitStack() as stack:
        for (owner_name, name), phase in (phases or PHASES).items():
            owner = _owner(owner_name)
            if hasattr(owner, name):
                stack.enter_context(mock.patch.object(owner, name, _timed(getattr(owner, name), phase, seconds,
                                                                          plans)))
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


@contextmanager
def before_issue_40() -> Iterator[None]:
    """Inside the block, the code as it ran before issue 40: cuDNN's attention allowed (it builds a plan per batch
    shape), one wide calibration pass of a budget (each model calibrated anew inside), models loaded by every run,
    the unigram naturalness classifiers in one process."""
    from tsteval.core import devices
    from tsteval.metrics.judges import prefix_scoring
    from tsteval.metrics.naturalness import causal_lm, registry

    with (mock.patch.object(devices, "GPU_ATTENTION", ("CUDNN_ATTENTION", *devices.GPU_ATTENTION)),
          mock.patch.object(prefix_scoring, "WIDEST", 1), mock.patch.dict(prefix_scoring._COSTS, clear=True),
          mock.patch.dict(prefix_scoring.CALIBRATIONS, clear=True),
          mock.patch.object(causal_lm, "loaded_lm", causal_lm.loaded_lm.__wrapped__),
          mock.patch.object(registry, "PER_GROUP_SCORERS", ())):
        yield


def passes(name: str, frame: pd.DataFrame, lm: object, model: str, device: str, warm: pd.DataFrame,
           again: bool = True) -> dict[str, object]:
    """LM metric ``name`` on ``frame``'s pairs with ``lm``: a warm-up on the other pairs ``warm`` (calibration,
    imports), then a timed pass over the pairs, and with ``again`` a second one; pairs/s of each, the first pass's
    plans' positions, the values."""
    lm_column(name, warm, lm, model)
    with phase_clock({("tsteval.metrics.judges.prefix_scoring", "plan_batches"): "planning"}) as (_, plans):
        values, first = timed(lambda: lm_column(name, frame, lm, model), device)
    times = {"first_s": first, "first_pairs_per_s": len(frame) / first}
    if again:
        _, second = timed(lambda: lm_column(name, frame, lm, model), device)
        times |= {"second_s": second, "second_pairs_per_s": len(frame) / second}
    return {**times, "positions": padding(plans), "values": values}


def lm_figures(frame: pd.DataFrame, model: str, device: str, sizes: dict[str, int]) -> dict[str, object]:
    """Each LM metric's passes (:func:`passes`) in fp32 and bf16 on ``device`` (bf16 also as before issue 40), its
    gap to the CPU and bf16/fp16's deviation from fp32; the planner's calibration timings."""
    from tsteval.metrics.judges import prefix_scoring
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    pairs, warm, check = frame.head(sizes["lm"]), frame.tail(sizes["warm"]), sizes["check"]
    lm, load_s = timed(lambda: CausalLM(model, device=device, precision="fp32"), device)
    gpu = device != "cpu"
    cpu = CausalLM(model, device="cpu", precision="fp32") if gpu else lm
    halves = {p: CausalLM(model, device=device, precision=p) for p in PRECISIONS if gpu}
    rows = {}
    for name in LM_METRICS:
        runs = {"fp32": passes(name, pairs, lm, model, device, warm, again=not gpu)}  # on a GPU: bf16's twice
        if gpu:
            runs["bf16"] = passes(name, pairs, halves["bf16"], model, device, warm)
            with before_issue_40():
                runs["bf16_before"] = passes(name, pairs, halves["bf16"], model, device, warm)
        first = runs["fp32"]["values"][:check]
        rows[name] = {"pairs": len(pairs), **{p: {k: v for k, v in r.items() if k != "values"}
                                              for p, r in runs.items()},
                      "max_abs_diff_vs_cpu": gap(first, lm_column(name, pairs.head(check), cpu, model)),
                      "deviation": {p: gap(first, lm_column(name, pairs.head(check), half, model))
                                    for p, half in halves.items()}}
    calibrations = {f"{Path(model_id).name} on {on}": [{"rows": r, "tokens": t, "seconds": sec}
                                                         for r, t, sec in timings]
                    for (model_id, on), timings in prefix_scoring.CALIBRATIONS.items()}
    costs = {f"{Path(model_id).name} on {on}": {"fixed_s": c.fixed, "per_token_s": c.per_token}
             for (model_id, on), c in prefix_scoring._COSTS.items()}
    return {"load_s": load_s, "metrics": rows, "calibrations": calibrations, "costs": costs}


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


def gpu_busy(fn: Callable[[], object], device: str) -> tuple[float, float]:
    """Wall seconds of ``fn()`` under ``torch.profiler`` and the GPU's busy seconds in it (the CUDA kernels'
    summed time; 0 on the CPU)."""
    from torch.profiler import ProfilerActivity, profile

    gpu = device.startswith("cuda")
    with profile(activities=[ProfilerActivity.CUDA] if gpu else [ProfilerActivity.CPU]) as prof:
        _, wall = timed(fn, device)
    events = prof.key_averages()

    def device_us(event: object) -> float:
        return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))

    busy = sum(device_us(e) for e in events if device_us(e) > 0 and not e.key.startswith(("cuda", "Memcpy",
                                                                                          "Memset")))
    return wall, busy / 1e6 if gpu else 0.0


def score_figures(frame: pd.DataFrame, minilm: str, training: dict[str, list[str]], device: str,
                  sizes: dict[str, int], work: Path, gemma: Path | None = None) -> dict[str, object]:
    """``--metrics`` :data:`PROFILE` on ``n`` pairs from the table read to the scorecard written (see the module);
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
        with mock.patch.dict(os.environ, {"TSTEVAL_CACHE": str(work / f"cache-{name}")}):  # no embedding cached
            card = tsteval.evaluate(table=table, metrics=[PROFILE], classifier={"ft": classifier}, device=on,
                                    style_labels=STYLES, precision=precision)
        card.save(work / name)
        return card.frame

    n, check = sizes["score"], sizes["check"]
    columns = ("sbert@none", f"lp_mean@{GEMMA}")
    converted = causal_lm.converted_gguf
    stand_in = {GEMMA: lambda: gemma / "stand-in"} if gemma is not None else {}  # read as a folder, not converted
    copies: dict[Path, Path] = {}
    if gemma is None:  # the packaged Gemma (the smoke run): joined and converted once, here, in the process's cache;
        packaged = causal_lm.gemma3_path()  # in each run's own cache every run would join, convert and load it anew
        copies[packaged] = converted(packaged)
        stand_in = {GEMMA: lambda: packaged}
    warm = frame.tail(sizes["warm"]).assign(system="warm-up")
    precisions = ("fp32", "bf16") if device != "cpu" else ("fp32",)
    # the packed MiniLM (its package need not be installed there)
    with (mock.patch.object(sentence_embedding, "default_model", lambda: minilm),
          mock.patch.dict(causal_lm.PACKAGED_GGUF, stand_in),
          mock.patch.object(causal_lm, "converted_gguf",
                            lambda p: p.parent if p.name == "stand-in" else copies.get(p) or converted(p))):
        runs, cards = {}, {}
        for precision in precisions:
            _, load_s = timed(lambda p=precision: run(warm, f"warm-{p}", device, p), device)
            cards[precision], seconds = timed(lambda p=precision: run(frame.head(n), f"scored-{p}", device, p),
                                              device)
            runs[precision] = {"load_s": load_s, "seconds": seconds, "pairs_per_s": n / seconds}
        last = precisions[-1]
        with phase_clock(SCORE_PHASES) as (phases, _):  # a third run of the fastest precision, profiled
            wall, busy = gpu_busy(lambda: run(frame.head(n), "profiled", device, last), device)
        runs[last]["profile"] = {"wall_s": wall, "gpu_busy_s": busy, "host_phases_s": dict(phases)}
        if device != "cpu":
            with before_issue_40():
                run(warm, "warm-before", device, last)
                _, seconds = timed(lambda: run(frame.head(n), "scored-before", device, last), device)
            runs[f"{last}_before"] = {"seconds": seconds, "pairs_per_s": n / seconds}
        on_cpu = run(frame.head(check).assign(system="check"), "cpu", "cpu")  # one system: enough rows to cross-fit
        deviation = {}
        if device != "cpu":
            checked = frame.head(check).assign(system="check")
            fp32_check = run(checked, "check-fp32", device, "fp32")
            halves = {p: run(checked, f"check-{p}", device, p) for p in PRECISIONS}
            deviation = {p: max(gap(half[c], fp32_check[c]) for c in columns) for p, half in halves.items()}
    return {"pairs": n, "startup_s": startup_s, "classifier_train_s": train_s, "runs": runs,
            "pairs_per_s": runs["fp32"]["pairs_per_s"], "deviation": deviation,
            "max_abs_diff_vs_cpu": {column: gap(cards["fp32"][column][:check], on_cpu[column])
                                    for column in columns}}


def measure(frame: pd.DataFrame, minilm: str, lm: str, training: dict[str, list[str]], device: str,
            sizes: dict[str, int], work: Path, gemma: Path | None = None,
            keep: Callable[[dict[str, object]], None] = lambda report: None, only: tuple[str, ...] = PARTS,
            earlier: dict[str, object] | None = None) -> dict[str, object]:
    """Every figure of the module on ``device`` with ``sizes`` (pairs per part, see :data:`SMOKE`); ``keep`` gets
    the report after each part (so that a run stopped at its time limit keeps the parts it measured); ``only``
    the parts of :data:`PARTS` to measure, the others kept from ``earlier`` (a report of the same device)."""
    import torch

    name = torch.cuda.get_device_name(0) if device.startswith("cuda") else "cpu (smoke run)"
    parts = {"lm": lambda: lm_figures(frame, lm, device, sizes),
             "bertscore": lambda: bertscore_figures(frame, minilm, device, sizes),
             "score": lambda: score_figures(frame, minilm, training, device, sizes, work, gemma)}
    report: dict[str, object] = {"device": name, "fp32_tf32": torch.backends.cuda.matmul.allow_tf32,
                                 "targets_pairs_per_s": TARGETS}
    if set(only) != set(PARTS):
        if earlier is None or earlier.get("device") != name:
            raise ValueError(f"--parts {','.join(only)} needs results/bench_gpu.json of this device ({name}) for the "
                             "other parts")
        report |= {part: earlier[part] for part in PARTS if part not in only}
        report["earlier_parts"] = [part for part in PARTS if part not in only]
    for part, figures in ((p, f) for p, f in parts.items() if p in only):
        try:
            report[part] = figures()
        except Exception as error:  # noqa: BLE001 - a GPU machine may lack a library one part needs: keep the others
            if device == "cpu":
                raise
            report[part] = {"error": f"{type(error).__name__}: {error}"}
        keep(report)
    return report


def _rate(x: float | None) -> str:
    return f"{x:,.0f}" if x else "-"


def page(report: dict[str, object]) -> str:
    """``results/bench_gpu.md``: a :func:`measure` report's tables."""
    lm, bert, score, target = report["lm"], report["bertscore"], report["score"], report["targets_pairs_per_s"]
    gpu = "bf16" in next(iter(lm["metrics"].values()))
    auto = "bf16" if gpu else "fp32"  # what --precision auto picks on a GPU that computes bf16 natively

    def pos(row: dict[str, object], run: str) -> str:
        return f"{row[run]['positions']['computed']:,}" if run in row else "-"

    def speeds(row: dict[str, object], run: str) -> tuple[str, str]:
        if run not in row:
            return "-", "-"
        return f"{row[run]['first_pairs_per_s']:,.0f}", _rate(row[run].get("second_pairs_per_s"))

    columns = ["metric", "fp32 first", "fp32 second", "bf16 first", "bf16 second", "bf16 before: first",
               "before: second", f"target ({auto}, first pass)", "met", "computed positions fp32", "bf16",
               "bf16 before"]
    speed = pd.DataFrame([[name, *speeds(row, "fp32"), *speeds(row, "bf16"), *speeds(row, "bf16_before"),
                           f"{target['lm']:,}", "yes" if row[auto]["first_pairs_per_s"] >= target["lm"] else "no",
                           pos(row, "fp32"), pos(row, "bf16"), pos(row, "bf16_before")]
                          for name, row in lm["metrics"].items()], columns=columns)
    calibration = pd.DataFrame([{
        "model on device": key,
        "passes timed: rows x tokens = seconds": ", ".join(f"{t['rows']} x {t['tokens']} = {t['seconds']:.4f}"
                                                           for t in timings),
        "fixed s": f"{lm['costs'].get(key, {}).get('fixed_s', 0):.2e}",
        "per token s": f"{lm['costs'].get(key, {}).get('per_token_s', 0):.2e}"}
        for key, timings in lm["calibrations"].items()])
    lines = [f"# GPU figures on {report['device']} (`make bench-gpu`)", "",
             "Random-weight models of the packaged shapes (SmolLM2-135M for the LM metrics; MiniLM and Gemma 3 270M "
             f"in `score --metrics recommended`); {next(iter(lm['metrics'].values()))['pairs']:,} DualRL Yelp pairs "
             f"for each LM metric, {bert.get('pairs', 0):,} for BERTScore, {score.get('pairs', 0):,} for `score`. "
             "Models loaded before the clock starts; fp32 runs with TF32 off; bf16: bf16 weights with float32 "
             "log-softmax, what `--precision auto` picks on this GPU. *Before*: bf16 with the code as it ran before "
             "issue 40 (cuDNN's attention allowed, one wide calibration pass; for `score` also the models loaded by "
             "every run and the unigram classifiers in one process), measured in the same run.",
             *(["", f"The parts {', '.join(report['earlier_parts'])} come from an earlier run on a {report['device']} "
                "(`--parts`), each with its own before."] if report.get("earlier_parts") else []), "",
             "## LM metrics: pairs/s of the first pass over the pairs (every batch shape new) and of a second", "",
             md.table(speed), "", "## The planner's calibration (the passes timed, best of three)", "",
             md.table(calibration)]
    lines += ["", f"## `score --metrics recommended` on {score.get('pairs', 0):,} pairs", ""]
    if "error" in score:
        lines += [f"Not measured: {score['error']}", ""]
    else:
        runs = score["runs"]
        lines += [md.table(pd.DataFrame([{
            "run": run, "pairs/s": f"{r['pairs_per_s']:,.0f}", "seconds": f"{r['seconds']:.2f}",
            "target": f"{target['score']:,}", "met": "yes" if r["pairs_per_s"] >= target["score"] else "no"}
            for run, r in runs.items()])), ""]
        profile = next(r["profile"] for r in runs.values() if "profile" in r)
        lines += [f"Profiled ({auto}, a third run): {profile['wall_s']:.2f} s of wall time under `torch.profiler`, "
                  f"the GPU busy {profile['gpu_busy_s']:.2f} s of it; the host's phases (nested phases are inside "
                  "their parents; the CPU processes' work is not clocked here, only the wait for it):", "",
                  md.table(pd.DataFrame([{"phase": phase, "host s": f"{sec:.2f}"}
                                         for phase, sec in profile["host_phases_s"].items()])), "",
                  f"Not counted: interpreter start-up {score['startup_s']:.1f} s, the warm-up run that loads the "
                  f"models {runs['fp32']['load_s']:.1f} s (fp32), the fastText classifier's training "
                  f"{score['classifier_train_s']:.1f} s; SmolLM2 loaded in {lm['load_s']:.1f} s.", ""]
    deviation = {**lm["metrics"], "BERTScore": bert, "score (neural columns)":
                 {**score, "max_abs_diff_vs_cpu": max(score.get("max_abs_diff_vs_cpu", {0: 0}).values())}}
    values = pd.DataFrame([{"part": name, "fp32 vs CPU": f"{r['max_abs_diff_vs_cpu']:.1e}",
                            **{p: f"{r['deviation'][p]:.1e}" if p in r.get("deviation", {}) else "-"
                               for p in PRECISIONS}} for name, r in deviation.items() if "error" not in r])
    lines += ["## Values: fp32 against the CPU, bf16 and fp16 against fp32 (largest absolute difference)", "",
              md.table(values), "",
              f"BERTScore: {_rate(bert.get('pairs_per_s'))} pairs/s (fp32; target {target['bertscore']:,}).", ""]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pack", type=Path, help="write the upload(s) for a GPU machine into this folder")
    parser.add_argument("--packed", type=Path, help="measure on the GPU from a folder written by --pack")
    parser.add_argument("--smoke", action="store_true", help="every step on the CPU on a few pairs; nothing written")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help="the parts to measure (the others kept from results/bench_gpu.json of the same GPU)")
    return parser


def main(argv: list[str] | None = None) -> dict[str, object] | None:
    args = parser().parse_args(argv)
    import torch

    if args.pack or not (args.smoke or torch.cuda.is_available()):
        parts = pack(args.pack or PACK)
        print("\n".join(["bench_gpu: packed for a GPU machine (one call carrying .gpu_pack running `make bench-gpu`; "
                         "where there are two parts, one call carrying each, the last one running it):",
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
            gemma = Path(speed_gpu.random_lm(gemma_folder(packed, Path(work)), Path(work)))
            frame = packed / f"pairs_{speed_gpu.SCORE_PAIRS}.parquet"
            training = json.loads((packed / "yelp_train.json").read_text())
            sizes, device = SIZES, "cuda"
        report = measure(pd.read_parquet(frame), minilm, lm, training, device, sizes, Path(work), gemma,
                         keep=(lambda report: None) if args.smoke else save, only=tuple(args.parts.split(",")),
                         earlier=json.loads(RESULT.read_text()) if RESULT.is_file() else None)
    print(json.dumps(report, indent=1), flush=True)
    if not args.smoke:
        save(report)
        print(page(report))
    return report


def save(report: dict[str, object]) -> None:
    """Write ``results/bench_gpu.json`` (and, once every part is in, its page ``bench_gpu.md``)."""
    speed_gpu.OUT.mkdir(exist_ok=True)
    RESULT.write_text(json.dumps(report, indent=1))
    if set(PARTS) <= set(report):
        (speed_gpu.OUT / "bench_gpu.md").write_text(page(report))


if __name__ == "__main__":
    main()
