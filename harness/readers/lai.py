"""Lai et al. (2022): GYAFC informal-to-formal outputs of 9 systems with human ratings of style, content and
fluency, and the authors' own metric scores: the rated set ``lai`` (:data:`tsteval.readers.rated_sets.LAI`) read by
:func:`tsteval.readers.rated.read_rated_set`."""

from __future__ import annotations

from pathlib import Path

from tsteval.core.records import Transfers
from tsteval.readers.rated import read_rated_set
from tsteval.readers.rated_sets import LAI


def load_lai(root: str | Path | None = None) -> Transfers:
    """Lai et al. (2022): 80 GYAFC informal inputs x 9 formal outputs (8 systems and the reference ``ref``), rated.

    One row per (system, item): ``input`` (src), ``output``, ``reference``, the ratings ``human_style``,
    ``human_content_src`` (content vs the input), ``human_content_ref`` (vs the reference) and ``human_fluency``,
    each the mean of the two annotators' 0-100 scores, and the authors' own metric scores as columns
    ``lai.NAME@FILE`` (``lai.bleu@src``, ``lai.bleu@ref``, ``lai.gpt2_ppl@fluency``, ``lai.c-gyafc@style`` ...).
    ``extra["published"]`` maps each such column to its aspect and whether higher is better; the four files must
    agree on every input, reference and output (checked).
    """
    return read_rated_set(LAI, root).transfers
