"""The learned metrics out of set, hooks of the evidence pages: each rated set is scored by a model trained on every
other set but those sharing a text with it (``train_metric(..., exclude=[the set])``, one model per held-out group,
cached), refused if it saw one of the set's texts."""

from __future__ import annotations

import numpy as np


def _model(data: object, aspect: str, recipe: object) -> tuple[object, list[str], list[str]]:
    """The model of ``aspect`` trained without the group of ``data``'s set, and the set's inputs and outputs."""
    from tsteval.metrics.learned.folder import load, refuse_in_set
    from tsteval.metrics.learned.learn import train_metric

    name = data.entry.name
    folder = load(train_metric(aspect, None, recipe=recipe, exclude=[name]))
    inputs, outputs = data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist()
    refuse_in_set(folder, inputs, outputs, data.entry.label, name)
    return folder, inputs, outputs


def content(data: object, *, seed: int, shape: str) -> dict[str, np.ndarray]:
    """``{learned@SHAPE-loso: score}`` of every row of the set ``data``, by the content model (the default recipe
    of ``tsteval train-metric``, seeded), through the ``learned`` metric."""
    from tsteval import evaluate
    from tsteval.metrics.learned.training import Recipe

    folder = _model(data, "content", Recipe(shape=shape, seed=seed))[0]
    card = evaluate(transfers=data.transfers, metrics=["learned"], learned=str(folder.path), threads=2)
    return {f"learned@{shape}-loso": card.frame["learned@none"].to_numpy(dtype=float)}


def naturalness(data: object, *, seed: int, epochs: int) -> dict[str, np.ndarray]:
    """``{learned@single-loso: score}`` of every row of the set ``data``, by the ``single`` model (the output read
    alone; ``epochs`` epochs, held-out early stopping, seeded)."""
    from tsteval.metrics.learned.folder import LearnedScorer
    from tsteval.metrics.learned.training import Recipe

    folder, inputs, outputs = _model(data, "naturalness", Recipe(shape="single", epochs=epochs, seed=seed))
    return {"learned@single-loso": LearnedScorer(folder, threads=2).scores(inputs, outputs)[0]}
