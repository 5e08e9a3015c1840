"""Ready-made classifiers: any Hugging Face sequence-classification model (a hub id or a ``save_pretrained`` folder)
scoring as it is, without training (``tsteval score --classifier NAME=hf:ID_OR_DIR``).

The model's labels (``config.id2label``) become the run's styles (:func:`label_map`): by themselves where they are
the style labels or the styles' names (in any case), else by an explicit mapping ``{LABEL: STYLE}``
(``--classifier-labels NAME=LABEL:STYLE,...``).  Probabilities of labels mapped to one style add up; a label mapped
to no style is dropped and each row renormalised over the mapped ones.  Texts reach the tokenizer as written: never
lower-cased or re-tokenised (``text_form_`` is ``as-written`` whatever the texts), as a model trained on cased text
expects them.  Scoring batches texts of similar length on the run's device, in its precision (bf16 or fp16 by
autocast; ``auto`` as ``--precision auto``).  :func:`hub_identity` names the model (its hub id, or its folder's base
name) and the sha256 of its weight files, each hashed once per file state (path, size, modification time).

>>> label_map(["NEGATIVE", "POSITIVE"], ["0", "1"], None, {"0": "negative", "1": "positive"}, "sentiment")
{'NEGATIVE': '0', 'POSITIVE': '1'}
>>> label_map(["LABEL_0", "LABEL_1"], ["0", "1"], None, {}, "sentiment")
Traceback (most recent call last):
...
tsteval.core.errors.TstevalError: classifier 'sentiment': the model's labels ['LABEL_0', 'LABEL_1'] are not the \
run's styles ['0', '1']; map them with --classifier-labels sentiment=LABEL_0:0,LABEL_1:1 (manifest: \
classifier_labels: {sentiment: {LABEL_0: '0', ...}}; evaluate: classifier_labels={'sentiment': {...}})
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from numbers import Integral
from pathlib import Path
from typing import Self

import numpy as np
import torch
from sklearn.utils._param_validation import Interval, StrOptions

from tsteval.classifiers.base import AT_LEAST_ONE, ParameterError, TextClassifier
from tsteval.classifiers.text_forms import FORMS
from tsteval.classifiers.transformer import MIN_LENGTH, _from_pretrained, _quiet_transformers, check_max_length
from tsteval.core.devices import PRECISIONS, check_precision, resolve_device, torch_dtype, with_precision
from tsteval.core.errors import TstevalError, quote
from tsteval.core.integrity import files_hash
from tsteval.core.progress import progress
from tsteval.core.tokenize import cut_ids

AS_WRITTEN = FORMS[0]
LABELS_FILE = "hub-labels.json"  # the resolved label -> style mapping, in a saved classifier's folder
WEIGHT_SUFFIXES = (".safetensors", ".bin")
# The longest input when the tokenizer names none (some say 10**30): the common encoders' 512 positions.
LONGEST = 512
EXAMPLE = "s-nlp/roberta-base-formality-ranker"


def _fix(name: str, model_labels: Sequence[str], styles: Sequence[str]) -> str:
    """The mapping to give, for an error line: the model's labels paired with the styles in order."""
    pairs = ",".join(f"{label}:{style}" for label, style in zip(model_labels, styles, strict=False))
    return (f"map them with --classifier-labels {name}={pairs} (manifest: classifier_labels: {{{name}: "
            f"{{{model_labels[0]}: {quote(styles[0])}, ...}}}}; evaluate: classifier_labels={{{name!r}: {{...}}}})")


def label_map(model_labels: Sequence[str], styles: Sequence[str], given: Mapping[str, str] | None,
              names: Mapping[str, str], name: str) -> dict[str, str]:
    """Each model label used -> the style it scores: ``given`` (checked: every label the model's, every style the
    run's, every style mapped), else the labels that are the styles or their ``names`` (any case); one
    :class:`TstevalError` line naming ``--classifier-labels`` and the model's labels otherwise."""
    where = f"--classifier-labels {name}"
    if given:
        unknown = [label for label in given if label not in model_labels]
        if len(given) > len(model_labels):
            raise TstevalError(f"{where}: the model's head has {len(model_labels)} labels {list(model_labels)}, the "
                               f"mapping gives {len(given)}; map the model's own labels")
        if unknown:
            raise TstevalError(f"{where}: the model has no label {quote(unknown[0])}; its labels are "
                               f"{list(model_labels)}")
        strange = [style for style in given.values() if style not in styles]
        if strange:
            raise TstevalError(f"{where}: {quote(strange[0])} is not a style of the run {list(styles)}")
        mapping = dict(given)
    else:
        by_text = {text.casefold(): style for style in styles for text in (style, names.get(style, style))}
        mapping = {label: by_text[label.casefold()] for label in model_labels if label.casefold() in by_text}
    missing = [style for style in styles if style not in mapping.values()]
    if missing and given:
        raise TstevalError(f"{where}: no label of the model is mapped to the style {quote(missing[0])}; the model's "
                           f"labels are {list(model_labels)}")
    if missing:
        raise TstevalError(f"classifier {name!r}: the model's labels {list(model_labels)} are not the run's styles "
                           f"{list(styles)}; {_fix(name, model_labels, styles)}")
    return mapping


def untrained_head(source: str, loaded: Mapping[str, object], labels: int, name: str) -> None:
    """Refuse, in one line naming ``source``, a checkpoint whose weights transformers had to initialise
    (``loaded``: its ``output_loading_info``): a classification head missing (a bare encoder, a sentence-transformers
    folder) or of another number of labels than its config's ``labels``.

    >>> untrained_head("enc/", {"missing_keys": {"classifier.bias", "classifier.weight"}}, 2, "x")
    Traceback (most recent call last):
    ...
    tsteval.core.errors.TstevalError: classifier 'x': enc/ has no trained classification head (classifier.bias, \
classifier.weight not in the checkpoint: transformers would initialise them at random); give a fine-tuned \
sequence-classification model, or train one (tsteval train-classifier)
    """
    missing = sorted(loaded.get("missing_keys") or ())
    if missing:
        shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
        raise TstevalError(f"classifier {name!r}: {source} has no trained classification head ({shown} not in the "
                           "checkpoint: transformers would initialise them at random); give a fine-tuned "
                           "sequence-classification model, or train one (tsteval train-classifier)")
    mismatched = sorted(loaded.get("mismatched_keys") or (), key=str)
    if mismatched:
        key, stored, wanted = mismatched[0]
        raise TstevalError(f"classifier {name!r}: {source}'s classification head has {list(stored)[0]} labels "
                           f"({key} {list(stored)}), its config.json {labels} ({list(wanted)}); give the checkpoint "
                           "its own config.json, whose id2label names one label per output of the head")


def weights_hash(directory: Path) -> str:
    """The sha256 over the names and sha256s of the weight files (safetensors, PyTorch ``.bin``) in ``directory``
    (:func:`~tsteval.core.integrity.files_hash`); a folder without one is a :class:`TstevalError`."""
    files = sorted(p.name for p in directory.iterdir() if p.suffix in WEIGHT_SUFFIXES and p.is_file())
    if not files:
        raise TstevalError(f"{directory} holds no weight file ({', '.join(WEIGHT_SUFFIXES)}); give a folder written "
                           "by save_pretrained")
    return files_hash(directory, files)


def model_folder(model: str) -> Path:
    """The folder of ``model``'s files: the folder itself, or a hub id's snapshot in the Hugging Face cache."""
    if Path(model).is_dir():
        return Path(model)
    from transformers.utils import cached_file

    return Path(cached_file(model, "config.json")).parent


def hub_identity(model: str, mapping: Mapping[str, str], precision: str) -> str:
    """The identity of a ready-made classifier in signatures: ``hf:NAME@SHA`` (the hub id, or a folder's base name,
    never its path; 16 hex digits of :func:`weights_hash`), its label mapping and its precision unless fp32.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     _ = (Path(folder) / "model.safetensors").write_bytes(b"weights")
    ...     hub_identity(folder, {"NEG": "0", "POS": "1"}, "bf16").split("@")[1]
    '7c4f2b63ff7d22d5/NEG:0,POS:1+bf16'
    """
    shown = Path(model).name if Path(model).is_dir() else model
    labels = ",".join(f"{label}:{style}" for label, style in mapping.items())
    return with_precision(f"hf:{shown}@{weights_hash(model_folder(model))[:16]}/{labels}", precision)


class HubClassifier(TextClassifier):
    """A Hugging Face sequence-classification model scoring the run's styles as it is (see the module docstring).

    :meth:`ready` loads it for a run's styles; :meth:`fit` does the same for the styles of its labels (an ensemble
    member), training nothing.  ``labels``: model label -> style (None: the labels that are the styles)."""

    backend = "hf"
    libraries = ("torch", "transformers", "safetensors", "numpy")
    _parameter_constraints = {
        "model": [str, None],
        "labels": [dict, None],
        "batch_size": [AT_LEAST_ONE],
        "max_length": [Interval(Integral, MIN_LENGTH, None, closed="left"), None],
        "precision": [StrOptions(set(PRECISIONS))],
        "device": [str, None],
        "verbose": [bool],
    }

    def __init__(self, model: str | None = None, labels: dict[str, str] | None = None, batch_size: int = 64,
                 max_length: int | None = None, precision: str = "auto", device: str | None = None,
                 verbose: bool = True) -> None:
        self.model = model
        self.labels = labels
        self.batch_size = batch_size
        self.max_length = max_length
        self.precision = precision
        self.device = device
        self.verbose = verbose

    def _source(self) -> str:
        """``model``, which loading needs (the default None passes the parameter checks)."""
        if not self.model:
            raise ParameterError(self.backend, "model", self.model, "must name a sequence-classification model: a "
                                 "Hugging Face hub id or a save_pretrained folder", EXAMPLE)
        return self.model

    def ready(self, styles: Sequence[str], names: Mapping[str, str], name: str) -> Self:
        """This model loaded to score ``styles`` (their ``names`` may match the model's labels); ``name`` is the
        classifier's name in the run, for the error lines."""
        self._validate_params()
        self.classes_ = np.array(sorted({str(s) for s in styles}), dtype=object)
        self._load(self._source(), names, name)
        self.training_texts_ = None
        self.text_form_ = AS_WRITTEN
        return self

    def fit(self, texts: Sequence[str], labels: Sequence[object]) -> Self:
        """Load the model for the styles of ``labels``; nothing is trained and the texts are not read."""
        super().fit(texts, labels)
        self.training_texts_ = None
        self.text_form_ = AS_WRITTEN
        return self

    def _fit(self, texts: list[str], y: np.ndarray) -> None:
        self._load(self._source(), {}, self.backend)

    def _load(self, source: str, names: Mapping[str, str], name: str,
              mapping: Mapping[str, str] | None = None) -> None:
        """Tokenizer and model from ``source`` on the device; the label mapping resolved (or ``mapping`` as saved)."""
        self.device_ = torch.device(resolve_device(self.device))
        self.precision_ = check_precision(self.precision, self.device_.type)
        self.tokenizer_, (model, loaded) = _from_pretrained(source, output_loading_info=True,
                                                            ignore_mismatched_sizes=True)
        untrained_head(source, loaded, model.config.num_labels, name)
        self.model_ = model.to(self.device_).eval()
        model_labels = [str(model.config.id2label[i]) for i in range(model.config.num_labels)]
        styles = [str(c) for c in self.classes_]
        self.label_map_ = dict(mapping) if mapping is not None else label_map(model_labels, styles, self.labels,
                                                                               names, name)
        self.columns_ = np.zeros((len(model_labels), len(styles)))
        for label, style in self.label_map_.items():
            self.columns_[model_labels.index(label), styles.index(style)] = 1.0
        if self.max_length is not None:
            check_max_length(self.tokenizer_, self.max_length, self.backend)
        self.max_length_ = self.max_length or min(self.tokenizer_.model_max_length, LONGEST)

    @property
    def length_limit(self) -> int:
        """The word pieces (special tokens included) the model reads of a text: ``max_length``, else its
        tokenizer's ``model_max_length`` (at most :data:`LONGEST`)."""
        return self.max_length_

    def _truncated(self, texts: list[str]) -> np.ndarray:
        return cut_ids(self.tokenizer_, texts, self.max_length_)[1]

    def _predict_proba(self, texts: list[str]) -> np.ndarray:
        # Batches of similar length waste less work on padding; results go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        proba = np.empty((len(texts), len(self.classes_)))
        starts = range(0, len(texts), self.batch_size)
        lower = self.precision_ != "fp32"
        with torch.inference_mode(), torch.autocast(self.device_.type, dtype=torch_dtype(self.precision_),
                                                    enabled=lower):
            for start in progress(starts, "hf classifier", unit="batch") if self.verbose else starts:
                rows = order[start:start + self.batch_size]
                batch = self.tokenizer_([texts[i] for i in rows], padding=True, truncation=True,
                                        max_length=self.max_length_, return_tensors="pt").to(self.device_)
                logits = self.model_(**batch).logits
                mapped = torch.softmax(logits.double(), dim=1).cpu().numpy() @ self.columns_
                proba[rows] = mapped / mapped.sum(axis=1, keepdims=True)  # renormalised over the mapped labels
        return proba

    def _save_state(self, directory: Path) -> None:
        with _quiet_transformers():
            self.model_.save_pretrained(directory)
            self.tokenizer_.save_pretrained(directory)
        (directory / LABELS_FILE).write_text(json.dumps(self.label_map_), encoding="utf-8")

    def _load_state(self, directory: Path) -> None:
        mapping = json.loads((directory / LABELS_FILE).read_text(encoding="utf-8"))
        self._load(str(directory), {}, self.backend, mapping)
