"""The Lai style view is written as DualRL's GYAFC is, and the training text holds no rewrite of a rated sentence."""

from __future__ import annotations

import re

from tsteval.core.text_form import tokenise_lowercase


def test_tokenise_lowercase_is_dualrl_form() -> None:
    assert tokenise_lowercase("THEY BOTH DON'T care. I'm sure!") == "they both do n't care . i 'm sure !"
    assert tokenise_lowercase("   ") == "   "


def test_lai_training_corpus_drops_parallel_lines(data_root) -> None:
    from tsteval.metaeval.rated.datasets import lai_training_corpus
    from tsteval.readers.lai import load_lai

    def key(text: str) -> str:
        return re.sub(r"\W+", "", text.lower())

    rated = load_lai(data_root / "lai2022")
    before, old = lai_training_corpus(rated, drop_parallel=False)
    after, new = lai_training_corpus(rated)
    assert old["excluded_parallel_lines"] == 0 and new["excluded_parallel_lines"] > 0
    assert new["training_texts"] == old["training_texts"] - new["excluded_parallel_lines"]
    keys = {key(t) for t in after.texts}
    assert not {key(t) for t in (*rated.frame["input"], *rated.frame["reference"])} & keys
    assert len(after.texts) == len(after.labels) and set(after.labels) == {"formal", "informal"}
    assert set(after.texts) < set(before.texts)
