"""Human ratings carried by the transfers (``human_*`` columns): their prefix, the categorical ones, empty cells."""

from __future__ import annotations

import sys

import pandas as pd

HUMAN_PREFIX = "human_"  # columns holding human ratings of the transfers
# Ratings that are a choice, not a number: which of input and output a rater found more natural (Mir et al.).
CATEGORICAL_RATINGS = {"human_naturalness_relative": ("input", "output", "tie")}


def empty_ratings(frame: pd.DataFrame) -> dict[str, int]:
    """Per human-rating column (``human_*``), how many transfers have no rating (an empty cell)."""
    counts = {c: int(frame[c].isna().sum()) for c in frame.columns if c.startswith(HUMAN_PREFIX)}
    return {c: n for c, n in counts.items() if n}


def report_empty_ratings(frame: pd.DataFrame) -> None:
    """One line on stderr (also under ``--quiet``: it is about the data, not progress) when ratings are empty."""
    counts = empty_ratings(frame)
    if counts:
        print(f"[tsteval] human ratings: {sum(counts.values())} empty cells are no rating and are left out of the "
              f"agreement statistics ({', '.join(f'{c} {n} of {len(frame)}' for c, n in counts.items())})",
              file=sys.stderr)
