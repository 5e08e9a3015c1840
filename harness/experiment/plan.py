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
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from tsteval.core.errors import TstevalError
from tsteval.core.options import key_values
from tsteval.core.records import Corpus, Transfers
from tsteval.core.signature import content_hash
from tsteval.scorecard import Scorecard

if TYPE_CHECKING:
    import pandas as pd

    from tsteval.experiment.manifest import Manifest

Log = Callable[[str], None]
CLASSIFIER_MANIFEST = "tsteval-classifier.json"
PAIR_MANIFEST = "tsteval-pair-classifier.json"


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
    :class:`~tsteval.experiment.manifest.LexiconSpec` built from ``corpus``) and ``attr-mask``/``attr-delete``
    (with ``attribution`` naming a transformer classifier of ``classifiers``).  ``vectors``: ``"glove"``,
    ``"word2vec"`` (trained on ``corpus``; on the style-masked corpus for ``mask``), a saved folder or
    :class:`~tsteval.metrics.content.word_vectors.WordVectors`.  ``human``: human-written texts for the
    naturalness scorers (default: the inputs).  ``hh``/``ah``: pair classifiers (folder or fitted) by name; AH
    reads the transfers' ``document`` column.  ``references``: human references for the ``content`` metrics
    (columns ``metric@ref``): ``"dualrl:DATASET"`` or a list of reference sets (files or lists of texts, line i
    for item i), read and aligned with the rows when the plan is made
    (:func:`tsteval.metrics.content.references.resolve_references`).  ``device`` (``cpu``, ``cuda``, ``auto``)
    places the sentence encoder of ``sbert`` (whose embeddings are cached on disk between runs); ``threads``
    (torch intra-op threads; default: torch's) holds for every torch model of the run.
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
    naturalness: tuple[str, ...] = ()
    human: Sequence[str] | None = None
    folds: int = 5
    hh: Mapping[str, object] = field(default_factory=dict)
    ah: Mapping[str, object] = field(default_factory=dict)
    references: object = None
    corpus: Corpus | None = None
    seed: int = 0
    bootstrap_resamples: int = 1000
    quiet: bool = True
    device: str = "cpu"
    threads: int | None = None

    def __post_init__(self) -> None:
        for name in ("classifiers", "hh", "ah"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        for name in ("content", "modifications", "naturalness"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.style is not None:
            object.__setattr__(self, "style", tuple(self.style))
        self.validate()
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
        from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, MODIFICATION_MODES
        from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
        from tsteval.metrics.style.intensity import GROUND_KINDS

        for kind in ("classifiers", "hh", "ah"):
            for name in getattr(self, kind):
                check_column_name(name, kind)
        unknown = [n for n in self.style_names if n not in self.classifiers]
        if unknown:
            raise TstevalError(f"style classifiers {unknown} are not among the classifiers {list(self.classifiers)}")
        if self.ground not in GROUND_KINDS:
            raise TstevalError(f"ground must be one of {list(GROUND_KINDS)}, not {self.ground!r}")
        unknown = [m for m in self.content if m not in registry.names("content")]
        if unknown:
            raise TstevalError(f"unknown content metrics {unknown}; choose from {sorted(registry.names('content'))}")
        modes = [*MODIFICATION_MODES, *ATTRIBUTION_MODIFICATIONS]
        bad = [m for m in self.modifications if m not in modes]
        if bad:
            raise TstevalError(f"unknown modifications {bad}; choose from {sorted(modes)}")
        if self.content and any(m in ("mask", "remove") for m in self.modifications) and self.lexicon is None:
            raise TstevalError("the modifications remove/mask need a style lexicon (build one with build-lexicon)")
        if self.content and any(m in ATTRIBUTION_MODIFICATIONS for m in self.modifications) and (
                self.attribution not in self.classifiers):
            raise TstevalError("the modifications attr-mask/attr-delete need attribution=NAME of a transformer "
                               "style classifier among the classifiers")
        unknown = [n for n in self.naturalness if n not in NATURALNESS_METRICS]
        if unknown:
            raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}")
        if self.folds < 2:
            raise TstevalError(f"folds must be at least 2, not {self.folds}")
        from tsteval.metrics.content.sentence_embedding import DEVICES, check_threads

        if self.device not in DEVICES and not str(self.device).startswith("cuda:"):
            raise TstevalError(f"device must be one of {list(DEVICES)} (or cuda:N), not {self.device!r}")
        check_threads(self.threads)
        if self.references is not None and not self.content:
            raise TstevalError("references are scored by content metrics: name some (e.g. bleu, chrf)")
        if self.ah and "document" not in self.transfers.frame.columns:
            raise TstevalError("the AH check needs the source document of each transfer: a 'document' column "
                               "(see attach_documents)")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Plan:
        """The plan of ``tsteval score``: transfers, classifiers and options from the command line.

        Names and files are checked here, before any model is loaded; :func:`run` loads the models.
        """
        from tsteval.metrics import registry
        from tsteval.metrics.content.scorer import MODIFICATION_MODES
        from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
        from tsteval.readers.loaders import report_empty_ratings

        transfers = _transfers_of_args(args)
        report_empty_ratings(transfers.frame)
        classifiers = key_values(args.classifier, "--classifier", "DIR", column_names=True)
        pair_classifiers = key_values(args.hh, "--hh", "DIR", column_names=True)
        metrics = [m.strip() for m in args.content.split(",") if m.strip()]
        modes: list[str] = ["none"]
        lexicon = None
        if metrics:
            content = registry.names("content")
            unknown = [m for m in metrics if m not in content]
            if unknown:
                raise TstevalError(f"unknown content metrics {unknown}; choose from {sorted(content)}")
            modes = [m.strip() for m in args.modification.split(",") if m.strip()]
            bad = [m for m in modes if m not in MODIFICATION_MODES]
            if bad:
                raise TstevalError(f"unknown modifications {bad}; choose from {sorted(MODIFICATION_MODES)}")
            if any(m != "none" for m in modes):
                if not args.lexicon:
                    raise TstevalError("--modification remove/mask needs --lexicon FILE (build one with "
                                       "build-lexicon)")
                from tsteval.lexicons.lexicon import Lexicon

                lexicon = Lexicon.load(args.lexicon)
        if not (classifiers or metrics or args.naturalness or pair_classifiers):
            raise TstevalError("give at least one --classifier NAME=DIR (train one with tsteval "
                               "train-classifier), --content METRICS, --naturalness NAMES or --hh NAME=DIR")
        names = [n.strip() for n in args.naturalness.split(",") if n.strip()]
        unknown = [n for n in names if n not in NATURALNESS_METRICS]
        if unknown:
            raise TstevalError(f"unknown naturalness scorers {unknown}; choose from {list(NATURALNESS_METRICS)}")
        human = None
        if names and args.human:
            from tsteval.readers import loaders

            human = loaders.read_lines(args.human)
        vectors = args.vectors if args.vectors == "glove" else Path(args.vectors)
        return cls(transfers, classifiers={n: Path(d) for n, d in classifiers.items()}, ground=args.ground,
                   content=tuple(metrics), modifications=tuple(modes), lexicon=lexicon, vectors=vectors,
                   placeholder=args.placeholder, naturalness=tuple(names), human=human, folds=args.folds,
                   hh={n: Path(d) for n, d in pair_classifiers.items()},
                   references=_references_of_args(args, metrics), seed=args.seed, quiet=args.quiet,
                   device=args.device, threads=args.threads)

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
        human = None
        if metrics.human is not None:
            from tsteval.readers import loaders

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
            attribution_steps=attribution.steps if attribution else 16, naturalness=metrics.naturalness,
            human=human, folds=metrics.folds, hh=dict(compatibility.hh), ah=dict(compatibility.ah),
            references=references, corpus=corpus,
            seed=manifest.seed, bootstrap_resamples=manifest.report.bootstrap_resamples, quiet=quiet,
            device=manifest.device, threads=manifest.threads)


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


def _saved_identity(model: object, manifest: str) -> str:
    """The identity of a fitted model: the hash of the manifest it saves (which hashes every weight file)."""
    with tempfile.TemporaryDirectory(prefix="tsteval-id-") as tmp:
        model.save(Path(tmp) / "model")
        return _manifest_hash(Path(tmp) / "model", manifest)


def _manifest_hash(directory: Path, manifest: str) -> str:
    """A short hash of a saved model's manifest file, naming the model in signatures."""
    return content_hash((Path(directory) / manifest).read_text(), length=8)


def _style_model(plan: Plan, name: str, source: object, log: Log, trained: dict[str, object],
                 corpora: dict[str, Corpus]) -> tuple[object, str]:
    """A style classifier and its identity, loaded, trained (through the cache) or as given."""
    from tsteval.classifiers.base import load_classifier
    from tsteval.classifiers.training import TrainedClassifier, train_classifier
    from tsteval.experiment.manifest import ClassifierSpec

    if isinstance(source, (str, Path)):
        model = load_classifier(source, expected_classes=None)
        if hasattr(model, "verbose"):
            model.verbose = not plan.quiet
        return model, _manifest_hash(Path(source), CLASSIFIER_MANIFEST)
    if isinstance(source, ClassifierSpec):
        params = dict(source.params)
        if source.backend in {"textcnn", "transformer"}:
            params.setdefault("verbose", not plan.quiet)
        corpus = plan.corpus
        if source.corpus is not None:  # classifiers sharing a corpus spec share the loaded corpus
            from tsteval.experiment.runner import load_corpus

            if repr(source.corpus) not in corpora:
                corpora[repr(source.corpus)] = load_corpus(source.corpus, plan.transfers, plan.seed)
            corpus = corpora[repr(source.corpus)]
        if corpus is None:
            raise TstevalError(f"classifier {name!r} is to be trained ({source.backend}) but the plan has no corpus")
        start = time.perf_counter()
        backend = source.backend
        source = train_classifier(backend, corpus, params, seed=plan.seed, heldout=source.heldout)
        log(f"classifier {name} ({backend}): {'cache hit' if source.cached else 'trained'} "
            f"{source.key} in {time.perf_counter() - start:.1f} s, held-out accuracy "
            f"{_rounded(source.report.get('accuracy'))}")
    if isinstance(source, TrainedClassifier):
        trained[name] = source
        return source.model, source.key
    if not hasattr(source, "predict_proba") or not hasattr(source, "classes_"):
        raise TstevalError(f"classifier {name!r} must be a saved folder, a fitted tsteval classifier, a trained "
                           f"classifier or a training spec, not {type(source).__name__}")
    return source, _saved_identity(source, CLASSIFIER_MANIFEST)


def _rounded(value: float | None) -> str:
    """A printed score: three decimals (``none`` without one)."""
    return "none" if value is None else f"{value:.3f}"


def _pair_model(source: object) -> tuple[object, str]:
    if isinstance(source, (str, Path)):
        from tsteval.classifiers.pairs import load_pair_classifier

        return load_pair_classifier(source), _manifest_hash(Path(source), PAIR_MANIFEST)
    return source, _saved_identity(source, PAIR_MANIFEST)


def _lexicon(plan: Plan) -> object:
    from tsteval.experiment.manifest import LexiconSpec

    source = plan.lexicon
    if isinstance(source, (str, Path)):
        source = LexiconSpec(file=Path(source))
    if not isinstance(source, LexiconSpec):
        return source
    from tsteval.lexicons.builder import build_lexicon
    from tsteval.lexicons.lexicon import Lexicon

    if source.file is not None:
        return Lexicon.load(source.file)
    if plan.corpus is None:
        raise TstevalError("building a lexicon needs a training corpus")
    return build_lexicon(plan.corpus, penalty=source.penalty, C=source.C, D=source.D, seed=plan.seed)


class _Vectors:
    """The word vectors of each modification, each loaded or trained once."""

    def __init__(self, plan: Plan, lexicon: object) -> None:
        self.plan = plan
        self.lexicon = lexicon
        self.cache: dict[str, object] = {}

    def get(self, modification: str) -> object:
        from tsteval.metrics.content.word_vectors import WordVectors, load_glove, train_word2vec

        source = self.plan.vectors
        if isinstance(source, WordVectors):
            return source
        key = "mask" if source == "word2vec" and modification == "mask" else "plain"
        if key not in self.cache:
            if source == "glove":
                self.cache[key] = load_glove()
            elif source == "word2vec":
                if self.plan.corpus is None:
                    raise TstevalError("word2vec vectors are trained on the corpus, and the plan has none")
                texts = self.plan.corpus.texts
                if key == "mask":
                    from tsteval.lexicons.modify import modify_texts

                    texts = modify_texts(texts, self.lexicon, "mask", self.plan.placeholder)
                self.cache[key] = train_word2vec(texts, seed=self.plan.seed)
            else:
                self.cache[key] = WordVectors.load(Path(source))
        return self.cache[key]


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
                                       placeholder=plan.placeholder, n_steps=plan.attribution_steps)
            rendered = dict(zip(texts, masker.render(masker.remask(results)), strict=True))
            out[label] = ([rendered[t] for t in frame["input"]], [rendered[t] for t in frame["output"]])
    return out


def _encoder(plan: Plan, log: Log) -> object:
    """The run's sentence encoder (on ``plan.device``, ``plan.threads``) when a content metric needs one."""
    from tsteval.metrics import registry

    if not any("sentence_encoder" in registry.METRICS[m].needs for m in plan.content):
        return None
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder

    encoder = SentenceEncoder(device=plan.device, threads=plan.threads)
    log(f"sentence encoder on {encoder.device}, {plan.threads or 'default'} threads; cache {encoder.cache.folder}")
    return encoder


def execute(plan: Plan, log: Log = _silent) -> Run:
    """Score ``plan``: every resource first (loaded, trained or built), then every metric into one scorecard;
    torch runs on ``plan.threads`` threads throughout (every neural model)."""
    from tsteval.metrics.content.sentence_embedding import torch_threads

    with torch_threads(plan.threads):
        return _execute(plan, log)


def _execute(plan: Plan, log: Log) -> Run:
    from tsteval.classifiers.corpus_checks import warn
    from tsteval.metrics import registry
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, modified_texts, score_content
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS
    from tsteval.metrics.style.scorer import score_style

    result = Run(Scorecard.from_transfers(plan.transfers))
    card = result.card
    corpora: dict[str, Corpus] = {}
    models = {name: _style_model(plan, name, source, log, result.trained, corpora)
              for name, source in plan.classifiers.items()}
    hh = {name: _pair_model(source) for name, source in plan.hh.items()}
    ah = {name: _pair_model(source) for name, source in plan.ah.items()}
    if plan.lexicon is not None:
        result.lexicon = _lexicon(plan)
        log(f"lexicon: {len(result.lexicon.words)} style words from {result.lexicon.origin}")
    vectors = _Vectors(plan, result.lexicon)
    needs_vectors = any("word_vectors" in registry.METRICS[m].needs for m in plan.content)
    if needs_vectors:
        for modification in plan.modifications:
            vectors.get(modification)

    for name in plan.style_names:
        model, identity = models[name]
        swapped = score_style(card, model, name, model_id=identity, ground=plan.ground)
        if swapped is not None:
            warn(swapped)
    encoder = _encoder(plan, log)
    if plan.content:
        attributed = {}
        if any(m in ATTRIBUTION_MODIFICATIONS for m in plan.modifications):
            attributed = _attributed(card, models[plan.attribution][0], plan)
        texts = {m: attributed.get(m) or modified_texts(card, m, result.lexicon, plan.placeholder)
                 for m in plan.modifications}
        if encoder is not None:  # one encode over every text any modification needs
            start = time.perf_counter()
            encoder.prefetch([t for pair in texts.values() for side in pair for t in side])
            log(f"sentence encoder: {encoder.encoded} texts encoded on {encoder.device} in "
                f"{time.perf_counter() - start:.1f} s ({len(encoder.rows)} distinct; the rest from the cache)")
        for modification in plan.modifications:
            start = time.perf_counter()
            counts = score_content(card, plan.content, modification=modification, lexicon=result.lexicon,
                                   placeholder=plan.placeholder, modified=attributed.get(modification),
                                   texts=texts[modification], encoder=encoder,
                                   word_vectors=vectors.get(modification) if needs_vectors else None)
            result.policy |= counts
            flagged = {c: {k: v for k, v in n.items() if v} for c, n in counts.items() if any(n.values())}
            log(f"content @{modification}: {', '.join(plan.content)} in {time.perf_counter() - start:.1f} s"
                + (f"; empty/OOV policy applied: {flagged}" if flagged else ""))
    if plan.references is not None:
        from tsteval.metrics.content.references import score_references

        start = time.perf_counter()
        counts, result.corpus_references = score_references(
            card, plan.content, plan.references, word_vectors=vectors.get("none") if needs_vectors else None,
            encoder=encoder)
        result.policy |= counts
        log(f"content @ref ({len(plan.references)} references): {', '.join(plan.content)} in "
            f"{time.perf_counter() - start:.1f} s")
    for name in plan.naturalness:
        start = time.perf_counter()
        NATURALNESS_METRICS[name](card, plan.human, plan.seed, plan.folds)
        log(f"naturalness {name} in {time.perf_counter() - start:.1f} s")
    if hh or ah:
        from tsteval.metrics.compatibility.compliancy import match_probability
    for metric, models_, texts in (("hh", hh, "input"), ("ah", ah, "document")):
        pairs = list(zip(card.frame[texts], card.frame["output"], strict=True)) if models_ else []
        for name, (model, identity) in models_.items():
            card.add(f"{metric}@{name}", match_probability(model, pairs),
                     str(registry.METRICS[metric].signature(clf=f"{name}-{identity}")))
    return result


def run(plan: Plan, log: Log | None = None) -> Scorecard:
    """Score ``plan`` into one scorecard (see :func:`execute`); ``log`` gets progress lines (default: stderr
    unless the plan is quiet)."""
    if log is None:
        log = _silent if plan.quiet else (lambda message: print(f"[tsteval] {message}", file=sys.stderr))
    return execute(plan, log).card
