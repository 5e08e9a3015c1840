"""Trivial systems that show what a metric rewards: every input answered by copying it, by deleting its style
words, or by retrieving the nearest sentence of the target style.

* ``copy``: the output is the input, unchanged.  Content preservation is perfect (BLEU 100, SBERT 1) and the style
  has not moved (STI about 0): the bottom of every style ranking, the top of every content ranking.
* ``delete-lexicon``: the input with every word of the style lexicon removed (the lexicon's words of *all* styles,
  as the ``remove`` modification does; the text is re-tokenised and lower-cased by
  :func:`tsteval.core.tokenize.tokenize`).  An input made only of style words becomes ``PLACEHOLDER`` (one token
  that is no lexicon word), since a transfer cannot be empty; :func:`delete_lexicon` counts them.
* ``retrieve-nearest``: the training-corpus sentence of the target style with the highest TF-IDF cosine to the
  input (scikit-learn ``TfidfVectorizer`` defaults: lower-cased words of two or more characters, smoothed IDF fitted
  on the whole corpus, l2-normalised rows), never a sentence equal to the input itself; ties go to the first
  sentence in corpus order.

:func:`add_baselines` adds one system per baseline (``baseline:NAME``, setting ``baseline``) with one row per
distinct (item, input, source style, target style) of the transfers, so every table and plot shows them.

>>> from tsteval.core.records import Corpus
>>> corpus = Corpus(["the food was great", "lovely staff", "the food was awful"], ["pos", "pos", "neg"])
>>> retrieve_nearest(["the food was bad"], ["pos"], corpus)
['the food was great']
>>> delete_lexicon(["The food was AWFUL !"], {"awful"})[0]
['the food was !']
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from tsteval.core.errors import TstevalError, did_you_mean
from tsteval.core.records import Corpus, Transfers

BASELINES = ("copy", "delete-lexicon", "retrieve-nearest")
SYSTEM_PREFIX = "baseline:"
SETTING = "baseline"
PLACEHOLDER = "<deleted>"
_QUERY_BLOCK = 512


def baseline_system(name: str) -> str:
    """The system name of a baseline's rows: ``baseline:NAME``."""
    return f"{SYSTEM_PREFIX}{name}"


def is_baseline(system: str) -> bool:
    """Whether ``system`` names a baseline's rows."""
    return str(system).startswith(SYSTEM_PREFIX)


def check_baselines(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` as a tuple, each one of :data:`BASELINES` and given once; a :class:`TstevalError` otherwise."""
    names = tuple(names)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise TstevalError(f"unknown baselines {unknown}; choose from {list(BASELINES)}"
                           + "".join(did_you_mean(n, BASELINES, f"; {n!r}: ") for n in unknown))
    if len(set(names)) != len(names):
        raise TstevalError(f"a baseline is named twice in {list(names)}")
    return names


def delete_lexicon(inputs: Sequence[str], lexicon: object) -> tuple[list[str], int]:
    """Each input without its lexicon words, and how many inputs were all style words (output ``PLACEHOLDER``)."""
    from tsteval.lexicons.modify import modify_texts_with_emptied

    outputs, emptied = modify_texts_with_emptied(list(inputs), lexicon, "remove")
    return [PLACEHOLDER if gone or not text else text for text, gone in zip(outputs, emptied, strict=True)], \
        int(emptied.sum())


def retrieve_nearest(inputs: Sequence[str], target_styles: Sequence[str], corpus: Corpus) -> list[str]:
    """For each input, the corpus sentence labelled with its target style that has the highest TF-IDF cosine to
    it, excluding sentences equal to the input (see the module docstring)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if len(inputs) != len(target_styles):
        raise TstevalError(f"{len(inputs)} inputs but {len(target_styles)} target styles")
    labels = np.asarray(corpus.labels)
    missing = sorted(set(map(str, target_styles)) - set(corpus.labels))
    if missing:
        raise TstevalError(f"retrieve-nearest: the training corpus ({corpus.origin}) has no sentence of the target "
                           f"styles {missing} (its styles: {corpus.styles}); give a corpus with those styles")
    vectorizer = TfidfVectorizer().fit(corpus.texts)
    matrix = vectorizer.transform(corpus.texts)
    texts = np.asarray(corpus.texts, dtype=object)
    out: list[str] = [""] * len(inputs)
    styles = np.asarray([str(s) for s in target_styles])
    for style in sorted(set(styles)):
        pool = np.flatnonzero(labels == style)
        rows = np.flatnonzero(styles == style)
        for start in range(0, len(rows), _QUERY_BLOCK):
            block = rows[start:start + _QUERY_BLOCK]
            queries = [inputs[i] for i in block]
            cosine = (vectorizer.transform(queries) @ matrix[pool].T).toarray()
            cosine[texts[pool][None, :] == np.asarray(queries, dtype=object)[:, None]] = -np.inf
            best = cosine.argmax(axis=1)
            if np.isneginf(cosine[np.arange(len(block)), best]).any():
                raise TstevalError(f"retrieve-nearest: every {style!r} sentence of the corpus equals the input")
            for i, j in zip(block, best, strict=True):
                out[i] = texts[pool[j]]
    return out


def add_baselines(transfers: Transfers, names: Sequence[str], lexicon: object = None,
                  corpus: Corpus | None = None) -> tuple[Transfers, dict[str, int]]:
    """``transfers`` with the rows of each baseline system added, and per baseline a count of its special cases
    (``delete-lexicon``: inputs made only of style words)."""
    names = check_baselines(names)
    frame = transfers.frame
    taken = sorted({baseline_system(n) for n in names} & set(frame["system"]))
    if taken:
        raise TstevalError(f"the transfers already hold systems named {taken}; rename them or drop those baselines")
    if "delete-lexicon" in names and lexicon is None:
        raise TstevalError("the delete-lexicon baseline needs a style lexicon (--lexicon FILE, manifest lexicon:)")
    if "retrieve-nearest" in names and corpus is None:
        raise TstevalError("the retrieve-nearest baseline needs a training corpus of the target styles "
                           "(--baseline-corpus STYLE=FILE, manifest corpus:, corpus= in evaluate)")
    keys = ["item", "input", "source_style", "target_style"]
    distinct = frame.drop_duplicates(keys)[keys].reset_index(drop=True)
    inputs = distinct["input"].tolist()
    parts, counts = [frame], {}
    for name in names:
        if name == "copy":
            outputs = copy_outputs(inputs)
        elif name == "delete-lexicon":
            outputs, counts[name] = delete_lexicon(inputs, lexicon)
        else:
            outputs = retrieve_nearest(inputs, distinct["target_style"].tolist(), corpus)
        part = distinct.assign(system=baseline_system(name), setting=SETTING, output=outputs)
        if part.duplicated(["item"]).any():  # one item id with several inputs (pooled sources): number them apart
            part["item"] = [f"{item}#{k}" for k, item in enumerate(part["item"])]
        parts.append(part)
    combined = pd.concat(parts, ignore_index=True)
    return Transfers(combined, transfers.origin, transfers.extra), counts


def copy_outputs(inputs: Collection[str]) -> list[str]:
    """The ``copy`` baseline's outputs: the inputs themselves."""
    return list(inputs)
