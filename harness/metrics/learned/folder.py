"""A learned metric saved as a folder, as a classifier is: the fine-tuned encoder (safetensors, its tokenizer and
config), ``tsteval-metric.json`` (the aspect, the shape, the recipe, the rated sets trained on with the sha256 of
their files, the held-out report, and every file's size and sha256, verified before the model is read) and
``training-texts.json`` (the hash set of every input and output it was trained or early-stopped on,
:mod:`tsteval.classifiers.training_texts`), so a run counts the scored pairs it saw in training.

Its identity in signatures is ``learned-SHAPE@HASH``, the hash over the aspect, shape and its files' sha256: the
same files give one identity wherever the folder lies.  The score of a pair is, for the ``bi`` shape, the cosine
of the two mean-pooled embeddings (the ``sbert`` code path with this encoder, its embedding cache included); for
``cross``, the sigmoid of the head's output on the pair read together (in (0, 1): monotone in the logit, and
bounded so that the empty-text policy's maximum, 1, is the top of the scale); for ``single`` (naturalness), the
sigmoid of the head's output on the output alone; always in float32 (the identity does not name a precision).  A
text longer than the model reads (256 word pieces a text for ``bi``, 512 the pair for ``cross``, 512 the output for
``single``) is counted as cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from tsteval.core.errors import InputError, TstevalError

MANIFEST = "tsteval-metric.json"
KIND = "tsteval-learned-metric"
PAIR_LIMIT = 512


@dataclass(frozen=True)
class LearnedFolder:
    """A saved learned metric: its folder, manifest and identity."""

    path: Path
    manifest: Mapping[str, object]
    identity: str
    digests: frozenset[bytes] = field(default=frozenset(), repr=False)

    @property
    def shape(self) -> str:
        return str(self.manifest["shape"])

    @property
    def aspect(self) -> str:
        return str(self.manifest["aspect"])

    @property
    def sets(self) -> list[str]:
        """The rated sets it was trained on."""
        return list(self.manifest["sets"])


def save(model: object, directory: Path, *, aspect: str, sets: Mapping[str, object], recipe: Mapping[str, object],
         report: Mapping[str, object], base: str, digests: frozenset[bytes]) -> None:
    """Write the trained :class:`~tsteval.metrics.learned.training.PairModel` ``model`` and its manifest into
    ``directory`` (a new temporary folder: :func:`tsteval.core.atomic.output_directory`)."""
    from tsteval.classifiers.training_texts import TRAINING_TEXTS, write_training_texts
    from tsteval.core.integrity import files_under, record_files
    from tsteval.core.signature import package_version

    model.model.save_pretrained(directory, safe_serialization=True)
    model.tokenizer.save_pretrained(directory)
    write_training_texts(directory, digests)
    files = record_files(directory, files_under(directory, exclude=(MANIFEST,)))
    assert TRAINING_TEXTS in files
    manifest = {"kind": KIND, "aspect": aspect, "shape": recipe["shape"], "base": base, "recipe": dict(recipe),
                "sets": dict(sets), "report": dict(report), "tsteval": package_version("tsteval"), "files": files}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1, default=str) + "\n", encoding="utf-8")


def load(directory: str | Path) -> LearnedFolder:
    """The learned metric saved in ``directory``, its files verified; a folder that is not one is one line saying
    why."""
    from tsteval.classifiers.base import not_saved
    from tsteval.classifiers.training_texts import read_training_texts
    from tsteval.core.errors import read_json
    from tsteval.core.integrity import file_problem, records_problem
    from tsteval.core.signature import content_hash

    path = Path(directory)
    if not (path / MANIFEST).is_file():
        raise TstevalError(not_saved(path, MANIFEST, "learned-metric") + " (make one with tsteval train-metric)")
    manifest = read_json(path / MANIFEST, "learned-metric manifest")
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND:
        raise InputError(f"not a learned-metric manifest (kind {manifest.get('kind')!r})"
                         if isinstance(manifest, dict) else "the manifest is not an object", path=path / MANIFEST,
                         fix="point at a folder written by tsteval train-metric")
    problem = records_problem(manifest.get("files"))
    if problem is None:
        found = file_problem(path, manifest["files"])
        problem = None if found is None else f"{found[0]}: {found[1]}"
    if problem is not None:
        raise InputError(f"the learned metric's files do not match its manifest ({problem})", path=path,
                         fix="copy the folder again or retrain it with tsteval train-metric")
    files = {name: record["sha256"] for name, record in manifest["files"].items()}
    identity = f"learned-{manifest['shape']}@{content_hash(manifest['aspect'], manifest['shape'], files)}"
    return LearnedFolder(path, manifest, identity, read_training_texts(path))


def in_training(folder: LearnedFolder, inputs: Sequence[str], outputs: Sequence[str]) -> np.ndarray:
    """Per pair, whether its input or output is in ``folder``'s training texts (normalised as a classifier's)."""
    from tsteval.classifiers.training_texts import digest

    return np.array([digest(i) in folder.digests or digest(o) in folder.digests
                     for i, o in zip(inputs, outputs, strict=True)], dtype=bool)


def refuse_in_set(folder: LearnedFolder, inputs: Sequence[str], outputs: Sequence[str], label: str,
                  name: str | None = None) -> None:
    """Refuse to meta-evaluate ``folder`` on pairs it was trained on (the set ``label``, a built-in set's ``name``):
    a correlation there is a training figure."""
    seen = int(in_training(folder, inputs, outputs).sum())
    if seen:
        raise InputError(f"set {label}: the learned metric {folder.identity} was trained on {seen:,} of its "
                         f"{len(inputs):,} pairs (it was trained on {', '.join(folder.sets)}); a learned metric is "
                         "evaluated only out of set", path=str(folder.path),
                         fix=f"train one without this set (tsteval train-metric --exclude-set {name or 'NAME'})")


@lru_cache(maxsize=4)
def _head_model(folder: str, device: str) -> tuple[object, object]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(folder).to(device).eval()
    return AutoTokenizer.from_pretrained(folder), model


class LearnedScorer:
    """A loaded learned metric, ready to score pairs (the resource the ``learned`` metric receives; a ``single``
    model reads the outputs alone)."""

    def __init__(self, folder: LearnedFolder, *, device: str = "cpu", threads: int | None = None,
                 batch_size: int = 32) -> None:
        from tsteval.metrics.content.sentence_embedding import SentenceEncoder

        self.folder, self.device, self.threads, self.batch_size = folder, device, threads, batch_size
        self.encoder = (SentenceEncoder(str(folder.path), device=device, threads=threads, precision="fp32")
                        if folder.shape == "bi" else None)

    def scores(self, refs: Sequence[str], hyps: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
        """The score of each pair, whether it was cut, and the limit it was cut at."""
        if self.encoder is not None:
            a, b = self.encoder.embed(refs), self.encoder.embed(hyps)
            cut = self.encoder.truncated(refs) | self.encoder.truncated(hyps)
            return (a * b).sum(1).astype(np.float64), cut, self.encoder.max_length
        import torch

        from tsteval.core.devices import torch_threads

        tokenizer, model = _head_model(str(self.folder.path), self.device)
        values, cut = np.empty(len(refs)), np.zeros(len(refs), dtype=bool)
        with torch_threads(self.threads), torch.inference_mode():
            for start in range(0, len(refs), self.batch_size):
                a, b = list(refs[start:start + self.batch_size]), list(hyps[start:start + self.batch_size])
                texts = (b,) if self.folder.shape == "single" else (a, b)
                lengths = [len(ids) for ids in tokenizer(*texts)["input_ids"]]
                cut[start:start + len(a)] = np.array(lengths) > PAIR_LIMIT
                batch = tokenizer(*texts, padding=True, truncation="longest_first", max_length=PAIR_LIMIT,
                                  return_tensors="pt").to(self.device)
                values[start:start + len(a)] = torch.sigmoid(model(**batch).logits[:, 0].float()).cpu().numpy()
        return values, cut, PAIR_LIMIT


def learned_score(refs: Sequence[str], hyps: Sequence[str], learned: LearnedScorer,
                  tokens: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None) -> object:
    """The learned metric's score of each pair, the empty-text policy applied (both empty 1, one empty 0; a ``bi``
    model's identical texts 1)."""
    from tsteval.metrics.content.policy import apply_policy, pair_tokens

    refs, hyps = list(refs), list(hyps)
    values, cut, limit = learned.scores(refs, hyps)
    ref_tokens, hyp_tokens = pair_tokens(refs, hyps, tokens)
    cosine = learned.folder.shape == "bi"  # a cosine is 1 for identical texts; a head's score has no such maximum
    return apply_policy(values, ref_tokens, hyp_tokens, truncated=cut, max_tokens=limit,
                        texts=(refs, hyps) if cosine else None)


def build_learned(resources: object, variant: str) -> object:
    """The run's learned content metric (the ``learned`` option: a folder from ``tsteval train-metric``)."""
    from tsteval.metrics.resources import Built

    options = resources.options
    if options.learned is None:
        raise TstevalError("the learned metric needs a trained model: give --learned DIR (from tsteval "
                           "train-metric; learned= in evaluate; metrics.content.learned in a manifest)")
    from tsteval.core.devices import resolve_device

    folder = load(options.learned)
    if folder.aspect != "content":
        raise TstevalError(f"the learned metric in {folder.path} scores {folder.aspect}, not content: --learned "
                           "takes a content model (tsteval train-metric content)")

    scorer = LearnedScorer(folder, device=resolve_device(options.device), threads=options.threads)
    resources.log(f"learned metric {folder.identity} ({folder.shape}, trained on {', '.join(folder.sets)})")
    return Built(scorer, folder.identity)
