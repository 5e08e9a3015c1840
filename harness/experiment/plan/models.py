"""Style and pair classifiers of a run, loaded from a folder, trained through the cache, or taken as given, each
with its identity for the signatures (the builders of the ``style_classifier`` and ``pair_classifier`` resources
of :mod:`tsteval.metrics.resources`).

A classifier's identity is the cache key of a trained one, else a hash of its saved manifest (which records a hash
of every weight file), so the same model gets the same signature whichever way it was given.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash
from tsteval.metrics.resources import Resources

CLASSIFIER_MANIFEST = "tsteval-classifier.json"
PAIR_MANIFEST = "tsteval-pair-classifier.json"


def saved_identity(model: object, manifest: str) -> str:
    """The identity of a fitted model: the hash of the manifest it saves (which hashes every weight file)."""
    with tempfile.TemporaryDirectory(prefix="tsteval-id-") as tmp:
        model.save(Path(tmp) / "model")
        return manifest_hash(Path(tmp) / "model", manifest)


def manifest_hash(directory: Path, manifest: str) -> str:
    """A short hash of a saved model's manifest file, naming the model in signatures."""
    return content_hash((Path(directory) / manifest).read_text(), length=8)


def rounded(value: float | None) -> str:
    """A printed score: three decimals (``none`` without one)."""
    return "none" if value is None else f"{value:.3f}"


def style_model(resources: Resources, name: str, source: object) -> tuple[object, str]:
    """The style classifier ``name`` and its identity, loaded, trained (through the cache) or as given; a trained
    one is recorded in ``resources.trained``."""
    from tsteval.classifiers.base import backend_class, load_classifier
    from tsteval.classifiers.training import TrainedClassifier, train_classifier
    from tsteval.experiment.manifest.loader import ClassifierSpec

    options = resources.options
    if isinstance(source, (str, Path)):
        model = load_classifier(source, expected_classes=None)
        if hasattr(model, "verbose"):
            model.verbose = not options.quiet
        return model, manifest_hash(Path(source), CLASSIFIER_MANIFEST)
    if isinstance(source, ClassifierSpec):
        params = dict(source.params)
        if "verbose" in backend_class(source.backend)._get_param_names():  # neural backends and the ensemble
            params.setdefault("verbose", not options.quiet)
        corpus = options.corpus
        if source.corpus is not None:  # classifiers sharing a corpus spec share the loaded corpus
            from tsteval.experiment.manifest.files import load_corpus

            corpora = resources.__dict__.setdefault("corpora", {})
            if repr(source.corpus) not in corpora:
                corpora[repr(source.corpus)] = load_corpus(source.corpus, options.transfers, options.seed)
            corpus = corpora[repr(source.corpus)]
        if corpus is None:
            raise TstevalError(f"classifier {name!r} is to be trained ({source.backend}) but the plan has no corpus")
        start = time.perf_counter()
        backend = source.backend
        source = train_classifier(backend, corpus, params, seed=options.seed, heldout=source.heldout)
        resources.log(f"classifier {name} ({backend}): {'cache hit' if source.cached else 'trained'} "
                      f"{source.key} in {time.perf_counter() - start:.1f} s, held-out accuracy "
                      f"{rounded(source.report.get('accuracy'))}")
    if isinstance(source, TrainedClassifier):
        resources.trained[name] = source
        return source.model, source.key
    if not hasattr(source, "predict_proba") or not hasattr(source, "classes_"):
        raise TstevalError(f"classifier {name!r} must be a saved folder, a fitted tsteval classifier, a trained "
                           f"classifier or a training spec, not {type(source).__name__}")
    return source, saved_identity(source, CLASSIFIER_MANIFEST)


def pair_model(source: object) -> tuple[object, str]:
    """A pair classifier and its identity, loaded from its folder or as given."""
    if isinstance(source, (str, Path)):
        from tsteval.classifiers.pairs import load_pair_classifier

        return load_pair_classifier(source), manifest_hash(Path(source), PAIR_MANIFEST)
    return source, saved_identity(source, PAIR_MANIFEST)
