"""The Yelp sentiment corpus (Shen et al. 2017) under the data root, with evaluation texts removed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import DataNotFoundError
from tsteval.core.records import Corpus
from tsteval.readers.lines import read_lines

YELP_SPLITS = ("dev", "test")
# What Shen et al.'s labels mean (checked against the texts: sentiment.test.0 "the lady behind the register was
# straight up ignorant and rude !", sentiment.test.1 "this place is a vegas institution and fantastic .").
YELP_STYLES = {"0": "negative", "1": "positive"}


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
