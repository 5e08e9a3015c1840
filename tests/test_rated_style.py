"""New style columns merged into committed rated tables (:mod:`tsteval.metaeval.rated.style`): the rows of the
rescored metrics replaced, new ones joining their rating's rows, everything else kept in place; a committed column
that recomputes to another value refuses the merge (the committed tables it wrote: ``test_encoder_results.py``)."""

from __future__ import annotations

import pandas as pd
import pytest

from tsteval.core.errors import TstevalError
from tsteval.metaeval.rated.style import check_recomputed, merged


def _rows(metrics: list[str], rating: str, r: float = 0.1) -> list[dict]:
    return [{"metric": m, "source": "tsteval", "rating": rating, "aspect": "style" if rating == "s" else "content",
             "level": "sentence", "method": "pearson", "r": r, "lo": r - .1, "hi": r + .1} for m in metrics]


def test_merged_replaces_rescored_rows_and_adds_new_ones_after_their_rating() -> None:
    committed = pd.DataFrame(_rows(["judge@lm", "a@ft"], "s") + _rows(["bleu@none"], "c"))
    fresh = pd.DataFrame(_rows(["a@ft", "b@enc"], "s", r=0.3))
    out = merged(committed, fresh)
    assert list(out["metric"]) == ["judge@lm", "a@ft", "b@enc", "bleu@none"]
    assert out.set_index("metric")["r"].to_dict() == {"judge@lm": 0.1, "a@ft": 0.3, "b@enc": 0.3, "bleu@none": 0.1}
    assert list(out.columns) == list(committed.columns)


def test_a_committed_column_that_recomputes_differently_is_refused() -> None:
    committed = pd.DataFrame(_rows(["a@ft"], "s"))
    same = pd.DataFrame(_rows(["a@ft", "b@enc"], "s"))
    assert check_recomputed(committed, same, "t") == 0.0
    moved = same.assign(r=same["r"] + 1e-6)
    with pytest.raises(TstevalError, match="recompute to other values"):
        check_recomputed(committed, moved, "t")
    with pytest.raises(TstevalError, match="unmatched"):
        check_recomputed(committed, same.assign(level="system"), "t")
