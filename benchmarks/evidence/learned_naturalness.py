"""The learned naturalness metric out of set, the hook of ``learned_naturalness.yaml``: each rated set's outputs
are scored by a ``single`` model (the output read alone) trained on the other sets' fluency and naturalness ratings
(:func:`tsteval.metrics.learned.learn.train_metric` with ``exclude=[the set]``, kept in the cache).  It is not a
registered metric: the page decides whether one is offered."""

from __future__ import annotations

import numpy as np


def out_of_set(data: object, *, seed: int, epochs: int) -> dict[str, np.ndarray]:
    """``{learned@single-loso: score}`` of every row of the set ``data``, by the model trained (``epochs`` epochs,
    held-out early stopping, seeded) without its group."""
    from tsteval.metrics.learned.folder import LearnedScorer, load, refuse_in_set
    from tsteval.metrics.learned.learn import train_metric
    from tsteval.metrics.learned.training import Recipe

    name = data.entry.name
    folder = load(train_metric("naturalness", None, recipe=Recipe(shape="single", epochs=epochs, seed=seed),
                               exclude=[name]))
    inputs, outputs = data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist()
    refuse_in_set(folder, inputs, outputs, data.entry.label, name)
    return {"learned@single-loso": LearnedScorer(folder, threads=2).scores(inputs, outputs)[0]}
