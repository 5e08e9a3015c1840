"""The rated-set reader (:mod:`tsteval.readers.rated`) and the built-in declarations, recomputed from the raw files."""

from __future__ import annotations

import pandas as pd
import pytest

from tsteval.readers.rated import read_rated_set


@pytest.mark.parametrize("name", ["mir", "lai"])
def test_reader_equals_the_old_loaders(name: str, data_root) -> None:
    from tsteval.readers.lai import load_lai
    from tsteval.readers.mir import load_mir

    old = (load_mir if name == "mir" else load_lai)()
    new = read_rated_set(name).transfers
    pd.testing.assert_frame_equal(old.frame, new.frame, check_exact=True)
    assert old.extra.get("published") == new.extra.get("published")
    assert old.extra.get("style_labels") == new.extra.get("style_labels")
