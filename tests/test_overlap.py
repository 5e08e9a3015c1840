"""A CUDA run's CPU-side metrics in worker processes beside the GPU (:mod:`tsteval.experiment.run.overlap`), checked on
the CPU by switching the overlap on: the scorecard equals the sequential one (values, signatures, column order),
and an unknown style is the same one line, before any work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import tsteval.experiment.run.overlap as overlap
from tsteval.classifiers.base import make_classifier
from tsteval.cli.main import main
from tsteval.core.records import Corpus
from tsteval.lexicons.builder import build_lexicon
from tsteval.readers.dualrl import load_dualrl
from tsteval.scorecard import Scorecard


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory, yelp_slice: tuple[list[str], list[str]]) -> Path:
    """A saved TF-IDF classifier and lexicon (real Yelp dev text) and 2 x 2 x 12 DualRL Yelp transfers."""
    root = tmp_path_factory.mktemp("overlap")
    texts, labels = yelp_slice
    clf = make_classifier("tfidf-lr")
    clf.fit(texts[:1000], labels[:1000])
    clf.save(root / "clf")
    build_lexicon(Corpus(texts, labels, "yelp dev")).save(root / "lexicon.json")
    frame = load_dualrl("yelp", ["DualRL", "DeleteOnly_Li"]).frame
    frame.groupby(["system", "source_style"]).head(12).to_parquet(root / "transfers.parquet", index=False)
    return root


def _score(inputs: Path, out: Path, table: str = "transfers.parquet") -> int:
    return main(["score", "--classifier", f"lr={inputs / 'clf'}", "--table", str(inputs / table),
                 "--content", "bleu,sbert,chrf", "--modification", "none,mask", "--lexicon",
                 str(inputs / "lexicon.json"), "--naturalness", "kn3,unigram", "--folds", "2", "--out", str(out)])


def test_overlapped_scorecard_equals_the_sequential_one(inputs: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert _score(inputs, tmp_path / "sequential") == 0
    monkeypatch.setattr(overlap, "overlap_workers", lambda *_args: 2)  # as on a CUDA machine with 3 cores
    sent, natural = [], []
    start_sentences, start_naturalness = overlap.Overlap.start_sentences, overlap.Overlap.start_naturalness

    def spy_sentences(self: overlap.Overlap, card: Scorecard, job: object) -> object:
        rest = start_sentences(self, card, job)
        sent.append((list(self.cpu_job.models), self.cpu_job.content, rest.content, len(self.blocks)))
        return rest

    def spy_naturalness(self: overlap.Overlap, *args: object) -> None:
        start_naturalness(self, *args)
        natural.append((sorted(self.natural), {name: len(tasks) for name, (tasks, *_) in self.grouped.items()}))

    monkeypatch.setattr(overlap.Overlap, "start_sentences", spy_sentences)
    monkeypatch.setattr(overlap.Overlap, "start_naturalness", spy_naturalness)
    assert _score(inputs, tmp_path / "overlapped") == 0
    # the workers took the classifier, BLEU and chrF over 8 blocks, and both naturalness scorers (unigram as a task
    # per system and setting: 2 systems x 1 setting); sbert stayed here
    assert sent == [(["lr"], ("bleu", "chrf"), ("sbert",), 8)] and natural == [(["kn3"], {"unigram": 2})]
    first, second = Scorecard.load(tmp_path / "sequential"), Scorecard.load(tmp_path / "overlapped")
    assert second.metrics == first.metrics  # the sequential order: style, then content by modification, ...
    assert second.metrics.index("bleu@none") < second.metrics.index("sbert@none") < second.metrics.index("bleu@mask")
    assert second.signatures == first.signatures
    pd.testing.assert_frame_equal(second.frame, first.frame, check_exact=True)
    for name in ("summary.csv", "scorecard.csv"):
        assert (tmp_path / "overlapped" / name).read_bytes() == (tmp_path / "sequential" / name).read_bytes()


def test_an_unknown_style_is_one_line_before_the_workers_start(inputs: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    frame = pd.read_parquet(inputs / "transfers.parquet")
    frame.loc[0, "target_style"] = "2"  # a style the classifier does not know
    frame.to_parquet(tmp_path / "bad.parquet", index=False)
    (tmp_path / "bad.parquet").rename(inputs / "bad.parquet")
    assert _score(inputs, tmp_path / "sequential", "bad.parquet") == 2
    sequential = capsys.readouterr().err
    monkeypatch.setattr(overlap, "overlap_workers", lambda *_args: 2)
    gathered = []
    merge = overlap.merge
    monkeypatch.setattr(overlap, "merge", lambda *args: gathered.append(len(args[1])) or merge(*args))
    assert _score(inputs, tmp_path / "run", "bad.parquet") == 2
    err = capsys.readouterr().err
    assert gathered == [] and err == sequential  # checked before any block is sent: the same line
    assert "Traceback" not in err and "'2'" in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


def test_the_worker_pool_outlives_a_run() -> None:
    """Runs of one process share the pool of their size (only the first pays the start-up); another size replaces
    it, and a pool that was shut down refuses work."""
    first = overlap.worker_pool(1)
    assert overlap.worker_pool(1) is first and first.submit(sum, [1, 2]).result() == 3
    second = overlap.worker_pool(2)
    assert second is not first and overlap._POOLS == {2: second}
    with pytest.raises(RuntimeError, match="shutdown"):
        first.submit(sum, [1])


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [pool["num_threads"] for pool in threadpool_info()]


def _worker_state() -> tuple[list[int], bool]:
    from tsteval.core.progress import is_quiet

    return _blas_threads(), is_quiet()


def test_a_worker_runs_one_blas_thread_and_shows_no_bars() -> None:
    """The workers are the cores: each runs one BLAS/OpenMP thread (else the unigram classifiers' fits, spread
    over the workers, oversubscribe the machine), and stays quiet for as long as it lives."""
    threads, quiet = overlap.worker_pool(2).submit(_worker_state).result()  # the size the tests above left
    assert threads and set(threads) == {1}
    assert quiet


# In a fresh process: a progress bar of 2 steps of 1.1 s (shown after 2 s) in a worker, and one in the process itself
BARS = """
import time
from tsteval.core.progress import progress
from tsteval.experiment.run.overlap import worker_pool

def steps(what):
    for _ in progress(range(2), what):
        time.sleep(1.1)

if __name__ == "__main__":
    future = worker_pool(1).submit(steps, "worker-bar")
    steps("parent-bar")
    future.result()
"""


def test_a_worker_prints_no_progress_bar(tmp_path: Path) -> None:
    """A worker's progress bars stay off (they would interleave with the run's own; under ``--quiet`` nothing may
    show): its standard error, inherited from the process, stays empty while the process's own bar shows."""
    script = tmp_path / "bars.py"
    script.write_text(BARS)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "parent-bar" in done.stderr  # a bar that lasts does show on standard error ...
    assert "worker-bar" not in done.stderr  # ... but not a worker's
