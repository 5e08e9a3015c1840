"""DualRL (Luo et al. 2019): the published system outputs on Yelp and GYAFC and their human references.

The files are checked against each other while loading (line counts, shared inputs); a missing dataset raises
``DataNotFoundError`` naming the path expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, did_you_mean, quote
from tsteval.core.records import DEFAULT_SETTING, TRANSFER_COLUMNS, Transfers, check_systems
from tsteval.readers.lines import TextLines, read_lines, read_text_lines, split_tsv_line
from tsteval.readers.yelp import YELP_STYLES

DUALRL_DIRECTIONS = (("0", "1"), ("1", "0"))
# What the file suffixes mean per dataset, checked against the texts (DualRL's outputs/README.md says ".0" is
# negative/informal, which holds for Yelp only): GYAFC's test.0 is the formal side — "let us purchase coffee and
# converse and proceed from that point !" becomes Human1's "how about we grab some starbucks and talk" in test.0-1.
GYAFC_STYLES = {"0": "formal", "1": "informal"}
DUALRL_STYLES = {"yelp": YELP_STYLES, "GYAFC": GYAFC_STYLES, "GYAFC_Full": GYAFC_STYLES}
# The datasets whose rows are labelled by the style's name (as Lai et al.'s GYAFC ratings and formality corpora
# are); Yelp keeps the codes 0/1 of every Yelp reader (the corpus, Mir et al.'s transfers), named by YELP_STYLES.
NAMED_LABELS = frozenset({"GYAFC", "GYAFC_Full"})
UNK = "<unk>"


def style_label(dataset: str, suffix: str) -> str:
    """The style label of the files ending in ``suffix`` (``0``, ``1``) of ``dataset``: its name for GYAFC
    (``formal``, ``informal``), the code itself for Yelp.

    >>> style_label("GYAFC", "0"), style_label("yelp", "0")
    ('formal', '0')
    """
    return DUALRL_STYLES[dataset][suffix] if dataset in NAMED_LABELS else suffix
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
                                f"(found: {found}){did_you_mean(dataset, found, '; ')}")
    return path


def load_dualrl(dataset: str = "yelp", systems: Sequence[str] | None = None, *,
                on_empty_output: Literal["score", "error", "drop"] = "score") -> Transfers:
    """The system outputs published with DualRL: ``dualrl/outputs/{dataset}/SYSTEM/test.{0-1,1-0}.tsf``.

    Every directory is a system (``Human0..3`` are the human rewrites).  Items are 0..n0-1 for the lines of
    ``test.0-1.tsf`` (style 0 -> 1) and n0.. for ``test.1-0.tsf``, the same for every system.  The styles are
    labelled by :func:`style_label`: GYAFC's ``formal`` / ``informal``, as a formality corpus is; Yelp's ``0`` /
    ``1``, as the Yelp corpus is, with their names in ``extra["style_labels"]``.  Policy for the published files'
    oddities, all recorded in ``extra``:

    * a line that is not UTF-8 is decoded as GB18030 (yelp ``Human2`` line 29 holds "décor" in GBK)
      -> ``extra["reencoded_lines"]``;
    * inputs where the system wrote ``<unk>`` for rare words (the DualRL system) are restored to the original
      input, so all systems share one input per item -> ``extra["restored_inputs"]``.  The original is
      ``dualrl/data/{dataset}/test.{s}`` when it has as many lines, else the other systems' input; any other
      difference from it is an error;
    * a line with no TAB whose line in the output-only ``test.{s}.tsf`` is empty is an empty output (GYAFC_Full
      has a few hundred): by default kept as the empty text, a system's failure that every metric scores
      (:mod:`tsteval.failures`); ``on_empty_output="error"`` refuses it, ``"drop"`` leaves the item out for
      that system (which flatters it) -> ``extra["empty_outputs"]``.  Any other line without exactly one TAB is an
      error.
    """
    out_dir = _dualrl_outputs_dir(dataset)
    available = sorted(p.name for p in out_dir.iterdir() if p.is_dir())
    chosen = list(available if systems is None else systems)
    check_systems(chosen, available, str(out_dir))
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
                                         line=i + 1,
                                         fix='pass on_empty_output="score" (the default) to score it as a failure')
                    extra["empty_outputs"].append((str(path), i + 1))
                    if on_empty_output == "drop":
                        continue
                    output = ""
                rows.append((system, DEFAULT_SETTING, offset + i, original, output, style_label(dataset, s),
                             style_label(dataset, t)))
    coded = dataset in DUALRL_STYLES and dataset not in NAMED_LABELS
    named = {"style_labels": DUALRL_STYLES[dataset]} if coded else {}
    return Transfers(pd.DataFrame(rows, columns=list(TRANSFER_COLUMNS)), str(out_dir), extra={**extra, **named})


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
                             "source_style": style_label(dataset, s), "target_style": style_label(dataset, t)})
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
