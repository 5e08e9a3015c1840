"""The human judgements a learned metric is trained on: every rated set of the data root that rates an aspect, as
pairs (input, output, rating), and the groups of sets that share texts, which are held out together.

The English content sources are the content questions of Mir (2019), Lai (2022, content against the input),
Tox600, CAE-T5 and Babakov et al.'s Pang & Gimpel and Yamshchikov sets; Babakov's ``CAE`` and ``tox600`` files are
the CAE-T5 and Tox600 ratings again (the same outputs, their mean content), so they are scored, never trained on
twice: they join their source's group.  Lai's content against the reference compares an output with another text
than its input and is not a source.  The naturalness sources are the questions that rate an output's fluency or
naturalness: Mir (the output's naturalness, 1-5), Lai, Tox600 and CAE-T5 (fluency); RUSSE-2022's fluency is Russian,
which the packaged English encoder does not read.

Two sets that share any text (an input or an output, compared as :func:`~tsteval.classifiers.training_texts.
normalised`) are one group, closed transitively: Mir, PG_YELP and yamsh_yelp (Yelp test sentences), Lai and
yamsh_gyafc (GYAFC test sentences), Tox600 and its copy, CAE-T5 and its copy.  The groups are computed from the
data, so a set added later joins the group it shares texts with.

>>> sorted(SOURCES["content"])[:3]
['cae_t5', 'content_pg_yelp', 'content_yamsh_bible']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from tsteval.classifiers.training_texts import normalised
from tsteval.core.errors import TstevalError, did_you_mean

# aspect -> {rated set: its question's rating column}, the sets a learned metric of that aspect is trained on.
SOURCES: Mapping[str, Mapping[str, str]] = {
    "content": {"mir": "human_content_preservation", "lai": "human_content_src", "tox600": "human_meaning",
                "cae_t5": "human_content", "content_pg_yelp": "human_content",
                "content_yamsh_bible": "human_content", "content_yamsh_gyafc": "human_content",
                "content_yamsh_yelp": "human_content", "content_yamsh_para": "human_content"},
    "naturalness": {"mir": "human_naturalness_output", "lai": "human_fluency", "tox600": "human_fluency",
                    "cae_t5": "human_fluency"},
}
# Sets scored out of set but never trained on: copies of a source's ratings (Babakov et al.'s files).
SCORED_ONLY: Mapping[str, Mapping[str, str]] = {
    "content": {"content_cae": "human_content", "content_tox600": "human_content"},
    "naturalness": {},
}
# Babakov et al.'s six style-transfer sets, whose mean Spearman their benchmark publishes.
BABAKOV_SIX = ("content_cae", "content_pg_yelp", "content_tox600", "content_yamsh_bible", "content_yamsh_gyafc",
               "content_yamsh_yelp")
COLUMNS = ["set", "item", "input", "output", "rating"]


@dataclass(frozen=True)
class RatedPairs:
    """The pairs of every set of an aspect (``frame``: set, item, input, output, rating; ``item`` is the input's
    number within its set) and the sha256 of each set's rated files (``files``), for a learned model's manifest."""

    aspect: str
    frame: pd.DataFrame
    files: Mapping[str, Mapping[str, str]]

    def of(self, names: Iterable[str]) -> pd.DataFrame:
        """The rows of the sets ``names``."""
        return self.frame[self.frame["set"].isin(list(names))].reset_index(drop=True)


def check_aspect(aspect: str) -> str:
    """``aspect`` if a learned metric can be trained for it; else one line naming those that can."""
    if aspect not in SOURCES:
        raise TstevalError(f"no learned metric for {aspect!r}: choose from {sorted(SOURCES)}"
                           f"{did_you_mean(aspect, SOURCES, '; ')}")
    return aspect


def rated_pairs(aspect: str, names: Sequence[str] | None = None) -> RatedPairs:
    """The pairs of the sets ``names`` (default: every source and scored-only set of ``aspect``), read from the data
    root; an output without a rating is left out."""
    check_aspect(aspect)
    known = {**SOURCES[aspect], **SCORED_ONLY[aspect]}
    names = list(known) if names is None else list(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise TstevalError(f"no {aspect} ratings in rated set {unknown[0]!r}; the sets are {sorted(known)}"
                           f"{did_you_mean(unknown[0], known, '; ')}")
    frames, files = [], {}
    for name in names:
        frame, files[name] = read_pairs(name, known[name])
        frames.append(frame)
    return RatedPairs(aspect, pd.concat(frames, ignore_index=True), files)


@lru_cache(maxsize=32)
def read_pairs(name: str, column: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """The rated set ``name``'s pairs rated in ``column`` (:data:`COLUMNS`) and the sha256 of its files."""
    from tsteval.core.datapaths import dataset_dir
    from tsteval.core.integrity import sha256_once
    from tsteval.readers.rated import read_rated_set

    rated = read_rated_set(name)
    frame = rated.transfers.frame
    keep = frame[column].notna().to_numpy()
    inputs = frame["input"].astype(str).to_numpy()[keep]
    _, item = np.unique(inputs, return_inverse=True)
    pairs = pd.DataFrame({"set": name, "item": item, "input": inputs,
                          "output": frame["output"].astype(str).to_numpy()[keep],
                          "rating": frame[column].to_numpy(dtype=float)[keep]}, columns=COLUMNS)
    folder = dataset_dir(rated.spec.folder)
    return pairs, {f.path: sha256_once(folder / f.path) for f in rated.spec.files}


def groups(pairs: pd.DataFrame) -> list[list[str]]:
    """The sets of ``pairs`` in groups that share no text with each other (connected components of "shares a
    text"), each group's sets in the order they first appear, the groups in the order of their first set.

    >>> frame = pd.DataFrame({"set": ["a", "b", "c"], "input": ["x", "X ", "z"], "output": ["1", "2", "3"]})
    >>> groups(frame)
    [['a', 'b'], ['c']]
    """
    names = list(dict.fromkeys(pairs["set"]))
    parent = {n: n for n in names}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    owner: dict[str, str] = {}
    for name, left, right in zip(pairs["set"], pairs["input"], pairs["output"], strict=True):
        for text in (normalised(left), normalised(right)):
            other = owner.setdefault(text, name)
            parent[root(other)] = root(name)
    found: dict[str, list[str]] = {}
    for name in names:
        found.setdefault(root(name), []).append(name)
    return list(found.values())


def group_of(name: str, all_groups: Sequence[Sequence[str]]) -> list[str]:
    """The group of ``all_groups`` that holds ``name``."""
    for group in all_groups:
        if name in group:
            return list(group)
    raise TstevalError(f"rated set {name!r} is in no group")
