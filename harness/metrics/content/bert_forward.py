"""A lean inference forward pass for BERT encoders (all-MiniLM-L6-v2 and its kin), same numbers as transformers'.

transformers' ``BertModel`` spends about a fifth of a CPU encode outside its matrix products: three separate
query/key/value GEMMs, a bias copied into every GEMM's output, a fresh output tensor (page faults) per GEMM and
per activation, a residual added in its own pass.  :class:`BertForward` runs the same arithmetic with one fused
QKV GEMM per layer, the residual accumulated into the output GEMM (``addmm_``), GELU in place and workspace
buffers reused across layers and batches -- the same weights, SDPA attention and exact GELU, so embeddings agree
with ``BertModel`` to float32 rounding (checked in the tests).  Three biases cost no pass of their own, by
identities of attention: the key bias adds ``q . b_k`` to every score of a query, which the softmax ignores (it is
dropped); the attention weights of a query sum to 1, so the value bias passes through attention unchanged and is
folded into the output projection's bias (``b_o + b_v W_o``); and the intermediate bias is a last row of the
up-projection's weight, met by a column of ones beside its input.  :func:`bert_forward` makes one from a loaded
``BertModel`` and :func:`bert_folder` straight from a model folder's ``config.json`` and ``model.safetensors``
(transformers is then never imported: a second or two per process); both return None for any model this pass does
not cover (another architecture, relative positions, another activation), and callers then use transformers.
With a ``dtype`` of bfloat16 or float16 (``--precision``; float16 on CUDA only) the weights are prepared in float32
(the folded biases too) and then cast, and every product runs in that dtype.

>>> import torch
>>> from transformers import AutoModel, AutoTokenizer
>>> from tsteval.metrics.content.sentence_embedding import default_model
>>> tokenizer, model = AutoTokenizer.from_pretrained(default_model()), AutoModel.from_pretrained(default_model())
>>> batch = tokenizer(["good food", "the service was slow"], padding=True, return_tensors="pt")
>>> with torch.inference_mode():
...     ours = bert_forward(model)(batch["input_ids"], batch["attention_mask"].bool())
...     theirs = model(**batch).last_hidden_state
>>> bool(torch.allclose(ours, theirs, atol=1e-4))
True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

import torch
import torch.nn.functional as F

ACTIVATIONS = ("gelu",)  # transformers' exact (erf) GELU; the approximations would change the numbers


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, laid out for ``x @ w`` (transposed once, contiguous)."""

    qkv: torch.Tensor
    query_bias: torch.Tensor  # the key bias is dropped, the value bias is in out_bias
    out: torch.Tensor
    out_bias: torch.Tensor
    norm1: tuple[torch.Tensor, torch.Tensor]
    up: torch.Tensor  # hidden + 1 rows: the last is the intermediate bias
    down: torch.Tensor
    down_bias: torch.Tensor
    norm2: tuple[torch.Tensor, torch.Tensor]


class BertForward:
    """``(input_ids, mask) -> last hidden state`` of a BERT encoder in inference (no dropout, no token types beyond
    0, absolute positions), from its ``config`` (``config.json``'s fields) and ``weights`` (``BertModel``'s
    state-dict names), computed in ``dtype``."""

    def __init__(self, config: Mapping[str, object], weights: Mapping[str, torch.Tensor],
                 dtype: torch.dtype = torch.float32) -> None:
        def w(name: str) -> torch.Tensor:
            return weights[name].detach().float()

        self.hidden, self.heads = int(config["hidden_size"]), int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.words = w("embeddings.word_embeddings.weight").to(dtype)
        # positions and token type 0 are added to every token: one table
        self.positions = (w("embeddings.position_embeddings.weight")
                          + w("embeddings.token_type_embeddings.weight")[0]).to(dtype)
        self.norm = _cast((w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias")), dtype)
        self.layers = [self._layer(w, f"encoder.layer.{k}.", dtype) for k in range(int(config["num_hidden_layers"]))]
        self.buffers: dict[str, torch.Tensor] = {}

    @staticmethod
    def _layer(w: Callable[[str], torch.Tensor], prefix: str, dtype: torch.dtype) -> _Layer:
        def t(name: str) -> torch.Tensor:  # laid out for x @ w
            return w(prefix + name + ".weight").t().contiguous()

        def b(name: str) -> torch.Tensor:
            return w(prefix + name + ".bias")

        parts = ("attention.self.query", "attention.self.key", "attention.self.value")
        out = t("attention.output.dense")
        layer = _Layer(
            qkv=torch.cat([t(part) for part in parts], dim=1).contiguous(),
            query_bias=b("attention.self.query"),
            out=out, out_bias=b("attention.output.dense") + b("attention.self.value") @ out,
            norm1=(w(prefix + "attention.output.LayerNorm.weight"), b("attention.output.LayerNorm")),
            up=torch.cat([t("intermediate.dense"), b("intermediate.dense")[None]]).contiguous(),
            down=t("output.dense"), down_bias=b("output.dense"),
            norm2=(w(prefix + "output.LayerNorm.weight"), b("output.LayerNorm")))
        return _Layer(**{f.name: _cast(getattr(layer, f.name), dtype) for f in fields(_Layer)})

    def _buffer(self, name: str, rows: int, columns: int, ones: bool = False) -> torch.Tensor:
        """A reused workspace of at least ``rows`` x ``columns`` (grown when a batch needs more); with ``ones``,
        one more column, of ones."""
        buffer = self.buffers.get(name)
        if buffer is None or buffer.shape[0] < rows:
            buffer = self.buffers[name] = torch.empty(rows, columns + ones, device=self.words.device,
                                                      dtype=self.words.dtype)
            if ones:
                buffer[:, columns] = 1.0
        return buffer[:rows]

    def __call__(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Hidden states (batch x length x hidden) for ``input_ids`` with boolean ``mask`` (True: a real token)."""
        batch, length = input_ids.shape
        rows, hidden, heads = batch * length, self.hidden, self.heads
        qkv_buffer = self._buffer("qkv", rows, 3 * hidden)
        residual = self._buffer("residual", rows, hidden)
        up_buffer = self._buffer("up", rows, self.layers[0].up.shape[1])
        normed = self._buffer("normed", rows, hidden, ones=True)  # the attention block's output, then 1
        x = self.words[input_ids].add_(self.positions[:length])
        x = F.layer_norm(x, (hidden,), *self.norm, self.eps).view(rows, hidden)
        attend = None if bool(mask.all()) else mask[:, None, None, :]
        for layer in self.layers:
            qkv = torch.mm(x, layer.qkv, out=qkv_buffer)
            qkv[:, :hidden].add_(layer.query_bias)
            q, k, v = qkv.view(batch, length, 3, heads, hidden // heads).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            context = context.transpose(1, 2).reshape(rows, hidden)
            h = torch.add(x, layer.out_bias, out=residual).addmm_(context, layer.out)
            h = normed[:, :hidden].copy_(F.layer_norm(h, (hidden,), *layer.norm1, self.eps))
            up = torch.ops.aten.gelu_(torch.mm(normed, layer.up, out=up_buffer))
            x = torch.add(h, layer.down_bias, out=residual).addmm_(up, layer.down)
            x = F.layer_norm(x, (hidden,), *layer.norm2, self.eps)
        return x.view(batch, length, hidden)


def _cast(value: torch.Tensor | tuple[torch.Tensor, ...],
          dtype: torch.dtype) -> torch.Tensor | tuple[torch.Tensor, ...]:
    """A weight (or a layer norm's pair) in ``dtype``."""
    return tuple(v.to(dtype) for v in value) if isinstance(value, tuple) else value.to(dtype)


def covers(config: Mapping[str, object]) -> bool:
    """Whether :class:`BertForward` reproduces the model of ``config`` (``config.json``'s fields)."""
    heads = config.get("num_attention_heads") or 0
    return (config.get("model_type") == "bert" and config.get("position_embedding_type", "absolute") == "absolute"
            and config.get("hidden_act") in ACTIVATIONS and not config.get("is_decoder", False)
            and bool(heads) and int(config.get("hidden_size", 0)) % int(heads) == 0)


def bert_forward(model: torch.nn.Module, dtype: torch.dtype = torch.float32) -> BertForward | None:
    """A :class:`BertForward` in ``dtype`` for a loaded transformers ``model`` when it is a plain BERT encoder this
    pass reproduces, else None."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(model, "encoder") or not covers(config.to_dict()):
        return None
    return BertForward(config.to_dict(), model.state_dict(), dtype)


def bert_folder(folder: str | Path, device: str, dtype: torch.dtype = torch.float32) -> BertForward | None:
    """A :class:`BertForward` on ``device`` in ``dtype`` from a local model folder (``config.json`` of a covered
    model and ``model.safetensors`` holding every weight, named as ``BertModel``'s or with a ``bert.`` prefix), else
    None."""
    from safetensors.torch import load_file

    folder = Path(folder)
    config_file, weights_file = folder / "config.json", folder / "model.safetensors"
    if not (config_file.is_file() and weights_file.is_file()):
        return None
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if not isinstance(config, dict) or not covers(config):
        return None
    weights = load_file(weights_file, device=str(device))
    if not any(name.startswith("embeddings.") for name in weights):
        weights = {name.removeprefix("bert."): tensor for name, tensor in weights.items()}
    try:
        return BertForward(config, weights, dtype)
    except KeyError:  # a weight this pass needs is not in the file: transformers will say what is wrong
        return None
