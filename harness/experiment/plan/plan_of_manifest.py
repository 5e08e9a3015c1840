"""The plan of an experiment manifest (``tsteval run``): a :class:`~tsteval.experiment.manifest.loader.Manifest`
read into a :class:`~tsteval.experiment.plan.plan.Plan`, and the source documents of the AH check attached to the
transfers."""

from __future__ import annotations

from pathlib import Path

from tsteval.core.errors import TstevalError
from tsteval.core.records import Transfers
from tsteval.experiment.manifest.loader import Manifest
from tsteval.experiment.options import option_values
from tsteval.experiment.plan.plan import Log, Plan, silent


def plan_of_manifest(manifest: Manifest, quiet: bool = True, log: Log = silent) -> Plan:
    """The plan of an experiment manifest: its transfers and training corpus are read here; classifiers are trained
    (or taken from the cache) and the lexicon built by :func:`~tsteval.experiment.run.execute.run`."""
    from tsteval.experiment.manifest.files import load_corpus, load_transfers
    from tsteval.metaeval.profile_file import check_references
    from tsteval.metrics.content.references import has_references
    from tsteval.readers.ratings import report_empty_ratings

    options = manifest.options
    transfers = load_transfers(manifest.transfers, options.seed)
    log(f"transfers: {len(transfers)} rows from {transfers.origin}")
    if "sample" in transfers.extra:
        log(transfers.extra["sample"]["text"])
    report_empty_ratings(transfers.frame)
    corpus = load_corpus(manifest.corpus, transfers, options.seed) if manifest.needs_corpus() else None
    if corpus is not None:
        log(f"training corpus: {len(corpus)} texts, styles {corpus.styles}")
    metrics = manifest.metrics
    content = metrics.content
    compatibility = metrics.compatibility
    if compatibility.documents is not None:
        transfers = attach_documents(transfers, compatibility.documents)
    from tsteval.readers import lines

    human = None
    if metrics.human is not None:
        human = lines.read_lines(metrics.human)
    elif corpus is not None:
        human = corpus.texts
    attribution = content.attribution
    references: object = None if content.references is None else list(content.references)
    if content.references == "dualrl":
        if manifest.transfers.published != "dualrl":
            raise TstevalError("metrics.content.references: dualrl needs transfers: {published: dualrl}; "
                               "for other transfers list reference files")
        references = f"dualrl:{manifest.transfers.dataset}"
    # a saved classifier (path: DIR) is its folder, as --classifier NAME=DIR gives it
    classifiers = {name: spec.path or spec for name, spec in manifest.classifiers.items()}
    check_references(content.reference_columns, references is not None or has_references(transfers))
    return Plan(
        transfers, classifiers=classifiers, style=metrics.style.classifiers, content=content.metrics,
        lexicon=manifest.lexicon, attribution=attribution.classifier if attribution else None,
        attribution_steps=attribution.steps if attribution else 16,
        attribution_neutral=lines.read_lines(attribution.neutral) if attribution and attribution.neutral
        else None, naturalness=metrics.naturalness, human=human, hh=dict(compatibility.hh),
        ah=dict(compatibility.ah), references=references, params=content.params, corpus=corpus,
        bootstrap_resamples=manifest.report.bootstrap_resamples, quiet=quiet, judges=metrics.judges,
        **{**option_values(options), "joint": "strap" if metrics.joint and options.joint == "auto" else options.joint})


def attach_documents(transfers: Transfers, path: str | Path) -> Transfers:
    """``transfers`` with a ``document`` column from a table of (item, document): the source document of each
    item's input, which the AH check compares the output with."""
    from tsteval.readers.tables import read_table

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
