"""Leakage guards, counted before any score: scored outputs (and references) that a style classifier was trained
on, whose ``target_acc`` is then training accuracy, and references identical to the output of the system they are
scored against: ``reference_is_output`` counts, per system, the rows whose output equals one of the row's
references (an ordinary system may match a human rewrite now and then), and ``own_reference`` names, per system,
the reference sets equal to its output on every one of its rows (DualRL's ``Human1`` is ``reference1``): its
``@ref`` scores compare a text with itself, and that is warned about.

The classifier's training texts are known through the hash set saved beside it
(:mod:`tsteval.classifiers.training_texts`); a classifier without one (saved by an older tsteval, or ready-made:
:mod:`tsteval.classifiers.hub`) counts as ``"unknown"``.  Rows of the baseline systems (``baseline:NAME``) are
tsteval's own and are not counted.  :func:`leakage` returns the counts (written to ``leakage.json`` by both
``tsteval score`` and ``tsteval run``, and to ``run.json``) and one warning line per finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tsteval.classifiers.training_texts import normalised, overlap
from tsteval.experiment.manifest.specs import HUB
from tsteval.scorecard import Scorecard

LEAKAGE_FILE = "leakage.json"
UNKNOWN = "unknown"
BASELINE_PREFIX = "baseline:"


@dataclass
class Leakage:
    """The counts (JSON-ready) and the warning lines."""

    counts: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def leakage(card: Scorecard, classifiers: Mapping[str, object],
            references: Sequence[Sequence[str]] | None = None, learned: object = None) -> Leakage:
    """Count, over the rows of ``card`` that are not baselines: per classifier of ``classifiers`` (name -> fitted
    model, its ``training_texts_`` the hash set or None), the scored outputs and the distinct references in its
    training texts; per system, the rows whose output equals one of its references (normalised as the hash set);
    for a ``learned`` metric (:class:`~tsteval.metrics.learned.folder.LearnedFolder`), the pairs whose input or
    output it was trained on (its score there is a training score)."""
    frame = card.frame
    keep = ~frame["system"].astype(str).str.startswith(BASELINE_PREFIX).to_numpy()
    outputs = frame["output"].to_numpy()[keep].tolist()
    distinct = sorted({t for refs in references for t, k in zip(refs, keep, strict=True) if k}) if references else []
    result = Leakage({"rows": len(outputs), "classifiers": {}})
    for name, model in classifiers.items():
        digests = getattr(model, "training_texts_", None)
        entry: dict[str, object] = {"outputs": len(outputs), "outputs_in_training": _count(outputs, digests)}
        if references:
            entry |= {"references": len(distinct), "references_in_training": _count(distinct, digests)}
        result.counts["classifiers"][name] = entry
        if digests is None:
            why = ("is ready-made (trained elsewhere: see its model card for its training data)"
                   if getattr(model, "backend", None) == HUB else
                   "records no hash set of its training texts (saved by an older tsteval)")
            result.warnings.append(f"leakage: classifier {name} {why}: how many scored outputs it was trained on is "
                                   "unknown")
            continue
        found = entry["outputs_in_training"]
        if found:
            result.warnings.append(f"leakage: {found:,} of {len(outputs):,} scored outputs are in the training texts "
                                   f"of classifier {name} (its target_acc there is training accuracy)")
        if references and entry["references_in_training"]:
            result.warnings.append(f"leakage: {entry['references_in_training']:,} of {len(distinct):,} references "
                                   f"are in the training texts of classifier {name}")
    if learned is not None:
        result.counts["learned"], line = _learned(frame, keep, learned)
        result.warnings += [line] if line else []
    if references:
        same, own = _reference_is_output(card, references, keep)
        result.counts |= {"reference_is_output": same, "own_reference": own}
        for system, sets in own.items():
            result.warnings.append(f"leakage: system {system}'s outputs equal its own reference (set "
                                   f"{', '.join(map(str, sets))}) on {same[system]:,} rows: its @ref scores compare a "
                                   "text with itself")
    return result


def _learned(frame: object, keep: Sequence[bool], learned: object) -> tuple[dict[str, object], str | None]:
    """The learned metric's count of scored pairs with a text in its training data, and the warning line."""
    from tsteval.metrics.learned.folder import in_training

    kept = np.asarray(keep, dtype=bool)
    seen = int(in_training(learned, frame["input"].astype(str)[kept], frame["output"].astype(str)[kept]).sum())
    counts = {"identity": learned.identity, "sets": learned.sets, "pairs": int(kept.sum()), "pairs_in_training": seen}
    line = (f"leakage: {seen:,} of {int(kept.sum()):,} scored pairs have their input or output in the training data of "
            f"the learned metric {learned.identity} (trained on {', '.join(learned.sets)}): its score there is a "
            "training score") if seen else None
    return counts, line


def _count(texts: Sequence[str], digests: frozenset[bytes] | None) -> int | str:
    found = overlap(texts, digests)
    return UNKNOWN if found is None else found


def _reference_is_output(card: Scorecard, references: Sequence[Sequence[str]], keep: Sequence[bool]
                         ) -> tuple[dict[str, int], dict[str, list[int]]]:
    """Per system (with at least one), the rows whose output equals one of the row's references; per system
    (with one), the reference sets (0-based) equal to its output on every one of its rows."""
    columns = [[normalised(t) for t in refs] for refs in references]
    counts: dict[str, int] = {}
    matched: dict[str, list[int]] = {}  # per system and reference set: rows that match
    size: dict[str, int] = {}
    for row, (system, output) in enumerate(zip(card.frame["system"].astype(str), card.frame["output"], strict=True)):
        if not keep[row]:
            continue
        size[system] = size.get(system, 0) + 1
        hits = [normalised(output) == refs[row] for refs in columns]
        matched.setdefault(system, [0] * len(columns))
        matched[system] = [m + h for m, h in zip(matched[system], hits, strict=True)]
        if any(hits):
            counts[system] = counts.get(system, 0) + 1
    own = {system: [k for k, m in enumerate(sets) if m == size[system]] for system, sets in matched.items()}
    return counts, {system: sets for system, sets in own.items() if sets}
