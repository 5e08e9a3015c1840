"""Hugging Face datasets (a hub id, a ``save_to_disk`` folder or a data file) of transfers or labelled texts, checked
as tables are (:mod:`tsteval.readers.tables`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import DEFAULT_SETTING, DEFAULT_SYSTEM, Corpus, Transfers
from tsteval.readers.lines import Hints, argument_for
from tsteval.readers.tables import Table, frame_transfers, is_missing

_HF_BUILDERS = {".csv": "csv", ".jsonl": "json", ".json": "json", ".parquet": "parquet", ".txt": "text"}


def _hf_dataset(source: Any, split: str | None, cache_dir: str | Path | None,
                hints: Hints | None = None) -> tuple[Any, str]:
    """Resolve ``source`` to one ``datasets.Dataset`` and a name for messages."""
    import datasets  # heavy; only loaded when a Hugging Face source is used

    if isinstance(source, datasets.Dataset):
        return source, f"<datasets.Dataset {source.info.dataset_name or 'in memory'}>"
    name = "<datasets.DatasetDict>"
    if not isinstance(source, datasets.DatasetDict):
        name = str(source)
        path = Path(source)
        if path.is_dir() and ((path / "dataset_dict.json").is_file() or (path / "state.json").is_file()):
            source = datasets.load_from_disk(str(path))
        elif path.is_file():
            builder = _HF_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise InputError(f"unknown data-file suffix {path.suffix!r}", path=path,
                                 fix=f"use one of {', '.join(_HF_BUILDERS)}")
            source = _load_dataset(builder, name, split, cache_dir, data_files=str(path))
        else:
            source = _load_dataset(name, name, split, cache_dir)
    if isinstance(source, datasets.DatasetDict):
        if split is None and len(source) == 1:
            split = next(iter(source))
        if split not in source:
            raise InputError(f"split {split!r} not found; the splits are {sorted(source)}", path=name,
                             fix=f"pass {argument_for('split', hints) or 'the split'} with one of them")
        return source[split], f"{name}[{split}]"
    return source, name


def _load_dataset(path: str, name: str, split: str | None, cache_dir: str | Path | None, **kw: Any) -> Any:
    import datasets

    try:
        return datasets.load_dataset(path, split=split, cache_dir=None if cache_dir is None else str(cache_dir), **kw)
    except Exception as exc:  # hub, network and builder errors come in many types
        raise TstevalError(f"cannot load the dataset {name!r} with datasets.load_dataset: {type(exc).__name__}: "
                           f"{exc}. A hub id needs network access (HF_HUB_OFFLINE unset) or a cached copy; "
                           "otherwise pass a Dataset object, a save_to_disk directory or a local data file.") from exc


def _hf_frame(dataset: Any) -> pd.DataFrame:
    """The dataset as a frame, with ClassLabel columns mapped to their names."""
    import datasets

    frame = dataset.to_pandas()
    for col, feature in dataset.features.items():
        if isinstance(feature, datasets.ClassLabel):
            frame[col] = [None if is_missing(v) or v < 0 else feature.int2str(int(v)) for v in frame[col]]
    return frame


def load_hf_corpus(source: Any, text_col: str, label_col: str, split: str | None = None, *,
                   cache_dir: str | Path | None = None, hints: Hints | None = None) -> Corpus:
    """A corpus from a Hugging Face dataset: a ``Dataset``/``DatasetDict``, a ``save_to_disk`` directory, a local
    data file (CSV, JSON(L), Parquet, text) or a hub id for ``datasets.load_dataset``.

    ClassLabel labels become their names; ``split`` picks a split when there are several.
    """
    dataset, name = _hf_dataset(source, split, cache_dir, hints)
    table = Table(_hf_frame(dataset), name, None, hints)
    if table.frame.empty:
        raise InputError("the dataset has no rows", path=name)
    return Corpus(table.texts(text_col, "text"), table.labels(label_col, "label"), name)


def load_hf_transfers(source: Any, split: str | None = None, input_col: str = "input", output_col: str = "output",
                      source_col: str = "source_style", target_col: str = "target_style",
                      system_col: str = "system", setting_col: str = "setting", item_col: str = "item",
                      hp_cols: Sequence[str] = (), *, source_style: str | None = None,
                      target_style: str | None = None, system: str = DEFAULT_SYSTEM, setting: str = DEFAULT_SETTING,
                      cache_dir: str | Path | None = None, hints: Hints | None = None) -> Transfers:
    """Transfers from a Hugging Face dataset (sources as for ``load_hf_corpus``, columns as for
    ``load_table_transfers``)."""
    dataset, name = _hf_dataset(source, split, cache_dir, hints)
    return frame_transfers(Table(_hf_frame(dataset), name, None, hints), input_col, output_col, source_col, target_col,
                            system_col, setting_col, item_col, hp_cols, source_style, target_style, system, setting)
