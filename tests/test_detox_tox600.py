"""The committed Tox600 page (benchmarks/results/detox_tox600.{json,md}): the page is its JSON rendered; the raters'
joint per system, the ranking agreement and the corpus counts recomputed from the data files directly."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from benchmarks.studies import detox_tox600 as study
from tsteval.core.datapaths import dataset_dir
from tsteval.readers.detox import CORPUS_FILES

REPORT = json.loads((study.RESULTS / "detox_tox600.json").read_text())


def test_page_is_its_json_rendered() -> None:
    assert (study.RESULTS / "detox_tox600.md").read_text() == study.markdown(REPORT)


def test_raters_joint_per_system_and_the_ranking_agreement_recomputed() -> None:
    long = pd.read_csv(dataset_dir("detox2021") / "manual_markup" / "emnlp_eval_long.tsv", sep="\t", quoting=3)
    assert len(long) == 1800 and long.groupby(["idx", "source"]).size().eq(3).all()
    product = long["style"] * long["meaning"] * long["fluency"]  # the release's joint column has one typo: 1.25
    assert long.loc[(product - long["joint"]).abs() > 1e-9, "joint"].tolist() == [1.25]
    joint = long.assign(joint=product).groupby("source")["joint"].mean()
    for system in study.SYSTEMS:
        assert REPORT["systems"][system]["human_joint_mean"] == pytest.approx(joint[system], abs=1e-9)
        assert REPORT["systems"][system]["n"] == 200
    ours = [REPORT["systems"][s]["J_mean"] for s in study.SYSTEMS]
    tau = kendalltau(ours, [joint[s] for s in study.SYSTEMS]).statistic
    assert REPORT["agreement"]["kendall_tau_systems"] == pytest.approx(tau)
    assert REPORT["agreement"]["ranking_human"] == sorted(study.SYSTEMS, key=lambda s: -joint[s])


def test_the_sentence_spearman_is_scipys_on_the_per_output_scores() -> None:
    """J of each output (the JSON's scores) beside the raw mean of its three raters' joint: scipy's Spearman is the
    page's, inside the engine's interval."""
    long = pd.read_csv(dataset_dir("detox2021") / "manual_markup" / "emnlp_eval_long.tsv", sep="\t", quoting=3)
    product = long["style"] * long["meaning"] * long["fluency"]  # each rater's joint
    joint = long.assign(joint=product).groupby(["idx", "source"])["joint"].mean()
    scores = pd.DataFrame(REPORT["scores"])
    human = [joint[(item, system)] for item, system in zip(scores["item"], scores["system"], strict=True)]
    figure = REPORT["agreement"]["spearman_sentences"]
    assert len(scores) == 600 and figure["r"] == pytest.approx(spearmanr(scores["J"], human).statistic, abs=1e-4)
    assert figure["lo"] < figure["r"] < figure["hi"]
    assert f"the 600 outputs {figure['r']:.3f} [{figure['lo']:.3f}, {figure['hi']:.3f}]" in study.markdown(REPORT)


def test_the_share_of_rated_outputs_equal_to_a_released_file_is_recomputed() -> None:
    """Each rated output (the raw long file, its TSV quoting undone: condbert's are then its released lines, every one)
    against the line of its input in each ``model_outputs`` file."""
    data = dataset_dir("detox2021")
    long = pd.read_csv(data / "manual_markup" / "emnlp_eval_long.tsv", sep="\t", keep_default_na=False)
    files = {p.stem: p.read_text(encoding="utf-8").split("\n") for p in (data / "test" / "model_outputs").glob("*.txt")}
    for system, part in long.drop_duplicates(["idx", "source"]).groupby("source"):
        for name, lines in files.items():
            share = sum(lines[i] == o for i, o in zip(part["idx"], part["rewritten"], strict=True)) / len(part)
            assert REPORT["provenance"][system][name] == pytest.approx(share, abs=5e-4), (system, name)
    assert REPORT["provenance"]["condbert"]["condbert"] == 1.0


def test_every_rated_text_is_out_of_the_training_corpus() -> None:
    """The removed-line count recomputed: corpus lines equal, up to case, punctuation and spaces, to a rated text."""
    key = lambda text: re.sub(r"\W+", "", text.lower())  # noqa: E731
    data = dataset_dir("detox2021")
    long = pd.read_csv(data / "manual_markup" / "emnlp_eval_long.tsv", sep="\t", quoting=3, keep_default_na=False)
    mis = dataset_dir("mis_benchmark")
    rated = {*long["original"], *long["rewritten"]}
    for name in ("tox600", "CAE"):
        table = pd.read_csv(mis / "datasets" / f"{name}.csv", keep_default_na=False)
        rated |= {*table["text1"], *table["text2"]}
    cae = pd.read_csv(mis / "source_data" / "cae_t5_figure_eight_ratings.csv", keep_default_na=False)
    rated |= {*cae["original_toxic_comment"], *cae["value"]}
    keys = {key(t) for t in rated} - {""}
    lines = [line for folder, name, _ in CORPUS_FILES for line in
             (data / folder / name).read_text(encoding="utf-8").splitlines()]
    removed = sum(key(line) in keys for line in lines)
    corpus = REPORT["corpus"]
    assert corpus["rated_texts_distinct"] == len(rated)
    assert corpus["corpus_lines_removed"] == removed
    assert corpus["training_texts"] == len(lines) - removed
    originals = set(long["original"])
    toxic = (data / "test" / "test_10k_toxic").read_text(encoding="utf-8").splitlines()
    assert len(originals) == corpus["tox600_inputs_in_test_10k_toxic"] == 200
    assert originals <= set(toxic)
