"""What a manifest says, as frozen dataclasses (the schema is in :mod:`tsteval.experiment.manifest.loader`); the run
options it sets are one :class:`~tsteval.experiment.options.RunOptions` (``Manifest.options``), read from their
manifest keys, not fields of these specs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import TstevalError
from tsteval.experiment.options import RunOptions

HUB = "hf"  # the backend of ready-made classifiers, and their prefix: hf:ID_OR_DIR


@dataclass(frozen=True)
class FileSpec:
    """One file of a setting: aligned ``inputs``/``outputs`` line files, or a ``tsv`` of input<TAB>output."""

    source_style: str
    target_style: str
    inputs: Path | None = None
    outputs: Path | None = None
    tsv: Path | None = None


@dataclass(frozen=True)
class SettingSpec:
    """A hyperparameter setting of a system: its label, numeric hyperparameters and output files."""

    label: str
    hyperparameters: Mapping[str, float]
    files: tuple[FileSpec, ...]


@dataclass(frozen=True)
class SystemSpec:
    """A style-transfer system and its settings."""

    name: str
    settings: tuple[SettingSpec, ...]


@dataclass(frozen=True)
class TransfersSpec:
    """Where the transfers come from: ``published`` (+ filters), a ``table``, or ``systems``."""

    published: str | None = None
    dataset: str | None = None
    systems_filter: tuple[str, ...] | None = None
    sample: int | None = None
    table: Path | None = None
    hp_cols: tuple[str, ...] = ()
    systems: tuple[SystemSpec, ...] = ()


@dataclass(frozen=True)
class CorpusSpec:
    """A labelled training corpus: a published one, one file per style, or a table."""

    published: str | None = None
    splits: tuple[str, ...] = ("dev", "test")
    style: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    table: Path | None = None
    text_col: str = "text"
    label_col: str = "label"
    exclude_inputs: bool = True
    max_per_style: int | None = None


@dataclass(frozen=True)
class ClassifierSpec:
    """A style classifier: backend, parameters, held-out share and (optionally) its own training corpus; or, with
    ``path``, a classifier saved by tsteval (``train-classifier``) in that folder, scored as it is (``backend``: the
    one its manifest names)."""

    name: str
    backend: str
    params: Mapping[str, Any]
    heldout: float = 0.1
    corpus: CorpusSpec | None = None
    path: Path | None = None


def ready_made(name: str, text: str, base: Path | None = None) -> object:
    """The spec of a ready-made classifier for ``hf:ID_OR_DIR`` (a folder relative to ``base`` when it is one
    there), else ``text`` itself.

    >>> ready_made("formality", "hf:s-nlp/roberta-base-formality-ranker").params["model"]
    's-nlp/roberta-base-formality-ranker'
    >>> ready_made("ft", "clf/")
    'clf/'
    """
    if not text.startswith(f"{HUB}:"):
        return text
    model = text.removeprefix(f"{HUB}:").strip()
    if not model:
        raise TstevalError(f"classifier {name!r}: {text!r} names no model; give hf:HUB_ID (e.g. "
                           "hf:s-nlp/roberta-base-formality-ranker) or hf:DIR (a save_pretrained folder)")
    given = model
    if base is not None and (base / model).is_dir():
        model = str((base / model).resolve())
    from tsteval.classifiers.base import MANIFEST

    if Path(model).is_dir() and (Path(model) / MANIFEST).is_file():
        raise TstevalError(f"classifier {name!r}: {given} holds a classifier saved by tsteval ({MANIFEST}), not a "
                           f"Hugging Face model; give the folder itself: {name}: {{path: {given}}} in a manifest, "
                           f"--classifier {name}={given} in tsteval score, classifier={{{name!r}: {given!r}}} in "
                           "evaluate")
    return ClassifierSpec(name, HUB, {"model": model}, heldout=0.0)


def is_ready_made(source: object) -> bool:
    """Whether ``source`` is a ready-made classifier's spec (:func:`ready_made`)."""
    return isinstance(source, ClassifierSpec) and source.backend == HUB


@dataclass(frozen=True)
class LexiconSpec:
    """A lexicon file, or the parameters to build one from the corpus (Mir et al.: L1, C=3, D=2)."""

    file: Path | None = None
    penalty: str = "l1"
    C: float = 3.0
    D: float = 2.0


@dataclass(frozen=True)
class StyleSpec:
    """Which classifiers give style columns (``sti@NAME`` etc.)."""

    classifiers: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttributionSpec:
    """Attribution masking (``attribution-mask``/``attribution-delete``): the transformer classifier, the
    integrated-gradients steps and a file of neutral sentences for the no-style guard
    (:class:`tsteval.lexicons.attribution.AttributionMasker`)."""

    classifier: str
    steps: int = 16
    neutral: Path | None = None


@dataclass(frozen=True)
class ContentSpec:
    """Content metrics, attribution masking, human references and the metrics' parameters; ``reference_columns``:
    the profile files' columns scored against references, as (profile file, column), checked once the transfers
    are read (a table's ``reference`` column serves)."""

    metrics: tuple[str, ...] = ()
    attribution: AttributionSpec | None = None
    references: tuple[Path, ...] | str | None = None
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    reference_columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CompatibilitySpec:
    """Pair classifiers (saved folders) for HH (``hh@NAME``) and AH (``ah@NAME``, with a documents table)."""

    hh: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    ah: Mapping[str, Path] = field(default_factory=lambda: MappingProxyType({}))
    documents: Path | None = None


@dataclass(frozen=True)
class MetricsSpec:
    """All metrics of the run, per aspect."""

    style: StyleSpec = StyleSpec()
    content: ContentSpec = ContentSpec()
    naturalness: tuple[str, ...] = ()
    human: Path | None = None
    compatibility: CompatibilitySpec = CompatibilitySpec()
    joint: bool = False
    judges: tuple[str, ...] = ()


@dataclass(frozen=True)
class TradeoffSpec:
    """Scorecard columns on the tradeoff axes (style on x; content and naturalness on y)."""

    style: str | None = None
    content: str | None = None
    naturalness: str | None = None


@dataclass(frozen=True)
class CompareSpec:
    """The report's system x system significance matrices: the columns (None: the tradeoff axes and J) and the
    bootstrap resamples (None: enough for Holm over all pairs, :func:`tsteval.experiment.compare.significance.
    matrix_resamples`)."""

    metrics: tuple[str, ...] | None = None
    resamples: int | None = None


@dataclass(frozen=True)
class ReportSpec:
    """Report options."""

    worst_examples: int = 3
    bootstrap_resamples: int = N_RESAMPLES


@dataclass(frozen=True)
class MetaEvalSpec:
    """``meta_eval:``: rating columns of the transfers by aspect, baselines, resamples (see ``tsteval meta-eval``)."""

    ratings: tuple[tuple[str, str], ...]  # (column, aspect)
    baselines: Mapping[str, str] = field(default_factory=dict)
    resamples: int = N_RESAMPLES


@dataclass(frozen=True)
class Manifest:
    """A validated experiment: everything :func:`tsteval.experiment.run.runner.run_experiment` needs; ``options``: the
    run options it sets (the others at their defaults)."""

    path: Path
    name: str
    output: Path
    transfers: TransfersSpec
    corpus: CorpusSpec | None
    classifiers: Mapping[str, ClassifierSpec]
    lexicon: LexiconSpec | None
    metrics: MetricsSpec
    tradeoff: TradeoffSpec
    report: ReportSpec
    options: RunOptions
    text: str = field(repr=False, default="")
    meta_eval: MetaEvalSpec | None = None
    compare: CompareSpec | None = None

    def needs_corpus(self) -> bool:
        """Whether the shared training corpus is used (by a classifier, the lexicon builder, word2vec, the style
        erasers or the retrieve-nearest baseline)."""
        from tsteval.metrics.content.scorer import ERASE

        return (any(c.corpus is None and c.backend != HUB and c.path is None for c in self.classifiers.values())
                or (self.lexicon is not None and self.lexicon.file is None)
                or self.options.vectors == "word2vec"
                or (bool(self.metrics.content.metrics) and ERASE in self.options.modifications)
                or "retrieve-nearest" in self.options.baselines)
