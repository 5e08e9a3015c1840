"""Checks that a labelled corpus can teach its styles, and that a trained classifier did learn them.

Two failures used to pass silently (GitHub issue 8, item 5): the same texts filed under two styles (say,
one file given twice) train a classifier that can only guess, and a held-out accuracy at chance was
printed like any other number.

* :func:`check_styles_separable` (``train_classifier``, ``build_lexicon``): when most texts of the corpus
  (or all of them) appear under more than one style, the corpus is refused with an :class:`InputError`
  naming its origin, the count and an example.  When only some do, the corpus is kept as it is (such
  duplicates are common in real corpora: short sentences such as "thank you ." occur in every style) and
  one warning line on stderr gives the count.
* :func:`check_above_chance` (``train_classifier``, so also ``tsteval train-classifier`` and manifest
  runs): a warning line on stderr when the held-out accuracy is not significantly above chance, that is
  when a one-sided exact binomial test of "accuracy > the majority style's share of the corpus" gives
  p >= :data:`ALPHA`.  The majority share, not 1/k, is the accuracy of always answering the largest
  style; the held-out part is stratified, so it has the corpus's shares.

>>> from tsteval.core.records import Corpus
>>> shared_styles(Corpus(["fine .", "fine .", "awful", "great"], ["neg", "pos", "neg", "pos"]))
{'fine .': ['neg', 'pos']}
>>> check_styles_separable(Corpus(["fine .", "fine ."], ["neg", "pos"], "styles/"))
Traceback (most recent call last):
...
tsteval.core.errors.InputError: styles/: 2 of 2 texts appear under several styles, e.g. 'fine .' (neg, pos); \
a classifier cannot learn these styles (fix: give every text one style; check that no style file is a copy \
of another)
>>> print(chance_warning(accuracy=0.55, n_heldout=200, labels=["neg", "pos"] * 50))
held-out accuracy 0.550 (n=200) is not significantly above chance 0.500 (the largest style's share; \
one-sided binomial test p=0.089 >= 0.01): the styles may be indistinguishable in this corpus, the \
classifier undertrained, or the held-out part too small
>>> chance_warning(accuracy=0.9, n_heldout=200, labels=["neg", "pos"] * 50) is None
True
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence

from scipy.stats import binomtest

from tsteval.classifiers.training_texts import normalised
from tsteval.core.errors import InputError, quote
from tsteval.core.records import Corpus

# Significance level of the binomial test: a warning when chance explains the accuracy this often or more.
ALPHA = 0.01


def warn(message: str) -> None:
    """One warning line on stderr."""
    print(f"tsteval: warning: {message}", file=sys.stderr)


def shared_styles(corpus: Corpus) -> dict[str, list[str]]:
    """Every text that appears under more than one style, with those styles (sorted), in corpus order."""
    styles: dict[str, set[str]] = {}
    for text, label in zip(corpus.texts, corpus.labels, strict=True):
        styles.setdefault(text, set()).add(label)
    return {text: sorted(labels) for text, labels in styles.items() if len(labels) > 1}


def near_matches(lines: Iterable[str], texts: Iterable[str]) -> list[tuple[str, str]]:
    """Each of ``lines`` that is not one of ``texts`` but equals one when case and whitespace are ignored (the
    leakage check's :func:`~tsteval.classifiers.training_texts.normalised` form: ``"The food was cold."`` and
    ``"the food was cold ."``), with the first such text, in the order of ``lines``.

    >>> near_matches(["The food was cold.", "the staff was rude .", "no match"], ["the food was cold .",
    ...                                                                        "the staff was rude ."])
    [('The food was cold.', 'the food was cold .')]
    """
    texts = list(texts)
    exact = set(texts)
    loose: dict[str, str] = {}
    for text in texts:
        loose.setdefault(normalised(text), text)
    return [(line, loose[normalised(line)]) for line in dict.fromkeys(lines)
            if line not in exact and normalised(line) in loose]


def check_styles_separable(corpus: Corpus) -> None:
    """Refuse a corpus whose texts mostly appear under several styles; warn when some do (they are kept)."""
    shared = shared_styles(corpus)
    if not shared:
        return
    count = sum(text in shared for text in corpus.texts)
    text, labels = next(iter(shared.items()))
    what = (f"{count} of {len(corpus)} texts appear under several styles, e.g. {quote(text, 60)} "
            f"({', '.join(labels)})")
    if 2 * count > len(corpus):
        raise InputError(f"{what}; a classifier cannot learn these styles", path=corpus.origin,
                         fix="give every text one style; check that no style file is a copy of another")
    warn(f"{corpus.origin}: {what}; they are kept, and no classifier can be right on all of them")


def chance_warning(accuracy: float, n_heldout: int, labels: Sequence[str]) -> str | None:
    """Why ``accuracy`` on ``n_heldout`` texts is not significantly above chance for ``labels``, or None when it is."""
    chance = max(Counter(labels).values()) / len(labels)
    p_value = binomtest(round(accuracy * n_heldout), n_heldout, chance, alternative="greater").pvalue
    if p_value < ALPHA:
        return None
    return (f"held-out accuracy {accuracy:.3f} (n={n_heldout}) is not significantly above chance {chance:.3f} "
            f"(the largest style's share; one-sided binomial test p={p_value:.2g} >= {ALPHA:g}): the styles may be "
            "indistinguishable in this corpus, the classifier undertrained, or the held-out part too small")


def check_above_chance(report: dict, corpus: Corpus) -> None:
    """Warn on stderr when a ``train_classifier`` report's held-out accuracy is not above chance on ``corpus``."""
    if report.get("accuracy") is None or not report.get("n_heldout"):
        return
    message = chance_warning(report["accuracy"], report["n_heldout"], corpus.labels)
    if message is not None:
        warn(f"{corpus.origin}: {message}")
