"""Style columns of the scorecard: STI (signed EMD), normalised STI and the older baselines.

The classifier is run once per distinct text (inputs repeat across every setting of a system), and
the per-sentence formulas in :mod:`tsteval.metrics.style.intensity` are applied to the whole batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tsteval.core.errors import LabelMismatchError, did_you_mean
from tsteval.failures import answered_outputs
from tsteval.metrics.style.declarations import STYLE
from tsteval.metrics.style.intensity import (
    normalized_sti,
    signed_emd,
    target_accuracy,
    target_log_odds,
    target_probability,
)
from tsteval.scorecard import Scorecard

STYLE_METRICS = tuple(m.name for m in STYLE)
STRENGTH = next(m for m in STYLE if m.name == "style_strength")
# A classifier that calls more than this share of (at least this many) inputs their target style: a warning.
SWAPPED_SHARE = 0.5
SWAPPED_MIN_INPUTS = 20
# The style metrics that read the input's probabilities besides the output's.
READ_INPUT = ("sti", "sti_norm")


def predict_unique(classifier: object, texts: Sequence[str]) -> np.ndarray:
    """``predict_proba`` of each text, computing each distinct text only once."""
    unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return classifier.predict_proba(list(unique))[inverse]


def class_indices(classifier: object, styles: Sequence[str], column: str) -> np.ndarray:
    """Index of each style in ``classifier.classes_``; a style the classifier never saw is an error, which names a
    known style that differs only in case or spelling (then the data, not the training, is to fix)."""
    classes = [str(c) for c in classifier.classes_]
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted(set(styles) - set(index))
    if unknown:
        hints = "".join(did_you_mean(s, classes, f"; {s!r}: ") for s in unknown)
        fix = f"; write each style as the classifier names it{hints}" if hints else \
            "; train it on a corpus with these styles"
        raise LabelMismatchError(f"{column} has the styles {unknown}, which the style classifier was not "
                                 f"trained on (it knows {classes}){fix}")
    return np.array([index[s] for s in styles], dtype=np.int64)


def swapped_labels_warning(inputs: Sequence[str], target_styles: Sequence[str], hits: np.ndarray,
                           name: str) -> str | None:
    """A warning when classifier ``name`` assigns most inputs to their *target* style, else None.

    ``hits[i]``: the classifier's most probable class for input i is its target style (what
    :func:`style_columns` returns).  Rule: of the distinct (input, target style) pairs, more than ``SWAPPED_SHARE``
    are hits, and there are at least ``SWAPPED_MIN_INPUTS`` of them.

    >>> swapped_labels_warning(["a"] * 30, ["pos"] * 30, np.ones(30, dtype=bool), "c") is None  # one distinct pair
    True
    """
    first = np.array(list({(text, str(t)): i for i, (text, t) in enumerate(zip(inputs, target_styles, strict=True))}
                          .values()), dtype=np.int64)
    n_hits = int(np.asarray(hits, dtype=bool)[first].sum())
    if len(first) < SWAPPED_MIN_INPUTS or n_hits <= SWAPPED_SHARE * len(first):
        return None
    return (f"style classifier {name!r} assigns {n_hits} of {len(first)} inputs ({n_hits / len(first):.0%}) to their "
            f"target style (warned when more than {SWAPPED_SHARE:.0%} of at least {SWAPPED_MIN_INPUTS} inputs are): "
            "its style labels are probably swapped, or the source and target styles are given the wrong way round")


def style_truncation(card: Scorecard, classifier: object, name: str) -> dict[str, dict[str, int]]:
    """Per style column of the classifier ``name``, how many rows read a text it cuts at its length limit
    (:mod:`tsteval.metrics.truncation`; :data:`READ_INPUT` read the input and the output, the others the output);
    nothing for a classifier that reads every text whole (no ``length_limit``, as a scikit-learn pipeline)."""
    from tsteval.metrics.truncation import cut_counts

    limit = getattr(classifier, "length_limit", None)
    if limit is None:
        return {}
    cut = {}
    for side in ("input", "output"):
        unique, inverse = np.unique(card.frame[side].to_numpy(dtype=object), return_inverse=True)
        cut[side] = classifier.truncated(list(unique))[inverse]
    return {f"{m.name}@{name}": cut_counts(cut["output"] | cut["input"] if m.name in READ_INPUT else cut["output"],
                                           limit) for m in STYLE}


def style_columns(card: Scorecard, classifier: object, name: str, *, model_id: str,
                  ground: str = "nominal") -> np.ndarray:
    """Add ``sti@name``, ``sti_norm@name``, ``target_prob@name``, ``style_strength@name`` (the log-odds of the same
    probabilities) and ``target_acc@name`` to ``card``; return, per row, whether the classifier's most probable class
    for the input is its target style (the rows are scored independently, so any slice of the transfers gets the
    same values; :func:`swapped_labels_warning` reads the returned flags of all rows).

    ``model_id`` identifies the trained classifier in the signatures (e.g. its cache key).  An empty output (a
    system's failure) is scored as not transferred: the classifier reads the input in its place
    (:mod:`tsteval.failures`).
    """
    frame = card.frame
    target = class_indices(classifier, frame["target_style"].tolist(), "target_style")
    class_indices(classifier, frame["source_style"].tolist(), "source_style")
    p_in = predict_unique(classifier, frame["input"].tolist())
    p_out = predict_unique(classifier, answered_outputs(frame))  # a failed output scores as not transferred
    classes = ",".join(str(c) for c in classifier.classes_)
    values = {
        "sti": signed_emd(p_in, p_out, target, ground=ground),
        "sti_norm": normalized_sti(p_in, p_out, target, ground=ground),
        "target_prob": target_probability(p_out, target),
        "style_strength": target_log_odds(p_out, target, clip=float(STRENGTH.settings["clip"])),
        "target_acc": target_accuracy(p_out, target),
    }
    for metric in STYLE:
        run = {"ground": ground} if "ground" in metric.settings else {}
        card.add(f"{metric.name}@{name}", values[metric.name],
                 str(metric.signature(**run, clf=f"{name}-{model_id}", classes=classes)))
    return p_in.argmax(axis=1) == target


def score_style(card: Scorecard, classifier: object, name: str, *, model_id: str,
                ground: str = "nominal") -> str | None:
    """Add the style columns (:func:`style_columns`) to ``card``; return :func:`swapped_labels_warning` of the
    inputs (None when the classifier looks the right way round)."""
    hits = style_columns(card, classifier, name, model_id=model_id, ground=ground)
    return swapped_labels_warning(card.frame["input"].tolist(), card.frame["target_style"].tolist(), hits, name)
