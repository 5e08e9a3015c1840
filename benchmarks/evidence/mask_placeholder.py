"""The hooks of ``mask_placeholder.yaml``: Mir et al.'s published lexicon masked with other placeholders, the rows
with a masked word, and how much masking raises the MiniLM cosine.

Placeholders the shared tokenizer does not keep as one token (MiniLM's ``[MASK]``, a neutral word) are put in place of
tsteval's ``<masked>`` after masking, and the texts scored by the ``sbert`` scorer as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

DEFAULT = "<masked>"


def _masked(frame: pd.DataFrame) -> tuple[object, list[str], list[str]]:
    """Mir's lexicon and the set's inputs and outputs with its words masked."""
    from tsteval.core.datapaths import dataset_dir
    from tsteval.lexicons.lexicon import Lexicon
    from tsteval.lexicons.modify import modify_texts

    lexicon = Lexicon.load(dataset_dir("mir2019") / "style_lexicon" / "style_words_and_weights.json")
    return lexicon, *(modify_texts(frame[c].astype(str).tolist(), lexicon, "mask") for c in ("input", "output"))


def masked_words(frame: pd.DataFrame) -> np.ndarray:
    """How many words of Mir's lexicon each pair has masked, input and output together."""
    _, inputs, outputs = _masked(frame)
    return np.array([a.split().count(DEFAULT) + b.split().count(DEFAULT) for a, b in zip(inputs, outputs,
                                                                                          strict=True)])


def placeholders(data: object, *, seed: int, tokens: Sequence[str]) -> dict[str, np.ndarray]:
    """``sbert`` with Mir's lexicon removed (``sbert@remove``) and masked by ``<masked>`` and by each of ``tokens``
    (``sbert@mask[TOKEN]``)."""
    from tsteval.metrics.content.scorer import score_content
    from tsteval.metrics.resources import ResourceOptions, Resources
    from tsteval.scorecard import Scorecard

    card = Scorecard.from_transfers(data.transfers)
    lexicon, inputs, outputs = _masked(data.frame)
    resources = Resources(ResourceOptions(seed=seed, precision="fp32"))
    score_content(card, ["sbert"], modification="remove", lexicon=lexicon, resources=resources)
    for token in (DEFAULT, *tokens):
        modified = ([t.replace(DEFAULT, token) for t in inputs], [t.replace(DEFAULT, token) for t in outputs])
        score_content(card, ["sbert"], modification="mask", lexicon=lexicon, modified=modified, tag=token,
                      resources=resources)
    return {c: card.frame[c].to_numpy(dtype=float) for c in card.metrics}


def with_masked_word(data: object) -> np.ndarray:
    """The rows of pairs with at least one masked word."""
    return masked_words(data.frame) > 0


def without_masked_word(data: object) -> np.ndarray:
    """The rows of pairs with no masked word."""
    return masked_words(data.frame) == 0


def rises(scores: pd.DataFrame, sets: Mapping[str, object]) -> list[dict]:
    """On the first set, each ``sbert`` column's mean cosine, its mean rise over ``sbert@none`` and the Pearson r of
    that rise with the pair's masked words."""
    from tsteval.metaeval.statistics import correlation

    label = next(iter(sets))
    rows = scores[scores["set"] == label].reset_index(drop=True)
    counts = masked_words(sets[label].frame)
    base = rows["sbert@none"].to_numpy(dtype=float)
    out = []
    for column in (c for c in rows.columns if c.startswith("sbert@")):
        values = rows[column].to_numpy(dtype=float)
        rise = values - base
        out.append({"column": column, "set": label, "mean cosine": float(values.mean()),
                    "mean rise over sbert@none": float(rise.mean()) if column != "sbert@none" else "—",
                    "r(rise, masked words)": correlation(rise, counts) if column != "sbert@none" else "—"})
    return out
