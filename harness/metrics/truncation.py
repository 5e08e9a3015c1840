"""Nothing cut silently: what a model with a length limit did not read, counted per scorecard column.

A model that reads at most N tokens of a text (the sentence encoder: 256 word pieces; BERTScore: 512; the transformer
style classifier: its ``max_length``; text-CNN: its ``max_len`` words; a causal LM: its context) scores a longer
text from its start.  Each such column's count goes into the run's policy counts beside the empty/OOV ones
(``policy.json``; ``Scorecard.policy`` from :func:`tsteval.evaluate`): ``n_truncated``, the rows whose score read a
cut text, and ``max_tokens``, the limit.  Every metric with a cut row gets one warning line (:func:`notices`), which
the run keeps for every file a user reads (``Run.notice``).  The limits are tabled in ``docs/measures.md``.

>>> cut_counts(np.array([True, False, True]), 32)
{'n_truncated': 2, 'max_tokens': 32}
>>> notices({"sbert@none": {"n_truncated": 2, "max_tokens": 256}, "bleu@none": {"n_both_empty": 0}}, 5)
... # doctest: +NORMALIZE_WHITESPACE
['sbert: 2 of 5 rows of sbert@none read a text cut at the model's limit of 256 tokens (only its start is scored;
 n_truncated in policy.json)']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

TRUNCATED, LIMIT = "n_truncated", "max_tokens"


def cut_counts(cut: np.ndarray | Sequence[bool], limit: int) -> dict[str, int]:
    """A column's policy counts for a model that reads ``limit`` tokens: how many rows (``cut``: per row, whether it
    read a cut text) were cut, and the limit."""
    return {TRUNCATED: int(np.count_nonzero(np.asarray(cut, dtype=bool))), LIMIT: int(limit)}


def summed(parts: Sequence[Mapping[str, int]]) -> dict[str, int]:
    """One column's policy counts from several blocks of its rows: the counts added, the limit kept (one model).

    >>> summed([{"n_one_empty": 1, "n_truncated": 2, "max_tokens": 256}, {"n_one_empty": 0, "n_truncated": 1,
    ...         "max_tokens": 256}])
    {'n_one_empty': 1, 'n_truncated': 3, 'max_tokens': 256}
    """
    total: dict[str, int] = {}
    for counts in parts:
        for key, value in counts.items():
            total[key] = max(total.get(key, 0), value) if key == LIMIT else total.get(key, 0) + value
    return total


def notices(policy: Mapping[str, Mapping[str, int]], rows: int) -> list[str]:
    """One warning line per metric (the part of a column before ``@``) with a column that read cut texts, naming
    each such column's count of its ``rows`` and the limit."""
    parts: dict[str, list[tuple[str, int, int]]] = {}
    for column, counts in policy.items():
        if counts.get(TRUNCATED, 0):
            parts.setdefault(column.split("@")[0], []).append((column, counts[TRUNCATED], counts[LIMIT]))
    lines = []
    for metric, cut in parts.items():
        limits = {limit for _, _, limit in cut}
        where = ", ".join(f"{n} of {rows} rows of {column}" + ("" if len(limits) == 1 else f" (limit {limit})")
                          for column, n, limit in cut)
        limit = f"the model's limit of {limits.pop()} tokens" if len(limits) == 1 else "the model's limit"
        lines.append(f"{metric}: {where} read a text cut at {limit} (only its start is scored; n_truncated in "
                     "policy.json)")
    return lines
