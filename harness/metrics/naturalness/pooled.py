"""One adversarial naturalness classifier for all systems together: ``naturalness_pooled@BACKEND``.

:mod:`tsteval.metrics.naturalness.adversarial` trains one classifier per (system, setting), so its scores are
not comparable across systems (each is relative to its own system's text), and it learns whatever separates a
system's text from the human corpus, tokenisation included: a system whose outputs are detokenised (``didn't``)
against a tokenised human corpus (``did n't``) looks unnatural for that reason alone.  Here:

- **one classifier for every output** of the scorecard (all systems, settings and directions): P(human | x') is
  on one scale for all;
- **the same normalisation on both sides** (:func:`normalise`): case folded, re-tokenised with
  :func:`tsteval.core.tokenize.tokenize` (so spacing around punctuation disappears), split clitics joined
  back (``do n't`` -> ``don't``, ``it 's`` -> ``it's``) and split runs of one symbol joined (``... .`` ->
  ``....``), then joined with single spaces;
- **cross-fitted by input**: inputs are split into K seeded folds and every output of an input is scored by the
  model trained on the other folds, minus any training text equal (after normalisation) to a text that model
  scores; outputs of different systems for the same input, which share most words, never train the model that
  scores each other.

Human text is a seeded sample of the human corpus (texts equal to an input or output removed), one sentence per
distinct normalised output (all of the corpus when it is smaller), spread over the folds; without a corpus the
distinct inputs are the human side, each in its own input's fold.

>>> normalise("I did n't like it , did you ?")
"i didn't like it , did you ?"
>>> normalise("I didn't like it, did you?")
"i didn't like it , did you ?"
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from tsteval.classifiers.base import check_texts
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.progress import progress
from tsteval.core.signature import content_hash, texts_hash
from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.adversarial import (
    HUMAN,
    SYSTEM,
    TEXTCNN_DEFAULTS,
    UNIGRAM_DEFAULTS,
    assign_folds,
    human_sample,
    make_fitter,
)
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.scorecard import Scorecard

_CLITICS = frozenset({"s", "re", "ve", "ll", "m", "d", "t"})
POOLED = next(m for m in NATURALNESS if m.name == "naturalness_pooled")


def normalise(text: str) -> str:
    """Lower-cased tsteval tokens with split English clitics and symbol runs joined back, separated by spaces."""
    tokens = tokenize(text)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if out and token == "n't":
            out[-1] += token
        elif out and token == "'" and i + 1 < len(tokens) and tokens[i + 1] in _CLITICS:
            out[-1] += "'" + tokens[i + 1]
            i += 1
        elif out and not token[0].isalnum() and set(token) == set(out[-1]) and len(set(token)) == 1:
            out[-1] += token  # "... ." and "...." are one run of dots
        else:
            out.append(token)
        i += 1
    return " ".join(out)


def score_pooled_naturalness(card: Scorecard, backend: str = "unigram", *, corpus: Sequence[str] | None = None,
                             k: int = 5, seed: int = 0, params: Mapping[str, object] | None = None,
                             normalised: bool = True) -> None:
    """Add ``naturalness_pooled@<backend>``: cross-fitted P(human | output) from one classifier for all rows.

    ``corpus``: human sentences of the domain (default: the transfers' inputs).  ``normalised=False`` skips
    :func:`normalise` (to show what the classifier learns without it); its signature says ``norm:none``.
    """
    params = dict(params or {})
    frame = card.frame
    inputs = check_texts(frame["input"].tolist(), "inputs")
    prepare = normalise if normalised else (lambda text: text)
    outputs = [prepare(t) for t in check_texts(frame["output"].tolist(), "outputs")]
    groups = sorted(set(inputs))
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise TstevalError(f"k must be an integer >= 2 folds, not {k!r}")
    if len(groups) < k:
        raise InputError(f"the transfers have {len(groups)} distinct inputs, fewer than k={k} folds",
                         fix=f"lower k to at most {max(len(groups), 2)} or score more inputs")
    group_fold = dict(zip(groups, assign_folds(len(groups), k, seed), strict=True))
    row_fold = np.array([group_fold[t] for t in inputs])
    distinct = {(text, fold) for text, fold in zip(outputs, row_fold, strict=True)}
    if corpus is not None:
        pool = check_texts(corpus, "human corpus")
        taken = set(inputs) | set(frame["output"]) | {prepare(t) for t in inputs} | set(outputs)
        usable = sum(t not in taken for t in pool)
        if usable < k:
            raise InputError(f"the human corpus has {usable} texts that are not inputs or outputs, fewer than k={k} "
                             "folds", fix="give a larger human corpus")
        human = [prepare(t) for t in human_sample(pool, min(len(distinct), usable), taken, seed)]
        human_fold = assign_folds(len(human), k, seed + 1)
    else:
        human = [prepare(t) for t in groups]
        human_fold = np.array([group_fold[t] for t in groups])
    fitter = make_fitter(backend, sorted(set(human) | set(outputs)), params, seed)
    natural = np.empty(len(frame))
    for fold in progress(range(k), "pooled naturalness folds", unit="fold"):
        rows = np.flatnonzero(row_fold == fold)
        scored = sorted({outputs[i] for i in rows})
        blocked = set(scored)
        train_human = sorted({t for t, f in zip(human, human_fold, strict=True) if f != fold} - blocked)
        train_system = sorted({t for t, f in zip(outputs, row_fold, strict=True) if f != fold} - blocked)
        if not train_human or not train_system:
            raise InputError(f"fold {fold} has no training text of one class once the texts it scores are removed "
                             "(the outputs repeat the human texts)", fix="give another human corpus")
        p = np.asarray(fitter(train_human + train_system, [HUMAN] * len(train_human) + [SYSTEM] * len(train_system),
                              scored), dtype=float)
        value = dict(zip(scored, p, strict=True))
        natural[rows] = [value[outputs[i]] for i in rows]
    defaults = UNIGRAM_DEFAULTS if backend == "unigram" else TEXTCNN_DEFAULTS
    fields = {"clf": backend, "params": content_hash({**defaults, **params}),
              "human": "corpus" if corpus is not None else "inputs",
              "corpus": texts_hash(corpus) if corpus is not None else "none", "k": k, "seed": seed,
              "norm": POOLED.settings["norm"] if normalised else "none"}
    libraries = ("numpy", "scikit-learn") if backend == "unigram" else ("numpy", "torch")
    card.add(f"naturalness_pooled@{backend}", natural, str(POOLED.signature(libraries, **fields)))
