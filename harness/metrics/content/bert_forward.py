"""A lean inference forward pass for BERT encoders (all-MiniLM-L6-v2 and its kin), same numbers as transformers'.

transformers' ``BertModel`` spends about a fifth of a CPU encode outside its matrix products: three separate
query/key/value GEMMs, a bias copied into every GEMM's output, a fresh output tensor (page faults) per GEMM and
per activation, a residual added in its own pass.  :class:`BertForward` runs the same arithmetic with one fused
QKV GEMM per layer, the residual accumulated into the output GEMM (``addmm_``), GELU in place and workspace
buffers reused across layers and batches -- the same weights, SDPA attention and exact GELU, so embeddings agree
with ``BertModel`` to float32 rounding (checked in the tests).  :func:`bert_forward` returns None for any model
it does not cover (another architecture, relative positions, another activation); callers then use transformers.

>>> import torch
>>> from tsteval.metrics.content.sentence_embedding import _load, default_model
>>> tokenizer, model = _load(default_model(), "cpu")
>>> forward = bert_forward(model)
>>> batch = tokenizer(["good food", "the service was slow"], padding=True, return_tensors="pt")
>>> with torch.inference_mode():
...     ours = forward(batch["input_ids"], batch["attention_mask"].bool())
...     theirs = model(**batch).last_hidden_state
>>> bool(torch.allclose(ours, theirs, atol=1e-4))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

ACTIVATIONS = ("gelu",)  # transformers' exact (erf) GELU; the approximations would change the numbers


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, laid out for ``x @ w`` (transposed once, contiguous)."""

    qkv: torch.Tensor
    qkv_bias: torch.Tensor
    out: torch.Tensor
    out_bias: torch.Tensor
    norm1: tuple[torch.Tensor, torch.Tensor]
    up: torch.Tensor
    up_bias: torch.Tensor
    down: torch.Tensor
    down_bias: torch.Tensor
    norm2: tuple[torch.Tensor, torch.Tensor]


class BertForward:
    """``(input_ids, mask) -> last hidden state`` of a transformers ``BertModel`` in inference (no dropout, no
    token types beyond 0, absolute positions)."""

    def __init__(self, model: torch.nn.Module) -> None:
        config, embeddings = model.config, model.embeddings
        self.hidden, self.heads = config.hidden_size, config.num_attention_heads
        self.eps = config.layer_norm_eps
        self.words = embeddings.word_embeddings.weight.detach()
        # positions and token type 0 are added to every token: one table
        self.positions = (embeddings.position_embeddings.weight + embeddings.token_type_embeddings.weight[0]).detach()
        self.norm = (embeddings.LayerNorm.weight.detach(), embeddings.LayerNorm.bias.detach())
        self.layers = [self._layer(layer) for layer in model.encoder.layer]
        self.buffers: dict[str, torch.Tensor] = {}

    @staticmethod
    def _layer(layer: torch.nn.Module) -> _Layer:
        attention, output = layer.attention.self, layer.attention.output

        def t(linear: torch.nn.Linear) -> torch.Tensor:
            return linear.weight.detach().t().contiguous()

        return _Layer(
            qkv=torch.cat([t(attention.query), t(attention.key), t(attention.value)], dim=1).contiguous(),
            qkv_bias=torch.cat([attention.query.bias, attention.key.bias, attention.value.bias]).detach(),
            out=t(output.dense), out_bias=output.dense.bias.detach(),
            norm1=(output.LayerNorm.weight.detach(), output.LayerNorm.bias.detach()),
            up=t(layer.intermediate.dense), up_bias=layer.intermediate.dense.bias.detach(),
            down=t(layer.output.dense), down_bias=layer.output.dense.bias.detach(),
            norm2=(layer.output.LayerNorm.weight.detach(), layer.output.LayerNorm.bias.detach()))

    def _buffer(self, name: str, rows: int, columns: int) -> torch.Tensor:
        """A reused workspace of at least ``rows`` x ``columns`` (grown when a batch needs more)."""
        buffer = self.buffers.get(name)
        if buffer is None or buffer.shape[0] < rows:
            buffer = self.buffers[name] = torch.empty(rows, columns, device=self.words.device)
        return buffer[:rows]

    def __call__(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Hidden states (batch x length x hidden) for ``input_ids`` with boolean ``mask`` (True: a real token)."""
        batch, length = input_ids.shape
        rows, hidden, heads = batch * length, self.hidden, self.heads
        qkv_buffer = self._buffer("qkv", rows, 3 * hidden)
        residual = self._buffer("residual", rows, hidden)
        up_buffer = self._buffer("up", rows, self.layers[0].up.shape[1])
        x = self.words[input_ids].add_(self.positions[:length])
        x = F.layer_norm(x, (hidden,), *self.norm, self.eps).view(rows, hidden)
        attend = None if bool(mask.all()) else mask[:, None, None, :]
        for layer in self.layers:
            qkv = torch.addmm(layer.qkv_bias, x, layer.qkv, out=qkv_buffer)
            q, k, v = qkv.view(batch, length, 3, heads, hidden // heads).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            context = context.transpose(1, 2).reshape(rows, hidden)
            h = torch.add(x, layer.out_bias, out=residual).addmm_(context, layer.out)
            h = F.layer_norm(h, (hidden,), *layer.norm1, self.eps)
            up = torch.ops.aten.gelu_(torch.addmm(layer.up_bias, h, layer.up, out=up_buffer))
            x = torch.add(h, layer.down_bias, out=residual).addmm_(up, layer.down)
            x = F.layer_norm(x, (hidden,), *layer.norm2, self.eps)
        return x.view(batch, length, hidden)


def bert_forward(model: torch.nn.Module) -> BertForward | None:
    """A :class:`BertForward` for ``model`` when it is a plain BERT encoder this pass reproduces, else None."""
    config = getattr(model, "config", None)
    covered = (config is not None and config.model_type == "bert" and hasattr(model, "encoder")
               and getattr(config, "position_embedding_type", "absolute") == "absolute"
               and config.hidden_act in ACTIVATIONS and not getattr(config, "is_decoder", False)
               and config.hidden_size % config.num_attention_heads == 0)
    return BertForward(model) if covered else None
