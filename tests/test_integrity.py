"""Bad-input catalogue: saved models, cache entries, lexicons, word vectors and scorecards are verified before use.

A damaged, truncated or altered file that a user gives tsteval is one clear error naming the file (never a library
traceback, a hang or a silently different number); the same damage in a cache entry is rebuilt with a notice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from badinput import NEGATIVE, POSITIVE, Outcome, expect_error, run_cli, sentences
from safetensors.numpy import load_file, save_file

from tsteval.classifiers.base import MANIFEST, make_classifier
from tsteval.classifiers.pairs import MATCH, NO_MATCH, FeaturePairClassifier
from tsteval.core.cache import MARKER
from tsteval.core.errors import InputError
from tsteval.core.integrity import integrity_hash
from tsteval.metrics.content.word_vectors import WordVectors
from tsteval.scorecard import Scorecard


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Style files, aligned input/output files and a tfidf-lr model saved by the library."""
    root = tmp_path_factory.mktemp("integrity")
    neg, pos = sentences(NEGATIVE, 0), sentences(POSITIVE, 1)
    (root / "neg.txt").write_text("\n".join(neg) + "\n")
    (root / "pos.txt").write_text("\n".join(pos) + "\n")
    (root / "in.txt").write_text("the food was cold and the staff was rude .\nthe pizza was bland .\n")
    (root / "out.txt").write_text("the food was warm and the staff was friendly .\nthe pizza was tasty .\n")
    make_classifier("tfidf-lr").fit(neg + pos, ["neg"] * len(neg) + ["pos"] * len(pos)).save(root / "model")
    return root


def _copy_model(data: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(data / "model", tmp_path / "model"))


def _score(data: Path, model: Path, out: Path, capsys: pytest.CaptureFixture) -> Outcome:
    return run_cli(["score", "--classifier", f"m={model}", "--pairs", data / "in.txt", data / "out.txt",
                    "--source-style", "neg", "--target-style", "pos", "--out", out, "--quiet"], capsys)


def _score_error(data: Path, model: Path, tmp_path: Path, capsys: pytest.CaptureFixture, *fragments: str) -> None:
    expect_error(["score", "--classifier", f"m={model}", "--pairs", data / "in.txt", data / "out.txt",
                  "--source-style", "neg", "--target-style", "pos", "--out", tmp_path / "run", "--quiet"],
                 capsys, *fragments)
    assert not (tmp_path / "run").exists()


def _edit_manifest(model: Path, change, *, rehash: bool = False) -> None:
    manifest = json.loads((model / MANIFEST).read_text())
    change(manifest)
    if rehash:
        manifest["integrity"] = integrity_hash({k: manifest[k] for k in ("backend", "params", "classes", "files")})
    (model / MANIFEST).write_text(json.dumps(manifest, indent=2))


def _negate_weights(path: Path) -> None:
    """Rewrite a logistic-regression safetensors file with every weight negated: a valid file, other numbers."""
    weights = load_file(str(path))
    save_file({name: np.ascontiguousarray(-array) for name, array in weights.items()}, str(path))


def _truncate(path: Path, keep: float = 0.5) -> None:
    path.write_bytes(path.read_bytes()[:int(path.stat().st_size * keep)])


# --- saved style classifiers -----------------------------------------------------------------------------------

def test_intact_model_scores(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outcome = _score(data, data / "model", tmp_path / "run", capsys)
    assert outcome.code == 0, outcome.err
    assert (pd.read_csv(tmp_path / "run" / "scorecard.csv")["sti@m"] > 0).all()


def test_truncated_fasttext_bin_fails_before_fasttext_reads_it(data: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import fasttext

    texts = (data / "neg.txt").read_text().split("\n")[:-1] + (data / "pos.txt").read_text().split("\n")[:-1]
    model = make_classifier("fasttext", epoch=1).fit(texts, ["neg"] * 60 + ["pos"] * 60).save(tmp_path / "ft")
    _truncate(model / "fasttext.bin", 0.3)

    def reader_reached(*_args: object) -> None:  # fastText's reader hangs and eats memory on a truncated file
        raise AssertionError("fasttext.load_model was handed a damaged file")

    monkeypatch.setattr(fasttext, "load_model", reader_reached)
    _score_error(data, model, tmp_path, capsys, f"{model / 'fasttext.bin'} is damaged or was altered (size ",
                 "retrain or restore it")


def test_truncated_safetensors(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _truncate(model / "logreg.safetensors")
    _score_error(data, model, tmp_path, capsys, f"{model / 'logreg.safetensors'} is damaged or was altered (size ")


def test_garbage_safetensors_of_the_right_size(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    weights = model / "logreg.safetensors"
    weights.write_bytes(b"\x07" * weights.stat().st_size)
    _score_error(data, model, tmp_path, capsys,
                 f"{weights} is damaged or was altered (sha256 mismatch); retrain or restore it")


def test_altered_weights_in_a_valid_file(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _negate_weights(model / "logreg.safetensors")  # every STI sign would flip
    _score_error(data, model, tmp_path, capsys, f"{model / 'logreg.safetensors'} is damaged or was altered "
                 "(sha256 mismatch)")


def test_missing_weight_file(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    (model / "tfidf.json").unlink()
    _score_error(data, model, tmp_path, capsys, f"{model / 'tfidf.json'} is missing (listed in {MANIFEST})")


def test_truncated_manifest(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _truncate(model / MANIFEST)
    _score_error(data, model, tmp_path, capsys, f"{model / MANIFEST}:", "the manifest is not valid JSON",
                 "retrain the model or restore its directory")


def test_swapped_classes(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _edit_manifest(model, lambda m: m["classes"].reverse())  # every STI sign would flip
    _score_error(data, model, tmp_path, capsys, f"{model / MANIFEST}: the classes ['pos', 'neg'] are not",
                 "in sorted order")


def test_renamed_classes_break_the_integrity_hash(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _edit_manifest(model, lambda m: m.update(classes=["negative", "positive"]))
    _score_error(data, model, tmp_path, capsys, "the manifest was edited", "integrity hash")


def test_edited_parameter_breaks_the_integrity_hash(data: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _edit_manifest(model, lambda m: m["params"].update(ngram_range=[1, 1]))
    _score_error(data, model, tmp_path, capsys, "the manifest was edited")


def test_unknown_parameter(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)  # e.g. saved by a newer tsteval: the integrity hash is consistent
    _edit_manifest(model, lambda m: m["params"].update(tokenizer="bpe"), rehash=True)
    _score_error(data, model, tmp_path, capsys, "unknown parameters ['tokenizer'] for backend 'tfidf-lr'",
                 "which accepts ['ngram_range', 'min_df', 'C', 'max_iter', 'seed']")


def test_manifest_without_hashes(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    _edit_manifest(model, lambda m: [m.pop("files"), m.pop("integrity")])
    _score_error(data, model, tmp_path, capsys, "saved without file hashes", "fix: retrain it")


def test_manifest_with_a_path_outside_the_model(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    model = _copy_model(data, tmp_path)
    record = {"sha256": "0" * 64, "size": 1}
    _edit_manifest(model, lambda m: m["files"].update({"../outside.bin": record}), rehash=True)
    _score_error(data, model, tmp_path, capsys, "'../outside.bin', which is not a path inside the directory")


# --- the cache -------------------------------------------------------------------------------------------------

def _train(data: Path, out: Path, capsys: pytest.CaptureFixture) -> Outcome:
    outcome = run_cli(["train-classifier", "tfidf-lr", "--style", f"neg={data / 'neg.txt'}",
                       "--style", f"pos={data / 'pos.txt'}", "--out", out, "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    return outcome


@pytest.fixture
def cached(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
           capsys: pytest.CaptureFixture) -> tuple[Path, pd.DataFrame]:
    """A model trained through the CLI into a fresh cache: (its cache entry, its scorecard)."""
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path / "cache"))
    _train(data, tmp_path / "first", capsys)
    assert _score(data, tmp_path / "first", tmp_path / "run-first", capsys).code == 0
    (entry,) = (tmp_path / "cache" / "classifiers").iterdir()
    return entry, pd.read_csv(tmp_path / "run-first" / "scorecard.csv")


def _rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture, entry: Path, scores: pd.DataFrame,
             damaged: str) -> None:
    """Training again must rebuild the entry with the notice and give the first model's scores exactly."""
    outcome = _train(data, tmp_path / "again", capsys)
    notice = f"tsteval: cache entry classifiers/{entry.name} was damaged ({damaged}"
    assert notice in outcome.err and "; rebuilding" in outcome.err, outcome.err
    assert _score(data, tmp_path / "again", tmp_path / "run-again", capsys).code == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "run-again" / "scorecard.csv"), scores)
    assert "was damaged" not in _train(data, tmp_path / "third", capsys).err  # the rebuilt entry verifies


def test_intact_cache_entry_is_reused_silently(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                               cached: tuple[Path, pd.DataFrame]) -> None:
    entry, _ = cached
    marker = json.loads((entry / MARKER).read_text())
    assert {"report.json", f"model/{MANIFEST}", "model/logreg.safetensors"} <= set(marker["files"])
    outcome = _train(data, tmp_path / "again", capsys)
    assert "cache entry" not in outcome.err


def test_cache_truncated_safetensors_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    _truncate(entry / "model" / "logreg.safetensors")
    _rebuilt(data, tmp_path, capsys, entry, scores, "model/logreg.safetensors: size ")


def test_cache_altered_weights_are_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                           cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    _negate_weights(entry / "model" / "logreg.safetensors")
    _rebuilt(data, tmp_path, capsys, entry, scores, "model/logreg.safetensors: sha256 mismatch")
    assert (scores["sti@m"] > 0).all()


def test_cache_truncated_report_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                           cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    _truncate(entry / "report.json")
    _rebuilt(data, tmp_path, capsys, entry, scores, "report.json: size ")


def test_cache_edited_model_manifest_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    _edit_manifest(entry / "model", lambda m: m["classes"].reverse())
    _rebuilt(data, tmp_path, capsys, entry, scores, f"model/{MANIFEST}: ")


def test_cache_half_written_entry_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                             cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    (entry / MARKER).unlink()
    _rebuilt(data, tmp_path, capsys, entry, scores, f"{MARKER} missing: half-written")


def test_cache_marker_without_hashes_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    (entry / MARKER).write_text(json.dumps({"key": entry.name, "kind": "classifiers"}))
    _rebuilt(data, tmp_path, capsys, entry, scores, f"{MARKER} has no file hashes")


def test_cache_garbage_marker_is_rebuilt(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                         cached: tuple[Path, pd.DataFrame]) -> None:
    entry, scores = cached
    (entry / MARKER).write_bytes(b"\xff\x00{")
    _rebuilt(data, tmp_path, capsys, entry, scores, f"{MARKER} unreadable")


# --- pair classifiers (score --hh) -----------------------------------------------------------------------------

def test_damaged_pair_classifier(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pos = (data / "pos.txt").read_text().split("\n")[:20]
    pairs = [(a, a.replace("the", "a", 1)) for a in pos] + [(pos[i], pos[-1 - i]) for i in range(20)]
    model = FeaturePairClassifier().fit(pairs, [MATCH] * 20 + [NO_MATCH] * 20).save(tmp_path / "hh")
    argv = ["score", "--hh", f"hh={model}", "--pairs", data / "in.txt", data / "out.txt", "--source-style", "neg",
            "--target-style", "pos", "--quiet"]
    assert run_cli([*argv, "--out", tmp_path / "ok"], capsys).code == 0
    _truncate(model / "vectorizers.json")
    expect_error([*argv, "--out", tmp_path / "run"], capsys,
                 f"{model / 'vectorizers.json'} is damaged or was altered (size ")


# --- lexicons --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("content", "fragments"), [
    (b'{"neg": [["bad", -1.5], ["awf', ("lexicon.json:1: the lexicon is not valid JSON: Unterminated string",)),
    (b"\x89PNG\r\n\x1a\n\x00\x00", ("lexicon.json: the lexicon is not UTF-8",)),
    (b'[["bad", -1.5]]', ("lexicon.json: expected a JSON object {style: [[word, weight], ...]}, got list",)),
    (b"{}", ("lexicon.json: the lexicon has no styles",)),
    (b'{"neg": [["bad", "heavy"]]}', ("lexicon.json: style 'neg', word 'bad': the weight 'heavy' is not",)),
    (b"[" * 100_000, ("lexicon.json: the lexicon nests too deeply",)),
])
def test_damaged_lexicon(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture, content: bytes,
                         fragments: tuple[str, ...]) -> None:
    (tmp_path / "lexicon.json").write_bytes(content)
    expect_error(["score", "--pairs", data / "in.txt", data / "out.txt", "--source-style", "neg", "--target-style",
                  "pos", "--content", "bleu", "--modification", "mask", "--lexicon", tmp_path / "lexicon.json",
                  "--out", tmp_path / "run", "--quiet"], capsys, *fragments)


# --- word vectors ----------------------------------------------------------------------------------------------

def _vectors_dir(tmp_path: Path) -> Path:
    words = sorted({w for line in ("the food was cold", "the food was warm") for w in line.split()})
    directory = tmp_path / "vectors"
    directory.mkdir()
    WordVectors({w: i for i, w in enumerate(words)}, np.random.default_rng(0).normal(size=(len(words), 8))).save(
        directory)
    return directory


def _score_vectors(data: Path, vectors: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                   *fragments: str) -> None:
    expect_error(["score", "--pairs", data / "in.txt", data / "out.txt", "--source-style", "neg", "--target-style",
                  "pos", "--content", "embed_avg", "--vectors", vectors, "--out", tmp_path / "run", "--quiet"],
                 capsys, *fragments)


def test_non_finite_word_vectors(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    vectors = _vectors_dir(tmp_path)
    meta = json.loads((vectors / "vocab.json").read_text())
    del meta["files"]  # a directory written by hand, without the file record
    (vectors / "vocab.json").write_text(json.dumps(meta))
    np.save(vectors / "vectors.npy", np.full((len(meta["words"]), 8), np.nan, dtype=np.float32))
    _score_vectors(data, vectors, tmp_path, capsys, f"{vectors / 'vectors.npy'}: 5 of 5 word vectors hold NaN or "
                   "infinite values")


def test_altered_word_vectors(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    vectors = _vectors_dir(tmp_path)
    np.save(vectors / "vectors.npy", -np.load(vectors / "vectors.npy"))
    _score_vectors(data, vectors, tmp_path, capsys, f"{vectors / 'vectors.npy'}: the file is damaged or was altered "
                   "(sha256 mismatch)")


def test_truncated_word_vectors_without_record(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    vectors = _vectors_dir(tmp_path)
    meta = json.loads((vectors / "vocab.json").read_text())
    del meta["files"]
    (vectors / "vocab.json").write_text(json.dumps(meta))
    _truncate(vectors / "vectors.npy", 0.8)
    _score_vectors(data, vectors, tmp_path, capsys, f"{vectors / 'vectors.npy'}: not a readable NumPy .npy array")


def test_garbage_word_vector_vocabulary(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    vectors = _vectors_dir(tmp_path)
    (vectors / "vocab.json").write_text('{"source": "x", "hash": "y", "words": ["the", "the"]}')
    _score_vectors(data, vectors, tmp_path, capsys, f"{vectors / 'vocab.json'}: 'words' must be distinct strings")


def test_word_vectors_refuse_non_finite_values_when_built() -> None:
    with pytest.raises(Exception, match="NaN or infinite"):
        WordVectors({"a": 0, "b": 1}, np.array([[0.0, 1.0], [np.inf, 0.0]]))


# --- scorecards ------------------------------------------------------------------------------------------------

@pytest.fixture
def scorecard_dir(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> Path:
    assert _score(data, data / "model", tmp_path / "run", capsys).code == 0
    return tmp_path / "run"


def test_scorecard_round_trip(scorecard_dir: Path) -> None:
    assert "sti@m" in Scorecard.load(scorecard_dir).metrics


@pytest.mark.parametrize(("damage", "fragment"), [
    (lambda d: _truncate(d / "scorecard.parquet"), "scorecard.parquet: not a readable Parquet table"),
    (lambda d: (d / "signatures.json").write_text('{"sti@m": '),
     "signatures.json:1: the signature file is not valid JSON"),
    (lambda d: (d / "signatures.json").write_text('["sti@m"]'), "signatures.json: expected a JSON object"),
    (lambda d: (d / "signatures.json").write_text('{"bleu@none": "metric:bleu"}'),
     "scorecard.parquet: the table lacks the columns ['bleu@none']"),
    (lambda d: (d / "signatures.json").unlink(), "signatures.json: missing"),
])
def test_damaged_scorecard(scorecard_dir: Path, damage, fragment: str) -> None:
    damage(scorecard_dir)
    with pytest.raises(InputError) as error:
        Scorecard.load(scorecard_dir)
    assert fragment in str(error.value)


def test_an_unwritable_cache_is_one_line(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """TSTEVAL_CACHE where no folder can be made (here: under a file; for a non-root user also a read-only
    folder) was an internal error from ``mkdir``."""
    (tmp_path / "file").write_text("not a folder\n")
    monkeypatch.setenv("TSTEVAL_CACHE", str(tmp_path / "file" / "cache"))
    expect_error(["train-classifier", "tfidf-lr", "--style", f"neg={data / 'neg.txt'}", "--style",
                  f"pos={data / 'pos.txt'}", "--out", tmp_path / "model", "--quiet"], capsys,
                 f"cannot write the cache: {tmp_path / 'file' / 'cache'}",
                 "set TSTEVAL_CACHE to a folder you can write")
    assert not (tmp_path / "model").exists()
