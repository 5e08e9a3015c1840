"""``tsteval score --engine ray`` on a local two-worker Ray cluster gives the single-process scorecard.

The cluster is started by the test (``ray.init(num_cpus=2)``), scores real DualRL Yelp transfers with a TF-IDF
style classifier, lexical and neural content metrics at two modifications and a Kneser-Ney LM, and its
scorecard is compared with the local engine's value for value.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.classifiers.base import make_classifier
from tsteval.cli.main import main
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import Corpus
from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.blocks import HIT, INFO, ROW, blocks, merge
from tsteval.experiment.run.ray_engine import _tsteval_error, score_sentences_on_ray
from tsteval.experiment.run.sentences import SENTENCE_COLUMNS, SentenceJob, score_sentences
from tsteval.lexicons.builder import build_lexicon
from tsteval.readers.dualrl import load_dualrl
from tsteval.scorecard import Scorecard

# Sentence embeddings are float32 and padded per encoder batch: a block holds other texts than the whole table, so
# the same text meets other padding lengths and GEMM shapes, and its cosine can differ in the last float32 bits
# (measured: at most 2.7e-7).  Every other column must be identical.
SBERT_TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, yelp_slice: tuple[list[str], list[str]]) -> Path:
    """A saved TF-IDF classifier and lexicon (trained on real Yelp dev text) and a Parquet table of 2 x 2 x 15
    DualRL Yelp transfers (two systems, both directions)."""
    root = tmp_path_factory.mktemp("ray")
    texts, labels = yelp_slice
    clf = make_classifier("tfidf-lr")
    clf.fit(texts, labels)
    clf.save(root / "clf")
    build_lexicon(Corpus(texts, labels, "yelp dev")).save(root / "lexicon.json")
    frame = load_dualrl("yelp", ["DualRL", "DeleteOnly_Li"]).frame
    frame.groupby(["system", "source_style"]).head(15).to_parquet(root / "transfers.parquet", index=False)
    return root


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """A local Ray cluster of two CPUs (and two units of a custom resource ``fake_gpu``, standing for GPUs) started
    for these tests, shut down after them."""
    # In CI Ray must be there (make test installs the ray extra); elsewhere the test skips without it.
    ray = importlib.import_module("ray") if os.environ.get("CI") else pytest.importorskip("ray")
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths inside it must stay under 107 characters
    ray.init(address="local", num_cpus=2, resources={"fake_gpu": 2}, include_dashboard=False,
             object_store_memory=256 * 2**20, _temp_dir=temp, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def _score(inputs: Path, out: Path, *extra: str) -> Scorecard:
    argv = ["score", "--quiet", "--classifier", f"lr={inputs / 'clf'}", "--table", str(inputs / "transfers.parquet"),
            "--content", "bleu,chrf,rougeL,sbert", "--modification", "none,mask", "--lexicon",
            str(inputs / "lexicon.json"), "--naturalness", "kn3", "--out", str(out), *extra]
    assert main(argv) == 0
    return Scorecard.load(out)


def test_ray_scorecard_equals_local(inputs: Path, cluster: object, tmp_path: Path) -> None:
    local = _score(inputs, tmp_path / "local")
    distributed = _score(inputs, tmp_path / "ray", "--engine", "ray", "--workers", "2")
    assert len(local.frame) == 60
    assert distributed.metrics == local.metrics
    assert distributed.signatures == local.signatures
    metric_free = [c for c in local.frame.columns if c not in local.signatures]
    pd.testing.assert_frame_equal(distributed.frame[metric_free], local.frame[metric_free])
    for column in local.metrics:
        ours, theirs = distributed.frame[column].to_numpy(), local.frame[column].to_numpy()
        if column.startswith("sbert@"):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=SBERT_TOLERANCE, err_msg=column)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=column)
    summary_local = pd.read_csv(tmp_path / "local" / "summary.csv")
    summary_ray = pd.read_csv(tmp_path / "ray" / "summary.csv")
    exact = ~summary_local["metric"].str.startswith("sbert@")
    pd.testing.assert_frame_equal(summary_ray[exact], summary_local[exact])


def test_neural_metrics_run_on_the_workers_holding_a_gpu(inputs: Path, cluster: object) -> None:
    """As with ``--device cuda`` (the cluster's ``fake_gpu`` standing for its GPUs): ``sbert`` on two workers
    holding one unit each, ``bleu`` on CPU workers, the values those of the local engine."""
    frame = pd.read_parquet(inputs / "transfers.parquet")[list(SENTENCE_COLUMNS)].head(16)
    job = SentenceJob(content=("bleu", "sbert"))
    local, distributed = Scorecard(frame.copy()), Scorecard(frame.copy())
    score_sentences(local, job)
    lines: list[str] = []
    score_sentences_on_ray(distributed, job, workers=2, log=lines.append, accelerator="fake_gpu")
    assert sorted(distributed.metrics) == sorted(local.metrics) == ["bleu@none", "sbert@none"]
    assert distributed.signatures == local.signatures
    np.testing.assert_array_equal(distributed.frame["bleu@none"], local.frame["bleu@none"])
    np.testing.assert_allclose(distributed.frame["sbert@none"], local.frame["sbert@none"], rtol=0,
                               atol=SBERT_TOLERANCE)
    assert [line.split(" on Ray (")[1].split(";")[0] for line in lines] == ["2 workers holding CPU",
                                                                             "2 workers holding CPU, fake_gpu"]
    assert "(sbert)" in lines[1]
    with pytest.raises(TstevalError, match="sbert.* need 3 fake_gpu on the Ray cluster, which has 2"):
        score_sentences_on_ray(Scorecard(frame.copy()), job, workers=3, accelerator="fake_gpu")


def test_merge_puts_rows_back_and_refuses_disagreeing_workers() -> None:
    card = Scorecard(pd.DataFrame({"input": ["b", "a", "b"], "output": ["x", "y", "z"]}))
    parts = blocks(card.frame, workers=1)
    assert [p[ROW].tolist() for p in parts] == [[1], [0], [2]]  # sorted by input, one row per block here

    def scored(signature: str) -> pd.DataFrame:
        rows = pd.concat(parts)
        return pd.DataFrame({ROW: rows[ROW], "m@none": rows[ROW] * 10.0, HIT + "c": [True, False, True],
                             INFO: [json.dumps({"signatures": {"m@none": signature},
                                                "policy": {"m@none": {"both_empty": 0, "one_empty": 1}}})] * 3})

    scores = merge(card, scored("metric:m|v:1"), ["c"])
    assert card.frame["m@none"].tolist() == [0.0, 10.0, 20.0]
    assert scores.policy == {"m@none": {"both_empty": 0, "one_empty": 3}}
    assert scores.hits["c"].tolist() == [False, True, True]
    disagreeing = scored("metric:m|v:1")
    disagreeing.loc[disagreeing.index[-1], INFO] = json.dumps({"signatures": {"m@none": "metric:m|v:2"},
                                                               "policy": {}})
    with pytest.raises(TstevalError, match="disagree on the signature of m@none"):
        merge(Scorecard(card.frame[["input", "output"]].copy()), disagreeing, ["c"])


def test_ray_options_need_the_ray_engine(inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(["score", "--quiet", "--classifier", f"lr={inputs / 'clf'}", "--table",
                 str(inputs / "transfers.parquet"), "--address", "127.0.0.1:6379", "--out", str(tmp_path / "run")])
    assert code == 2
    assert "need the ray engine" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    manifest = tmp_path / "m.yaml"
    manifest.write_text(f"transfers: {{table: {inputs / 'transfers.parquet'}}}\n"
                        "metrics: {content: {metrics: [bleu]}}\nengine: {name: ray, workers: 0}\n")
    with pytest.raises(ManifestError, match="engine.workers"):
        load_manifest(manifest)
    manifest.write_text(manifest.read_text().replace("workers: 0", "address: 'head:6379', workers: 2"))
    plan = Plan.from_manifest(load_manifest(manifest))
    assert (plan.engine, plan.address, plan.workers) == ("ray", "head:6379", 2)


def test_a_workers_tsteval_error_is_found_in_rays_wrapping() -> None:
    original = InputError("line 3 is empty", path="outputs.csv", line=3)
    wrapped = RuntimeError("RayTaskError(InputError)")  # Ray keeps the worker's exception as ``cause``
    wrapped.cause = original
    outer = RuntimeError("dataset failed")
    outer.__cause__ = wrapped
    assert _tsteval_error(outer) is original
    assert _tsteval_error(RuntimeError("a bug")) is None
