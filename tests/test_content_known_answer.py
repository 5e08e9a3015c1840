"""The known-answer content check (``benchmarks.studies.content_known_answer``): its page is its CSV and JSON
rendered, and a figure of it is recomputed from the Bible data with sacreBLEU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def test_the_page_is_its_table_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from benchmarks.studies import content_known_answer as study

    monkeypatch.setattr(study, "RESULTS", tmp_path)
    meta = json.loads((RESULTS / "content_known_answer.json").read_text(encoding="utf-8"))
    study.write_markdown(pd.read_csv(RESULTS / "content_known_answer.csv"), meta)
    assert (tmp_path / "content_known_answer.md").read_text(encoding="utf-8") == \
        (RESULTS / "content_known_answer.md").read_text(encoding="utf-8")


def test_chrf_loses_to_the_word_swap_as_sacrebleu_computes_it() -> None:
    """chrF's pairwise accuracy against the one-word swap and its mean on the rewrites: sacreBLEU's sentence chrF of
    each pair (on tsteval's tokens joined by spaces, as the metric reads them), from the same seeded pairs."""
    import sacrebleu

    from benchmarks.studies.content_known_answer import HELDOUT_BOOKS, N_VERSES, SEED, SOURCE, TARGETS
    from tsteval.core.tokenize import tokenize
    from tsteval.readers.bible import known_answer_pairs, parallel_verses

    verses = parallel_verses((SOURCE, *TARGETS))
    pairs = known_answer_pairs(verses[verses["book"].isin(HELDOUT_BOOKS)], SOURCE, TARGETS, N_VERSES, seed=SEED)
    joined = lambda text: " ".join(tokenize(text))  # noqa: E731
    pairs["chrf"] = [sacrebleu.sentence_chrf(joined(o), [joined(i)]).score
                     for i, o in zip(pairs["input"], pairs["output"], strict=True)]
    by_kind = pairs.pivot(index="item", columns="kind", values="chrf")
    wins = (by_kind["rewrite"] > by_kind["word_swap"]) + 0.5 * (by_kind["rewrite"] == by_kind["word_swap"])
    row = pd.read_csv(RESULTS / "content_known_answer.csv").set_index("column").loc["chrf@none"]
    assert row["word_swap"] == pytest.approx(float(wins.mean()), abs=1e-12)
    assert row["mean_rewrite"] == pytest.approx(float(np.mean(by_kind["rewrite"])), abs=1e-9)
