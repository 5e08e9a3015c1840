"""One plan, one runner: what to score with which resources, and :func:`run`, which scores it.

A :class:`Plan` is built from the command line (:meth:`Plan.from_args`, ``tsteval score``), from an experiment
manifest (:meth:`Plan.from_manifest`, ``tsteval run``) or from keyword arguments (``tsteval.evaluate``).
Whatever one entry point can score, the others can.  :func:`run` first gets every resource (loads or trains the
style classifiers, loads the pair classifiers, builds the lexicon, loads or trains the word vectors), so a bad
file fails before the first score, then adds every metric's columns to one :class:`~tsteval.scorecard.Scorecard`.

A style classifier is given as a saved folder, a fitted classifier, a :class:`~tsteval.classifiers.training.
TrainedClassifier` or a training spec (:class:`~tsteval.experiment.manifest.ClassifierSpec`, trained on
``corpus`` through the cache).  Its identity in the signatures is the cache key of a trained one, else a hash of
its saved manifest (which records a hash of every weight file), so the same model gets the same signature
whichever way it was given.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError
from tsteval.core.options import key_value_pairs, key_values
from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.options import OPTIONS, from_args
from tsteval.metrics.resources import ResourceOptions, Resources
from tsteval.scorecard import Scorecard

if TYPE_CHECKING:
    import pandas as pd

    from tsteval.experiment.manifest import Manifest
    from tsteval.metrics.joint.score import JointRecipe

Log = Callable[[str], None]
ENGINES = ("local", "ray")
# The J column without a recipe object: scored when STRAP's columns exist, required, or not at all.
JOINT_MODES = ("auto", "strap", "none")
# The run options tsteval score takes as flags (tsteval.experiment.options).
SCORE_OPTIONS = ("device", "threads", "seed", "folds", "ground", "modifications", "placeholder", "vectors",
                 "attribution_threshold", "baselines", "joint", "engine", "address", "workers")


def _silent(_message: str) -> None:
    """The default log: nothing."""


def _frozen(mapping: Mapping[str, object] | None) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Plan:
    """What to score: the transfers, and per aspect the metrics with the resources they need.

    ``classifiers`` holds every style classifier by name (folder, fitted model, trained classifier or training
    spec); ``style`` names those whose columns (``sti@NAME`` ...) are scored (default: all of them).
    ``modifications`` are ``none``, ``mask``, ``remove`` (with ``lexicon``: a Lexicon, a lexicon file, or a
    :class:`~tsteval.experiment.manifest.LexiconSpec` built from ``corpus``), ``attribution-mask``/
    ``attribution-delete`` (with ``attribution`` naming a transformer classifier of ``classifiers``) and ``erase``
    (embedding metrics with the style erased by LEACE erasers fitted on ``corpus``:
    :mod:`tsteval.metrics.content.erasure`).  ``vectors``: ``"glove"``, ``"word2vec"`` (trained on ``corpus``; on
    the style-masked corpus for ``mask``), a saved folder or :class:`~tsteval.metrics.content.word_vectors.WordVectors`.
    ``human``: human-written texts for the naturalness scorers (default: the inputs).  ``hh``/``ah``: pair
    classifiers (folder or fitted) by name; AH reads the transfers' ``document`` column.  ``references``: human
    references for the ``content`` metrics (columns ``metric@ref``): ``"dualrl:DATASET"`` or a list of reference
    sets (files or lists of texts, line i for item i), read and aligned with the rows when the plan is made
    (:func:`tsteval.metrics.content.references.resolve_references`).  ``baselines``
    (:data:`tsteval.experiment.baselines.BASELINES`) add their systems' rows to the transfers when the plan is made
    (``delete-lexicon`` needs ``lexicon``, ``retrieve-nearest`` ``corpus``).  ``joint``: the J column
    (:mod:`tsteval.metrics.joint.score`): ``"auto"`` (STRAP's recipe when its columns are scored), ``"strap"``
    (required), ``"none"``, a :class:`~tsteval.metrics.joint.score.JointRecipe` or its text ``[NAME=]S,C,F``.
    ``device`` (``cpu``, ``cuda``, ``auto``) places the sentence encoder of ``sbert`` (whose embeddings are cached
    on disk between runs) and SmolLM2; ``threads`` (torch intra-op threads; default: torch's) holds for every torch
    model of the run.
    """

    transfers: Transfers
    classifiers: Mapping[str, object] = field(default_factory=dict)
    style: tuple[str, ...] | None = None
    ground: str = "nominal"
    content: tuple[str, ...] = ()
    modifications: tuple[str, ...] = ("none",)
    lexicon: object = None
    vectors: object = "glove"
    placeholder: str = "<masked>"
    attribution: str | None = None
    attribution_threshold: float = 0.2
    attribution_steps: int = 16
    attribution_neutral: Sequence[str] | None = None
    naturalness: tuple[str, ...] = ()
    human: Sequence[str] | None = None
    folds: int = 5
    device: str = "cpu"
    threads: int | None = None
    hh: Mapping[str, object] = field(default_factory=dict)
    ah: Mapping[str, object] = field(default_factory=dict)
    references: object = None
    baselines: tuple[str, ...] = ()
    joint: object = "auto"
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    corpus: Corpus | None = None
    seed: int = 0
    bootstrap_resamples: int = 1000
    quiet: bool = True
    engine: str = "local"
    address: str | None = None
    workers: int | None = None
    baseline_notes: dict[str, int] = field(default_factory=dict, init=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("classifiers", "hh", "ah"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "params", _frozen({m: _frozen(p) for m, p in self.params.items()}))
        for name in ("content", "naturalness"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.style is not None:
            object.__setattr__(self, "style", tuple(self.style))
        for name, option in OPTIONS.items():  # the run options' one reader (tsteval.experiment.options)
            object.__setattr__(self, name, option.read(getattr(self, name)))
        self.validate()
        if self.baselines:
            from tsteval.experiment.baselines import add_baselines

            if "delete-lexicon" in self.baselines:
                object.__setattr__(self, "lexicon", Resources(resource_options(self)).get("lexicon").value)
            transfers, notes = add_baselines(self.transfers, self.baselines, self.lexicon, self.corpus)
            object.__setattr__(self, "transfers", transfers)
            self.baseline_notes.update(notes)
        if self.references is not None:
            from tsteval.metrics.content.references import resolve_references

            object.__setattr__(self, "references", resolve_references(self.references, self.transfers))

    @property
    def style_names(self) -> tuple[str, ...]:
        """The classifiers whose style columns are scored."""
        return tuple(self.classifiers) if self.style is None else self.style

    def validate(self) -> None:
        """Every name known and every resource a metric needs given; one-line :class:`TstevalError` otherwise."""
        from tsteval.core.options import check_column_name
        from tsteval.metrics import registry
        from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, CONTENT_METRICS, ERASE, erasable
        from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

        for kind in ("classifiers", "hh", "ah"):
            for name in getattr(self, kind):
                check_column_name(name, kind)
        unknown = [n for n in self.style_names if n not in self.classifiers]
        if unknown:
            raise TstevalError(f"style classifiers {unknown} are not among the classifiers {list(self.classifiers)}")
        unknown = [m for m in self.content if m not in registry.names("content")]
        if unknown:
            raise TstevalError(f"unknown content metrics {unknown}; choose from {sorted(registry.names('content'))}")
        for name, given in self.params.items():
            if name not in self.content:
                raise TstevalError(f"parameters for {name!r}, which is not among the content metrics "
                                   f"{list(self.content)}")
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
            raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}")
        self._validate_engine()
        if self.references is not None and not self.content:
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
        """The plan of ``tsteval score``: transfers, classifiers and options from the command line.

        Names and files are checked here, before any model is loaded; :func:`run` loads the models.
        """
        from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, check_modifications
        from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
        from tsteval.metrics.selection import content_metrics, select
        from tsteval.readers.loaders import report_empty_ratings

        transfers = _transfers_of_args(args)
        report_empty_ratings(transfers.frame)
        classifiers = key_values(args.classifier, "--classifier", "DIR", column_names=True)
        pair_classifiers = key_values(args.hh, "--hh", "DIR", column_names=True)
        metrics, params = content_metrics(m for m in args.content.split(",") if m.strip())
        options = from_args(args, SCORE_OPTIONS)
        modes = list(options["modifications"])
        names = [n.strip() for n in args.naturalness.split(",") if n.strip()]
        chosen = select((m for m in (args.metrics or "").split(",") if m.strip()), classifiers=bool(classifiers),
                        hh=bool(pair_classifiers))
        for name in metrics:
            chosen.add_content(name, params.get(name, {}))
        metrics, params = chosen.content, chosen.params
        names += [n for n in chosen.naturalness if n not in names]
        if chosen.recommended:
            from tsteval.metrics.recommended import recommended_options

            metrics, modes, names = recommended_options(metrics, modes, names, len(classifiers))
        baselines = options["baselines"]
        lexicon = None
        if args.lexicon and (metrics or "delete-lexicon" in baselines):
            from tsteval.lexicons.lexicon import Lexicon

            lexicon = Lexicon.load(args.lexicon)
        attribution = None
        corpus_files: dict[str, list[str]] = {}
        if not metrics:
            modes = ["none"]
        else:
            check_modifications(modes, "--modification")
            if ERASE in modes:
                corpus_files = _style_files(args.erase_style, "--erase-style",
                                            "--modification erase fits a style eraser on style-labelled sentences: "
                                            "give --erase-style NAME=FILE for each style (e.g. the style "
                                            "classifier's training files)")
            if any(m in ("mask", "remove") for m in modes) and lexicon is None:
                raise TstevalError("--modification remove/mask needs --lexicon FILE (build one with build-lexicon)")
            if any(m in ATTRIBUTION_MODIFICATIONS for m in modes):
                attribution = _attribution_of_args(args, classifiers)
        if not (classifiers or metrics or names or pair_classifiers or chosen.joint):
            raise TstevalError("give at least one --classifier NAME=DIR (train one with tsteval "
                               "train-classifier), --content METRICS, --naturalness NAMES or --hh NAME=DIR")
        unknown = [n for n in names if n not in NATURALNESS_METRICS]
        if unknown:
            raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}")
        from tsteval.readers import loaders

        human = None
        if names and args.human:
            human = loaders.read_lines(args.human)
        if args.baseline_corpus:  # one training corpus: --erase-style and --baseline-corpus files join by style
            for style, paths in _style_files(args.baseline_corpus, "--baseline-corpus", "").items():
                corpus_files.setdefault(style, []).extend(paths)
        corpus = loaders.load_style_files(corpus_files) if corpus_files else None
        joint = options.pop("joint")
        return cls(transfers, classifiers={n: Path(d) for n, d in classifiers.items()}, **{**options,
                   "modifications": tuple(modes), "joint": "strap" if chosen.joint and joint == "auto" else joint},
                   content=tuple(metrics), lexicon=lexicon, attribution=attribution,
                   attribution_neutral=loaders.read_lines(args.attribution_neutral) if args.attribution_neutral
                   else None, naturalness=tuple(names), human=human,
                   hh={n: Path(d) for n, d in pair_classifiers.items()},
                   references=_references_of_args(args, metrics), params=params, corpus=corpus, quiet=args.quiet)

    @classmethod
    def from_manifest(cls, manifest: Manifest, quiet: bool = True, log: Log = _silent) -> Plan:
        """The plan of an experiment manifest: its transfers and training corpus are read here; classifiers
        are trained (or taken from the cache) and the lexicon built by :func:`run`."""
        from tsteval.experiment.runner import load_corpus, load_transfers
        from tsteval.readers.loaders import report_empty_ratings

        transfers = load_transfers(manifest.transfers, manifest.seed)
        log(f"transfers: {len(transfers)} rows from {transfers.origin}")
        report_empty_ratings(transfers.frame)
        corpus = load_corpus(manifest.corpus, transfers, manifest.seed) if manifest.needs_corpus() else None
        if corpus is not None:
            log(f"training corpus: {len(corpus)} texts, styles {corpus.styles}")
        metrics = manifest.metrics
        content = metrics.content
        compatibility = metrics.compatibility
        if compatibility.documents is not None:
            transfers = attach_documents(transfers, compatibility.documents)
        from tsteval.readers import loaders

        human = None
        if metrics.human is not None:
            human = loaders.read_lines(metrics.human)
        elif corpus is not None:
            human = corpus.texts
        vectors = {"glove": "glove", "word2vec": "word2vec"}.get(content.vectors, content.vectors_dir)
        attribution = content.attribution
        references: object = None if content.references is None else list(content.references)
        if content.references == "dualrl":
            if manifest.transfers.published != "dualrl":
                raise TstevalError("metrics.content.references: dualrl needs transfers: {published: dualrl}; "
                                   "for other transfers list reference files")
            references = f"dualrl:{manifest.transfers.dataset}"
        return cls(
            transfers, classifiers=dict(manifest.classifiers), style=metrics.style.classifiers,
            ground=metrics.style.ground, content=content.metrics, modifications=content.modifications,
            lexicon=manifest.lexicon, vectors=vectors, placeholder=content.placeholder,
            attribution=attribution.classifier if attribution else None,
            attribution_threshold=attribution.threshold if attribution else 0.2,
            attribution_steps=attribution.steps if attribution else 16,
            attribution_neutral=loaders.read_lines(attribution.neutral) if attribution and attribution.neutral
            else None, naturalness=metrics.naturalness,
            human=human, folds=metrics.folds, hh=dict(compatibility.hh), ah=dict(compatibility.ah),
            references=references, baselines=manifest.baselines, params=content.params,
            joint="strap" if metrics.joint and manifest.joint == "auto" else manifest.joint, corpus=corpus,
            seed=manifest.seed, bootstrap_resamples=manifest.report.bootstrap_resamples, quiet=quiet,
            device=manifest.device, threads=manifest.threads,
            engine=manifest.engine.name, address=manifest.engine.address, workers=manifest.engine.workers)


def _style_files(given: Sequence[str], flag: str, missing: str) -> dict[str, list[str]]:
    """The files of a repeatable ``FLAG NAME=FILE`` by style (a style given twice joins its files); ``missing`` is
    the error when none is given."""
    if not given:
        raise TstevalError(missing)
    files: dict[str, list[str]] = {}
    for style, path in key_value_pairs(given, flag, "FILE"):
        files.setdefault(style, []).append(path)
    return files


def _attribution_of_args(args: argparse.Namespace, classifiers: Mapping[str, str]) -> str:
    """The ``--classifier`` NAME whose transformer attributes the attribution modifications: ``--attribution``, or
    the only transformer among the classifiers."""
    from tsteval.classifiers.base import saved_backend

    if args.attribution is not None:
        if args.attribution not in classifiers:
            raise TstevalError(f"--attribution {args.attribution!r} is not a --classifier NAME "
                               f"({sorted(classifiers)})")
        chosen = [args.attribution]
    else:
        chosen = [n for n, d in classifiers.items() if saved_backend(d) == "transformer"]
        if len(chosen) != 1:
            raise TstevalError("--modification attribution-mask/attribution-delete need one transformer style "
                               "classifier: give --classifier NAME=DIR of backend transformer (train-classifier "
                               "transformer)" + (f" and --attribution NAME to choose among {chosen}" if chosen else ""))
    if saved_backend(classifiers[chosen[0]]) != "transformer":
        raise TstevalError(f"--attribution {chosen[0]!r}: attribution masking needs a transformer classifier, and "
                           f"{classifiers[chosen[0]]} is {saved_backend(classifiers[chosen[0]])}")
    return chosen[0]


def _references_of_args(args: argparse.Namespace, metrics: Sequence[str]) -> object:
    """``--references``: files, or ``dualrl`` (the references of the ``--dualrl`` dataset)."""
    from tsteval.metrics.content.references import DUALRL_PREFIX

    given = args.references
    if not given:
        return None
    if not metrics:
        raise TstevalError("--references needs content metrics to score against them: add --content bleu,chrf,...")
    if given == [DUALRL_PREFIX]:
        if not args.dualrl:
            raise TstevalError("--references dualrl gives the DualRL references of --dualrl DATASET; for other "
                               "transfers give reference files (line i: a reference for item i)")
        return f"{DUALRL_PREFIX}:{args.dualrl}"
    return [Path(f) for f in given]


# The flags of ``tsteval score`` that set the reader keywords, for the fixes in error messages.
SCORE_HINTS = {"split": "--split", "table_format": "--table-format", "source_style": "--source-style",
               "target_style": "--target-style", "system": "--system", "setting": "--setting"}


def _transfers_of_args(args: argparse.Namespace) -> Transfers:
    from tsteval.readers import loaders, published

    meta = {"system": args.system, "setting": args.setting}
    if args.pairs or args.tsv:
        if args.source_style is None or args.target_style is None:
            raise TstevalError("--pairs and --tsv need --source-style and --target-style")
        meta.update(source_style=args.source_style, target_style=args.target_style)
    if args.pairs:
        return loaders.load_parallel_files(args.pairs[0], args.pairs[1], **meta)
    if args.tsv:
        return loaders.load_tsv_transfers(args.tsv, **meta)
    if args.table or args.hf:
        constants = {"source_style": args.source_style, "target_style": args.target_style, **meta}
        if args.table:
            return loaders.load_table_transfers(args.table, table_format=args.table_format, hints=SCORE_HINTS,
                                                **constants)
        return loaders.load_hf_transfers(args.hf, split=args.split, hints=SCORE_HINTS, **constants)
    if args.mir:
        return published.load_mir()
    if args.dualrl:
        return published.load_dualrl(args.dualrl)
    raise TstevalError("give the transfers: --pairs INPUTS OUTPUTS, --tsv FILE, --table FILE, --hf DATASET, --mir "
                       "or --dualrl")


def attach_documents(transfers: Transfers, path: str | Path) -> Transfers:
    """``transfers`` with a ``document`` column from a table of (item, document): the source document of each
    item's input, which the AH check compares the output with."""
    from tsteval.readers.loaders import read_table

    documents = read_table(path).frame
    missing = {"item", "document"} - set(documents.columns)
    if missing:
        raise TstevalError(f"{path} lacks the columns {sorted(missing)}")
    documents = documents.astype({"item": str}).drop_duplicates("item").set_index("item")["document"]
    frame = transfers.frame.copy()
    frame["document"] = frame["item"].astype(str).map(documents)
    if frame["document"].isna().any():
        item = frame.loc[frame["document"].isna(), "item"].iloc[0]
        raise TstevalError(f"{path} has no document for item {item!r}")
    return Transfers(frame, transfers.origin)


@dataclass
class Run:
    """What :func:`execute` produced: the scorecard, the empty/OOV policy counts per content column, and the
    resources it used (trained classifiers by name, the lexicon), for the run's metadata."""

    card: Scorecard
    policy: dict[str, dict[str, int]] = field(default_factory=dict)
    trained: dict[str, object] = field(default_factory=dict)
    lexicon: object = None
    corpus_references: pd.DataFrame | None = None
    joint: JointRecipe | None = None


def _attributed(card: Scorecard, classifier: object, plan: Plan) -> dict[str, tuple[list[str], list[str]]]:
    """Input and output texts of every attribution modification; integrated gradients run once per text."""
    from tsteval.lexicons.attribution import AttributionMasker
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS

    frame = card.frame
    texts = sorted(set(frame["input"]) | set(frame["output"]))
    results = AttributionMasker(classifier, threshold=plan.attribution_threshold,
                                n_steps=plan.attribution_steps).attributions(texts)
    out = {}
    for label, mode in ATTRIBUTION_MODIFICATIONS.items():
        if label in plan.modifications:
            masker = AttributionMasker(classifier, threshold=plan.attribution_threshold, mode=mode,
                                       placeholder=plan.placeholder, n_steps=plan.attribution_steps,
                                       neutral_texts=plan.attribution_neutral)
            rendered = dict(zip(texts, masker.render(masker.remask(results)), strict=True))
            out[label] = ([rendered[t] for t in frame["input"]], [rendered[t] for t in frame["output"]])
    return out


def execute(plan: Plan, log: Log = _silent) -> Run:
    """Score ``plan``: every resource first (loaded, trained or built), then the per-sentence columns (style and
    content: :func:`~tsteval.experiment.sentences.score_sentences`, here or on Ray with ``engine="ray"``), then
    what needs whole groups of rows (references' corpus scores, naturalness, pair classifiers); torch runs on
    ``plan.threads`` threads throughout (every neural model)."""
    from tsteval.core.devices import torch_threads

    with torch_threads(plan.threads):
        return _execute(plan, log)


def resource_options(plan: Plan) -> ResourceOptions:
    """The options ``plan``'s resources are built from."""
    return ResourceOptions(device=plan.device, threads=plan.threads, seed=plan.seed, quiet=plan.quiet,
                           vectors=plan.vectors, placeholder=plan.placeholder, corpus=plan.corpus, lexicon=plan.lexicon,
                           classifiers=plan.classifiers, human=plan.human,
                           pair_classifiers={**{f"hh/{n}": c for n, c in plan.hh.items()},
                                             **{f"ah/{n}": c for n, c in plan.ah.items()}},
                           transfers=plan.transfers)


def _execute(plan: Plan, log: Log) -> Run:
    """:func:`execute` inside its thread setting."""
    from tsteval.classifiers.corpus_checks import warn
    from tsteval.experiment.sentences import SentenceJob, score_sentences
    from tsteval.metrics import registry
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, erasable
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.style.scorer import swapped_labels_warning

    result = Run(Scorecard.from_transfers(plan.transfers))
    card = result.card
    if plan.baselines:
        log(f"baselines: {', '.join(plan.baselines)} added as systems"
            + "".join(f"; {name}: {n} inputs made only of style words became <deleted>"
                      for name, n in plan.baseline_notes.items() if n))
    resources = Resources(resource_options(plan), log)
    models = {name: (built.value, built.identity) for name in plan.classifiers
              for built in [resources.get("style_classifier", name)]}
    result.trained = resources.trained
    pairs = {key: resources.get("pair_classifier", key) for key in resources.options.pair_classifiers}
    if plan.lexicon is not None:
        result.lexicon = resources.get("lexicon").value
        log(f"lexicon: {len(result.lexicon.words)} style words from {result.lexicon.origin}")
    content = tuple(m for m in plan.content if "pair_classifier" not in registry.METRICS[m].needs)
    for modification in plan.modifications:  # every resource built (or refused) before any score
        for name in erasable(content) if modification == ERASE else content:
            resources.scorer_arguments(registry.METRICS[name], modification, erase=modification == ERASE)
    job = SentenceJob(models={name: models[name] for name in plan.style_names}, ground=plan.ground,
                      content=content, modifications=plan.modifications, lexicon=result.lexicon,
                      placeholder=plan.placeholder, resources=resources, params=plan.params)
    if plan.engine == "ray":
        from tsteval.experiment.ray_engine import score_sentences_on_ray

        scores = score_sentences_on_ray(card, job, address=plan.address, workers=plan.workers, quiet=plan.quiet,
                                        log=log)
    else:
        attributed = {}
        if content and any(m in ATTRIBUTION_MODIFICATIONS for m in plan.modifications):
            attributed = _attributed(card, models[plan.attribution][0], plan)
        scores = score_sentences(card, job, attributed=attributed, log=log)
    result.policy |= scores.policy
    for name, hits in scores.hits.items():
        swapped = swapped_labels_warning(card.frame["input"].tolist(), card.frame["target_style"].tolist(), hits,
                                         name)
        if swapped is not None:
            warn(swapped)
    if plan.references is not None:
        from tsteval.metrics.content.references import score_references

        start = time.perf_counter()
        counts, result.corpus_references = score_references(card, content, plan.references, resources=resources,
                                                            params=plan.params)
        result.policy |= counts
        log(f"content @ref ({len(plan.references)} references): {', '.join(content)} in "
            f"{time.perf_counter() - start:.1f} s")
    for name in plan.naturalness:
        start = time.perf_counter()
        NATURALNESS_METRICS[name](card, plan.human, plan.seed, plan.folds, device=plan.device, threads=plan.threads)
        log(f"naturalness {name} in {time.perf_counter() - start:.1f} s")
    if pairs:
        from tsteval.metrics.compatibility.compliancy import match_probability
    for metric, names, texts in (("hh", plan.hh, "input"), ("ah", plan.ah, "document")):
        rows = list(zip(card.frame[texts], card.frame["output"], strict=True)) if names else []
        for name in names:
            built = pairs[f"{metric}/{name}"]
            probability = match_probability(built.value, rows)
            columns = [metric] + (["hh_content"] if metric == "hh" and "hh_content" in plan.content else [])
            for column in columns:
                card.add(f"{column}@{name}", probability,
                         str(registry.METRICS[column].signature(clf=f"{name}-{built.identity}")))
    result.joint = _joint(plan, card, log)
    return result


def _joint(plan: Plan, card: Scorecard, log: Log) -> JointRecipe | None:
    """Score the J column of ``plan.joint`` (see :class:`Plan`); the recipe used, or None."""
    from tsteval.metrics.joint.score import missing_for_strap, score_joint, strap_recipe

    if plan.joint == "none":
        return None
    recipe = plan.joint
    if recipe in ("auto", "strap"):
        recipe = strap_recipe(card, plan.style_names)
        if recipe is None:
            missing = missing_for_strap(card, plan.style_names)
            if plan.joint == "strap":
                raise TstevalError(f"the joint score (STRAP's J) needs {' and '.join(missing)}; score them or give "
                                   "a J recipe STYLE,CONTENT,FLUENCY")
            log(f"joint score J not computed: STRAP's recipe needs {' and '.join(missing)}")
            return None
    column = score_joint(card, recipe)
    log(f"joint score {column} = {recipe.style} x {recipe.content} x {recipe.fluency}")
    return recipe


def run(plan: Plan, log: Log | None = None) -> Scorecard:
    """Score ``plan`` into one scorecard (see :func:`execute`); ``log`` gets progress lines (default: stderr
    unless the plan is quiet)."""
    if log is None:
        log = _silent if plan.quiet else (lambda message: print(f"[tsteval] {message}", file=sys.stderr))
    return execute(plan, log).card
