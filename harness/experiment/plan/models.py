"""Style and pair classifiers of a run, loaded from a folder, trained through the cache, or taken as given, each
with its identity for the signatures (the builders of the ``style_classifier`` and ``pair_classifier`` resources
of :mod:`tsteval.metrics.resources`).

A classifier's identity is the content hash of its saved files (:func:`~tsteval.classifiers.base.saved_identity`),
whichever way it was given: a folder (saved by ``train-classifier`` or copied anywhere), a model trained through
the cache (its cached folder) or a fitted object (saved to a temporary folder first), so byte-identical models share
a signature and different ones never do.  A ready-made one (``hf:ID_OR_DIR``:
:func:`~tsteval.experiment.manifest.specs.ready_made`, :mod:`tsteval.classifiers.hub`) is named by its model and
the sha256 of its weights.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.specs import is_ready_made
from tsteval.metrics.resources import Resources


def rounded(value: float | None) -> str:
    """A printed score: three decimals (``none`` without one)."""
    return "none" if value is None else f"{value:.3f}"


def hub_model(resources: Resources, name: str, params: Mapping[str, object]) -> tuple[object, str]:
    """The ready-made classifier ``name`` loaded for the run's styles on its device and precision, and its
    identity (:func:`tsteval.classifiers.hub.hub_identity`)."""
    from tsteval.classifiers.hub import HubClassifier, hub_identity

    options = resources.options
    frame = options.transfers.frame if options.transfers is not None else None
    if frame is None:
        raise TstevalError(f"classifier {name!r} is ready-made: its styles are the run's, and the run has no "
                           "transfers")
    styles = sorted({str(s) for column in ("source_style", "target_style") for s in frame[column]})
    names = {**options.transfers.extra.get("style_labels", {}), **options.style_labels}
    labels = options.classifier_labels.get(name)
    start = time.perf_counter()
    model = HubClassifier.from_params({**params, "labels": dict(labels) if labels else None,
                                       "device": options.device, "precision": options.precision,
                                       "verbose": not options.quiet}).ready(styles, names, name)
    identity = hub_identity(model.model, model.label_map_, model.precision_)
    resources.log(f"classifier {name}: ready-made {identity} on {model.device_} in "
                  f"{time.perf_counter() - start:.1f} s")
    return model, identity


def style_model(resources: Resources, name: str, source: object) -> tuple[object, str]:
    """The style classifier ``name`` and its identity, loaded, trained (through the cache) or as given; a trained
    one is recorded in ``resources.trained``."""
    from tsteval.classifiers.base import backend_class, fitted_identity, load_classifier, saved_identity, with_precision
    from tsteval.classifiers.training import TrainedClassifier, train_classifier
    from tsteval.experiment.manifest.loader import ClassifierSpec

    options = resources.options
    if is_ready_made(source):
        return hub_model(resources, name, source.params)
    if isinstance(source, (str, Path)):
        model = load_classifier(source, expected_classes=None)
        if hasattr(model, "verbose"):
            model.verbose = not options.quiet
        return model, saved_identity(source)
    if isinstance(source, ClassifierSpec):
        params = dict(source.params)
        if options.precision != "auto":  # a pinned precision holds for what the run trains too (docs/precision.md)
            params = with_precision(source.backend, params, options.precision)
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
        return source.model, source.identity
    if not hasattr(source, "predict_proba") or not hasattr(source, "classes_"):
        raise TstevalError(f"classifier {name!r} must be a saved folder, a fitted tsteval classifier, a trained "
                           f"classifier or a training spec, not {type(source).__name__}")
    return source, fitted_identity(source)


def pair_model(source: object) -> tuple[object, str]:
    """A pair classifier and its identity, loaded from its folder or as given."""
    from tsteval.classifiers.base import fitted_identity, saved_identity

    if isinstance(source, (str, Path)):
        from tsteval.classifiers.pairs import PAIR_MANIFEST, load_pair_classifier

        return load_pair_classifier(source), saved_identity(source, PAIR_MANIFEST)
    return source, fitted_identity(source)
