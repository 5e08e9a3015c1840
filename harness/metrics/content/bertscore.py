"""BERTScore (Zhang et al. 2020): greedy matching of contextual token embeddings of x and x', as precision
(``bertscore_p``: each output token's best cosine with an input token), recall (``bertscore_r``: each input
token's best match in the output) and their harmonic mean (``bertscore_f1``), with optional IDF weighting.

Token embeddings come from the run's sentence encoder (the ``sentence_encoder`` resource: the packaged
all-MiniLM-L6-v2 on the run's device), from its **last layer (6 of 6)**: the model's sentence-embedding training
shaped exactly those token states (it mean-pools them), and bert-score's own table suggests no layer for this
model.  Each distinct text is encoded once per call, batched as the sentence encoder batches (equal word-piece
counts on a CPU, no padding; the next texts tokenised while the device encodes), its token states kept on the
device; the greedy matching runs there too, as padded batched cosine matrices of pairs of similar length with
their masks (:func:`greedy_matching`, float64, equal to a per-pair loop to 1e-9); the values equal the
``bert-score`` package's ``score(model_type=FOLDER, num_layers=6)`` on the same folder (tests/test_bertscore.py).
As there: [CLS] and [SEP] take part in the matching but weigh 0; with ``idf`` the weight of a word piece is
``ln((M + 1) / (df + 1))`` over the M inputs of the call (each input counted once per pair, as bert-score counts
its references), otherwise 1.  Texts are cut at 512 word pieces (:data:`MAX_LENGTH`, the model's position
embeddings; bert-score cuts there too), and the pairs with a text cut are counted (``n_truncated``).  With IDF the
values depend on every pair of the call, so the Ray engine scores it on the whole table (on the driver; ``pooled_by``
in its declaration), never per block: M is the same on both engines.
Empty texts follow the policy of :mod:`tsteval.metrics.content.policy`; under ``erase`` the sentence eraser is
applied to every token state (it is affine, so the erased tokens' mean is the erased mean) before matching.  The
encoder runs in its ``precision`` (``--precision``: auto, fp32, bf16, or fp16 on CUDA; the one that ran is named in
the ``model`` field).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tsteval.core.devices import torch_threads
from tsteval.core.signature import texts_hash
from tsteval.metrics.content.policy import MetricResult, Tokens, apply_policy, pair_tokens
from tsteval.metrics.content.sentence_embedding import (
    SentenceEncoder,
    forward_batches,
    loaded_encoder,
    tokenised_chunks,
)

if TYPE_CHECKING:
    import torch

MAX_LENGTH = 512
MATCH_TOKENS = 16_384  # padded word pieces per side in one step of the greedy matching
_LAST: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # the (P, R, F1) and cut pairs of the last call, shared


@dataclass(frozen=True)
class TokenStates:
    """Word-piece ids and last-layer states of distinct texts, stored ragged on the encoder's device: text ``k``
    (``rows[text]``) has the pieces ``ids[k]`` and the states ``states[start[k]:start[k] + len(ids[k])]``
    (float64, one row per piece); ``cut[k]``: whether the text was longer than :data:`MAX_LENGTH` pieces."""

    rows: dict[str, int]
    ids: list[list[int]]
    start: np.ndarray
    states: torch.Tensor
    cut: np.ndarray

    def of(self, text: str) -> tuple[list[int], np.ndarray]:
        """``text``'s word-piece ids and states."""
        k = self.rows[text]
        return self.ids[k], self.states[self.start[k]:self.start[k] + len(self.ids[k])].cpu().numpy()


def token_states(texts: Sequence[str], encoder: SentenceEncoder, padded: bool | None = None) -> TokenStates:
    """The :class:`TokenStates` of each distinct text, in the encoder's batches: equal word-piece counts, or with
    ``padded`` (default: on a GPU) length-sorted padded batches; the next texts are tokenised while the device
    encodes (:func:`~tsteval.metrics.content.sentence_embedding.tokenised_chunks`)."""
    import torch

    loaded = loaded_encoder(encoder.model, encoder.device, encoder.precision)
    distinct = list(dict.fromkeys(texts))
    padded = encoder.device != "cpu" if padded is None else padded
    ids: list[list[int]] = []
    cut: list[np.ndarray] = []
    start = np.zeros(len(distinct), dtype=np.int64)
    parts: list[torch.Tensor] = []
    filled = 0
    with torch_threads(encoder.threads):
        for chunk, chunk_cut in tokenised_chunks([t.strip() for t in distinct], loaded, MAX_LENGTH):
            for index, hidden, mask in forward_batches(chunk, loaded, encoder.device, encoder.batch_size, padded):
                counts = np.array([len(chunk[i]) for i in index])
                start[len(ids) + index] = filled + np.cumsum(counts) - counts
                parts.append(hidden[mask].double())  # each text's real tokens, row after row
                filled += int(counts.sum())
            ids += chunk
            cut.append(chunk_cut)
    states = torch.cat(parts) if parts else torch.zeros(0, loaded.hidden_size, dtype=torch.float64)
    return TokenStates({text: k for k, text in enumerate(distinct)}, ids, start, states,
                       np.concatenate(cut) if cut else np.zeros(0, dtype=bool))


def piece_weights(states: TokenStates, refs: Sequence[str], idf: bool) -> np.ndarray:
    """The weight of every stored piece, aligned with ``states.states``: [CLS] and [SEP] 0; with ``idf``
    bert-score's ``ln((M + 1) / (df + 1))`` over the M ``refs`` (each counted once per pair), otherwise 1."""
    lengths = np.array([len(i) for i in states.ids], dtype=np.int64)
    pieces = np.concatenate(states.ids).astype(np.int64) if states.ids else np.zeros(0, np.int64)
    first = states.ids[0] if states.ids else []
    special = np.isin(pieces, [first[0], first[-1]] if first else [])  # [CLS] and [SEP]
    weights = np.where(special, 0.0, 1.0)
    if idf:
        vocab = int(pieces.max(initial=0)) + 1
        text_pieces = np.unique(np.repeat(np.arange(len(lengths)), lengths) * vocab + pieces)  # (text, piece) once
        as_ref = np.bincount(np.array([states.rows[r] for r in refs], np.int64), minlength=len(lengths))
        df = np.bincount(text_pieces % vocab, weights=as_ref[text_pieces // vocab], minlength=vocab)
        weights *= np.log((len(refs) + 1) / (df[pieces] + 1))
    stored = np.empty_like(weights)  # the texts' pieces one after another -> the states' rows (batch order)
    stored[np.arange(len(pieces)) + np.repeat(states.start - (np.cumsum(lengths) - lengths), lengths)] = weights
    return stored


def greedy_matching(unit: torch.Tensor, weights: torch.Tensor, start: np.ndarray, lengths: np.ndarray,
                    refs: np.ndarray, hyps: np.ndarray) -> np.ndarray:
    """Precision and recall, shape (n, 2), of pairs of stored texts (their indices ``refs`` and ``hyps``) from
    unit-length states and piece weights stored ragged (text ``k`` at rows ``start[k]:start[k] + lengths[k]``):
    the pairs sorted by their longer text and padded, :data:`MATCH_TOKENS` pieces a side at a time, on the states'
    device; a pair's best matches are taken over its real pieces only (NaN where its weights sum to 0).

    >>> import torch
    >>> unit = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=torch.float64)
    >>> greedy_matching(unit, torch.ones(3, dtype=torch.float64), np.array([0, 2]), np.array([2, 1]),
    ...                 np.array([0]), np.array([1])).round(3).tolist()
    [[0.8, 0.7]]
    """
    import torch

    device = unit.device
    width = np.maximum(lengths[refs], lengths[hyps])
    order = np.argsort(width, kind="stable")
    out = np.zeros((len(refs), 2))
    begin = 0
    with torch.inference_mode():
        while begin < len(order):
            cost = np.arange(1, len(order) - begin + 1) * width[order[begin:]]  # ascending
            end = begin + max(1, int(np.searchsorted(cost, MATCH_TOKENS, side="right")))
            chunk = order[begin:end]
            size = int(width[chunk].max())
            (h, h_real, h_weight), (r, r_real, r_weight) = (
                _padded(unit, weights, start[rows[chunk]], lengths[rows[chunk]], size, device) for rows in (hyps, refs))
            sim = torch.bmm(h, r.transpose(1, 2)).masked_fill_(~(h_real[:, :, None] & r_real[:, None, :]), -torch.inf)
            best_h = torch.where(h_real, sim.amax(2), 0.0)
            best_r = torch.where(r_real, sim.amax(1), 0.0)
            precision = (best_h * h_weight).sum(1) / h_weight.sum(1)
            recall = (best_r * r_weight).sum(1) / r_weight.sum(1)
            out[chunk] = torch.stack([precision, recall], 1).cpu().numpy()
            begin = end
    return out


def _padded(unit: torch.Tensor, weights: torch.Tensor, start: np.ndarray, lengths: np.ndarray, size: int,
            device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """States (texts x ``size`` x hidden), real-piece mask and weights (0 on padding) of stored texts."""
    import torch

    position = torch.arange(size, device=device)[None]
    real = position < torch.from_numpy(lengths).to(device)[:, None]
    rows = torch.where(real, torch.from_numpy(start).to(device)[:, None] + position, 0)
    return unit[rows], real, torch.where(real, weights[rows], 0.0)


def bertscore(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool = False,
              eraser: object = None) -> np.ndarray:
    """Precision, recall and F1 per pair, shape (n, 3) (see the module docstring)."""
    return _scored(refs, hyps, encoder, idf, eraser)[0]


def _scored(refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool, eraser: object
            ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bertscore`'s values and, per pair, whether a text of it was cut at :data:`MAX_LENGTH` pieces."""
    import torch

    key = (id(encoder), encoder.model, encoder.device, idf, id(eraser), texts_hash(refs), texts_hash(hyps))
    if key in _LAST:
        return _LAST[key]
    stored = token_states([*refs, *hyps], encoder)
    unit = torch.nn.functional.normalize(stored.states, dim=1)
    if eraser is not None:
        erased = eraser(unit.float().cpu().numpy()).astype(np.float64)
        unit = torch.nn.functional.normalize(torch.from_numpy(erased).to(unit.device), dim=1)
    weights = torch.from_numpy(piece_weights(stored, refs, idf)).to(unit.device)
    lengths = np.array([len(i) for i in stored.ids], dtype=np.int64)
    with torch_threads(encoder.threads):
        pr = greedy_matching(unit, weights, stored.start, lengths, np.array([stored.rows[r] for r in refs], np.int64),
                             np.array([stored.rows[h] for h in hyps], np.int64))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.nan_to_num(np.column_stack([pr, 2 * pr[:, 0] * pr[:, 1] / (pr[:, 0] + pr[:, 1])]))
    cut = stored.cut[[stored.rows[r] for r in refs]] | stored.cut[[stored.rows[h] for h in hyps]]
    _LAST.clear()
    _LAST[key] = out, cut
    return out, cut


def _column(k: int, refs: Sequence[str], hyps: Sequence[str], encoder: SentenceEncoder, idf: bool,
            tokens: Tokens | None, eraser: object) -> MetricResult:
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    values, cut = _scored(list(refs), list(hyps), encoder, idf, eraser)
    return apply_policy(values[:, k], ref_tokens, hyp_tokens, truncated=cut, max_tokens=MAX_LENGTH,
                        texts=(list(refs), list(hyps)))


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
