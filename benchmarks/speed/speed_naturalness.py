"""Speed of the naturalness scorers: the cross-fitted unigram classifier and SmolLM2.

**Unigram** (``results/speed_naturalness.{md,json}``): the cross-fitted adversarial classifier against sklearn's
``cross_val_predict``.  Data: 10,000 DualRL Yelp outputs (seeded sample over the 11 systems and 4 human
rewrites) as system text and 10,000 Yelp dev+test sentences (DualRL inputs and outputs removed) as human
text, with the same 5 folds for both.  Ours tokenises every text once and fits the 5 logistic regressions on
row slices, and also scores the 10,000 inputs; the baseline refits ``CountVectorizer(analyzer=tokenize)`` +
``LogisticRegression`` per fold.

**SmolLM2** (``results/speed_smollm2.{md,json}``): load time in fresh processes (GGUF through transformers, as
before; the one-off conversion into a fresh cache; the cached safetensors copy), and texts per second of
:class:`~tsteval.metrics.naturalness.causal_lm.CausalLM` (length-sorted batches) against the straightforward
per-text transformers call (one forward pass per text, log-softmax read at the next tokens) on the same model
and the same DualRL Yelp outputs, with the largest difference of their mean token log-probabilities.

Run: ``python -m benchmarks.speed.speed_naturalness [--only unigram|smollm2] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline

from benchmarks.common import publish
from tsteval.core import markdown as md
from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.adversarial import HUMAN, SYSTEM, UnigramFolds, assign_folds, cross_fit, human_sample
from tsteval.readers.dualrl import load_dualrl
from tsteval.readers.yelp import load_yelp_corpus

RESULTS = Path(__file__).resolve().parents[1] / "results"
N_PAIRS, K, SEED = 10_000, 5, 0
N_TEXTS, N_BASELINE = 500, 100
# Run in a fresh interpreter: import time and model load time of one way of loading SmolLM2, as JSON.
_LOAD = """
import json, sys, time
start, start_cpu = time.perf_counter(), time.process_time()
import torch, transformers
torch.set_num_threads(int(sys.argv[2]))
imported, imported_cpu = time.perf_counter(), time.process_time()
if sys.argv[1] == "gguf":
    from tsteval.metrics.naturalness.causal_lm import smollm2_path
    path = smollm2_path()
    transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    transformers.AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
else:
    from tsteval.metrics.naturalness.causal_lm import CausalLM
    CausalLM(threads=int(sys.argv[2]), precision="fp32")
print(json.dumps({"import_s": imported - start, "load_s": time.perf_counter() - imported,
                  "import_cpu_s": imported_cpu - start_cpu, "load_cpu_s": time.process_time() - imported_cpu}))
"""


def _load_seconds(how: str, threads: int, cache: str | None = None) -> dict[str, float]:
    """Import and load seconds of SmolLM2 in a fresh interpreter (``how``: gguf or cached)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    if cache is not None:
        env["TSTEVAL_CACHE"] = cache
    out = subprocess.run([sys.executable, "-c", _LOAD, how, str(threads)], env=env, check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def per_text_log_probs(lm: object, texts: list[str], device: str = "cpu") -> np.ndarray:
    """The straightforward call: one transformers forward pass per text on ``device``, mean log-softmax (in fp32) at
    the next tokens."""
    import torch

    means = []
    with torch.inference_mode():
        for text in texts:
            ids = [lm.start_id, *lm.tokenizer(text, add_special_tokens=False)["input_ids"]]
            logits = lm.model(input_ids=torch.tensor([ids], device=device)).logits[0, :-1]
            means.append(float(torch.log_softmax(logits.float(), -1)[torch.arange(len(ids) - 1), ids[1:]].mean()))
    return np.array(means)


def gemm_gflops_per_cpu_s(repeats: int = 20) -> float:
    """fp32 GEMM rate of this CPU per CPU-second, on SmolLM2's MLP shape (2048 x 576 @ 576 x 1536), best of
    ``repeats``; measured in process CPU time so that other jobs on the machine do not lower it."""
    import torch

    a, b = torch.randn(2048, 576), torch.randn(576, 1536)
    best = float("inf")
    for _ in range(repeats):
        cpu = time.process_time()
        torch.mm(a, b)
        best = min(best, time.process_time() - cpu)
    return 2 * 2048 * 576 * 1536 / best / 1e9


def gflop_per_text(lm: object, tokens: list[int]) -> float:
    """Mean GFLOP of scoring one text: every linear layer of the decoder on BOS + its tokens, the LM head on
    its tokens (2 FLOP per multiply-add; attention scores and norms, negligible for short texts, left out)."""
    import torch

    body = sum(m.weight.numel() for m in lm.model.get_decoder().modules() if isinstance(m, torch.nn.Linear))
    head = lm.model.get_output_embeddings().weight.numel()
    return float(np.mean([2 * (body * (n + 1) + head * n) for n in tokens])) / 1e9


def smollm2(threads: int) -> None:
    """Load times and texts/s of SmolLM2, written to ``results/speed_smollm2.{md,json}``."""
    import torch

    from tsteval.metrics.naturalness.causal_lm import CausalLM

    frame = load_dualrl("yelp").frame
    distinct = sorted(set(frame["output"]))
    texts = [distinct[i] for i in np.random.default_rng(SEED).choice(len(distinct), N_TEXTS, replace=False)]
    gguf = _load_seconds("gguf", threads)
    with tempfile.TemporaryDirectory() as fresh:
        converted = _load_seconds("cached", threads, fresh)
        cached = _load_seconds("cached", threads, fresh)
    torch.set_num_threads(threads)
    lm = CausalLM(threads=threads, precision="fp32")
    start, cpu = time.perf_counter(), time.process_time()
    ours = lm.sentence_log_probs(texts).lp_mean()
    ours_s, ours_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    baseline = per_text_log_probs(lm, texts[:N_BASELINE])
    base_s, base_cpu = time.perf_counter() - start, time.process_time() - cpu
    diff = float(np.abs(ours[:N_BASELINE] - baseline).max())
    tokens = [len(ids) for ids in lm.token_ids(texts)]
    torch.set_num_threads(1)
    roofline = gemm_gflops_per_cpu_s()
    flop = gflop_per_text(lm, tokens)
    result = {"threads": threads, "n_texts": N_TEXTS, "n_baseline": N_BASELINE, "mean_tokens": float(np.mean(tokens)),
              "gguf_load": gguf, "first_load_with_conversion": converted, "cached_load": cached,
              "ours_seconds": ours_s, "ours_cpu_seconds": ours_cpu, "ours_texts_per_s": N_TEXTS / ours_s,
              "ours_texts_per_cpu_s": N_TEXTS / ours_cpu, "per_text_seconds": base_s, "per_text_cpu_seconds": base_cpu,
              "per_text_texts_per_s": N_BASELINE / base_s, "per_text_texts_per_cpu_s": N_BASELINE / base_cpu,
              "speedup_cpu": (N_TEXTS / ours_cpu) / (N_BASELINE / base_cpu), "load_average": os.getloadavg()[0],
              "gemm_gflops_per_cpu_s": roofline, "gflop_per_text": flop,
              "fraction_of_roofline": N_TEXTS / ours_cpu * flop / roofline,
              "max_abs_diff_lp_mean": diff, "batch_tokens": lm.batch_tokens, "torch": torch.__version__,
              "python": platform.python_version()}
    publish(RESULTS, "speed_smollm2", result, smollm2_markdown)


def smollm2_markdown(r: dict[str, object]) -> str:
    """The committed summary of :func:`smollm2`'s measurements ``r``."""
    gguf, converted, cached = r["gguf_load"], r["first_load_with_conversion"], r["cached_load"]
    n, base, load = r["n_texts"], r["n_baseline"], r["load_average"]
    busy = load > 1.5
    first = cached["import_s"] + cached["load_s"]
    once = converted["import_s"] + converted["load_s"]
    lines = [
        "# SmolLM2-135M scoring: load time and throughput", "",
        f"{r['threads']} torch threads on a 2-core machine, 1-minute load average {load:.1f} at the end of the run "
        f"({'shared with other jobs: wall times are inflated by them' if busy else 'otherwise idle'}); torch "
        f"{r['torch']}, Python {r['python']}.  Load times are measured in fresh interpreters; import is "
        "`import torch, transformers`.", "",
        md.table(pd.DataFrame([{
            "load": label, "import: wall s": f"{t['import_s']:.1f}", "import: CPU s": f"{t['import_cpu_s']:.1f}",
            "load: wall s": f"{t['load_s']:.1f}", "load: CPU s": f"{t['load_cpu_s']:.1f}"}
            for label, t in (("GGUF through transformers (de-quantised on every load; the old path)", gguf),
                             ("first run: convert into the cache, then load (once)", converted),
                             ("later runs: cached safetensors copy (verified)", cached))])), "",
        f"A run's first load (import + cached copy): **{first:.1f} s wall**; the one-off conversion on a machine's "
        f"very first run: {once:.1f} s wall.", "",
        f"Scoring {n:,} distinct DualRL Yelp outputs (seeded sample; {r['mean_tokens']:.1f} subword tokens "
        "on average):", "",
        md.table(pd.DataFrame([
            {"method": f"CausalLM.sentence_log_probs (length-sorted batches of <= {r['batch_tokens']} tokens)",
             "texts": f"{n:,}", "wall s": f"{r['ours_seconds']:.1f}", "CPU s": f"{r['ours_cpu_seconds']:.1f}",
             "texts / wall s": f"{r['ours_texts_per_s']:.1f}", "texts / CPU s": f"{r['ours_texts_per_cpu_s']:.1f}"},
            {"method": "per-text transformers forward pass + log-softmax", "texts": f"{base}",
             "wall s": f"{r['per_text_seconds']:.1f}", "CPU s": f"{r['per_text_cpu_seconds']:.1f}",
             "texts / wall s": f"{r['per_text_texts_per_s']:.1f}",
             "texts / CPU s": f"{r['per_text_texts_per_cpu_s']:.1f}"}])),
        "",
        f"Speed-up: {r['ours_texts_per_s'] / r['per_text_texts_per_s']:.1f}x per wall second, "
        f"{r['speedup_cpu']:.1f}x per CPU-second.  Mean token log-probabilities agree to "
        f"{r['max_abs_diff_lp_mean']:.1e} (max abs difference over the {base} texts both scored)."
        + ("  Under this load texts per CPU-second are the comparable figure." if busy else ""), "",
        f"Roofline: scoring a text costs {r['gflop_per_text']:.2f} GFLOP (linear layers of the decoder on BOS + its "
        f"tokens, LM head on its tokens); this CPU's fp32 GEMM runs at {r['gemm_gflops_per_cpu_s']:.1f} GFLOP per "
        "CPU-second on SmolLM2's MLP shape (same run, 1 thread, best of 20), so one core scores at most "
        f"{r['gemm_gflops_per_cpu_s'] / r['gflop_per_text']:.1f} texts per second; the batched scorer reaches "
        f"{r['fraction_of_roofline']:.2f} of it per CPU-second.", ""]
    return "\n".join(lines)


def unigram() -> None:
    """Time both on the same data and folds, check they agree, write ``results/speed_naturalness.{md,json}``."""
    frame = load_dualrl("yelp").frame
    pick = np.sort(np.random.default_rng(SEED).choice(len(frame), N_PAIRS, replace=False))
    outputs, inputs = frame["output"].iloc[pick].tolist(), frame["input"].iloc[pick].tolist()
    corpus = load_yelp_corpus(splits=("dev", "test"), exclude=set(frame["input"]) | set(frame["output"]))
    human = human_sample(corpus.texts, N_PAIRS, set(), SEED)

    start = time.perf_counter()
    ours = cross_fit(human, outputs, inputs, UnigramFolds([*human, *outputs, *inputs], seed=SEED), k=K, seed=SEED)
    ours_s = time.perf_counter() - start

    folds = np.concatenate([ours.folds, ours.folds])  # human row i shares item i's fold, as in cross_fit
    cv = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f)) for f in range(K)]
    texts, labels = human + outputs, [HUMAN] * N_PAIRS + [SYSTEM] * N_PAIRS
    pipeline = make_pipeline(CountVectorizer(analyzer=tokenize),
                             LogisticRegression(max_iter=1000, random_state=SEED))
    start = time.perf_counter()
    baseline = cross_val_predict(pipeline, texts, labels, cv=cv, method="predict_proba")
    base_s = time.perf_counter() - start
    np.testing.assert_array_equal(ours.folds, assign_folds(N_PAIRS, K, SEED))

    diff = np.abs(ours.p_output - baseline[N_PAIRS:, 0])  # classes sorted: column 0 is "human"
    repeated = len(outputs) - len(set(outputs))
    copies = sum(o in set(inputs) for o in outputs)
    result = {
        "n_pairs": N_PAIRS, "k": K, "ours_seconds": ours_s, "cross_val_predict_seconds": base_s,
        "ours_texts_per_s": 3 * N_PAIRS / ours_s, "cross_val_predict_texts_per_s": 2 * N_PAIRS / base_s,
        "speedup": base_s / ours_s, "max_abs_diff_p_output": float(diff.max()),
        "median_abs_diff_p_output": float(np.median(diff)), "outputs_differing_gt_1e-4": int((diff > 1e-4).sum()),
        "repeated_outputs": repeated, "outputs_equal_to_an_input": copies,
        "python": platform.python_version(), "sklearn": sklearn.__version__,
    }
    publish(RESULTS, "speed_naturalness", result, unigram_markdown)


def unigram_markdown(result: dict[str, object]) -> str:
    """The committed summary of :func:`unigram`'s measurements ``result``."""
    n = result["n_pairs"]
    table = md.table(pd.DataFrame([
        {"method": f"tsteval.metrics.naturalness.adversarial.cross_fit (unigram; also scores the {n:,} inputs)",
         "seconds": f"{result['ours_seconds']:.1f}",
         "texts fitted-and-scored / s": f"{result['ours_texts_per_s']:,.0f}"},
        {"method": "sklearn cross_val_predict(CountVectorizer + LogisticRegression)",
         "seconds": f"{result['cross_val_predict_seconds']:.1f}",
         "texts fitted-and-scored / s": f"{result['cross_val_predict_texts_per_s']:,.0f}"}]))
    return "\n".join([
        "# Cross-fitted unigram adversarial classifier: speed", "",
        f"{n:,} DualRL Yelp outputs + {n:,} human Yelp sentences, {result['k']} seeded folds (the same for both); "
        f"2 shared CPU cores, Python {result['python']}, scikit-learn {result['sklearn']}.", "", table, "",
        f"Speed-up: {result['speedup']:.1f}x (ours does 50% more scoring).  P(human | output) differs from "
        f"cross_val_predict by at most {result['max_abs_diff_p_output']:.2g} (median "
        f"{result['median_abs_diff_p_output']:.2g}; {result['outputs_differing_gt_1e-4']} outputs differ by more "
        f"than 1e-4) because ours drops from each fold's training set every text that the fold scores, inputs "
        f"included ({result['outputs_equal_to_an_input']} outputs equal some input, {result['repeated_outputs']} "
        "repeat another output; the 15 systems share "
        "1,000 inputs, so each fold scores nearly all of them), while cross_val_predict trains on them.  With "
        "nothing to drop the two agree to 1e-6 (tests/test_naturalness.py).", ""])


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["unigram", "smollm2"])
    parser.add_argument("--threads", type=int, default=2, help="torch threads for SmolLM2")
    return parser


def main() -> None:
    """Run the unigram and SmolLM2 benchmarks (or ``--only`` one)."""
    args = parser().parse_args()
    if args.only != "smollm2":
        unigram()
    if args.only != "unigram":
        smollm2(args.threads)


if __name__ == "__main__":
    main()
