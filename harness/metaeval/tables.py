"""The tables of a meta-evaluation: the metric columns judged and the rating columns they are judged against, the
default baselines, the ratings joined to a scorecard, and the result (:class:`MetaEvaluation`: metaeval.csv,
baseline.csv, counts.csv).  The statistics are :mod:`tsteval.metaeval.statistics`'s, the run that fills the tables
:func:`tsteval.metaeval.engine.meta_evaluate`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, TstevalError, quote
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import Scorecard

RATING_ASPECTS = ("style", "content", "naturalness")
# The metric aspects judged against a rating of each aspect (a pair classifier judges content).
JUDGED_BY = {"style": ("style",), "content": ("content", "compatibility"), "naturalness": ("naturalness",)}
# Default baseline per rating aspect: the first match, in this order.  An entry with "@" is a column name, one
# without is a metric name of the registry.  ``ppl`` is exp(-mean token log-probability): the length-normalised
# LM score on a monotone scale (equal Spearman and Kendall; Pearson differs).
BASELINES: Mapping[str, tuple[str, ...]] = {
    "style": ("target_prob",),
    "content": ("bleu@none", "bleu"),
    "naturalness": ("lp_mean", "mean_logprob", "ppl@kn3", "ppl"),
}
TABLE_COLUMNS = ["metric", "source", "rating", "aspect", "level", "method", "r", "lo", "hi", "n", "n_inputs",
                 "n_groups", "direction"]
BASELINE_COLUMNS = ["metric", "source", "baseline", "rating", "aspect", "level", "method", "r", "r_baseline", "diff",
                    "lo", "hi", "williams_t", "p", "verdict", "n"]


@dataclass(frozen=True)
class MetricColumn:
    """A column to judge: its aspect and direction (from the registry, or given for published scores)."""

    column: str
    aspect: str
    higher_is_better: bool
    source: str = "tsteval"


@dataclass(frozen=True)
class Rating:
    """A human rating column and the aspect it judges."""

    column: str
    aspect: str


def parse_rating(text: str, origin: str = "--rating") -> Rating:
    """``ASPECT=COLUMN`` (e.g. ``content=human_content_src``) as a :class:`Rating`."""
    aspect, sep, column = text.partition("=")
    if not sep or not column or aspect not in RATING_ASPECTS:
        raise TstevalError(f"{origin} {text!r}: expected ASPECT=COLUMN with ASPECT one of {list(RATING_ASPECTS)}, "
                           "e.g. content=human_content")
    return Rating(column, aspect)


def registered_columns(card: Scorecard) -> list[MetricColumn]:
    """The scorecard's metric columns that the registry knows, with their aspect and direction."""
    out = []
    for column in card.metrics:
        metric = find_metric(column, card.signatures.get(column))
        if metric is not None:
            out.append(MetricColumn(column, metric.aspect, metric.higher_is_better))
    return out


def default_baseline(aspect: str, columns: Sequence[MetricColumn]) -> str | None:
    """The first column matching :data:`BASELINES` of ``aspect`` among tsteval's ``columns``, else None."""
    ours = [c for c in columns if c.source == "tsteval"]
    for wanted in BASELINES.get(aspect, ()):
        for c in ours:
            metric = find_metric(c.column)
            if c.column == wanted or ("@" not in wanted and metric is not None and metric.name == wanted):
                return c.column
    return None

# --- joining ratings -------------------------------------------------------------------------------------------

def join_ratings(frame: pd.DataFrame, ratings: pd.DataFrame, keys: Sequence[str], origin: str,
                 columns: Sequence[str], first_line: int | None = None) -> tuple[pd.DataFrame, int]:
    """The scorecard rows with the rating ``columns`` of ``ratings`` joined on ``keys`` (compared as text).

    Returns the joined frame (scorecard rows kept; no rating row = no rating) and how many rating rows joined
    no scorecard row.  Keys missing on either side, duplicate keys in ``ratings`` (named by file line when row 0 is
    line ``first_line``) or no row joining at all are errors naming ``origin``.
    """
    keys = list(keys)
    if not keys:
        raise InputError("no join keys", path=origin, fix="give --key, e.g. --key item,system or --key input,output")
    for side, table in (("the ratings table", ratings), ("the scorecard", frame)):
        missing = [k for k in keys if k not in table.columns]
        if missing:
            raise InputError(f"{side} lacks the key columns {missing}; its columns are "
                             f"{quote(list(table.columns), 300)}", path=origin,
                             fix="name key columns both tables have with --key")
    text_keys = {k: ratings[k].astype(str) for k in keys}
    duplicated = pd.DataFrame(text_keys).duplicated()
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise InputError(f"the key {dict(pd.DataFrame(text_keys).iloc[row])} is rated twice", path=origin,
                         line=None if first_line is None else first_line + row,
                         fix="give one rating row per key, or add a key column (e.g. --key ...,system)")
    right = pd.DataFrame({**{f"_key_{k}": v for k, v in text_keys.items()},
                          **{c: ratings[c].to_numpy() for c in columns}})
    left = frame.drop(columns=[c for c in columns if c in frame.columns])
    left = left.assign(**{f"_key_{k}": frame[k].astype(str).to_numpy() for k in keys})
    merged = left.merge(right, on=[f"_key_{k}" for k in keys], how="left", indicator=True)
    joined = merged["_merge"] == "both"
    if not joined.any():
        example = {k: frame[k].iloc[0] for k in keys} if len(frame) else {}
        raise InputError(f"no rating row joins the scorecard on {keys} (e.g. the scorecard's {quote(example, 200)} "
                         "has no rating row)", path=origin,
                         fix="check the --key columns hold the same values in both (same item numbering, same "
                             "system names, same text and tokenisation)")
    matched = merged.loc[joined, [f"_key_{k}" for k in keys]].drop_duplicates()
    orphans = len(right) - len(matched)
    return merged.drop(columns=[*(f"_key_{k}" for k in keys), "_merge"]), orphans


# --- the meta-evaluation ---------------------------------------------------------------------------------------

@dataclass
class MetaEvaluation:
    """The result: ``table`` (metaeval.csv), ``baseline`` (baseline.csv), ``counts`` per rating and ``info``."""

    table: pd.DataFrame
    baseline: pd.DataFrame
    counts: pd.DataFrame
    info: dict = field(default_factory=dict)

    def markdown(self, title: str = "Meta-evaluation") -> str:
        """The Markdown report (every name escaped)."""
        from tsteval.metaeval.pages import markdown

        return markdown(self, title)

    def write(self, directory: str | Path, *, overwrite: bool = False, title: str = "Meta-evaluation",
              notes: dict | None = None) -> Path:
        """Write metaeval.csv, baseline.csv, counts.csv, metaeval.json, metaeval.md, the plot (and ``notes`` as
        notes.json) atomically."""
        from tsteval.metaeval.pages import write

        return write(self, directory, overwrite=overwrite, title=title, notes=notes)

def load_card(scorecard: Scorecard | str | Path) -> tuple[Scorecard, str]:
    if isinstance(scorecard, Scorecard):
        return scorecard, "<scorecard>"
    path = Path(scorecard)
    folder = path.parent if path.is_file() and path.name in ("scorecard.parquet", "scorecard.csv") else path
    if path.is_file() and folder == path:
        raise InputError("not a scorecard folder or its scorecard.parquet", path=path,
                         fix="give the --out folder of tsteval score or tsteval run")
    return Scorecard.load(folder), str(folder)
