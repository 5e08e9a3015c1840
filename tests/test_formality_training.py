"""The committed formality-training page (benchmarks/results/formality_training.{json,md}, issue 56 item 8): the page
is its JSON rendered; its correlations recomputed with scipy from Lai et al.'s raw ``style.json``; every rated text
out of the training text the ``--exclude`` files leave; the docs quote the page before any style score."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from benchmarks.studies import formality_training as study

ROOT = Path(__file__).resolve().parents[1]
REPORT = json.loads((study.RESULTS / "formality_training.json").read_text())
ROWS = {row["column"]: row for row in REPORT["correlation"]}


def _raw_lai(root: Path) -> list[dict]:
    """One dict per rated output of ``lai2022/style.json``, read without tsteval: item, system, texts, the mean of the
    two annotators and the authors' GYAFC classifier score."""
    rows = []
    for item, line in enumerate((root / "lai2022" / "style.json").read_text(encoding="utf-8").splitlines()):
        entry = json.loads(line)
        for system, out in entry["sys"].items():
            rows.append({"item": item, "system": system, "src": entry["src"], "ref": entry["ref"], "out": out["out"],
                         "human": (out["human_1"] + out["human_2"]) / 2, "c-gyafc": out["c-gyafc"]})
    return rows


def test_page_is_its_json_rendered() -> None:
    assert (study.RESULTS / "formality_training.md").read_text() == study.markdown(REPORT)
    assert "/work/" not in (study.RESULTS / "formality_training.json").read_text()
    assert REPORT["transformer"] == study.transformer_figure()  # the style classifiers' evidence page's figure


def test_correlations_recomputed_from_the_raw_lai_file(data_root: Path) -> None:
    raw = _raw_lai(data_root)
    assert len(raw) == REPORT["rows_rated"] == 720
    human = np.array([r["human"] for r in raw])
    published = np.array([r["c-gyafc"] for r in raw])
    assert ROWS["lai.c-gyafc@style"]["r"] == pytest.approx(pearsonr(published, human).statistic, abs=1e-9)
    assert ROWS["lai.c-gyafc@style"]["rho"] == pytest.approx(spearmanr(published, human).statistic, abs=1e-9)
    scores = REPORT["scores"]
    ours = dict(zip(zip(scores["item"], scores["system"], strict=True), scores["target_prob@fasttext_full"],
                    strict=True))
    mine = np.array([ours[(r["item"], r["system"])] for r in raw])
    assert ROWS["target_prob@fasttext_full"]["r"] == pytest.approx(pearsonr(mine, human).statistic, abs=1e-5)
    systems = sorted({r["system"] for r in raw})
    means = [[np.mean([v for v, r in zip(values, raw, strict=True) if r["system"] == s]) for s in systems]
             for values in (mine, human)]
    assert ROWS["target_prob@fasttext_full"]["r_system"] == pytest.approx(pearsonr(*means).statistic, abs=1e-5)


def test_training_text_holds_no_rated_text(data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The style files minus the ``--exclude`` files (exact lines, as ``train-classifier`` drops them) hold no Lai
    input, output or reference up to case, punctuation and spaces in every classifier scored on Lai (the docs'
    recipe keeps a few and is not scored); the counts are the committed ones; the strict rule on DualRL's GYAFC
    leaves the texts of the rated meta-evaluation's corpus."""
    from tsteval.metaeval.rated.datasets import lai_training_corpus
    from tsteval.readers.lai import load_lai

    key = lambda text: re.sub(r"\W+", "", text.lower())  # noqa: E731
    rated = {key(r[field]) for r in _raw_lai(data_root) for field in ("src", "ref", "out")}
    monkeypatch.setattr(study, "WORK", tmp_path)
    prepared = study.prepare(load_lai().frame)
    assert prepared.pop("rated") == REPORT["rated"]
    assert {name: c["counts"] for name, c in prepared.items()} == {n: c["counts"] for n, c in REPORT["corpora"].items()}
    left = {}
    for run in REPORT["runs"]:
        corpus = prepared[run["corpus"]]
        command = study.train_command("fasttext", corpus, run["rule"], "out")
        excluded = {t for i, arg in enumerate(command) if arg == "--exclude"
                    for t in (tmp_path / command[i + 1]).read_text().splitlines()}
        texts = [t for path in corpus["files"].values() for t in (tmp_path / path).read_text().splitlines()
                 if t not in excluded]
        left_in = {key(t) for t in texts} & rated
        assert len(left_in) == run["lai_texts_left"], run["name"]
        assert bool(left_in) == (f"target_prob@{run['name']}" not in ROWS), run["name"]
        assert len(texts) == run["n_split"] + run["n_heldout"], run["name"]
        left[run["name"]] = texts
    assert sum(run["lai_texts_left"] == 0 for run in REPORT["runs"]) >= 6
    assert Counter(left["fasttext_gyafc"]) == Counter(lai_training_corpus(load_lai())[0].texts)


def _doc(value: float, digits: int = 3) -> str:
    """A figure as the docs write it: no leading zero, a minus sign (``-0.059`` -> ``−.059``)."""
    return ("−" if value < 0 else "") + f"{abs(value):.{digits}f}".removeprefix("0")


def test_docs_give_the_figures_before_a_style_score() -> None:
    """The scoring page names the data root's formality text, says GYAFC's training split is not there, and quotes
    the page's held-out accuracy and correlations with the command that makes them."""
    page = (ROOT / "docs" / "scoring.md").read_text()
    section = page[page.index("**A dataset with test sets only**"):page.index("## Ready-made classifiers")]
    assert "python -m benchmarks.studies.formality_training" in section
    assert "not in the data root" in section and "GYAFC_Full" in section
    full = REPORT["corpora"]["GYAFC_Full"]["counts"]
    assert f"{full['rated_lines']} lines of\n`GYAFC_Full` equal to a Lai text" in section
    assert f"{full['parallel_lines']} parallel lines left out" in section
    for run in REPORT["runs"]:
        assert f"{_doc(run['accuracy'])}, {_doc(run['macro_f1'])}" in section, run["name"]
        assert f"{run['n_split'] + run['n_heldout']:,}" in section, run["name"]
    for column, row in ROWS.items():
        if column.startswith("target_prob@") or column in ("lai.c-gyafc@style", "lai.c-pt16@style"):
            assert f"{_doc(row['r'])} [{_doc(row['r_lo'])}, {_doc(row['r_hi'])}]" in section, column
    accuracy = [run["accuracy"] for run in REPORT["runs"]]
    assert f"({_doc(min(accuracy), 2)}–{_doc(max(accuracy), 2)}, optimistic" in section
    diffs = [abs(row["diff"]) for row in ROWS.values() if row["source"] == "tsteval"]
    assert f"classifier is {_doc(min(diffs), 2)}–{_doc(max(diffs), 2)} higher on the same rows" in section
    step = page[page.index("**Formality?**"):page.index("2. **Score the outputs.**")]
    ours = [row["r"] for column, row in ROWS.items() if column.startswith("target_prob@")]
    assert f"r from {_doc(min(ours), 2)} to {_doc(max(ours), 2)}" in step
    assert f"up to {_doc(max(run['accuracy'] for run in REPORT['runs']))}" in step
    assert f"reaches {_doc(ROWS['lai.c-gyafc@style']['r'])}" in step
