"""Shared fixtures: the real data root and small real slices of it; how a parallel run shares out the files.

In CI (``CI`` set) a missing data root fails the run; elsewhere tests that need data skip with
the reason shown by ``-ra``.

``make test`` runs the suite on two pytest-xdist workers, then the tests marked ``solo`` alone (the packaged Qwen:
6.2 GB of float32 weights, beside which a second worker would pass the 8 GB budget).  A worker takes whole files
(:func:`pytest_xdist_make_scheduler`), so a module's fixtures (a model, a trained classifier, a server) are built
once, as in a serial run; files that start a machine-wide resource (a local Ray cluster) share one worker, one after
the other; and the files that take longest are handed out first (:func:`pytest_collection_modifyitems`), so that
neither worker is left with a long file at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tsteval.core.devices import torch_threads  # noqa: F401  (tests import it from here)
from tsteval.core.records import Corpus

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


# Files that must not run at the same time as each other, by the name of what they share.
SHARED = {"test_ray_engine.py": "a local Ray cluster", "test_bertscore.py": "a local Ray cluster"}
# The longest files first (their summed test durations in make test on the 2-core machine, 2026-12-03, longest
# first: docs 120 s, bench_gpu 99, remote_lm 90, ray_engine with bertscore 80, judges 56, ...); the others keep their
# order.
LONGEST_FIRST = ("test_docs.py", "test_bench_gpu.py", "test_remote_lm.py", "test_ray_engine.py", "test_bertscore.py",
                 "test_judges.py", "test_metric_plumbing.py", "test_fluency.py",
                 "test_classifiers.py", "test_learned_metric.py", "test_overlap.py", "test_outputs.py",
                 "test_ranking.py", "test_profile_columns.py", "test_experiment.py", "test_hf_classifier.py",
                 "test_packaging.py", "test_quantization_cost.py", "test_annotate_browser.py", "test_logprop.py")
_HELD: list[object] = []  # in a worker: its thread limits, for as long as it lives


def pytest_configure(config: pytest.Config) -> None:
    """In a pytest-xdist worker (make test: one per core), torch, BLAS and OpenMP run one thread, in the worker and in
    the processes its tests start, whatever a test asks for: two threads per worker would oversubscribe the cores, and
    OpenMP's waiting threads spin (text-CNN training on a loaded 2-core machine: 24 s of CPU with two threads, 2.3 s
    with one)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"
    import torch
    from threadpoolctl import threadpool_limits

    _HELD.append(threadpool_limits(1))
    set_threads = torch.set_num_threads
    set_threads(1)
    torch.set_num_threads = lambda _threads: set_threads(1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of :data:`LONGEST_FIRST` first, in that order (each file's tests keep theirs)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Whole files to a worker (those of :data:`SHARED` together), in the order collected."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = nodeid.split("::", 1)[0]
            return SHARED.get(Path(file).name, file)

    config.option.loadscopereorder = False  # keep LONGEST_FIRST (xdist would order the files by their test count)
    return FileScheduling(config, log)


def _data_root() -> Path:
    env = os.environ.get("TSTEVAL_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real data root; fails in CI and skips elsewhere when it is missing."""
    root = _data_root()
    if not root.is_dir():
        message = f"data root {root} not found; set TSTEVAL_DATA"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return root


# Cache kinds of the packaged LMs, joined (gguf) and converted to safetensors (lm): what a test's own empty cache
# links to the run's (fresh_cache), so that a model is converted once per run, not once per test.
MODEL_KINDS = ("gguf", "lm")


def run_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's cache: one for all workers of a parallel run (beside their temporary folders), so that each model is
    converted once, not once per worker (concurrent builds of one entry are safe: tsteval.core.cache)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "cache"


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep trained-model caches of tests out of the user's cache (session-wide, so module fixtures too), and make
    ``--precision auto`` mean fp32 whatever the host's CPU (in the processes tests start too): values compared with
    fp32 references must not depend on the machine (test_precision.py fakes each capability)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TSTEVAL_CACHE", str(run_cache(tmp_path_factory)))
        patch.setenv("TSTEVAL_NATIVE_BF16", "0")
        yield


@pytest.fixture
def fresh_cache(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ``TSTEVAL_CACHE`` for one test (nothing scored, answered or trained in it) whose packaged LMs are the
    run's (:data:`MODEL_KINDS` linked)."""
    root = tmp_path / "cache"
    root.mkdir()
    for kind in MODEL_KINDS:
        shared = run_cache(tmp_path_factory) / kind
        shared.mkdir(parents=True, exist_ok=True)
        (root / kind).symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv("TSTEVAL_CACHE", str(root))
    return root


def read_slice(path: Path, n: int, start: int = 0) -> list[str]:
    """Lines ``start .. start+n`` of a UTF-8 text file, stripped."""
    with open(path, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle]
    return lines[start:start + n]


@pytest.fixture(scope="session")
def yelp_slice(data_root: Path) -> tuple[list[str], list[str]]:
    """2,000 real Yelp dev sentences per sentiment (0 = negative, 1 = positive), interleaved."""
    neg = read_slice(data_root / "yelp" / "sentiment.dev.0", 2000)
    pos = read_slice(data_root / "yelp" / "sentiment.dev.1", 2000)
    texts = [t for pair in zip(neg, pos, strict=True) for t in pair]
    labels = ["0", "1"] * 2000
    return texts, labels


def cds_corpus(data_root: Path, styles: tuple[str, ...], n: int) -> Corpus:
    """The first ``n`` sentences of each named Corpus-of-Diverse-Styles file, labelled by style."""
    texts: list[str] = []
    labels: list[str] = []
    for style in styles:
        lines = read_slice(data_root / "cds" / f"{style}.txt", n)
        texts += lines
        labels += [style] * len(lines)
    return Corpus(texts, labels, "cds")


def tiny_bert(directory: Path) -> Path:
    """A randomly initialised 2-layer BERT (hidden size 64, seed 0) with the all-MiniLM-L6-v2 tokenizer, saved in
    ``directory``: fine-tuned in a few seconds, for the attribution tests."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from tsteval.classifiers.transformer import default_model_path

    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
