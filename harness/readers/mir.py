"""Mir et al. (2019): the CAAE/ARAE/DAR transfers with their human ratings, and the authors' stored style scores.

Each loader checks the files against each other (line counts, shared inputs, the texts quoted in rating tables)
while loading, so a damaged or misplaced file fails here, naming the file and line.  A missing dataset raises
``DataNotFoundError`` naming the path expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, quote
from tsteval.core.records import HP_PREFIX, Transfers
from tsteval.readers.lines import read_lines
from tsteval.readers.tables import Table
from tsteval.readers.yelp import YELP_STYLES


class MirSetting(NamedTuple):
    """One model setting of Mir et al. (2019): the model, its hyperparameter and the value."""

    model: str
    param: str
    value: float

    @property
    def directory(self) -> str:
        """The folder name, e.g. ``rho_0_01``."""
        return f"{self.param}_{self.value:g}".replace(".", "_")

    @property
    def setting(self) -> str:
        """The setting label, e.g. ``rho=0.5``."""
        return f"{self.param}={self.value:g}"


MIR_SETTINGS: tuple[MirSetting, ...] = (
    *(MirSetting("CAAE", "rho", v) for v in (0.01, 0.1, 0.5, 1.0, 5.0)),
    *(MirSetting("ARAE", "lambda", v) for v in (1.0, 5.0, 10.0)),
    *(MirSetting("DAR", "gamma", v) for v in (0.1, 1.0, 15.0, 500.0)),
)
MIR_RATING_COLUMNS = ("human_style_intensity", "human_content_preservation", "human_naturalness_relative",
                      "human_naturalness_output", "human_naturalness_input")
_MIR_CSV_KEYS = ("model", "param", "value", "item", "source_style", "target_style", "input", "output")


def load_mir(root: str | Path | None = None) -> Transfers:
    """The 12 model settings of Mir et al. (2019) on their 244 Yelp test inputs, with the human ratings.

    ``root`` is the ``mir2019`` folder (default: under the data root).  Items are 0..n0-1 for the lines of
    ``sentiment.test.0`` (negative -> positive) then n0.. for ``sentiment.test.1`` (positive -> negative);
    ``human_ratings.csv`` numbers its items the same way, which is checked by comparing its input and output
    texts with the files.  The rating columns ``MIR_RATING_COLUMNS`` are extra columns of the frame
    (naturalness ratings are missing where none were collected: DAR gamma 0.1, 1 and 500).
    """
    root = Path(root) if root is not None else dataset_dir("mir2019")
    if not root.is_dir():
        raise DataNotFoundError(f"the Mir et al. (2019) data was expected in the directory {root}")
    inputs = [read_lines(root / "data" / f"sentiment.test.{s}") for s in "01"]
    parts = []
    for cfg in MIR_SETTINGS:
        for s, t, offset in (("0", "1", 0), ("1", "0", len(inputs[0]))):
            in_path = root / "data" / f"sentiment.test.{s}"
            out_path = root / "transfer_model_outputs" / cfg.model / cfg.directory / f"sentiment.test.{s}.tsf"
            outputs = read_lines(out_path)
            ins = inputs[int(s)]
            if len(outputs) != len(ins):
                raise InputError(f"{len(outputs)} lines but {len(ins)} inputs in {in_path}", path=out_path,
                                 fix="line i of the output file must be the transfer of line i of the input file")
            parts.append(pd.DataFrame({
                "system": cfg.model, "setting": cfg.setting, "item": range(offset, offset + len(ins)),
                "input": ins, "output": outputs, "source_style": s, "target_style": t,
                f"{HP_PREFIX}{cfg.param}": cfg.value,
            }))
    frame = pd.concat(parts, ignore_index=True)
    frame = _join_mir_ratings(frame, root / "human_ratings.csv")
    return Transfers(frame, str(root), extra={"rating_columns": list(MIR_RATING_COLUMNS), "style_labels": YELP_STYLES})


MIR_CLASSIFIERS = ("fasttext", "textcnn")


@dataclass(frozen=True)
class MirStoredStyle:
    """Mir et al.'s own style distributions and signed-EMD scores, one row per transfer of :func:`load_mir`.

    ``inputs[clf]`` and ``outputs[clf]`` are ``(n, 2)`` distributions (columns: style "0", "1") from their
    fastText and text-CNN classifiers, ``sti[clf]`` their stored ``scores_based_on_emd``; rows are in the
    order of ``load_mir().frame`` (settings as in ``MIR_SETTINGS``, items ascending).
    """

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    sti: dict[str, np.ndarray]


def load_mir_stored_style(root: str | Path | None = None) -> MirStoredStyle:
    """Read ``evaluations/automated/style_transfer_intensity/sentence_level`` of the Mir et al. release."""
    root = Path(root) if root is not None else dataset_dir("mir2019")
    base = root / "evaluations" / "automated" / "style_transfer_intensity" / "sentence_level"
    if not base.is_dir():
        raise DataNotFoundError(f"Mir et al.'s stored style scores were expected in the directory {base}")
    input_file = np.load(base / "style_distributions" / "input_distributions.npz")
    inputs: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    outputs: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    sti: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    for cfg in MIR_SETTINGS:
        name = f"{cfg.model}_{cfg.directory}.npz"
        dists = np.load(base / "style_distributions" / name)
        scores = np.load(base / "scores_based_on_emd" / name)
        for clf in MIR_CLASSIFIERS:
            inputs[clf].append(np.asarray(input_file[clf], dtype=np.float64))
            outputs[clf].append(np.asarray(dists[clf], dtype=np.float64))
            sti[clf].append(np.asarray(scores[clf], dtype=np.float64))
    return MirStoredStyle(*({c: np.concatenate(v[c]) for c in MIR_CLASSIFIERS} for v in (inputs, outputs, sti)))


def _line(value: object) -> int | None:
    return None if pd.isna(value) else int(value)


def _join_mir_ratings(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Attach the human ratings by (model, value, item), checking every quoted text against the files."""
    lines = read_lines(path)
    ratings = pd.read_csv(path, dtype={"input": str, "output": str, "model": str, "param": str,
                                       **dict.fromkeys(MIR_RATING_COLUMNS, str)},
                          keep_default_na=False, na_values=[""])
    missing = [c for c in (*_MIR_CSV_KEYS, *MIR_RATING_COLUMNS) if c not in ratings.columns]
    if missing:
        raise InputError(f"the columns {missing} are missing; the columns are {quote(list(ratings.columns), 200)}",
                         path=path)
    first_line = 2 if len(lines) == len(ratings) + 1 else None
    table = Table(ratings, str(path), first_line)
    for col in MIR_RATING_COLUMNS:  # numbers (or a choice), an empty cell is no rating, anything else an error
        ratings[col] = table.ratings(col).to_numpy()
    ratings["csv_line"] = [None if first_line is None else first_line + i for i in range(len(ratings))]
    ratings["setting"] = [f"{p}={v:g}" for p, v in zip(ratings["param"], ratings["value"], strict=True)]
    known = {(c.model, c.setting) for c in MIR_SETTINGS}
    for row in ratings.itertuples():
        if (row.model, row.setting) not in known:
            raise InputError(f"unknown model setting {row.model} {row.setting}", path=path, line=row.csv_line)
    dup = ratings.duplicated(["model", "setting", "item"])
    if dup.any():
        row = ratings[dup].iloc[0]
        raise InputError(f"item {row['item']} of {row['model']} {row['setting']} is rated twice", path=path,
                         line=_line(row["csv_line"]))
    keep = ["model", "setting", "item", "input", "output", "source_style", "target_style", "csv_line",
            *MIR_RATING_COLUMNS]
    merged = frame.merge(ratings[keep].rename(columns={"model": "system"}),
                         on=["system", "setting", "item"], how="left", suffixes=("", "_csv"), indicator=True)
    unrated = merged[merged["_merge"] != "both"]
    if not unrated.empty:
        row = unrated.iloc[0]
        raise InputError(f"{len(unrated)} transfers have no rating row, e.g. item {row['item']} of "
                         f"{row['system']} {row['setting']}", path=path)
    if len(ratings) != len(merged):
        raise InputError(f"{len(ratings)} rating rows but {len(merged)} transfers: some rows rate no transfer",
                         path=path)
    for col in ("input", "output", "source_style", "target_style"):
        differ = merged[merged[col].astype(str) != merged[f"{col}_csv"].astype(str)]
        if not differ.empty:
            row = differ.iloc[0]
            raise InputError(f"{len(differ)} rows disagree with the transfer files on the {col}, first item "
                             f"{row['item']} of {row['system']} {row['setting']}: the CSV has "
                             f"{quote(row[f'{col}_csv'])}, the files {quote(row[col])}", path=path,
                             line=_line(row["csv_line"]),
                             fix="item i is line i of sentiment.test.0, then line i-n0 of sentiment.test.1")
    drop = [c for c in merged.columns if c.endswith("_csv")] + ["csv_line", "_merge"]
    return merged.drop(columns=drop)
