"""The Corpus of Diverse Styles samples (Krishna et al. 2020) under the data root."""

from __future__ import annotations

from pathlib import Path

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError
from tsteval.core.records import Corpus
from tsteval.readers.lines import load_style_dir


def load_cds(root: str | Path | None = None) -> Corpus:
    """The CDS samples: every ``*.txt`` in the ``cds`` folder (default: under the data root), style = file stem."""
    root = Path(root) if root is not None else dataset_dir("cds")
    if not root.is_dir():
        raise DataNotFoundError(f"the CDS samples were expected in the directory {root}")
    return load_style_dir(root, "*.txt")
