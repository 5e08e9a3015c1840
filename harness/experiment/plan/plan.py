"""One plan: what to score with which resources and options, checked when it is made.

A :class:`Plan` is built from the command line (:meth:`Plan.from_args`, ``tsteval score``:
:mod:`tsteval.experiment.plan.plan_of_args`), from an experiment manifest (:meth:`Plan.from_manifest`, ``tsteval run``:
:mod:`tsteval.experiment.plan.plan_of_manifest`) or from keyword arguments (``tsteval.evaluate``).  Whatever one entry
point can score, the others can.  :func:`tsteval.experiment.run.execute.run` first gets every resource (loads or trains
the style classifiers, loads the pair classifiers, builds the lexicon, loads or trains the word vectors), so a bad
file fails before the first score, then adds every metric's columns to one :class:`~tsteval.scorecard.Scorecard`.

A style classifier is given as a saved folder, a fitted classifier, a :class:`~tsteval.classifiers.training.
TrainedClassifier` or a training spec (:class:`~tsteval.experiment.manifest.loader.ClassifierSpec`, trained on
``corpus`` through the cache).  Its identity in the signatures is the cache key of a trained one, else a hash of
its saved manifest (which records a hash of every weight file), so the same model gets the same signature
whichever way it was given.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.options import OPTIONS, RunOptions
from tsteval.metrics.resources import ResourceOptions, Resources, plain

if TYPE_CHECKING:
    from tsteval.experiment.manifest.loader import Manifest

Log = Callable[[str], None]


def silent(_message: str) -> None:
    """The default log: nothing."""


def _frozen(mapping: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Plan(RunOptions):
    """What to score: the transfers, and per aspect the metrics with the resources they need, and the run options
    (keyword-only fields inherited from :class:`~tsteval.experiment.options.RunOptions`, one per option of
    :data:`~tsteval.experiment.options.OPTIONS`).

    ``classifiers`` holds every style classifier by name (folder, fitted model, trained classifier, training
    spec, or a ready-made model's spec: :func:`~tsteval.experiment.manifest.specs.ready_made`, its labels mapped to
    styles by ``classifier_labels``); ``style`` names those whose columns (``sti@NAME`` ...) are scored (default:
    all of them).
    ``modifications`` are ``none``, ``mask``, ``remove`` (with ``lexicon``: a Lexicon, a lexicon file, or a
    :class:`~tsteval.experiment.manifest.loader.LexiconSpec` built from ``corpus``), ``attribution-mask``/
    ``attribution-delete`` (with ``attribution`` naming a transformer classifier of ``classifiers``) and ``erase``
    (embedding metrics with the style erased by LEACE erasers fitted on ``corpus``:
    :mod:`tsteval.metrics.content.erasure`).  ``vectors``: ``"glove"``, ``"word2vec"`` (trained on ``corpus``; on
    the style-masked corpus for ``mask``), a saved folder or :class:`~tsteval.metrics.content.word_vectors.WordVectors`.
    ``human``: human-written texts for the naturalness scorers (default: the inputs).  ``hh``/``ah``: pair
    classifiers (folder or fitted) by name; AH reads the transfers' ``document`` column.  ``references``: human
    references for the ``content`` metrics (columns ``metric@ref``): ``"dualrl:DATASET"`` or a list of reference
    sets (files or lists of texts, line i for item i), read and aligned with the rows when the plan is made
    (:func:`tsteval.metrics.content.references.resolve_references`); transfers with a ``reference`` column are
    scored against it as against a set given here (an empty list: no references, not even that column), and the
    first set given becomes that column of the scorecard where they have none.  ``baselines``
    (:data:`tsteval.experiment.plan.baselines.BASELINES`) add their systems' rows to the transfers when the plan is made
    (``delete-lexicon`` needs ``lexicon``, ``retrieve-nearest`` ``corpus``).  ``joint``: the J column
    (:mod:`tsteval.metrics.joint.score`): ``"auto"`` (STRAP's recipe when its columns are scored), ``"strap"``
    (required), ``"none"``, a :class:`~tsteval.metrics.joint.score.JointRecipe` or its text ``[NAME=]S,C,F``.
    ``judges``: the metrics that read input, output and target style with the causal LM ``language_model``
    (:mod:`tsteval.metrics.judges`: ``cond_lp``, ``judge_style``, ``judge_content``, ``judge_fluency``; columns
    ``NAME@MODEL``), prompted with the target style's name from ``style_labels`` (label -> name; default: the
    reader's ``extra["style_labels"]``, else the label); ``text_form``: how the transfers are written, so that every
    neural LM reads them detokenised and sentence-cased (:mod:`tsteval.core.text_form`).
    ``device`` (``cpu``, ``cuda``, ``auto``) places the sentence encoder of ``sbert`` (whose embeddings are cached
    on disk between runs) and SmolLM2; ``threads`` (torch intra-op threads; default: torch's) holds for every torch
    model of the run.
    """

    transfers: Transfers
    classifiers: Mapping[str, object] = field(default_factory=dict)
    style: tuple[str, ...] | None = None
    content: tuple[str, ...] = ()
    lexicon: object = None
    attribution: str | None = None
    attribution_steps: int = 16
    attribution_neutral: Sequence[str] | None = None
    naturalness: tuple[str, ...] = ()
    human: Sequence[str] | None = None
    hh: Mapping[str, object] = field(default_factory=dict)
    ah: Mapping[str, object] = field(default_factory=dict)
    references: object = None
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    corpus: Corpus | None = None
    bootstrap_resamples: int = N_RESAMPLES
    quiet: bool = True
    judges: tuple[str, ...] = ()
    baseline_notes: dict[str, int] = field(default_factory=dict, init=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("classifiers", "hh", "ah"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "params", _frozen({m: _frozen(p) for m, p in self.params.items()}))
        for name in ("content", "naturalness", "judges"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.style is not None:
            object.__setattr__(self, "style", tuple(self.style))
        super().__post_init__()  # the run options, each read by its option
        self.validate()
        if self.baselines:
            from tsteval.experiment.plan.baselines import add_baselines

            if "delete-lexicon" in self.baselines:
                object.__setattr__(self, "lexicon", Resources(resource_options(self)).get("lexicon").value)
            transfers, notes = add_baselines(self.transfers, self.baselines, self.lexicon, self.corpus)
            object.__setattr__(self, "transfers", transfers)
            self.baseline_notes.update(notes)
        from tsteval.metrics.content.references import has_references, resolve_references, with_reference_column

        if self.content and (self.references or (self.references is None and has_references(self.transfers))):
            references = resolve_references(self.references, self.transfers)
            object.__setattr__(self, "references", references)
            object.__setattr__(self, "transfers", with_reference_column(self.transfers, references))
        else:
            object.__setattr__(self, "references", None)

    def style_name(self, label: str) -> str:
        """What the style ``label`` means (``style_labels``, else the reader's names, else the label itself)."""
        return {**self.transfers.extra.get("style_labels", {}), **self.style_labels}.get(str(label), str(label))

    @property
    def style_names(self) -> tuple[str, ...]:
        """The classifiers whose style columns are scored."""
        return tuple(self.classifiers) if self.style is None else self.style

    def validate(self) -> None:
        """Every name known and every resource a metric needs given; one-line :class:`TstevalError` otherwise."""
        from tsteval.core.options import check_column_name
        from tsteval.experiment.manifest.specs import is_ready_made
        from tsteval.metrics import registry
        from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, CONTENT_METRICS, ERASE, erasable
        from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

        for kind in ("classifiers", "hh", "ah"):
            for name in getattr(self, kind):
                check_column_name(name, kind)
        unknown = [n for n in self.style_names if n not in self.classifiers]
        if unknown:
            raise TstevalError(f"style classifiers {unknown} are not among the classifiers {list(self.classifiers)}"
                               + "".join(did_you_mean(n, self.classifiers, f"; {n!r}: ") for n in unknown))
        hub = [n for n, c in self.classifiers.items() if is_ready_made(c)]
        stray = [n for n in self.classifier_labels if n not in hub]
        if stray:
            raise TstevalError(f"classifier_labels maps the labels of {stray[0]!r}, which is not a ready-made "
                               f"classifier of the run ({hub or 'none'}); give it as --classifier {stray[0]}=hf:MODEL "
                               "(manifest: classifiers: {NAME: {hf: MODEL}})")
        unknown = [m for m in self.content if m not in registry.names("content")]
        if unknown:
            raise TstevalError(f"unknown content metrics {unknown}; choose from {sorted(registry.names('content'))}"
                               + "".join(did_you_mean(m, registry.names("content"), f"; {m!r}: ") for m in unknown))
        unknown = [m for m in self.judges if m not in registry.METRICS or "language_model" not in
                   registry.METRICS[m].needs or registry.METRICS[m].scorer is None]
        if unknown:
            from tsteval.metrics.judges.declarations import JUDGES

            known = [m.name for m in JUDGES]
            raise TstevalError(f"unknown LM metrics {unknown}; choose from {known}"
                               + "".join(did_you_mean(m, known, f"; {m!r}: ") for m in unknown))
        for name, given in self.params.items():
            if name not in (*self.content, *self.judges):
                raise TstevalError(f"parameters for {name!r}, which is not among the content or LM metrics "
                                   f"{[*self.content, *self.judges]}")
            registry.METRICS[name].check_params(given)
        if self.content and ERASE in self.modifications:
            if self.corpus is None or len(self.corpus.styles) < 2:
                raise TstevalError("the erase modification fits a style eraser on a style-labelled corpus of at least "
                                   "2 styles: give one (--erase-style NAME=FILE per style, corpus= in evaluate, "
                                   "corpus: in a manifest)")
            if not erasable(self.content):
                raise TstevalError(f"the erase modification applies to the embedding metrics only "
                                   f"({', '.join(erasable(CONTENT_METRICS))}); none of {list(self.content)} is one")
        if self.content and any(m in ("mask", "remove") for m in self.modifications) and self.lexicon is None:
            raise TstevalError("the modifications remove/mask need a style lexicon (build one with build-lexicon)")
        if self.content and any(m in ATTRIBUTION_MODIFICATIONS for m in self.modifications) and (
                self.attribution not in self.classifiers):
            raise TstevalError("the modifications attribution-mask/attribution-delete need attribution=NAME of a "
                               "transformer style classifier among the classifiers")
        judged = [m for m in self.content if "pair_classifier" in registry.METRICS[m].needs]
        if judged and not self.hh:
            raise TstevalError(f"the content metrics {judged} are a pair classifier's judgement: give one "
                               "(--hh NAME=DIR from tsteval train-pairs; hh= in evaluate; compatibility.hh in a "
                               "manifest)")
        if "delete-lexicon" in self.baselines and self.lexicon is None:
            raise TstevalError("the delete-lexicon baseline needs a style lexicon (--lexicon FILE, manifest lexicon:)")
        if "retrieve-nearest" in self.baselines and self.corpus is None:
            raise TstevalError("the retrieve-nearest baseline needs a training corpus of the target styles "
                               "(--baseline-corpus STYLE=FILE, manifest corpus:, corpus= in evaluate)")
        unknown = [n for n in self.naturalness if n not in NATURALNESS_METRICS]
        if unknown:
            raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}"
                               + "".join(did_you_mean(n, NATURALNESS_METRICS, f"; {n!r}: ") for n in unknown))
        self._validate_engine()
        if self.references and not self.content:
            raise TstevalError("references are scored by content metrics: name some (e.g. bleu, chrf)")
        if self.ah and "document" not in self.transfers.frame.columns:
            raise TstevalError("the AH check needs the source document of each transfer: a 'document' column "
                               "(see attach_documents)")

    def _validate_engine(self) -> None:
        from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS

        if self.engine != "ray" and (self.address is not None or self.workers is not None):
            raise TstevalError("a Ray address and a number of workers need the ray engine (--engine ray, "
                               "engine: ray)")
        if self.engine == "ray" and self.content and any(m in ATTRIBUTION_MODIFICATIONS for m in self.modifications):
            raise TstevalError("the modifications attr-mask/attr-delete run on the local engine only: drop them, or "
                               "score them without --engine ray")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Plan:
        """The plan of ``tsteval score`` (:func:`tsteval.experiment.plan.plan_of_args.plan_of_args`)."""
        from tsteval.experiment.plan.plan_of_args import plan_of_args

        return plan_of_args(args)

    @classmethod
    def from_manifest(cls, manifest: Manifest, quiet: bool = True, log: Log = silent) -> Plan:
        """The plan of an experiment manifest (:func:`tsteval.experiment.plan.plan_of_manifest.plan_of_manifest`)."""
        from tsteval.experiment.plan.plan_of_manifest import plan_of_manifest

        return plan_of_manifest(manifest, quiet, log)


def resource_options(plan: Plan) -> ResourceOptions:
    """The options ``plan``'s resources are built from: its run options and its models and texts."""
    run_options = {name: plain(getattr(plan, name)) for name in OPTIONS}
    return ResourceOptions(**run_options, quiet=plan.quiet, corpus=plan.corpus, lexicon=plan.lexicon,
                           classifiers=plan.classifiers, human=plan.human,
                           pair_classifiers={**{f"hh/{n}": c for n, c in plan.hh.items()},
                                             **{f"ah/{n}": c for n, c in plan.ah.items()}},
                           transfers=plan.transfers)
