"""BERTScore (Zhang et al. 2020): greedy matching of contextual token embeddings of x and x', as precision
(``bertscore_p``: each output token's best cosine with an input token), recall (``bertscore_r``: each input
token's best match in the output) and their harmonic mean (``bertscore_f1``), with optional IDF weighting.

Token embeddings come from the run's sentence encoder (the ``sentence_encoder`` resource: the packaged
all-MiniLM-L6-v2 on the run's device), from its **last layer (6 of 6)**: the model's sentence-embedding training
shaped exactly those token states (it mean-pools them), and bert-score's own table suggests no layer for this
model.  Each distinct text is encoded once per call, batched as the sentence encoder batches (equal word-piece
counts on a CPU, no padding); the values equal the ``bert-score`` package's ``score(model_type=FOLDER,
num_layers=6)`` on the same folder (tests/test_bertscore.py).  As there: [CLS] and [SEP] take part in the matching
but weigh 0; with ``idf`` the weight of a word piece is ``ln((M + 1) / (df + 1))`` over the M inputs of the call
(each input counted once per pair, as bert-score counts its references), otherwise 1.  Texts are cut at 512 word
pieces.  With IDF the values depend on every pair of the call, so the Ray engine scores it on the whole table
(on the driver; ``pooled_by`` in its declaration), never per block: M is the same on both engines.
Empty texts follow the policy of :mod:`tsteval.metrics.content.policy`; under ``erase`` the sentence eraser is
applied to every token state (it is affine, so the erased tokens' mean is the erased mean) before matching.  The
encoder runs in its ``precision`` (``--precision``: fp32, or bf16/fp16 on CUDA; named in the ``model`` field).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from tsteval.core.devices import torch_threads
from tsteval.core.signature import texts_hash
from tsteval.metrics.content.policy import MetricResult, Tokens, apply_policy, pair_tokens
from tsteval.metrics.content.sentence_embedding import (
    SentenceEncoder,
    length_batches,
    loaded_encoder,
    sorted_batches,
    token_counts,
)

MAX_LENGTH = 512
_LAST: dict[tuple, np.ndarray] = {}  # the (P, R, F1) of the last call, shared by the three metrics


def token_states(texts: Sequence[str], encoder: SentenceEncoder,
                 padded: bool | None = None) -> dict[str, tuple[list[int], np.ndarray]]:
    """Word-piece ids and last-layer states (float64, one row per piece) of each distinct text, in the encoder's
    batches: equal word-piece counts, or with ``padded`` (default: on a GPU) length-sorted padded batches."""
    import torch

    loaded = loaded_encoder(encoder.model, encoder.device, encoder.precision)
    distinct = list(dict.fromkeys(texts))
    out: dict[str, tuple[list[int], np.ndarray]] = {}
    with torch_threads(encoder.threads), torch.inference_mode():
        ids, lengths = token_counts([t.strip() for t in distinct], loaded, MAX_LENGTH)
        padded = encoder.device != "cpu" if padded is None else padded
        for index in (sorted_batches if padded else length_batches)(lengths, encoder.batch_size):
            width = int(lengths[index].max())
            block = np.zeros((len(index), width), dtype=np.int64)
            for row, i in enumerate(index):
                block[row, :lengths[i]] = ids[i]
            input_ids = torch.from_numpy(block).to(encoder.device)
            mask = torch.arange(width, device=encoder.device)[None] < torch.from_numpy(lengths[index]).to(
                encoder.device)[:, None]
            hidden = loaded.forward(input_ids, mask).double().cpu().numpy()
            for row, i in enumerate(index):
                out[distinct[i]] = (ids[i], hidden[row, :lengths[i]])
    return out


def _unit(states: np.ndarray) -> np.ndarray:
    return states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-12)


def idf_weights(refs: Sequence[list[int]], special: set[int]) -> dict[int, float]:
    """bert-score's IDF of each word piece over ``refs`` (its ids per reference): ``ln((M + 1) / (df + 1))``."""
    counts = Counter(piece for ids in refs for piece in set(ids))
    weights = {piece: math.log((len(refs) + 1) / (c + 1)) for piece, c in counts.items()}
    return weights | dict.fromkeys(special, 0.0)


def bertscore(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool = False,
              eraser: object = None) -> np.ndarray:
    """Precision, recall and F1 per pair, shape (n, 3) (see the module docstring)."""
    key = (id(encoder), encoder.model, encoder.device, idf, id(eraser), texts_hash(refs), texts_hash(hyps))
    if key in _LAST:
        return _LAST[key]
    states = token_states([*refs, *hyps], encoder)
    if eraser is not None:
        states = {t: (ids, eraser(_unit(s).astype(np.float32)).astype(np.float64)) for t, (ids, s) in states.items()}
    states = {t: (ids, _unit(s)) for t, (ids, s) in states.items()}
    first = next(iter(states.values()))[0] if states else []
    special = {first[0], first[-1]} if first else set()  # [CLS] and [SEP]
    default = math.log(len(refs) + 1)
    weights = idf_weights([states[r][0] for r in refs], special) if idf else {}

    def weight(ids: list[int]) -> np.ndarray:
        if idf:
            return np.array([weights.get(i, default) for i in ids])
        return np.array([0.0 if i in special else 1.0 for i in ids])

    out = np.zeros((len(refs), 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        for k, (ref, hyp) in enumerate(zip(refs, hyps, strict=True)):
            (r_ids, r), (h_ids, h) = states[ref], states[hyp]
            sim = h @ r.T
            wh, wr = weight(h_ids), weight(r_ids)
            p = float((sim.max(axis=1) * wh).sum() / wh.sum())
            r_ = float((sim.max(axis=0) * wr).sum() / wr.sum())
            out[k] = (p, r_, 2 * p * r_ / (p + r_))
    out = np.nan_to_num(out)
    _LAST.clear()
    _LAST[key] = out
    return out


def _column(k: int, refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool,
            tokens: Tokens | None, eraser: object) -> MetricResult:
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    return apply_policy(bertscore(list(refs), list(hyps), encoder, idf, eraser)[:, k], ref_tokens, hyp_tokens)


def bertscore_precision(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool = False,
                        tokens: Tokens | None = None, eraser: object = None) -> MetricResult:
    """BERTScore precision per pair (reference = input)."""
    return _column(0, refs, hyps, encoder, idf, tokens, eraser)


def bertscore_recall(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool = False,
                     tokens: Tokens | None = None, eraser: object = None) -> MetricResult:
    """BERTScore recall per pair (reference = input)."""
    return _column(1, refs, hyps, encoder, idf, tokens, eraser)


def bertscore_f1(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool = False,
                 tokens: Tokens | None = None, eraser: object = None) -> MetricResult:
    """BERTScore F1 per pair (reference = input)."""
    return _column(2, refs, hyps, encoder, idf, tokens, eraser)
