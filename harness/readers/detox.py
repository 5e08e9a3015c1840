"""Dale et al. (2021)'s toxic and normal Jigsaw comments (``detox2021/``) as a style corpus, with every rated text of
the data root left out.

The rated texts are Tox600's inputs and outputs (``manual_markup/emnlp_eval_long.tsv``: ``original``,
``rewritten``), both sides of the ``tox600`` and ``CAE`` content sets of ``mis_benchmark/datasets`` and the CAE-T5
comments and rewrites behind ``CAE`` (``mis_benchmark/source_data/cae_t5_figure_eight_ratings.csv``:
``original_toxic_comment``, ``value``).  A corpus line is dropped when it matches one of them after
:func:`tsteval.core.text_form.match_key` (lower case, punctuation and spaces ignored: the content sets re-tokenise
some texts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tsteval.core.datapaths import dataset_dir
from tsteval.core.text_form import match_key
from tsteval.readers.lines import load_style_files
from tsteval.readers.yelp import FilteredCorpus

# The corpus files: (split folder, file, label); Jigsaw's "normal" is not a guarantee of politeness.
CORPUS_FILES = (("dev", "dev_toxic", "toxic"), ("test", "test_10k_toxic", "toxic"),
                ("dev", "dev_normal", "normal"), ("test", "test_10k_normal", "normal"))
STYLES = ("toxic", "normal")


def rated_texts() -> dict[str, set[str]]:
    """Every rated text of the detoxification sets, by where it comes from (the keys name file and column)."""
    data = dataset_dir("detox2021") / "manual_markup" / "emnlp_eval_long.tsv"
    long = pd.read_csv(data, sep="\t", quoting=3, dtype=str, keep_default_na=False)
    mis = dataset_dir("mis_benchmark")
    cae = pd.read_csv(mis / "source_data" / "cae_t5_figure_eight_ratings.csv", dtype=str, keep_default_na=False)
    out = {"emnlp_eval_long.tsv original": set(long["original"]),
           "emnlp_eval_long.tsv rewritten": set(long["rewritten"]),
           "cae_t5_figure_eight_ratings.csv original_toxic_comment": set(cae["original_toxic_comment"]),
           "cae_t5_figure_eight_ratings.csv value": set(cae["value"])}
    for name in ("tox600", "CAE"):
        table = pd.read_csv(mis / "datasets" / f"{name}.csv", dtype=str, keep_default_na=False)
        out |= {f"{name}.csv text1": set(table["text1"]), f"{name}.csv text2": set(table["text2"])}
    return out


@dataclass(frozen=True)
class DetoxCorpus(FilteredCorpus):
    """The corpus with the rated texts removed; ``dropped``: the distinct corpus lines that were removed."""

    dropped: tuple[str, ...] = ()


def corpus_files() -> dict[str, list[Path]]:
    """The corpus files by style (:data:`CORPUS_FILES`), as ``tsteval train-classifier --style`` takes them."""
    root = dataset_dir("detox2021")
    files: dict[str, list[Path]] = {style: [] for style in STYLES}
    for folder, name, label in CORPUS_FILES:
        files[label].append(root / folder / name)
    return files


def load_detox_corpus(exclude: Iterable[str] = ()) -> DetoxCorpus:
    """The toxic and normal comments (labels :data:`STYLES`, each style's files in the order of
    :data:`CORPUS_FILES`) without any line matching a text of ``exclude`` (compared by
    :func:`~tsteval.core.text_form.match_key`);
    ``removed`` counts the dropped lines, ``removed_texts`` the distinct excluded texts they matched, ``dropped``
    holds the dropped lines (what ``--exclude`` takes to remove the same ones)."""
    corpus = load_style_files(corpus_files())
    drop = {match_key(t) for t in exclude} - {""}
    dropped = [t for t in corpus.texts if match_key(t) in drop]
    kept = corpus.without(dropped)
    return DetoxCorpus(kept.texts, kept.labels, str(dataset_dir("detox2021")), removed=len(dropped),
                          removed_texts=len({match_key(t) for t in dropped}), dropped=tuple(dict.fromkeys(dropped)))
