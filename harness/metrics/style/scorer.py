"""Style columns of the scorecard: STI (signed EMD), normalised STI and the older baselines.

The classifier is run once per distinct text (inputs repeat across every setting of a system), and
the per-sentence formulas in :mod:`tsteval.metrics.style.intensity` are applied to the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.core.errors import LabelMismatchError
from tsteval.metrics.style.declarations import STYLE
from tsteval.metrics.style.intensity import normalized_sti, signed_emd, target_accuracy, target_probability
from tsteval.scorecard import Scorecard

STYLE_METRICS = tuple(m.name for m in STYLE)


def predict_unique(classifier: object, texts: Sequence[str]) -> np.ndarray:
    """``predict_proba`` of each text, computing each distinct text only once."""
    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return classifier.predict_proba(list(unique))[inverse]


def class_indices(classifier: object, styles: Sequence[str], column: str) -> np.ndarray:
    """Index of each style in ``classifier.classes_``; a style the classifier never saw is an error."""
    classes = [str(c) for c in classifier.classes_]
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(styles) - set(index))
    if unknown:
        raise LabelMismatchError(f"{column} has the styles {unknown}, which the style classifier was not "
                                 f"trained on (it knows {classes}); train it on a corpus with these styles")
    return np.array([index[s] for s in styles], dtype=np.int64)


def score_style(card: Scorecard, classifier: object, name: str, *, model_id: str,
                ground: str = "nominal") -> None:
    """Add ``sti@name``, ``sti_norm@name``, ``target_prob@name`` and ``target_acc@name`` to ``card``.

    ``model_id`` identifies the trained classifier in the signatures (e.g. its cache key).
    """
    frame = card.frame
    target = class_indices(classifier, frame["target_style"].tolist(), "target_style")
    class_indices(classifier, frame["source_style"].tolist(), "source_style")
    p_in = predict_unique(classifier, frame["input"].tolist())
    p_out = predict_unique(classifier, frame["output"].tolist())
    classes = ",".join(str(c) for c in classifier.classes_)
    values = {
        "sti": signed_emd(p_in, p_out, target, ground=ground),
        "sti_norm": normalized_sti(p_in, p_out, target, ground=ground),
        "target_prob": target_probability(p_out, target),
        "target_acc": target_accuracy(p_out, target),
    }
    for metric in STYLE:
        run = {"ground": ground} if "ground" in metric.params else {}
        card.add(f"{metric.name}@{name}", values[metric.name],
                 str(metric.signature(**run, clf=f"{name}-{model_id}", classes=classes)))
