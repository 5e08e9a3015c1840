"""What a transformers tokenizer cut: the ids of texts at a ``max_length`` and, per text, whether it was longer.

A fast tokenizer keeps what it cut as each encoding's overflow (no second pass); a slow one has none, so a text is
cut when it has more than ``max_length`` tokens at ``max_length + 1`` (the special tokens kept either way).
:mod:`tsteval.metrics.truncation` counts these per scorecard column.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def cut_ids(tokenizer: object, texts: Sequence[str] | Sequence[Sequence[str]], max_length: int,
            **options: object) -> tuple[list[list[int]], np.ndarray]:
    """``tokenizer``'s ids of ``texts`` cut at ``max_length`` (special tokens included) and, per text, whether it
    was cut; ``options`` go to the tokenizer (``is_split_into_words=True`` for texts given as their words)."""
    batch = tokenizer(list(texts), truncation=True, max_length=max_length, **options)
    if batch.encodings is not None:
        cut = [bool(encoding.overflowing) for encoding in batch.encodings]
    else:
        longer = tokenizer(list(texts), truncation=True, max_length=max_length + 1, **options)["input_ids"]
        cut = [len(ids) > max_length for ids in longer]
    return batch["input_ids"], np.array(cut, dtype=bool)
