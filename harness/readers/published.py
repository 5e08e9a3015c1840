"""Loaders for the published datasets under the data root, in the layouts their authors released.

Each loader checks the files against each other (line counts, shared inputs, the texts quoted in rating
tables) while loading, so a damaged or misplaced file fails here, naming the file and line, not later as a
silently wrong score.  A missing dataset raises ``DataNotFoundError`` naming the path expected.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, quote
from tsteval.core.records import HP_PREFIX, TRANSFER_COLUMNS, Corpus, Transfers
from tsteval.readers.loaders import Table, TextLines, load_style_dir, read_lines, read_text_lines, split_tsv_line

# --- Yelp (Shen et al. 2017) -----------------------------------------------------------------------------------

YELP_SPLITS = ("dev", "test")


@dataclass(frozen=True)
class FilteredCorpus(Corpus):
    """A corpus with evaluation texts removed: ``removed`` lines, carrying ``removed_texts`` distinct texts."""

    removed: int = 0
    removed_texts: int = 0


def load_yelp_corpus(splits: Sequence[str] = YELP_SPLITS, exclude: Iterable[str] = ()) -> FilteredCorpus:
    """The Yelp sentiment corpus (``yelp/sentiment.{split}.{0,1}``, labels "0" negative / "1" positive).

    Every line whose text is in ``exclude`` (the evaluation inputs) is dropped, duplicates included, so the
    corpus can train a classifier that never saw an evaluation input; the counts are on the result.
    """
    root = dataset_dir("yelp")
    drop = set(exclude)
    texts: list[str] = []
    labels: list[str] = []
    removed = 0
    matched: set[str] = set()
    for split in splits:
        for label in ("0", "1"):
            path = root / f"sentiment.{split}.{label}"
            if not path.is_file():
                raise DataNotFoundError(f"Yelp split {split!r} not found: expected the file {path} "
                                        f"(available splits: {YELP_SPLITS})")
            lines = read_lines(path)
            if drop:
                hits = [t for t in lines if t in drop]
                if hits:
                    removed += len(hits)
                    matched.update(hits)
                    lines = [t for t in lines if t not in drop]
            texts += lines
            labels += [label] * len(lines)
    return FilteredCorpus(texts, labels, str(root), removed=removed, removed_texts=len(matched))


# --- Mir et al. 2019 -------------------------------------------------------------------------------------------

class MirSetting(NamedTuple):
    """One model setting of Mir et al. (2019): the model, its hyperparameter and the value."""

    model: str
    param: str
    value: float

    @property
    def directory(self) -> str:
        """The folder name, e.g. ``rho_0_01``."""
        return f"{self.param}_{self.value:g}".replace(".", "_")

    @property
    def setting(self) -> str:
        """The setting label, e.g. ``rho=0.5``."""
        return f"{self.param}={self.value:g}"


MIR_SETTINGS: tuple[MirSetting, ...] = (
    *(MirSetting("CAAE", "rho", v) for v in (0.01, 0.1, 0.5, 1.0, 5.0)),
    *(MirSetting("ARAE", "lambda", v) for v in (1.0, 5.0, 10.0)),
    *(MirSetting("DAR", "gamma", v) for v in (0.1, 1.0, 15.0, 500.0)),
)
MIR_RATING_COLUMNS = ("human_style_intensity", "human_content_preservation", "human_naturalness_relative",
                      "human_naturalness_output", "human_naturalness_input")
_MIR_CSV_KEYS = ("model", "param", "value", "item", "source_style", "target_style", "input", "output")


def load_mir(root: str | Path | None = None) -> Transfers:
    """The 12 model settings of Mir et al. (2019) on their 244 Yelp test inputs, with the human ratings.

    ``root`` is the ``mir2019`` folder (default: under the data root).  Items are 0..n0-1 for the lines of
    ``sentiment.test.0`` (negative -> positive) then n0.. for ``sentiment.test.1`` (positive -> negative);
    ``human_ratings.csv`` numbers its items the same way, which is checked by comparing its input and output
    texts with the files.  The rating columns ``MIR_RATING_COLUMNS`` are extra columns of the frame
    (naturalness ratings are missing where none were collected: DAR gamma 0.1, 1 and 500).
    """
    root = Path(root) if root is not None else dataset_dir("mir2019")
    if not root.is_dir():
        raise DataNotFoundError(f"the Mir et al. (2019) data was expected in the directory {root}")
    inputs = [read_lines(root / "data" / f"sentiment.test.{s}") for s in "01"]
    parts = []
    for cfg in MIR_SETTINGS:
        for s, t, offset in (("0", "1", 0), ("1", "0", len(inputs[0]))):
            in_path = root / "data" / f"sentiment.test.{s}"
            out_path = root / "transfer_model_outputs" / cfg.model / cfg.directory / f"sentiment.test.{s}.tsf"
            outputs = read_lines(out_path)
            ins = inputs[int(s)]
            if len(outputs) != len(ins):
                raise InputError(f"{len(outputs)} lines but {len(ins)} inputs in {in_path}", path=out_path,
                                 fix="line i of the output file must be the transfer of line i of the input file")
            parts.append(pd.DataFrame({
                "system": cfg.model, "setting": cfg.setting, "item": range(offset, offset + len(ins)),
                "input": ins, "output": outputs, "source_style": s, "target_style": t,
                f"{HP_PREFIX}{cfg.param}": cfg.value,
            }))
    frame = pd.concat(parts, ignore_index=True)
    frame = _join_mir_ratings(frame, root / "human_ratings.csv")
    return Transfers(frame, str(root), extra={"rating_columns": list(MIR_RATING_COLUMNS)})


MIR_CLASSIFIERS = ("fasttext", "textcnn")


@dataclass(frozen=True)
class MirStoredStyle:
    """Mir et al.'s own style distributions and signed-EMD scores, one row per transfer of :func:`load_mir`.

    ``inputs[clf]`` and ``outputs[clf]`` are ``(n, 2)`` distributions (columns: style "0", "1") from their
    fastText and text-CNN classifiers, ``sti[clf]`` their stored ``scores_based_on_emd``; rows are in the
    order of ``load_mir().frame`` (settings as in ``MIR_SETTINGS``, items ascending).
    """

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    sti: dict[str, np.ndarray]


def load_mir_stored_style(root: str | Path | None = None) -> MirStoredStyle:
    """Read ``evaluations/automated/style_transfer_intensity/sentence_level`` of the Mir et al. release."""
    root = Path(root) if root is not None else dataset_dir("mir2019")
    base = root / "evaluations" / "automated" / "style_transfer_intensity" / "sentence_level"
    if not base.is_dir():
        raise DataNotFoundError(f"Mir et al.'s stored style scores were expected in the directory {base}")
    input_file = np.load(base / "style_distributions" / "input_distributions.npz")
    inputs: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    outputs: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    sti: dict[str, list[np.ndarray]] = {c: [] for c in MIR_CLASSIFIERS}
    for cfg in MIR_SETTINGS:
        name = f"{cfg.model}_{cfg.directory}.npz"
        dists = np.load(base / "style_distributions" / name)
        scores = np.load(base / "scores_based_on_emd" / name)
        for clf in MIR_CLASSIFIERS:
            inputs[clf].append(np.asarray(input_file[clf], dtype=np.float64))
            outputs[clf].append(np.asarray(dists[clf], dtype=np.float64))
            sti[clf].append(np.asarray(scores[clf], dtype=np.float64))
    return MirStoredStyle(*({c: np.concatenate(v[c]) for c in MIR_CLASSIFIERS} for v in (inputs, outputs, sti)))


def _line(value: object) -> int | None:
    return None if pd.isna(value) else int(value)


def _join_mir_ratings(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Attach the human ratings by (model, value, item), checking every quoted text against the files."""
    lines = read_lines(path)
    ratings = pd.read_csv(path, dtype={"input": str, "output": str, "model": str, "param": str,
                                       **dict.fromkeys(MIR_RATING_COLUMNS, str)},
                          keep_default_na=False, na_values=[""])
    missing = [c for c in (*_MIR_CSV_KEYS, *MIR_RATING_COLUMNS) if c not in ratings.columns]
    if missing:
        raise InputError(f"the columns {missing} are missing; the columns are {quote(list(ratings.columns), 200)}",
                         path=path)
    first_line = 2 if len(lines) == len(ratings) + 1 else None
    table = Table(ratings, str(path), first_line)
    for col in MIR_RATING_COLUMNS:  # numbers (or a choice), an empty cell is no rating, anything else an error
        ratings[col] = table.ratings(col).to_numpy()
    ratings["csv_line"] = [None if first_line is None else first_line + i for i in range(len(ratings))]
    ratings["setting"] = [f"{p}={v:g}" for p, v in zip(ratings["param"], ratings["value"], strict=True)]
    known = {(c.model, c.setting) for c in MIR_SETTINGS}
    for row in ratings.itertuples():
        if (row.model, row.setting) not in known:
            raise InputError(f"unknown model setting {row.model} {row.setting}", path=path, line=row.csv_line)
    dup = ratings.duplicated(["model", "setting", "item"])
    if dup.any():
        row = ratings[dup].iloc[0]
        raise InputError(f"item {row['item']} of {row['model']} {row['setting']} is rated twice", path=path,
                         line=_line(row["csv_line"]))
    keep = ["model", "setting", "item", "input", "output", "source_style", "target_style", "csv_line",
            *MIR_RATING_COLUMNS]
    merged = frame.merge(ratings[keep].rename(columns={"model": "system"}),
                         on=["system", "setting", "item"], how="left", suffixes=("", "_csv"), indicator=True)
    unrated = merged[merged["_merge"] != "both"]
    if not unrated.empty:
        row = unrated.iloc[0]
        raise InputError(f"{len(unrated)} transfers have no rating row, e.g. item {row['item']} of "
                         f"{row['system']} {row['setting']}", path=path)
    if len(ratings) != len(merged):
        raise InputError(f"{len(ratings)} rating rows but {len(merged)} transfers: some rows rate no transfer",
                         path=path)
    for col in ("input", "output", "source_style", "target_style"):
        differ = merged[merged[col].astype(str) != merged[f"{col}_csv"].astype(str)]
        if not differ.empty:
            row = differ.iloc[0]
            raise InputError(f"{len(differ)} rows disagree with the transfer files on the {col}, first item "
                             f"{row['item']} of {row['system']} {row['setting']}: the CSV has "
                             f"{quote(row[f'{col}_csv'])}, the files {quote(row[col])}", path=path,
                             line=_line(row["csv_line"]),
                             fix="item i is line i of sentiment.test.0, then line i-n0 of sentiment.test.1")
    drop = [c for c in merged.columns if c.endswith("_csv")] + ["csv_line", "_merge"]
    return merged.drop(columns=drop)


# --- DualRL (Luo et al. 2019) ----------------------------------------------------------------------------------

DUALRL_DIRECTIONS = (("0", "1"), ("1", "0"))
UNK = "<unk>"
# One published line (yelp Human2 / reference2, "décor") is GBK-encoded; such lines are decoded with this.
DUALRL_FALLBACK_ENCODING = "gb18030"


def _unk_variant(seen: str, original: str) -> bool:
    """Whether ``seen`` is ``original`` with some tokens replaced by ``<unk>``."""
    a, b = seen.split(" "), original.split(" ")
    return len(a) == len(b) and all(x == y or x == UNK for x, y in zip(a, b, strict=True))


def _dualrl_outputs_dir(dataset: str) -> Path:
    base = dataset_dir("dualrl") / "outputs"
    path = base / dataset
    if not path.is_dir():
        found = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
        raise DataNotFoundError(f"DualRL outputs for {dataset!r} not found: expected the directory {path} "
                                f"(found: {found})")
    return path


def load_dualrl(dataset: str = "yelp", systems: Sequence[str] | None = None, *,
                on_empty_output: Literal["error", "drop"] = "error") -> Transfers:
    """The system outputs published with DualRL: ``dualrl/outputs/{dataset}/SYSTEM/test.{0-1,1-0}.tsf``.

    Every directory is a system (``Human0..3`` are the human rewrites).  Items are 0..n0-1 for the lines of
    ``test.0-1.tsf`` (style 0 -> 1) and n0.. for ``test.1-0.tsf``, the same for every system.  Policy for the
    published files' oddities, all recorded in ``extra``:

    * a line that is not UTF-8 is decoded as GB18030 (yelp ``Human2`` line 29 holds "décor" in GBK)
      -> ``extra["reencoded_lines"]``;
    * inputs where the system wrote ``<unk>`` for rare words (the DualRL system) are restored to the original
      input, so all systems share one input per item -> ``extra["restored_inputs"]``.  The original is
      ``dualrl/data/{dataset}/test.{s}`` when it has as many lines, else the other systems' input; any other
      difference from it is an error;
    * a line with no TAB whose line in the output-only ``test.{s}.tsf`` is empty is an empty output (GYAFC_Full
      has a few hundred): an error by default, or with ``on_empty_output="drop"`` the item is left out for that
      system -> ``extra["empty_outputs"]``.  Any other line without exactly one TAB is an error.
    """
    out_dir = _dualrl_outputs_dir(dataset)
    available = sorted(p.name for p in out_dir.iterdir() if p.is_dir())
    chosen = list(available if systems is None else systems)
    unknown = [s for s in chosen if s not in available]
    if unknown or not chosen:
        raise DataNotFoundError(f"DualRL systems {unknown} not found in {out_dir}; the systems are {available}")
    extra: dict[str, list] = {"reencoded_lines": [], "restored_inputs": [], "empty_outputs": []}
    # pairs[direction][system] = list of (input, output or None), by line
    pairs: dict[str, dict[str, list[tuple[str, str | None]]]] = {s: {} for s, _ in DUALRL_DIRECTIONS}
    for system in chosen:
        for s, t in DUALRL_DIRECTIONS:
            pairs[s][system] = _read_dualrl_pairs(out_dir / system, s, t, extra)
    canon = {s: _dualrl_inputs(dataset, s, pairs[s]) for s, _ in DUALRL_DIRECTIONS}
    rows = []
    for s, t in DUALRL_DIRECTIONS:
        offset = 0 if s == "0" else len(canon["0"])
        for system in chosen:
            path = out_dir / system / f"test.{s}-{t}.tsf"
            if len(pairs[s][system]) != len(canon[s]):
                raise InputError(f"{len(pairs[s][system])} lines but {len(canon[s])} inputs", path=path,
                                 fix="every system must transfer every test input, one line each")
            for i, ((seen, output), original) in enumerate(zip(pairs[s][system], canon[s], strict=True)):
                if seen != original:
                    if not _unk_variant(seen, original):
                        raise InputError(f"the input {quote(seen)} differs from the test input {quote(original)}",
                                         path=path, line=i + 1, fix="line i must transfer test input i")
                    extra["restored_inputs"].append((str(path), i + 1))
                if output is None:
                    if on_empty_output == "error":
                        raise InputError("no TAB: the system's output for this input is empty", path=path,
                                         line=i + 1, fix='pass on_empty_output="drop" to leave such items out')
                    extra["empty_outputs"].append((str(path), i + 1))
                    continue
                rows.append((system, "default", offset + i, original, output, s, t))
    return Transfers(pd.DataFrame(rows, columns=list(TRANSFER_COLUMNS)), str(out_dir), extra=extra)


def _read_dualrl_pairs(system_dir: Path, s: str, t: str, extra: dict[str, list]) -> list[tuple[str, str | None]]:
    """The (input, output) lines of one file; ``None`` marks an output the output-only file shows as empty."""
    path = system_dir / f"test.{s}-{t}.tsf"
    text = _read_dualrl_lines(path, extra, allow_blank=False)
    companion: TextLines | None = None
    pairs: list[tuple[str, str | None]] = []
    for number, line in enumerate(text.lines, 1):
        if "\t" not in line:
            if companion is None and (system_dir / f"test.{s}.tsf").is_file():
                companion = _read_dualrl_lines(system_dir / f"test.{s}.tsf", extra, allow_blank=True)
            if companion is not None and number <= len(companion.lines) and not companion.lines[number - 1].strip():
                pairs.append((line, None))
                continue
        pairs.append(split_tsv_line(line, path, number))
    return pairs


def _read_dualrl_lines(path: Path, extra: dict[str, list], *, allow_blank: bool) -> TextLines:
    text = read_text_lines(path, fallback_encoding=DUALRL_FALLBACK_ENCODING, allow_blank=allow_blank)
    extra["reencoded_lines"] += [(str(path), n) for n in text.reencoded]
    return text


def _dualrl_inputs(dataset: str, s: str, by_system: dict[str, list[tuple[str, str | None]]]) -> list[str]:
    """The original test inputs of direction ``s``: the data file, else the systems' inputs free of ``<unk>``."""
    data_file = dataset_dir("dualrl") / "data" / dataset / f"test.{s}"
    lengths = {len(p) for p in by_system.values()}
    if data_file.is_file():
        lines = read_lines(data_file)
        if {len(lines)} == lengths:
            return lines
    longest = max(lengths)
    inputs = []
    for i in range(longest):
        seen = [p[i][0] for p in by_system.values() if i < len(p)]
        clean = sorted({x for x in seen if UNK not in x.split(" ")}) or [seen[0]]
        if len(clean) > 1:
            raise InputError(f"the systems disagree on test input {i + 1} of direction {s}: {clean[:2]}",
                             path=_dualrl_outputs_dir(dataset), line=i + 1)
        inputs.append(clean[0])
    return inputs


def load_dualrl_references(dataset: str = "yelp") -> pd.DataFrame:
    """The four human references per test input: ``dualrl/references/{dataset}/reference{k}.{s}``.

    One row per item (numbered as in ``load_dualrl``) with ``item``, ``input``, ``source_style``,
    ``target_style`` and ``reference0..3``; the non-UTF-8 line policy is that of ``load_dualrl``.
    """
    ref_dir = dataset_dir("dualrl") / "references" / dataset
    data_dir = dataset_dir("dualrl") / "data" / dataset
    for needed in (ref_dir, data_dir):
        if not needed.is_dir():
            raise DataNotFoundError(f"DualRL references for {dataset!r} need the directory {needed}")
    parts = []
    offset = 0
    for s, t in DUALRL_DIRECTIONS:
        inputs = read_lines(data_dir / f"test.{s}")
        part = pd.DataFrame({"item": range(offset, offset + len(inputs)), "input": inputs,
                             "source_style": s, "target_style": t})
        for k in range(4):
            path = ref_dir / f"reference{k}.{s}"
            refs = read_text_lines(path, fallback_encoding=DUALRL_FALLBACK_ENCODING).lines
            if len(refs) != len(inputs):
                raise InputError(f"{len(refs)} references but {len(inputs)} inputs in {data_dir / f'test.{s}'}",
                                 path=path)
            part[f"reference{k}"] = refs
        parts.append(part)
        offset += len(inputs)
    return pd.concat(parts, ignore_index=True)


# --- Corpus of Diverse Styles (Krishna et al. 2020) ------------------------------------------------------------

def load_cds(root: str | Path | None = None) -> Corpus:
    """The CDS samples: every ``*.txt`` in the ``cds`` folder (default: under the data root), style = file stem."""
    root = Path(root) if root is not None else dataset_dir("cds")
    if not root.is_dir():
        raise DataNotFoundError(f"the CDS samples were expected in the directory {root}")
    return load_style_dir(root, "*.txt")


# --- Lai et al. 2022 (GYAFC formality, human ratings) ----------------------------------------------------------

# Rating file -> the human column it becomes and the aspect rated; the mean of the two annotators (0-100).
LAI_FILES = {"style.json": ("human_style", "style"), "content.src.json": ("human_content_src", "content"),
             "content.ref.json": ("human_content_ref", "content"), "fluency.json": ("human_fluency", "naturalness")}
LAI_SYSTEMS = 9
# The authors' own scores that are lower-is-better (WMD distance, GPT-2 perplexity); every other is higher.
_LAI_LOWER = frozenset({"wmd", "gpt2_ppl"})
_LAI_SUFFIX = {"style.json": "style", "content.src.json": "src", "content.ref.json": "ref", "fluency.json": "fluency"}


def load_lai(root: str | Path | None = None) -> Transfers:
    """Lai et al. (2022): 80 GYAFC informal inputs x 9 formal outputs (8 systems and the reference ``ref``), rated.

    One row per (system, item): ``input`` (src), ``output``, ``reference``, the ratings ``human_style``,
    ``human_content_src`` (content vs the input), ``human_content_ref`` (vs the reference) and ``human_fluency``,
    each the mean of the two annotators' 0-100 scores, and the authors' own metric scores as columns
    ``lai.NAME@FILE`` (``lai.bleu@src``, ``lai.bleu@ref``, ``lai.gpt2_ppl@fluency``, ``lai.c-gyafc@style`` ...).
    ``extra["published"]`` maps each such column to its aspect and whether higher is better; the four files must
    agree on every input, reference and output (checked).
    """
    root = Path(root) if root is not None else dataset_dir("lai2022")
    if not root.is_dir():
        raise DataNotFoundError(f"the Lai et al. (2022) ratings were expected in the directory {root}")
    rows: dict[tuple[str, int], dict] = {}
    published: dict[str, tuple[str, bool]] = {}
    for name, (human, aspect) in LAI_FILES.items():
        path = root / name
        records = [_lai_record(line, path, number) for number, line in enumerate(read_lines(path), 1)]
        for item, (number, record) in enumerate(zip(range(1, len(records) + 1), records, strict=True)):
            for system, scores in record["sys"].items():
                row = rows.setdefault((system, item), {"system": system, "setting": "default", "item": item,
                                                       "input": record["src"], "output": scores["out"],
                                                       "reference": record["ref"], "source_style": "informal",
                                                       "target_style": "formal"})
                for field_, value in (("input", record["src"]), ("output", scores["out"]),
                                      ("reference", record["ref"])):
                    if row[field_] != value:
                        raise InputError(f"the {field_} of {system} item {item} is {quote(value)} here but "
                                         f"{quote(row[field_])} in an earlier file", path=path, line=number,
                                         fix="the four rating files must rate the same transfers in the same order")
                row[human] = (_lai_score(scores, "human_1", path, number) +
                              _lai_score(scores, "human_2", path, number)) / 2.0
                for key in scores:
                    if key in ("out", "human_1", "human_2"):
                        continue
                    column = f"lai.{key}@{_LAI_SUFFIX[name]}"
                    row[column] = _lai_score(scores, key, path, number)
                    published[column] = (aspect, key not in _LAI_LOWER)
    frame = pd.DataFrame(list(rows.values()))
    counts = frame.groupby("item")["system"].nunique()
    if len(counts) == 0 or (counts != LAI_SYSTEMS).any():
        raise InputError(f"expected {LAI_SYSTEMS} systems for every input, found {sorted(set(counts))}", path=root)
    missing = [h for h, _ in LAI_FILES.values() if h not in frame.columns or frame[h].isna().any()]
    if missing:
        raise InputError(f"some transfers lack the ratings {missing}", path=root,
                         fix="every file must rate every system's output of every input")
    frame = frame.sort_values(["system", "item"], kind="stable").reset_index(drop=True)
    order = [*TRANSFER_COLUMNS, "reference", *(h for h, _ in LAI_FILES.values())]
    frame = frame[[*order, *sorted(c for c in frame.columns if c not in order)]]
    return Transfers(frame, str(root), extra={"rating_columns": {h: a for h, a in LAI_FILES.values()},
                                              "published": published})


def _lai_record(line: str, path: Path, number: int) -> dict:
    import json

    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}", path=path, line=number) from error
    if not isinstance(record, dict) or not {"src", "ref", "sys"} <= set(record) or not isinstance(record["sys"], dict):
        raise InputError("expected a JSON object with src, ref and sys", path=path, line=number)
    for system, scores in record["sys"].items():
        if not isinstance(scores, dict) or not isinstance(scores.get("out"), str):
            raise InputError(f"system {quote(system)} has no output text 'out'", path=path, line=number)
    return record


def _lai_score(scores: dict, key: str, path: Path, number: int) -> float:
    value = scores.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise InputError(f"{key} is {quote(value)}, not a number", path=path, line=number)
    return float(value)
