"""The learned content metric out of set, the hook of ``learned_content.yaml``: each rated set is scored by a model
trained on every other set but those that share a text with it (:func:`tsteval.metrics.learned.learn.
train_metric` with ``exclude=[the set]``; one model per held-out group, kept in the cache).  The engine judges the
columns; the meta-evaluation refuses a learned model on a set it was trained on, and this hook asserts the same."""

from __future__ import annotations

import numpy as np


def out_of_set(data: object, *, seed: int, shape: str) -> dict[str, np.ndarray]:
    """``{learned@SHAPE-loso: score}`` of every row of the set ``data``, by the model trained (the default recipe of
    ``tsteval train-metric``, seeded) without its group."""
    from tsteval import evaluate
    from tsteval.metrics.learned.folder import load, refuse_in_set
    from tsteval.metrics.learned.learn import train_metric
    from tsteval.metrics.learned.training import Recipe

    name = data.entry.name
    folder = load(train_metric("content", None, recipe=Recipe(shape=shape, seed=seed), exclude=[name]))
    refuse_in_set(folder, data.frame["input"].astype(str).tolist(), data.frame["output"].astype(str).tolist(),
                  data.entry.label, name)
    card = evaluate(transfers=data.transfers, metrics=["learned"], learned=str(folder.path), threads=2)
    return {f"learned@{shape}-loso": card.frame["learned@none"].to_numpy(dtype=float)}
