"""The hooks of ``style_ensemble.yaml``: the calibrated ensemble style classifier, each member alone and each member
inside it (before and after its temperature), trained on one corpus per rated set with the same stratified 10% held
out; their style columns on the set's rows, a set per Mir model, and their held-out accuracy and calibration.

Mir: Yelp dev + test without any copy of Mir et al.'s rated inputs (:func:`benchmarks.common.mir_and_yelp`). Lai:
DualRL's GYAFC sentences (the test sets and the four references of each direction, lower-cased and tokenised) without
Lai et al.'s rated inputs and outputs; the rated texts are written the same way, so no classifier sees case. The
fine-tuned MiniLM is trained alone on GYAFC too (in fp32: ``auto`` trains in bf16 where the CPU has it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import pandas as pd

HELDOUT = 0.1
MEMBERS = ("fasttext", "tfidf-lr")
EXTRA = {"lai": {"transformer": {"epochs": 1, "verbose": False, "precision": "fp32"}}}
METRICS = ("target_prob", "sti", "sti_norm")
CORPUS = {"mir": "Yelp dev + test without Mir's rated inputs", "lai": "DualRL's GYAFC without Lai's rated texts"}


@dataclass
class Scaled:
    """A fitted classifier's probabilities at a temperature (an ensemble member as the ensemble uses it)."""

    model: object
    temperature: float

    @property
    def classes_(self) -> np.ndarray:
        return self.model.classes_

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        from tsteval.classifiers.calibration import apply_temperature

        return apply_temperature(self.model.predict_proba(texts), self.temperature)


def normalise(text: str) -> str:
    """Lower-cased tsteval tokens joined by spaces (GYAFC in DualRL's release is lower-cased and tokenised)."""
    from tsteval.core.tokenize import tokenize

    return " ".join(tokenize(text))


def gyafc_corpus() -> object:
    """Formal and informal GYAFC sentences of DualRL's release (formal = ``test.0`` + ``reference*.1``, informal =
    ``test.1`` + ``reference*.0``), normalised, without Lai et al.'s rated inputs and outputs."""
    from tsteval.core.datapaths import dataset_dir
    from tsteval.core.records import Corpus
    from tsteval.readers.lai import load_lai
    from tsteval.readers.lines import load_style_files

    root, rated = dataset_dir("dualrl"), load_lai().frame
    files = {style: [root / "data" / "GYAFC" / f"test.{side}",
                     *(root / "references" / "GYAFC" / f"reference{i}.{1 - int(side)}" for i in range(4))]
             for style, side in (("formal", "0"), ("informal", "1"))}
    corpus = load_style_files(files)
    return Corpus([normalise(t) for t in corpus.texts], corpus.labels, corpus.origin).without(
        {normalise(t) for t in (*rated["input"], *rated["output"])})


@cache  # the column hook (once per set) and the describe hook read it
def trained(name: str) -> dict:
    """Every classifier of set ``name`` (``mir``, ``lai``) by its page name, its held-out rows and the corpus's size;
    seeded 0 whatever the study's seed, so that the describe hook (given none) reads the columns' models."""
    from benchmarks.common import mir_and_yelp
    from tsteval.classifiers.calibration import apply_temperature, expected_calibration_error, temperature_nll
    from tsteval.classifiers.training import split_heldout, train_classifier

    corpus = mir_and_yelp()[1] if name == "mir" else gyafc_corpus()
    _, _, test_x, test_y = split_heldout(corpus, HELDOUT, 0)
    models, rows = {}, []

    def row(model: str, kind: str, proba: np.ndarray, y: np.ndarray, temperature: float | None) -> None:
        rows.append({"corpus": name, "model": model, "kind": kind, "temperature": temperature,
                     "accuracy": float(np.mean(proba.argmax(axis=1) == y)), "nll": temperature_nll(proba, y, 1.0),
                     "ece": expected_calibration_error(proba, y)})

    for backend, params in [*((m, {}) for m in MEMBERS), ("ensemble", {"members": list(MEMBERS)}),
                            *EXTRA.get(name, {}).items()]:
        result = train_classifier(backend, corpus, params, seed=0, heldout=HELDOUT)
        model = result.model
        y = np.array([list(model.classes_).index(label) for label in test_y])
        if backend == "ensemble":
            raw = model.member_probabilities(test_x, calibrated=False)
            for member, fitted in model.members_.items():
                t = model.temperatures_[member]
                row(member, "in ensemble, raw", raw[member], y, None)
                row(member, "in ensemble, temperature-scaled", apply_temperature(raw[member], t), y, t)
                models[f"{member}-in-ensemble"] = (fitted, f"{result.identity}-{member}")
                models[f"{member}-in-ensemble-T"] = (Scaled(fitted, t), f"{result.identity}-{member}-T")
        row(backend, "ensemble (mean of scaled members)" if backend == "ensemble" else "alone, all training texts",
            model.predict_proba(test_x), y, None)
        models[backend] = (model, result.identity)
    return {"models": models, "heldout": rows, "texts": len(corpus), "held_out": len(test_x)}


def columns(data: object, *, seed: int) -> dict[str, np.ndarray]:
    """``target_prob``, ``sti`` and ``sti_norm`` of every classifier of the set on its rows (Lai's texts
    normalised as its corpus is; the seed is unused: the classifiers are :func:`trained`'s)."""
    from tsteval.core.records import Transfers
    from tsteval.metrics.style.scorer import style_columns
    from tsteval.scorecard import Scorecard

    name, frame = data.entry.name, data.frame
    if name == "lai":
        frame = frame.assign(input=frame["input"].map(normalise), output=frame["output"].map(normalise))
    card = Scorecard.from_transfers(Transfers(frame[["system", "setting", "item", "input", "output", "source_style",
                                                     "target_style"]].reset_index(drop=True), name))
    out = {}
    for label, (model, identity) in trained(name)["models"].items():
        style_columns(card, model, label, model_id=identity)
        out |= {f"{m}@{label}": card.frame[f"{m}@{label}"].to_numpy(dtype=float) for m in METRICS}
    return out


def system(data: object, name: str) -> np.ndarray:
    """The rows of one of Mir et al.'s three systems (their per-model tables)."""
    return (data.frame["system"] == name).to_numpy()


caae, arae, dar = (partial(system, name=n) for n in ("CAAE", "ARAE", "DAR"))


def calibration(scores: pd.DataFrame, sets: Mapping[str, object]) -> list[dict]:
    """Held-out accuracy, NLL and top-label ECE (15 equal-width bins) of every model of each corpus, with the
    corpus's size and held-out part."""
    del scores
    out = []
    for name in dict.fromkeys(s.entry.name for s in sets.values()):
        part = trained(name)
        for row in part["heldout"]:
            out.append({**row, "corpus": f"{CORPUS[name]} ({part['texts']:,}; {part['held_out']:,} held out)",
                        "temperature": "—" if row["temperature"] is None else f"{row['temperature']:.4f}",
                        **{k: f"{row[k]:.4f}" for k in ("accuracy", "nll", "ece")}})
    return out
