"""The data model: a labelled corpus and a set of transfers, each validated on construction.

Style labels are always strings, so ``0``/``1`` from one file and ``"0"``/``"1"`` from another
are the same style.  Hyperparameters of a transfer live in columns named ``hp.<name>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, did_you_mean

TRANSFER_COLUMNS = ("system", "setting", "item", "input", "output", "source_style", "target_style")
HP_PREFIX = "hp."
# The system and setting of transfers that name neither (a single system, no hyperparameter setting).
DEFAULT_SYSTEM, DEFAULT_SETTING = "system", "default"


def _check_texts(texts: Sequence[str], origin: str, what: str = "text", allow_empty: bool = False) -> None:
    """Every text a string, and (unless ``allow_empty``) not empty or only whitespace; else an error naming it."""
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"{what} {i + 1} is {type(text).__name__}, not a string", path=origin, line=i + 1)
        if not allow_empty and not text.strip():
            raise InputError(f"{what} {i + 1} is empty", path=origin, line=i + 1,
                             fix="remove empty lines or give every line some text")


def failed(outputs: Sequence[str] | pd.Series) -> np.ndarray:
    """Per output: True when it is empty or only whitespace -- a system's failure, scored by the policy of
    :mod:`tsteval.failures`.

    >>> failed(["a", "", " \\n"]).tolist()
    [False, True, True]
    """
    return np.array([not text.strip() for text in outputs], dtype=bool)


def pool_texts(frame: pd.DataFrame, columns: Sequence[str] = ("input", "output")) -> None:
    """Hold ``frame``'s text ``columns`` as Python strings, one object per distinct text (in place).

    pandas' Arrow-backed strings build a new object per row at every ``tolist()``; pooled object columns hand out
    the same objects, and the repeats of a text (an input scored against every system) share one.  Only the
    distinct texts are ever made into Python objects (``pd.factorize`` runs on the Arrow data); a missing value
    stays NaN.

    >>> frame = pd.DataFrame({"input": ["a b", "a b"], "output": ["c", "a b"]})
    >>> pool_texts(frame)
    >>> frame["input"].dtype == object and frame["input"][0] is frame["input"][1] is frame["output"][1]
    True
    """
    pool: dict[str, str] = {}
    for column in columns:
        codes, distinct = pd.factorize(frame[column])
        shared = [pool.setdefault(t, t) if isinstance(t, str) else t for t in distinct.tolist()]
        frame[column] = pd.Series(np.array([*shared, np.nan], dtype=object)[codes], index=frame.index, dtype=object)


@dataclass(frozen=True)
class Corpus:
    """Texts with one style label each; any number of styles."""

    texts: list[str]
    labels: list[str]
    origin: str = "<corpus>"

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.labels):
            raise InputError(f"{len(self.texts)} texts but {len(self.labels)} labels", path=self.origin)
        if not self.texts:
            raise InputError("the corpus is empty", path=self.origin)
        _check_texts(self.texts, self.origin)
        object.__setattr__(self, "labels", [str(label) for label in self.labels])

    @property
    def styles(self) -> list[str]:
        """The distinct style labels, sorted."""
        return sorted(set(self.labels))

    def __len__(self) -> int:
        return len(self.texts)

    def without(self, texts: Iterable[str]) -> Corpus:
        """This corpus minus every line whose text is in ``texts`` (e.g. held-out evaluation inputs)."""
        drop = set(texts)
        keep = [i for i, t in enumerate(self.texts) if t not in drop]
        return Corpus([self.texts[i] for i in keep], [self.labels[i] for i in keep], self.origin)

    def concat(self, other: Corpus) -> Corpus:
        """Both corpora, one after the other."""
        return Corpus(self.texts + other.texts, self.labels + other.labels, f"{self.origin}+{other.origin}")


def check_systems(systems: Sequence[str], available: Sequence[str], origin: str) -> None:
    """Refuse an empty choice of systems, or a name not among the ``available`` systems of ``origin``, in one line
    naming the nearest systems (:func:`~tsteval.core.errors.did_you_mean`)."""
    unknown = [s for s in systems if s not in available]
    if unknown or not systems:
        hints = "".join(did_you_mean(s, available, f"; {s!r}: ") for s in unknown)
        raise InputError(f"the systems {unknown or list(systems)} are not among the systems {sorted(available)}{hints}",
                         path=origin)


@dataclass(frozen=True)
class Transfers:
    """Outputs of style-transfer systems: one row per (system, setting, item).

    ``frame`` has the columns in ``TRANSFER_COLUMNS`` plus optional ``hp.<name>`` columns with the
    numeric hyperparameter values of each setting.
    """

    frame: pd.DataFrame
    origin: str = "<transfers>"
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [c for c in TRANSFER_COLUMNS if c not in self.frame.columns]
        if missing:
            raise InputError(f"transfers lack the columns {missing}", path=self.origin,
                             fix=f"provide all of {list(TRANSFER_COLUMNS)}")
        if self.frame.empty:
            raise InputError("there are no transfers", path=self.origin)
        frame = self.frame.reset_index(drop=True).copy()
        for col in ("system", "setting", "source_style", "target_style"):
            frame[col] = frame[col].astype(str)
        pool_texts(frame)
        # each distinct text checked once; the rows only when one is bad.  An empty or whitespace-only output is
        # a system's failure, scored (tsteval.failures); an empty input is an error.
        if not all(isinstance(t, str) and t.strip() for t in pd.unique(frame["input"])):
            _check_texts(frame["input"].tolist(), self.origin, "input")
        if not all(isinstance(t, str) for t in pd.unique(frame["output"])):
            _check_texts(frame["output"].tolist(), self.origin, "output", allow_empty=True)
        dup = frame.duplicated(["system", "setting", "item"])
        if dup.any():
            row = frame[dup].iloc[0]
            raise InputError(f"item {row['item']} appears twice for system {row['system']!r}, "
                             f"setting {row['setting']!r}", path=self.origin)
        object.__setattr__(self, "frame", frame)

    def __len__(self) -> int:
        return len(self.frame)

    def of_systems(self, systems: Sequence[str]) -> Transfers:
        """The rows of ``systems`` only (a manifest's ``systems:``, ``tsteval score --systems``); a name that is no
        system of these transfers is an error naming the nearest (:func:`check_systems`)."""
        check_systems(systems, self.frame["system"].unique().tolist(), self.origin)
        return Transfers(self.frame[self.frame["system"].isin(list(systems))], self.origin, self.extra)

    @property
    def hyperparameters(self) -> list[str]:
        """Names of the hyperparameter columns, without the ``hp.`` prefix."""
        return [c[len(HP_PREFIX):] for c in self.frame.columns if c.startswith(HP_PREFIX)]

    @property
    def styles(self) -> list[str]:
        """Every style named as a source or a target, sorted."""
        return sorted(set(self.frame["source_style"]) | set(self.frame["target_style"]))

    @classmethod
    def from_pairs(cls, inputs: Sequence[str], outputs: Sequence[str], *, source_style: str | Sequence[str],
                   target_style: str | Sequence[str], system: str = DEFAULT_SYSTEM, setting: str = DEFAULT_SETTING,
                   hyperparameters: dict[str, float] | None = None, origin: str = "<pairs>") -> Transfers:
        """Build transfers from aligned input and output lists (line i of each is one item)."""
        if len(inputs) != len(outputs):
            raise InputError(f"{len(inputs)} inputs but {len(outputs)} outputs", path=origin,
                             fix="line i of the outputs must be the transfer of line i of the inputs")
        frame = pd.DataFrame({
            "system": system, "setting": setting, "item": range(len(inputs)),
            "input": list(inputs), "output": list(outputs),
            "source_style": source_style if isinstance(source_style, str) else list(source_style),
            "target_style": target_style if isinstance(target_style, str) else list(target_style),
        })
        for name, value in (hyperparameters or {}).items():
            frame[HP_PREFIX + name] = value
        return cls(frame, origin)

    @classmethod
    def concat(cls, parts: Sequence[Transfers]) -> Transfers:
        """All rows of several transfer sets (e.g. every setting of every system)."""
        return cls(pd.concat([p.frame for p in parts], ignore_index=True),
                   "+".join(sorted({p.origin for p in parts})))
