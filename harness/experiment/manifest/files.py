"""The files a manifest names, read: its transfers (:func:`load_transfers`) and its training corpus
(:func:`load_corpus`), each sampled as the manifest asks; a plan of a manifest and its classifiers read them here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.manifest.specs import CorpusSpec, TransfersSpec


def load_transfers(spec: TransfersSpec, seed: int) -> Transfers:
    """The transfers a manifest names (published, table or systems x settings x files), sampled if asked."""
    from tsteval.readers import dualrl, lines, tables
    from tsteval.readers.rated import read_rated_set

    if spec.published not in (None, "dualrl"):
        transfers = read_rated_set(spec.published).transfers
    elif spec.published == "dualrl":
        transfers = dualrl.load_dualrl(spec.dataset or "yelp", spec.systems_filter)
    elif spec.table is not None:
        transfers = tables.load_table_transfers(spec.table, hp_cols=spec.hp_cols)
    else:
        parts = []
        for system in spec.systems:
            for setting in system.settings:
                offset = 0
                for f in setting.files:
                    meta = {"system": system.name, "setting": setting.label, "source_style": f.source_style,
                            "target_style": f.target_style}
                    part = (lines.load_tsv_transfers(f.tsv, **meta) if f.tsv is not None
                            else lines.load_parallel_files(f.inputs, f.outputs, **meta))
                    frame = part.frame.assign(item=part.frame["item"] + offset)
                    for name, value in setting.hyperparameters.items():
                        frame[f"hp.{name}"] = value
                    offset += len(frame)
                    parts.append(Transfers(frame, part.origin))
        transfers = Transfers.concat(parts)
    if spec.published not in (None, "dualrl") and spec.systems_filter:
        transfers = transfers.of_systems(spec.systems_filter)
    frame = transfers.frame
    extra = transfers.extra
    if spec.sample is not None:
        before = frame
        items = np.sort(frame["item"].unique())
        if spec.sample < len(items):
            keep = np.random.default_rng(seed).choice(items, spec.sample, replace=False)
            frame = frame[frame["item"].isin(keep)]
        extra = {**extra, "sample": sample_record(before, frame, spec.sample)}
    if frame is not transfers.frame or extra is not transfers.extra:
        transfers = Transfers(frame, transfers.origin, extra)
    return transfers


def sample_record(full: pd.DataFrame, kept: pd.DataFrame, sample: int) -> dict:
    """What ``sample: N`` kept of the transfers ``full``: N items drawn (seeded) from the items of all transfer
    directions together, not N per direction, with the items kept of the items there per direction
    (``"0 → 1": [46, 500]``) and a sentence saying so (``run.json``'s ``sample``, the run's log).

    >>> full = pd.DataFrame({"item": [0, 1, 2, 3], "source_style": ["a", "a", "b", "b"], "target_style": ["b", "b",
    ...                      "a", "a"]})
    >>> sample_record(full, full.iloc[[0, 2, 3]], 3)["text"]
    'sample: 3 items drawn from the 4 of all directions together, not 3 per direction (a → b: 1 of 2, b → a: 2 of 2)'
    """
    def per_direction(frame: pd.DataFrame) -> dict[str, int]:
        return {f"{s} → {t}": int(n) for (s, t), n in frame.groupby(["source_style", "target_style"], sort=False)
                ["item"].nunique().items()}

    drawn = per_direction(kept)
    counts = {direction: [drawn.get(direction, 0), n] for direction, n in per_direction(full).items()}
    k, n = kept["item"].nunique(), full["item"].nunique()
    per = ", ".join(f"{direction}: {a} of {b}" for direction, (a, b) in counts.items())
    text = (f"sample: {k} items drawn from the {n} of all directions together, not {sample} per direction ({per})"
            if len(counts) > 1 else f"sample: {k} of the {n} items ({', '.join(counts)})")
    return {"items": sample, "kept": int(k), "of": int(n), "per_direction": counts, "text": text}


def load_corpus(spec: CorpusSpec, transfers: Transfers, seed: int) -> Corpus:
    """A training corpus without the evaluation inputs (unless ``exclude_inputs: false``), subsampled if asked."""
    from tsteval.readers import lines, tables, yelp

    inputs = set(transfers.frame["input"]) if spec.exclude_inputs else set()
    if spec.published == "yelp":
        corpus: Corpus = yelp.load_yelp_corpus(splits=spec.splits, exclude=inputs)
    else:
        corpus = (lines.load_style_files(dict(spec.style)) if spec.style
                  else tables.load_table_corpus(spec.table, text_col=spec.text_col, label_col=spec.label_col))
        corpus = corpus.without(inputs) if inputs else corpus
    if spec.max_per_style is not None:
        rng = np.random.default_rng(seed)
        labels = np.asarray(corpus.labels)
        keep = np.sort(np.concatenate([
            rng.choice(idx, min(spec.max_per_style, idx.size), replace=False)
            for idx in (np.flatnonzero(labels == style) for style in corpus.styles)]))
        corpus = Corpus([corpus.texts[i] for i in keep], [corpus.labels[i] for i in keep], corpus.origin)
    return corpus
