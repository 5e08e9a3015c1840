"""The classifier protocol: scikit-learn conventions plus safe ``save``/``load``.

Every backend subclasses :class:`TextClassifier`.  Parameters are ``__init__`` arguments (so
``get_params``/``set_params``/``clone`` work), learned state ends in ``_``, ``classes_`` holds the
style labels as sorted strings, and ``predict_proba`` returns an ``(n, k)`` array whose rows sum to 1
in the order of ``classes_``.

A saved model is a directory with ``tsteval-classifier.json`` (backend name, parameters, classes,
the size and sha256 of every weight file, an integrity hash over all of these, library versions)
beside the backend's weights in a safe format (safetensors, JSON or fastText's own binary), and, for a model
trained by this tsteval, ``training-texts.json``: the hash set of its training texts
(:mod:`tsteval.classifiers.training_texts`; ``training_texts_`` once loaded, None for an older model).  A text
classifier's folder also holds ``text-form.json``, the form of the text it was trained on
(:mod:`tsteval.classifiers.text_forms`; hashed in the manifest like every file), and scoring puts every text into
that form first.  Loading
verifies the manifest and every file's hash before any reader sees a file, so a truncated, damaged or
edited model is one clear error, never a library crash or a silently different model.  Nothing is
unpickled.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import tempfile
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import ClassVar, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, make_constraint

from tsteval.classifiers.text_forms import TEXT_FORM, in_form, read_text_form, training_form, write_text_form
from tsteval.classifiers.training_texts import TRAINING_TEXTS, read_training_texts, text_digests, write_training_texts
from tsteval.core.errors import InputError, LabelMismatchError, TstevalError, did_you_mean, quote, read_json
from tsteval.core.integrity import file_problem, files_under, integrity_hash, record_files, records_problem
from tsteval.core.signature import content_hash, package_version

MANIFEST = "tsteval-classifier.json"
# 2: the manifest records each file's size and sha256 and an integrity hash (format 1 had neither).
MANIFEST_FORMAT = 2
RESTORE = "retrain the model or restore its directory from a backup"
# Parameters that change neither a saved model's files nor its scores (what is printed, where it runs): left out of
# its identity.
UNSCORED_PARAMS = frozenset({"verbose", "device"})
# Backends by name, imported only when asked for (torch and fastText are slow to import).
BACKENDS: dict[str, str] = {
    "tfidf-lr": "tsteval.classifiers.tfidf_lr:TfidfLogisticRegression",
    "fasttext": "tsteval.classifiers.fasttext_backend:FastTextClassifier",
    "textcnn": "tsteval.classifiers.textcnn:TextCNNClassifier",
    "transformer": "tsteval.classifiers.transformer:TransformerClassifier",
    "ensemble": "tsteval.classifiers.ensemble:EnsembleClassifier",
    "hf": "tsteval.classifiers.hub:HubClassifier",
}


# Parameter constraints shared by the backends, in scikit-learn's vocabulary (``sklearn.utils._param_validation``).
AT_LEAST_ONE = Interval(Integral, 1, None, closed="left")
POSITIVE = Interval(Real, 0, None, closed="neither")
# The widest seed every library takes (fastText's is a C int).
SEED = Interval(Integral, 0, 2**31 - 1, closed="both")


class IntSequence:
    """A constraint: a list or tuple of ints of at least ``low``, ``length`` of them (or, without ``length``,
    one or more).  JSON and YAML give lists where Python code gives tuples; both are accepted."""

    hidden = False

    def __init__(self, low: int = 1, length: int | None = None) -> None:
        self.low = low
        self.length = length

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` meets the constraint."""
        return (isinstance(value, list | tuple) and (len(value) == self.length if self.length else len(value) > 0)
                and all(isinstance(v, Integral) and not isinstance(v, bool) and v >= self.low for v in value))

    def __str__(self) -> str:
        return f"a list of {self.length or 'one or more'} ints, each at least {self.low}"


class ParameterError(TstevalError):
    """A backend parameter that is unknown or breaks its backend's declared constraints.

    ``problem`` says what is wrong (``C='abc' must be ...``); ``suggestion`` is a value that works (None: leave
    the parameter out), which :meth:`cli_fix` and :meth:`yaml_fix` phrase for the command line and a manifest.
    """

    def __init__(self, backend: str, name: str, value: object, rule: str, suggestion: object = None) -> None:
        self.backend = backend
        self.name = name
        self.problem = f"{name}={quote(value)} {rule}"
        self.suggestion = suggestion
        super().__init__(f"bad parameter for backend {backend!r}: {self.problem} (fix: {self.cli_fix()})")

    def _suggested(self) -> str:
        """The suggested value as both JSON (``--param``) and YAML read it; floats never in exponent form,
        which YAML reads as a string."""
        value = self.suggestion
        if isinstance(value, str):
            return value
        if isinstance(value, float):
            return np.format_float_positional(value, trim="0")
        return json.dumps(value, separators=(",", ":"))

    def cli_fix(self) -> str:
        """The fix as a command-line option."""
        if self.suggestion is None:
            return f"leave out --param {self.name}"
        return f"--param {self.name}={self._suggested()}"

    def yaml_fix(self) -> str:
        """The fix as a manifest entry."""
        if self.suggestion is None:
            return f"remove {self.name}"
        return f"{self.name}: {self._suggested()}"


def backend_class(name: str) -> type[TextClassifier]:
    """The classifier class registered under ``name``."""
    if name not in BACKENDS:
        raise TstevalError(f"unknown classifier backend {name!r}; choose one of {sorted(BACKENDS)}"
                           f"{did_you_mean(name, BACKENDS, '; ')}")
    module, attr = BACKENDS[name].split(":")
    return getattr(importlib.import_module(module), attr)


def with_precision(name: str, params: Mapping[str, object], precision: str) -> dict[str, object]:
    """``params`` of backend ``name`` with ``precision`` for every neural model it trains (the backend's own
    ``precision``, or an ensemble member's through ``member_params``) that they leave unset: a run that pins its
    precision trains its classifiers in it too, so ``auto`` resolving per CPU cannot change them.

    >>> with_precision("ensemble", {"members": "fasttext,transformer"}, "fp32")["member_params"]
    {'transformer': {'precision': 'fp32'}}
    >>> with_precision("fasttext", {}, "fp32")
    {}
    """
    out = dict(params)
    if "precision" in backend_class(name)._get_param_names():
        out.setdefault("precision", precision)
    elif name == "ensemble":
        from tsteval.classifiers.ensemble import EnsembleClassifier, member_names

        members = {k: dict(v) for k, v in (out.get("member_params") or {}).items()}
        for member in member_names(out.get("members", EnsembleClassifier().members)):
            if "precision" in backend_class(member)._get_param_names():
                members.setdefault(member, {}).setdefault("precision", precision)
        if members:
            out["member_params"] = members
    return out


def make_classifier(name: str, **params: object) -> TextClassifier:
    """A new, unfitted classifier of backend ``name`` with the given parameters, validated."""
    return backend_class(name).from_params(params)


def check_texts(texts: Sequence[str], what: str = "texts") -> list[str]:
    """Texts as a list of non-empty strings, or an :class:`InputError` naming the first bad one."""
    if isinstance(texts, str):
        raise InputError(f"{what} must be a sequence of strings, not one string")
    texts = list(texts)
    if not texts:
        raise InputError(f"{what} are empty")
    for i, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{what}[{i}] is empty or not a string: {text!r}",
                             fix="drop or fill empty lines before classifying")
    return texts


def check_training_data(texts: Sequence[str], labels: Sequence[object]) -> tuple[list[str], list[str]]:
    """Validated training texts and string labels; at least two classes are required."""
    texts = check_texts(texts, "training texts")
    labels = [str(label) for label in labels]
    if len(texts) != len(labels):
        raise InputError(f"{len(texts)} training texts but {len(labels)} labels")
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise InputError(f"training data has a single class ({classes[0]!r}); a style classifier needs "
                         "at least two", fix="add texts of another style")
    return texts, labels


class SavedClassifier(ClassifierMixin, BaseEstimator):
    """What every tsteval classifier shares: ``classes_`` as strings, normalised ``predict_proba``, ``predict``
    and safe ``save``; subclasses validate their inputs and implement the four ``_`` hooks."""

    backend: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()
    manifest_name: ClassVar[str] = MANIFEST
    # Parameter name -> accepted constraints (any one suffices), as in scikit-learn's estimators.
    _parameter_constraints: ClassVar[dict[str, list]] = {}

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> Self:
        """A new model with ``params``, checked (:meth:`_validate_params`) before any work is done with it; an
        unknown name or a bad value is one :class:`ParameterError`."""
        accepted = cls._get_param_names()
        for name, value in params.items():
            if name not in accepted:
                raise ParameterError(cls.backend, name, value, f"is not one of its parameters {accepted}")
        model = cls(**params)
        model._validate_params()
        return model

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints`` and then the cross-parameter rules of
        :meth:`_check_params`; the first problem is a :class:`ParameterError` suggesting the default."""
        defaults = inspect.signature(type(self).__init__).parameters
        for name, value in self.get_params(deep=False).items():
            constraints = [c if hasattr(c, "is_satisfied_by") else make_constraint(c)
                           for c in self._parameter_constraints.get(name, ())]
            # Python counts a bool as an int, but true/false for a count or a rate is a mistake, not 1/0.
            usable = [c for c in constraints if not (isinstance(value, bool) and isinstance(c, Interval))]
            if constraints and not any(c.is_satisfied_by(value) for c in usable):
                rule = " or ".join(str(c) for c in constraints)
                raise ParameterError(self.backend, name, value, f"must be {rule}", defaults[name].default)
        self._check_params()

    def _check_params(self) -> None:
        """Rules between parameters (raise :class:`ParameterError`); the base class has none."""

    def _encode_labels(self, labels: Sequence[str]) -> np.ndarray:
        """Set ``classes_`` (sorted) and return the labels as indices into it."""
        self.classes_ = np.array(sorted(set(labels)), dtype=object)
        index = {c: i for i, c in enumerate(self.classes_)}
        return np.array([index[label] for label in labels], dtype=np.int64)

    def _normalised(self, items: list) -> np.ndarray:
        """``_predict_proba`` of validated items, clipped at 0 and scaled so each row sums to 1."""
        self._check_fitted()
        proba = np.clip(np.asarray(self._predict_proba(items), dtype=np.float64), 0.0, None)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, items: Sequence) -> np.ndarray:
        """The most probable class of each item."""
        return self.classes_[self.predict_proba(items).argmax(axis=1)]

    def save(self, directory: str | Path) -> Path:
        """Write the model to ``directory`` (created) in safe formats.

        The manifest records the size and sha256 of every file the backend wrote and an integrity hash over
        backend, parameters, classes and files, which :func:`load_saved` verifies before reading anything.
        """
        self._check_fitted()
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".tsteval-save-", dir=directory) as tmp:
            written = Path(tmp)
            self._save_state(written)
            digests = getattr(self, "training_texts_", None)
            if digests is not None:
                write_training_texts(written, digests)
            if hasattr(self, "text_form_"):
                write_text_form(written, self.text_form_)
            names = files_under(written)
            files = record_files(written, names)
            for name in names:
                (directory / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(written / name, directory / name)
        body = json.loads(json.dumps({"backend": self.backend, "params": self.get_params(deep=False),
                                      "classes": [str(c) for c in self.classes_], "files": files}, default=str))
        manifest = {"format": MANIFEST_FORMAT, **body, "integrity": integrity_hash(body),
                    "versions": {lib: package_version(lib) for lib in ("tsteval", *self.libraries)}}
        if digests is not None:  # the file itself is in "files", so the integrity hash covers it
            manifest["training_texts"] = {"file": TRAINING_TEXTS, "count": len(digests)}
        (directory / self.manifest_name).write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
        return directory

    def _check_fitted(self) -> None:
        if not hasattr(self, "classes_"):
            raise TstevalError(f"this {type(self).__name__} is not fitted yet; call fit() first")

    @abstractmethod
    def _fit(self, items: list, y: np.ndarray) -> list | None:
        """Train on validated items and integer labels indexing ``classes_``; return the items trained on when
        only some were (a sample), else None."""

    @abstractmethod
    def _predict_proba(self, items: list) -> np.ndarray:
        """``(n, k)`` probabilities (normalised by the caller)."""

    @abstractmethod
    def _save_state(self, directory: Path) -> None:
        """Write learned state (weights, vocabulary) to ``directory``."""

    @abstractmethod
    def _load_state(self, directory: Path) -> None:
        """Restore learned state written by ``_save_state``; ``classes_`` is already set."""


def _read_manifest(path: Path) -> dict:
    """The parsed manifest at ``path``; unreadable or malformed JSON is an :class:`InputError` naming it."""
    data = read_json(path, "manifest", fix=RESTORE)
    if not isinstance(data, dict):
        raise InputError(f"the manifest is a JSON {type(data).__name__}, not an object", path=path, fix=RESTORE)
    return data


def verify_saved(directory: Path, manifest_name: str, resolve: Callable[[str], type[SavedClassifier]]
                 ) -> tuple[type[SavedClassifier], dict, list[str]]:
    """The backend class, parameters and classes of a saved model, after checking (before any file is read by a
    library) that its manifest is intact and every file it lists has the recorded size and sha256."""
    path = directory / manifest_name
    manifest = _read_manifest(path)
    if "files" not in manifest or "integrity" not in manifest:
        raise InputError("the model was saved without file hashes (an older tsteval), so its files cannot be "
                         "verified", path=path, fix="retrain it with this version of tsteval, which saves the hashes")
    for field, kind in (("backend", str), ("params", dict), ("classes", list), ("integrity", str)):
        if not isinstance(manifest.get(field), kind):
            raise InputError(f"the manifest's {field!r} is missing or not a {kind.__name__}", path=path, fix=RESTORE)
    problem = records_problem(manifest["files"])
    if problem:
        raise InputError(f"the manifest is malformed: {problem}", path=path, fix=RESTORE)
    try:
        cls = resolve(manifest["backend"])
    except TstevalError as error:
        raise InputError(str(error), path=path, fix=RESTORE) from error
    accepted = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
    unknown = sorted(set(manifest["params"]) - set(accepted))
    if unknown:
        raise InputError(f"unknown parameters {unknown} for backend {manifest['backend']!r}, which accepts "
                         f"{accepted}", path=path, fix="remove them, or load the model with the tsteval that saved it")
    classes = manifest["classes"]
    if len(classes) < 2 or not all(isinstance(c, str) for c in classes) or classes != sorted(set(classes)):
        raise InputError(f"the classes {classes} are not two or more distinct strings in sorted order, as training "
                         "writes them", path=path, fix=RESTORE)
    body = {field: manifest[field] for field in ("backend", "params", "classes", "files")}
    if integrity_hash(body) != manifest["integrity"]:
        raise InputError("the manifest was edited: its backend, params, classes or file list no longer match its "
                         "integrity hash", path=path, fix=RESTORE)
    try:  # intact, but perhaps saved by a tsteval with other rules
        cls(**manifest["params"])._validate_params()
    except ParameterError as error:
        raise InputError(f"backend {error.backend!r} refuses the saved parameter {error.problem}", path=path,
                         fix="retrain the model with this version of tsteval") from error
    damaged = file_problem(directory, manifest["files"])
    if damaged is not None:
        name, reason = damaged
        if reason == "missing":
            raise TstevalError(f"{directory / name} is missing (listed in {path.name}); retrain or restore the model")
        raise TstevalError(f"{directory / name} is damaged or was altered ({reason}); retrain or restore it")
    return cls, manifest["params"], classes


def saved_identity(directory: str | Path, manifest_name: str = MANIFEST) -> str:
    """A saved model's identity in signatures: the content hash of its files (the sha256 of every file its manifest
    lists, which loading verifies), its backend, classes and the parameters it scores with (not
    :data:`UNSCORED_PARAMS`).  Byte-identical files give one identity whoever made them (``train-classifier``, a
    manifest, the training cache) and wherever the folder lies; no file is read again to compute it."""
    manifest = _read_manifest(Path(directory) / manifest_name)
    params = {k: v for k, v in manifest.get("params", {}).items() if k not in UNSCORED_PARAMS}
    files = {name: record.get("sha256") for name, record in manifest.get("files", {}).items()}
    return content_hash(manifest.get("backend"), manifest.get("classes"), params, files)


def fitted_identity(model: SavedClassifier) -> str:
    """:func:`saved_identity` of a fitted model that is not saved (given as an object): saved to a temporary folder
    first, as :meth:`SavedClassifier.save` would write it."""
    with tempfile.TemporaryDirectory(prefix="tsteval-id-") as tmp:
        return saved_identity(model.save(Path(tmp) / "model"), model.manifest_name)


# How many saved models below a folder that is not one the error lists (the first ones, sorted) and how deep it looks.
_LISTED = 8
_DEPTH = 2


def not_saved(directory: Path, manifest_name: str, what: str) -> str:
    """Why ``directory`` is not a saved tsteval ``what``, in one line: it does not exist (its folder's nearest
    entries suggested), it is a file, or it is a folder without ``manifest_name`` (the saved models up to
    :data:`_DEPTH` levels below it listed, when there are any)."""
    if not directory.exists():
        parent = directory.parent
        nearby = [p.name for p in parent.iterdir()] if parent.is_dir() else []
        return f"the {what} folder {directory} does not exist{did_you_mean(directory.name, nearby, '; ')}"
    if not directory.is_dir():
        return f"{directory} is a file; a saved tsteval {what} is a folder with {manifest_name}"
    found = sorted(m.parent for depth in range(1, _DEPTH + 1) for m in directory.glob("*/" * depth + manifest_name))
    message = f"{directory} is not a saved tsteval {what} (no {manifest_name})"
    if not found:
        return message
    shown = ", ".join(str(f) for f in found[:_LISTED]) + (f" and {len(found) - _LISTED} more" if
                                                           len(found) > _LISTED else "")
    return f"{message}, but it holds {len(found)}: {shown}; give one of them"


def load_saved(directory: str | Path, manifest_name: str, resolve: Callable[[str], type[SavedClassifier]],
               what: str, label_noun: str, expected_classes: Sequence[object] | None = None) -> SavedClassifier:
    """Load a model saved by :meth:`SavedClassifier.save`, verified by :func:`verify_saved` first; a label set
    other than ``expected_classes`` is an error."""
    directory = Path(directory)
    if not (directory / manifest_name).is_file():
        raise TstevalError(not_saved(directory, manifest_name, what))
    cls, params, classes = verify_saved(directory, manifest_name, resolve)
    if expected_classes is not None and sorted(str(c) for c in expected_classes) != classes:
        raise LabelMismatchError(
            f"{directory} was trained on the {label_noun} {classes}, but these data have "
            f"{sorted(str(c) for c in expected_classes)}; train a {what} on this label set")
    model = cls(**params)
    model.classes_ = np.array(classes, dtype=object)
    model._load_state(directory)
    listed = _read_manifest(directory / manifest_name)["files"]  # verified above: a listed file has its sha256
    model.training_texts_ = read_training_texts(directory) if TRAINING_TEXTS in listed else None
    if isinstance(model, TextClassifier):  # a model saved before the form was recorded scores texts as given
        model.text_form_ = read_text_form(directory) if TEXT_FORM in listed else "as-written"
    return model


class TextClassifier(SavedClassifier):
    """Base class of all text classifiers."""

    def cache_params(self) -> dict:
        """The parameters that identify what this model learns, for a cache key: ``get_params(deep=False)`` with
        any machine-dependent choice (such as ``precision="auto"``) resolved on this machine, as ``fit`` would
        resolve it."""
        return self.get_params(deep=False)

    def cache_key_extra(self, texts: Sequence[str]) -> tuple[str, ...]:
        """What else a cache key of this model fitted on ``texts`` needs (a backend whose reading of some scripts
        changed adds a version for them); nothing by default."""
        return ()

    def fit(self, texts: Sequence[str], labels: Sequence[object]) -> Self:
        """Learn from raw texts and their style labels (parameters are validated first, as scikit-learn does) and
        record the text form they are written in (``text_form_``) and how many texts it learnt from (``n_train_``:
        fewer than given where the backend trains on a sample)."""
        self._validate_params()
        texts, labels = check_training_data(texts, labels)
        seen = self._fit(texts, self._encode_labels(labels))
        self.training_texts_ = text_digests(texts if seen is None else seen)
        self.n_train_ = len(texts if seen is None else seen)
        self.text_form_ = training_form(texts)
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """``(n, k)`` class probabilities in the order of ``classes_``; rows sum to 1.  The texts are put into the
        form the model was trained on (``text_form_``) first."""
        texts = check_texts(texts)
        return self._normalised(in_form(texts, getattr(self, "text_form_", "as-written")))

    @property
    def length_limit(self) -> int | None:
        """The most tokens of a text the model reads (a longer one is classified from its start); None: it reads
        every text whole."""
        return None

    def truncated(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, whether the model reads only its start (more than :attr:`length_limit` tokens), in the form
        :meth:`predict_proba` reads it."""
        self._check_fitted()
        texts = check_texts(texts)
        if self.length_limit is None:
            return np.zeros(len(texts), dtype=bool)
        return self._truncated(in_form(texts, getattr(self, "text_form_", "as-written")))

    def _truncated(self, texts: list[str]) -> np.ndarray:
        """:meth:`truncated` of texts in the model's form, for a backend with a :attr:`length_limit`."""
        raise NotImplementedError

    @classmethod
    def load(cls, directory: str | Path, expected_classes: Sequence[object] | None = None) -> TextClassifier:
        """Read a model saved by :meth:`save`; with ``expected_classes``, refuse a different label set."""
        return load_classifier(directory, expected_classes)


def load_classifier(directory: str | Path, expected_classes: Sequence[object] | None = None) -> TextClassifier:
    """Load any saved backend; a label set other than ``expected_classes`` is a clear error."""
    return load_saved(directory, MANIFEST, backend_class, "style classifier", "styles", expected_classes)


def saved_backend(directory: str | Path) -> str:
    """The backend a saved style classifier's manifest names (read, not verified: :func:`load_classifier` does
    that); a folder without a readable manifest is an :class:`InputError` naming it."""
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise InputError("missing: not a saved style classifier", path=path,
                         fix="give a folder written by tsteval train-classifier")
    return str(_read_manifest(path).get("backend"))
