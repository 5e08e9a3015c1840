"""Mir et al. (2019): the CAAE/ARAE/DAR transfers with their human ratings, and the authors' stored style scores.

The transfers and ratings are the rated set ``mir``, one declaration read by the rated-set reader
(:mod:`tsteval.readers.rated`), which checks every row while reading; a damaged file fails there, naming the file and
line.  A missing dataset raises ``DataNotFoundError`` naming the path expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError
from tsteval.core.records import Transfers
from tsteval.readers.rated import read_rated_set
from tsteval.readers.rated_sets import MIR


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
MIR_RATING_COLUMNS = tuple(q.column for q in MIR.questions)


def load_mir(root: str | Path | None = None) -> Transfers:
    """The 12 model settings of Mir et al. (2019) on their 244 Yelp test inputs, with the human ratings: the rated
    set ``mir`` (:data:`tsteval.readers.rated_sets.MIR`) read by :func:`tsteval.readers.rated.read_rated_set`.

    ``root`` is the ``mir2019`` folder (default: under the data root).  Items are 0..n0-1 for the lines of
    ``sentiment.test.0`` (negative -> positive) then n0.. for ``sentiment.test.1`` (positive -> negative), as
    ``human_ratings.csv`` numbers them.  The rating columns ``MIR_RATING_COLUMNS`` are extra columns of the frame
    (naturalness ratings are missing where none were collected: DAR gamma 0.1, 1 and 500).
    """
    return read_rated_set(MIR, root).transfers


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
