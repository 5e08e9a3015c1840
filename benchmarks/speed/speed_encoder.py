"""The sentence encoder against this CPU's fp32 matmul roofline and against ``SentenceTransformer.encode``.

In one run, on the same texts (2,000 distinct texts of the DualRL Yelp release, inputs and outputs):

* the roofline: torch fp32 GEMMs of MiniLM-L6's shapes (tokens x 384 by 384 x 384 four times, 384 x 1536 and
  1536 x 384: one layer's linear maps) at 1 thread and at all threads, in GFLOP per CPU-second, best of
  :data:`GEMM_REPEATS` and of the row counts in :data:`GEMM_ROWS` (CPU seconds throughout: the machine is shared,
  and wall time would count other work);
* the FLOPs per token from the model's config: 2 x layers x (4 h^2 + 2 h i), attention scores extra;
* tsteval's :class:`~tsteval.metrics.content.sentence_embedding.SentenceEncoder` (no disk cache; the lean BERT
  forward of :mod:`tsteval.metrics.content.bert_forward`) and the plain
  ``SentenceTransformer(model).encode(texts)`` (its defaults: batches of 32 sorted by characters), both at one
  thread, interleaved, best of :data:`REPEATS`, with the largest cosine difference between their embeddings;
* the padding: computed tokens per real token in tsteval's batches (texts of one WordPiece count each: none) and
  in batches of 64 sorted by characters (tsteval before, and sentence-transformers).

Run: ``python -m benchmarks.speed.speed_encoder`` (a few minutes).
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

import numpy as np

from benchmarks.common import publish
from tsteval.core.devices import length_batches
from tsteval.metrics.content import sentence_embedding
from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model, loaded_encoder, token_counts
from tsteval.readers.dualrl import load_dualrl

OUT = Path(__file__).resolve().parents[1] / "results"
N_TEXTS, REPEATS, GEMM_REPEATS, BATCH = 2_000, 5, 10, 64
GEMM_ROWS = (256, 1024, 4096)  # the roofline is the best of these: at least the rows of any batch of 64 texts


def texts() -> list[str]:
    """The first 2,000 distinct texts (inputs and outputs) of the DualRL Yelp release."""
    frame = load_dualrl("yelp").frame
    return list(dict.fromkeys([*frame["input"], *frame["output"]]))[:N_TEXTS]


def flops_per_token(config: object) -> float:
    """Multiply-adds x 2 of the linear maps per token: layers x (Q, K, V, O: 4 h^2; FFN: 2 h i)."""
    h, i = config.hidden_size, config.intermediate_size
    return 2.0 * config.num_hidden_layers * (4 * h * h + 2 * h * i)


def gemm_roofline(tokens: int, hidden: int, inner: int, threads: int) -> float:
    """GFLOP per CPU-second (per core busy) of one layer's fp32 GEMMs on ``tokens`` rows at ``threads`` threads,
    best of :data:`GEMM_REPEATS`: CPU time, like the encoder's, so time the machine spent on other work counts
    in neither."""
    import torch

    torch.set_num_threads(threads)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(tokens, hidden, generator=generator)
    up = torch.randn(tokens, inner, generator=generator)
    square = torch.randn(hidden, hidden, generator=generator)
    w_in, w_out = torch.randn(hidden, inner, generator=generator), torch.randn(inner, hidden, generator=generator)
    rounds = max(1, 8192 // tokens)  # enough work per timing that every thread's CPU time is accounted
    flops = 2.0 * tokens * (4 * hidden * hidden + 2 * hidden * inner) * rounds
    best = float("inf")
    for _ in range(GEMM_REPEATS + 1):  # the first is a warm-up
        start = time.process_time()
        for _ in range(rounds):
            for _ in range(4):
                torch.matmul(x, square)
            torch.matmul(x, w_in)
            torch.matmul(up, w_out)
        best = min(best, time.process_time() - start)
    return flops / best / 1e9


def padding(lengths: np.ndarray, batches: list[np.ndarray]) -> float:
    """Computed tokens (each batch padded to its longest) per real token."""
    return sum(int(lengths[b].max()) * len(b) for b in batches) / int(lengths.sum())


def character_sorted(data: list[str]) -> list[np.ndarray]:
    """Batches of :data:`BATCH` texts sorted by characters (tsteval before, and sentence-transformers)."""
    order = np.argsort([len(t) for t in data], kind="stable")
    return [order[s:s + BATCH] for s in range(0, len(order), BATCH)]


def cpu_timed(fn: object) -> tuple[object, float]:
    """``fn()`` and the process CPU seconds it took."""
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def with_bert_model(model: str, data: list[str]) -> np.ndarray:
    """The same encoder (batching, pooling) through transformers' ``BertModel`` forward instead of the lean one."""
    load = sentence_embedding.loaded_encoder
    sentence_embedding.loaded_encoder = lambda name, device, precision: sentence_embedding.load_with_transformers(
        name, device, lean=False, precision=precision)
    try:
        return SentenceEncoder(model, threads=1, cache=False, precision="fp32").embed(data)
    finally:
        sentence_embedding.loaded_encoder = load


def main() -> None:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoConfig

    data = texts()
    model = default_model()
    config = AutoConfig.from_pretrained(model)
    per_token = flops_per_token(config)
    _, lengths = token_counts(data, loaded_encoder(model, "cpu"))
    real_tokens = int(lengths.sum())
    threads_all = os.cpu_count() or 1
    roofline = {t: max(gemm_roofline(rows, config.hidden_size, config.intermediate_size, t) for rows in GEMM_ROWS)
                for t in sorted({1, threads_all})}
    ours_batches = length_batches(lengths, size=BATCH, equal=True)
    torch.set_num_threads(1)
    plain = SentenceTransformer(model, device="cpu")
    ours_s, plain_s, bert_s, diff = [], [], [], 0.0
    for _ in range(REPEATS):
        ours, seconds = cpu_timed(lambda: SentenceEncoder(model, threads=1, cache=False, precision="fp32").embed(data))
        ours_s.append(seconds)
        via_bert, seconds = cpu_timed(lambda: with_bert_model(model, data))
        bert_s.append(seconds)
        diff = max(diff, float(np.abs((ours * via_bert).sum(1) - 1.0).max()))
        theirs, seconds = cpu_timed(lambda: plain.encode(data, normalize_embeddings=True))
        plain_s.append(seconds)
        diff = max(diff, float(np.abs((ours * theirs).sum(1) - 1.0).max()))
    best_ours, best_plain = min(ours_s), min(plain_s)
    gflops = real_tokens * per_token / best_ours / 1e9
    report = {
        "machine": {"python": platform.python_version(), "torch": torch.__version__, "cpus": threads_all,
                    "processor": platform.processor() or platform.machine(), "load_average": os.getloadavg()[0]},
        "texts": len(data), "texts_source": "DualRL yelp, first 2,000 distinct inputs and outputs",
        "real_tokens": real_tokens, "mean_tokens": real_tokens / len(data),
        "flops_per_token": per_token, "config": {"layers": config.num_hidden_layers, "hidden": config.hidden_size,
                                                  "intermediate": config.intermediate_size},
        "roofline_gflops": {str(t): g for t, g in roofline.items()}, "gemm_rows": list(GEMM_ROWS),
        "encoder": {"cpu_s": best_ours, "all_cpu_s": ours_s, "texts_per_cpu_s": len(data) / best_ours,
                    "gflops_real_tokens": gflops, "fraction_of_roofline_1_thread": gflops / roofline[1]},
        "bert_model_forward": {"cpu_s": min(bert_s), "all_cpu_s": bert_s, "texts_per_cpu_s": len(data) / min(bert_s),
                               "fraction_of_roofline_1_thread": real_tokens * per_token / min(bert_s) / 1e9
                               / roofline[1]},
        "sentence_transformers": {"cpu_s": best_plain, "all_cpu_s": plain_s,
                                  "texts_per_cpu_s": len(data) / best_plain},
        "speedup_vs_sentence_transformers": best_plain / best_ours,
        "max_abs_cosine_diff": diff,
        "padding": {"equal_length_batches": padding(lengths, ours_batches), "batches": len(ours_batches),
                    "character_sorted": padding(lengths, character_sorted(data))},
    }
    publish(OUT, "speed_encoder", report, markdown)


def markdown(r: dict[str, object]) -> str:
    """The committed summary."""
    e, st, pad, roof = r["encoder"], r["sentence_transformers"], r["padding"], r["roofline_gflops"]
    c = r["config"]
    lines = ["# Sentence encoder (all-MiniLM-L6-v2) vs the CPU's fp32 roofline", "",
             f"{r['texts']:,} texts ({r['texts_source']}), {r['real_tokens']:,} WordPiece tokens "
             f"({r['mean_tokens']:.1f} per text); {r['machine']['cpus']} CPUs, 1-minute load average "
             f"{r['machine'].get('load_average', float('nan')):.1f} at the end of the run; CPU seconds, "
             f"best of {len(e['all_cpu_s'])} interleaved repeats, one torch thread.", "",
             f"- FLOPs per token (linear maps, from the config: {c['layers']} layers x 2 x (4 x {c['hidden']}^2 + "
             f"2 x {c['hidden']} x {c['intermediate']})): {r['flops_per_token'] / 1e6:.2f} MFLOP",
             "- roofline (torch fp32 GEMMs of one layer's shapes, best of "
             f"{', '.join(str(n) for n in r['gemm_rows'])} rows): "
             + ", ".join(f"{g:.1f} GFLOP per CPU-s at {t} thread(s)" for t, g in roof.items()),
             f"- tsteval encoder: {e['texts_per_cpu_s']:.1f} texts per CPU-s, {e['gflops_real_tokens']:.1f} GFLOP per "
             f"CPU-s on real tokens = **{e['fraction_of_roofline_1_thread']:.2f} of the 1-thread roofline**",
             f"- the same batches through transformers' `BertModel` forward instead of the lean one: "
             f"{r['bert_model_forward']['texts_per_cpu_s']:.1f} texts per CPU-s = "
             f"{r['bert_model_forward']['fraction_of_roofline_1_thread']:.2f} of the roofline",
             f"- plain `SentenceTransformer.encode` (its defaults): {st['texts_per_cpu_s']:.1f} texts per CPU-s; "
             f"tsteval is **{r['speedup_vs_sentence_transformers']:.2f}x** faster; largest |1 - cosine| between "
             f"two embeddings of a text (ours vs sentence-transformers and vs `BertModel`): "
             f"{r['max_abs_cosine_diff']:.1e}",
             f"- computed tokens per real token: {pad['equal_length_batches']:.3f} in tsteval's {pad['batches']} "
             f"batches (texts of one WordPiece count, at most {BATCH}), {pad['character_sorted']:.3f} in batches of "
             f"{BATCH} sorted by characters (before)", "",
             "All CPU-s: ours " + ", ".join(f"{s:.1f}" for s in e["all_cpu_s"]) + "; `BertModel` forward "
             + ", ".join(f"{s:.1f}" for s in r["bert_model_forward"]["all_cpu_s"]) + "; sentence-transformers "
             + ", ".join(f"{s:.1f}" for s in st["all_cpu_s"]) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
