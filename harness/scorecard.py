"""The scorecard: one tidy per-sentence table that every scorer adds columns to.

Rows are transfers (system, setting, item); each metric is a column with a signature.  Everything
downstream (summaries, correlations, plots) reads only this table.  Saving follows :mod:`tsteval.core.atomic`:
all files are written to a temporary directory beside the target and moved into place only when complete.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES, bootstrap_means
from tsteval.core import markdown as md
from tsteval.core.atomic import output_directory
from tsteval.core.errors import InputError, TstevalError, read_json
from tsteval.core.records import TRANSFER_COLUMNS, Transfers, failed, pool_texts
from tsteval.core.styles import NAME_COLUMNS, direction_labels

GROUP = ("system", "setting")
# A summary row: one system, setting and transfer direction (a direction is never pooled with the other); the
# styles' names (tsteval.core.styles) go with their labels.
SUMMARY_GROUP = (*GROUP, "source_style", "source_name", "target_style", "target_name")
NOTICES_FILE = "notices.json"  # a run's warnings, one line each (Run.notices): what every file it writes repeats
_VALUES = ("metric", "mean", "ci_low", "ci_high", "n", "n_empty", "signature")


@dataclass
class Scorecard:
    """Per-sentence metric columns over a set of transfers, with one signature per metric column; ``policy``: per
    metric column, the counts of a scoring run (the empty/OOV policy's, :mod:`tsteval.metrics.content.policy`, and
    the texts cut at a model's length limit, :mod:`tsteval.metrics.truncation`), as ``policy.json`` holds them;
    ``notices``: the run's warnings (leakage, empty outputs, cut texts, swapped styles...), one line each, as
    ``notices.json`` holds them and every file written from the card repeats them."""

    frame: pd.DataFrame
    signatures: dict[str, str] = field(default_factory=dict)
    policy: dict[str, dict[str, int]] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

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

    def summary(self, metrics: Sequence[str] | None = None, by: Sequence[str] = SUMMARY_GROUP,
                n_resamples: int = N_RESAMPLES, seed: int = 0) -> pd.DataFrame:
        """Corpus-level mean of each metric per group (default: system, setting and direction), with a
        percentile-bootstrap 95% interval; ``n``: the group's rows, ``n_empty``: how many of their outputs are empty
        (a system's failure, scored: :mod:`tsteval.failures`).

        The resampling indices are drawn once per group and shared by all its metrics (same resamples)."""
        metrics = list(metrics or self.metrics)
        by = [c for c in by if c in self.frame.columns]  # a hand-made scorecard may have no direction columns
        texts = "output" in self.frame.columns  # a hand-made scorecard may have no texts
        groups = [(key if isinstance(key, tuple) else (key,), len(group),
                   int(failed(group["output"]).sum()) if texts else 0,
                   bootstrap_means({m: group[m].to_numpy() for m in metrics}, n_resamples=n_resamples, seed=seed))
                  for key, group in self.frame.groupby(list(by), sort=False)]
        return pd.DataFrame([{**dict(zip(by, key, strict=True)), "metric": metric, "mean": stats[metric][0],
                              "ci_low": stats[metric][1], "ci_high": stats[metric][2], "n": n, "n_empty": empty,
                              "signature": self.signatures[metric]}
                             for metric in metrics for key, n, empty, stats in groups])

    def write(self, directory: str | Path, summary: pd.DataFrame | None = None) -> None:
        """Write ``scorecard.csv``, ``scorecard.parquet``, ``signatures.json``, ``notices.json`` (and the summary,
        with the :attr:`notices`: :func:`summary_markdown`) into an existing folder, e.g. the temporary folder of
        :func:`tsteval.core.atomic.output_directory`."""
        directory = Path(directory)
        self.frame.to_csv(directory / "scorecard.csv", index=False)
        self.frame.to_parquet(directory / "scorecard.parquet", index=False)
        (directory / "signatures.json").write_text(json.dumps(self.signatures, indent=2))
        (directory / NOTICES_FILE).write_text(json.dumps(self.notices, indent=2, ensure_ascii=False),
                                              encoding="utf-8")
        if summary is not None:
            summary.to_csv(directory / "summary.csv", index=False)
            (directory / "summary.md").write_text(summary_markdown(summary, self.notices))

    def save(self, directory: str | Path, summary: pd.DataFrame | None = None, *, overwrite: bool = False) -> Path:
        """Write the scorecard folder atomically by :mod:`tsteval.core.atomic`'s rule: a new or empty ``directory``,
        or (with ``overwrite``) a scorecard tsteval wrote there, replaced whole; anything else is refused."""
        with output_directory(directory, "scorecard", overwrite=overwrite) as tmp:
            self.write(tmp, summary)
        return Path(directory)

    @classmethod
    def load(cls, directory: str | Path) -> Scorecard:
        """Read a scorecard written by :meth:`save`; a missing, damaged or inconsistent file is an
        :class:`InputError` naming it."""
        import pyarrow

        directory = Path(directory)
        table, names = directory / "scorecard.parquet", directory / "signatures.json"
        fix = "give a folder written by tsteval score or tsteval run, or score again"
        for path in (table, names):
            if not path.is_file():
                raise InputError(f"missing: {directory} is not a scorecard folder", path=path, fix=fix)
        try:
            frame = pd.read_parquet(table)
        except (OSError, ValueError, pyarrow.ArrowException) as error:
            raise InputError(f"not a readable Parquet table ({str(error).splitlines()[0]})", path=table,
                             fix=fix) from error
        signatures = read_json(names, "signature file", fix=fix)
        if not isinstance(signatures, dict) or not all(isinstance(v, str) for v in signatures.values()):
            raise InputError("expected a JSON object {metric column: signature string}", path=names, fix=fix)
        missing = [c for c in (*TRANSFER_COLUMNS, *signatures) if c not in frame.columns]
        if missing:
            raise InputError(f"the table lacks the columns {missing}", path=table, fix=fix)
        not_numeric = [c for c in signatures if not pd.api.types.is_numeric_dtype(frame[c])]
        if not_numeric:
            raise InputError(f"the metric columns {not_numeric} are not numeric", path=table, fix=fix)
        pool_texts(frame)
        return cls(frame, signatures, notices=read_notices(directory))


def wide_summary(summary: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per group, ``n`` (and ``n_empty``, the empty outputs, where there are any), ``mean [low, high]`` per
    metric (``metrics``, default all, in that order); a ``direction`` column (``SOURCE → TARGET``, by the styles'
    names where the summary has them) stands for the source and target styles.

    >>> s = pd.DataFrame({"system": "a", "setting": "x", "source_style": ["0", "1"], "target_style": ["1", "0"],
    ...                   "metric": "bleu@none", "mean": [10.0, 20.0], "ci_low": [9.0, 19.0], "ci_high": [11.0, 21.0],
    ...                   "n": 5, "n_empty": [0, 1], "signature": "metric:bleu"})
    >>> wide_summary(s).to_dict("records")[1]
    ... # doctest: +NORMALIZE_WHITESPACE
    {'system': 'a', 'setting': 'x', 'direction': '1 → 0', 'n': 5, 'n_empty': 1,
     'bleu@none': '20.000 [19.000, 21.000]'}
    """
    part = summary if metrics is None else summary[summary["metric"].isin(metrics)]
    keys = [c for c in part.columns if c not in _VALUES]
    # n_empty only where some output failed (a summary written before it has only n)
    counts = ["n"] + (["n_empty"] if "n_empty" in part.columns and part["n_empty"].any() else [])
    cells = part.assign(value=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                               zip(part["mean"], part["ci_low"], part["ci_high"], strict=True)])
    wide = cells.pivot_table(index=keys + counts, columns="metric", values="value", aggfunc="first", sort=False)
    wide = wide.reindex(columns=list(dict.fromkeys(metrics or part["metric"]))).reset_index().rename_axis(columns=None)
    if {"source_style", "target_style"} <= set(wide.columns):
        at = wide.columns.get_loc("source_style")
        wide.insert(at, "direction", direction_labels(wide))
        wide = wide.drop(columns=[c for c in (*NAME_COLUMNS, *NAME_COLUMNS.values()) if c in wide.columns])
    return wide


def _signatures(summary: pd.DataFrame) -> list[tuple[str, str]]:
    return list(summary.drop_duplicates("metric")[["metric", "signature"]].itertuples(index=False))


def read_notices(directory: str | Path) -> list[str]:
    """The notices a run folder's ``notices.json`` (:data:`NOTICES_FILE`) keeps; none in a folder written before
    it."""
    path = Path(directory) / NOTICES_FILE
    return [str(line) for line in read_json(path, "run notices", fix="score again")] if path.is_file() else []


def notes_markdown(notes: Sequence[str]) -> list[str]:
    r"""The run's warnings (:attr:`tsteval.experiment.run.execute.Run.notices`) as the Markdown lines of a
    ``Notes`` section, each escaped (they quote the user's names); nothing without any.

    >>> notes_markdown(["leakage: 2 of 4 *outputs*"])
    ['**Notes:**', '', '- leakage: 2 of 4 \\*outputs\\*', '']
    """
    if not notes:
        return []
    return ["**Notes:**", "", *[f"- {md.inline(note)}" for note in notes], ""]


def summary_markdown(summary: pd.DataFrame, notes: Sequence[str] = ()) -> str:
    """The run's ``notes`` (:func:`notes_markdown`), the summary as a Markdown table (:func:`wide_summary`) and its
    signatures.

    System and setting names are the user's: every cell is escaped (:mod:`tsteval.core.markdown`)."""
    lines = [*notes_markdown(notes), md.table(wide_summary(summary)), "", "Signatures:", ""]
    lines += [f"- {md.inline(f'`{m}`: `{s}`')}" for m, s in _signatures(summary)]
    return "\n".join(lines) + "\n"


def summary_text(summary: pd.DataFrame) -> str:
    """The summary as plain text for the terminal (:func:`wide_summary`, no Markdown escapes) and its signatures."""
    from tsteval.core.texttable import text_table

    lines = [text_table(wide_summary(summary)), "", "Signatures:"]
    lines += [f"  {m}: {s}" for m, s in _signatures(summary)]
    return "\n".join(lines) + "\n"
