"""Kim (2014) convolutional sentence classifier, as used for style intensity by Mir et al. (2019).

Texts are lower-cased and split on whitespace; the vocabulary comes from the training data with
``<pad>`` (index 0) and ``<unk>`` (index 1).  Every text is cut or padded to ``max_len`` tokens, so a
text's probabilities do not depend on the batch it is scored in.  Training is seeded and, on CPU,
deterministic; the global torch RNG is left as it was.  Weights go to safetensors, the vocabulary to JSON.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from numbers import Real
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from sklearn.utils._param_validation import Interval
from torch import nn
from tqdm.auto import tqdm

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, IntSequence, ParameterError, TextClassifier
from tsteval.core.errors import TstevalError

PAD, UNK = "<pad>", "<unk>"
VOCAB_FILE = "vocab.json"
WEIGHTS_FILE = "textcnn.safetensors"
INFERENCE_BATCH = 512


def resolve_device(device: str | None) -> torch.device:
    """``device``, or CUDA when available and CPU otherwise."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise TstevalError(f"unknown torch device {device!r}: {error}") from error


def tokenize(text: str) -> list[str]:
    """Lower-cased whitespace tokens."""
    return text.lower().split()


class KimCNN(nn.Module):
    """Embedding, parallel 1-D convolutions with max-over-time pooling, dropout, linear layer."""

    def __init__(self, vocab_size: int, num_classes: int, embed_dim: int, filter_sizes: Sequence[int],
                 num_filters: int, dropout: float) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, num_filters, size) for size in filter_sizes)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(num_filters * len(filter_sizes), num_classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, classes)`` for token ids ``(batch, length)``."""
        x = self.embedding(ids).transpose(1, 2)
        pooled = [torch.relu(conv(x)).amax(dim=2) for conv in self.convs]
        return self.out(self.dropout(torch.cat(pooled, dim=1)))


class TextCNNClassifier(TextClassifier):
    """Text-CNN style classifier trained from scratch with Adam and cross-entropy."""

    backend = "textcnn"
    libraries = ("torch", "safetensors", "numpy")
    _parameter_constraints = {
        "embed_dim": [AT_LEAST_ONE],
        "filter_sizes": [IntSequence(low=1)],
        "num_filters": [AT_LEAST_ONE],
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "max_len": [AT_LEAST_ONE],
        "min_count": [AT_LEAST_ONE],
        "epochs": [AT_LEAST_ONE],
        "batch_size": [AT_LEAST_ONE],
        "lr": [POSITIVE],
        "seed": [SEED],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, embed_dim: int = 128, filter_sizes: Sequence[int] = (3, 4, 5), num_filters: int = 100,
                 dropout: float = 0.5, max_len: int = 50, min_count: int = 1, epochs: int = 3, batch_size: int = 64,
                 lr: float = 1e-3, seed: int = 0, device: str | None = None, verbose: bool = True) -> None:
        self.embed_dim = embed_dim
        self.filter_sizes = filter_sizes
        self.num_filters = num_filters
        self.dropout = dropout
        self.max_len = max_len
        self.min_count = min_count
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.seed = seed
        self.device = device
        self.verbose = verbose

    def _check_params(self) -> None:
        widest = max(self.filter_sizes)
        if self.max_len < widest:
            raise ParameterError(self.backend, "max_len", self.max_len,
                                 f"must be at least the widest filter size ({widest})", widest)

    def _build_network(self) -> KimCNN:
        return KimCNN(len(self.vocab_), len(self.classes_), self.embed_dim, tuple(self.filter_sizes),
                      self.num_filters, self.dropout)

    def _encode(self, texts: list[str]) -> torch.Tensor:
        """Token ids ``(n, max_len)``: unknown words map to ``<unk>``, short texts are padded."""
        index = self.index_
        ids = np.zeros((len(texts), self.max_len), dtype=np.int64)
        for row, text in enumerate(texts):
            tokens = [index.get(token, 1) for token in tokenize(text)[:self.max_len]]
            ids[row, :len(tokens)] = tokens
        return torch.from_numpy(ids)

    @property
    def length_limit(self) -> int:
        """``max_len``: the words the network reads of a text."""
        return self.max_len

    def _truncated(self, texts: list[str]) -> np.ndarray:
        return np.array([len(tokenize(text)) > self.max_len for text in texts], dtype=bool)

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        counts = Counter(token for text in texts for token in tokenize(text))
        kept = sorted((t for t, c in counts.items() if c >= self.min_count), key=lambda t: (-counts[t], t))
        self.vocab_ = [PAD, UNK, *kept]
        self.index_ = {token: i for i, token in enumerate(self.vocab_)}
        self.device_ = resolve_device(self.device)
        ids, targets = self._encode(texts), torch.from_numpy(y)
        n_batches = -(-len(texts) // self.batch_size)
        with torch.random.fork_rng(devices=[self.device_] if self.device_.type == "cuda" else []):
            torch.manual_seed(self.seed)
            self.network_ = self._build_network().to(self.device_)
            optimizer = torch.optim.Adam(self.network_.parameters(), lr=self.lr)
            generator = torch.Generator().manual_seed(self.seed)
            loss_fn = nn.CrossEntropyLoss()
            self.network_.train()
            with tqdm(total=self.epochs * n_batches, desc="textcnn", unit="batch", disable=not self.verbose,
                      mininterval=1.0) as bar:
                for epoch in range(self.epochs):
                    order = torch.randperm(len(texts), generator=generator)
                    for start in range(0, len(texts), self.batch_size):
                        batch = order[start:start + self.batch_size]
                        optimizer.zero_grad()
                        loss = loss_fn(self.network_(ids[batch].to(self.device_)), targets[batch].to(self.device_))
                        loss.backward()
                        optimizer.step()
                        bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}", refresh=False)
                        bar.update()
        self.network_.eval()

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        self.network_.eval()
        parts = []
        with torch.inference_mode():
            for start in range(0, len(texts), INFERENCE_BATCH):
                ids = self._encode(texts[start:start + INFERENCE_BATCH]).to(self.device_)
                parts.append(torch.softmax(self.network_(ids).double(), dim=1).cpu().numpy())
        return np.concatenate(parts)

    def _save_state(self, directory: Path) -> None:
        (directory / VOCAB_FILE).write_text(json.dumps(self.vocab_, ensure_ascii=False))
        state = {name: tensor.detach().cpu().contiguous() for name, tensor in self.network_.state_dict().items()}
        save_file(state, str(directory / WEIGHTS_FILE))

    def _load_state(self, directory: Path) -> None:
        self.vocab_ = json.loads((directory / VOCAB_FILE).read_text())
        self.index_ = {token: i for i, token in enumerate(self.vocab_)}
        self.device_ = resolve_device(self.device)
        network = self._build_network()
        network.load_state_dict(load_file(str(directory / WEIGHTS_FILE)))
        self.network_ = network.to(self.device_).eval()
