"""The scorecard: one tidy per-sentence table that every scorer adds columns to.

Rows are transfers (system, setting, item); each metric is a column with a signature.  Everything
downstream (summaries, correlations, plots) reads only this table.  Saving is atomic: all files are
written to a temporary directory beside the target and moved into place only when complete.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from harness.aggregate import bootstrap_mean
from harness.atomic import atomic_directory
from harness.data import Transfers
from harness.errors import TstevalError

GROUP = ("system", "setting")


@dataclass
class Scorecard:
    """Per-sentence metric columns over a set of transfers, with one signature per metric column."""

    frame: pd.DataFrame
    signatures: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_transfers(cls, transfers: Transfers) -> Scorecard:
        """An empty scorecard (no metric columns yet) over ``transfers``."""
        return cls(transfers.frame.copy())

    @property
    def metrics(self) -> list[str]:
        """Names of the metric columns, in the order they were added."""
        return list(self.signatures)

    def add(self, column: str, values: Sequence[float] | np.ndarray, signature: str) -> None:
        """Add (or replace) a metric column; its length must match the rows."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(self.frame),):
            raise TstevalError(f"metric {column!r} has {values.shape} values for {len(self.frame)} rows")
        self.frame[column] = values
        self.signatures[column] = signature

    def summary(self, metrics: Sequence[str] | None = None, by: Sequence[str] = GROUP,
                n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
        """Corpus-level mean of each metric per group, with a percentile-bootstrap 95% interval."""
        rows = []
        for metric in metrics or self.metrics:
            for key, group in self.frame.groupby(list(by), sort=False):
                mean, low, high = bootstrap_mean(group[metric].to_numpy(), n_resamples=n_resamples, seed=seed)
                rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                             "metric": metric, "mean": mean, "ci_low": low, "ci_high": high,
                             "n": len(group), "signature": self.signatures[metric]})
        return pd.DataFrame(rows)

    def save(self, directory: str | Path, summary: pd.DataFrame | None = None) -> Path:
        """Write ``scorecard.csv``, ``scorecard.parquet``, ``signatures.json`` (and the summary) atomically."""
        directory = Path(directory)
        with atomic_directory(directory) as tmp:
            self.frame.to_csv(tmp / "scorecard.csv", index=False)
            self.frame.to_parquet(tmp / "scorecard.parquet", index=False)
            (tmp / "signatures.json").write_text(json.dumps(self.signatures, indent=2))
            if summary is not None:
                summary.to_csv(tmp / "summary.csv", index=False)
                (tmp / "summary.md").write_text(summary_markdown(summary))
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> Scorecard:
        """Read a scorecard written by :meth:`save`."""
        directory = Path(directory)
        frame = pd.read_parquet(directory / "scorecard.parquet")
        return cls(frame, json.loads((directory / "signatures.json").read_text()))


def summary_markdown(summary: pd.DataFrame) -> str:
    """The summary as a Markdown table: one row per group, ``mean [low, high]`` per metric."""
    keys = [c for c in summary.columns if c not in {"metric", "mean", "ci_low", "ci_high", "n", "signature"}]
    cells = summary.assign(value=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                                  zip(summary["mean"], summary["ci_low"], summary["ci_high"], strict=True)])
    wide = cells.pivot_table(index=keys + ["n"], columns="metric", values="value", aggfunc="first", sort=False)
    wide = wide.reset_index()
    lines = ["| " + " | ".join(map(str, wide.columns)) + " |", "|" + "---|" * len(wide.columns)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in wide.itertuples(index=False)]
    signatures = summary.drop_duplicates("metric")[["metric", "signature"]]
    lines += ["", "Signatures:", ""] + [f"- `{m}`: `{s}`" for m, s in signatures.itertuples(index=False)]
    return "\n".join(lines) + "\n"
