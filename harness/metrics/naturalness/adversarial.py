"""Adversarial naturalness (Mir et al. 2019, sec. 3.2.3): how well a classifier tells system text from human text.

For each (system, setting) a classifier learns human text X (label ``human``) against the setting's outputs X'
(label ``system``); the more natural an output, the more likely it fools the classifier.  Mir et al. trained
on the outputs a model produced for its *training* inputs, which published outputs do not include, so the
classifier here is trained on the scored outputs themselves, cross-fitted: items are split into K seeded folds
and fold k's outputs and inputs are scored by the model trained on the other folds.  Any training text equal to
a text scored by that model (a repeated output, an output copied from another item's input) is dropped from
its training set, so no scored text is ever predicted by a model that saw it.

Human text X is, by default, a seeded sample of a human corpus (e.g. Yelp sentences without the evaluation
inputs), one human sentence per output, as in Mir's code, which trained on Yelp sentences other than the test
inputs.  ``human="inputs"`` uses the setting's own inputs instead (input i and output i share a fold).  Either
way every fold holds as many human as system texts, so the folds are stratified by construction.

Columns per sentence: ``naturalness@<backend>`` = P(human | x') and ``more_natural@<backend>`` = 1 when
P(human | x') > P(human | x), 0 when lower and 0.5 on an exact tie (an output identical to its input always
ties); x and x' are scored by the same fold model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression

from tsteval.classifiers.base import check_texts, make_classifier
from tsteval.core.errors import InputError, TstevalError, did_you_mean
from tsteval.core.progress import progress
from tsteval.core.signature import content_hash, texts_hash
from tsteval.core.tokenize import tokenize
from tsteval.metrics.naturalness.declarations import NATURALNESS
from tsteval.scorecard import GROUP, Scorecard

HUMAN, SYSTEM = "human", "system"
ADVERSARIAL_BACKENDS = ("unigram", "textcnn")
# Small text-CNN: a few hundred training sentences per fold, trained 5 times per setting on CPU.
TEXTCNN_DEFAULTS: dict[str, object] = {"embed_dim": 64, "num_filters": 50, "epochs": 5, "batch_size": 32,
                                       "max_len": 50, "verbose": False}
UNIGRAM_DEFAULTS: dict[str, object] = {"C": 1.0, "max_iter": 1000}

# fit_predict(train_texts, train_labels, score_texts) -> P(human) of each score text.
FoldFitter = Callable[[list[str], list[str], list[str]], np.ndarray]


@dataclass(frozen=True)
class CrossFit:
    """P(human) of each output and each input, and the fold (0..K-1) that scored each item."""

    p_output: np.ndarray
    p_input: np.ndarray
    folds: np.ndarray


def more_natural(p_output: np.ndarray, p_input: np.ndarray) -> np.ndarray:
    """1.0 where the output looks more human than its input, 0.0 where less, 0.5 on an exact tie."""
    p_output, p_input = np.asarray(p_output, dtype=float), np.asarray(p_input, dtype=float)
    return np.where(p_output > p_input, 1.0, np.where(p_output < p_input, 0.0, 0.5))


def assign_folds(n: int, k: int, seed: int) -> np.ndarray:
    """Fold index of each of ``n`` items: sizes differ by at most one, order shuffled by ``seed``."""
    return np.random.default_rng(seed).permutation(np.arange(n) % k)


class UnigramFolds:
    """Unigram counts + L2 logistic regression, tokenised once for all folds.

    Equivalent to ``CountVectorizer(analyzer=tokenize)`` + ``LogisticRegression`` refitted per fold: the
    vocabulary spans every text, but a word absent from a fold's training texts has an all-zero feature
    column there, so its L2-penalised weight stays 0 and the fitted model is the same.  Not the ``tfidf-lr``
    backend with unigrams: that one TF-IDF-weights and L2-normalises the counts, which Mir's did not.
    """

    def __init__(self, texts: Sequence[str], C: float = 1.0, max_iter: int = 1000, seed: int = 0) -> None:
        self.C, self.max_iter, self.seed = C, max_iter, seed
        unique = sorted(set(texts))
        self.row = {text: i for i, text in enumerate(unique)}
        vocab: dict[str, int] = {}
        indptr, indices = [0], []
        for text in unique:
            for token in tokenize(text):
                indices.append(vocab.setdefault(token, len(vocab)))
            indptr.append(len(indices))
        data = np.ones(len(indices), dtype=np.float64)
        self.counts = sparse.csr_matrix((data, indices, indptr), shape=(len(unique), max(len(vocab), 1)))
        self.counts.sum_duplicates()

    def __call__(self, train: list[str], labels: list[str], score: list[str]) -> np.ndarray:
        """P(human) of ``score`` from a model fitted on ``train``."""
        y = np.array([label == HUMAN for label in labels], dtype=np.int64)
        model = LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed, solver="lbfgs")
        model.fit(self.counts[[self.row[t] for t in train]], y)
        return model.predict_proba(self.counts[[self.row[t] for t in score]])[:, 1]


class ClassifierFolds:
    """A fold fitter that trains a fresh ``make_classifier(backend, **params)`` per fold; ``cut`` records, per text
    scored, whether its fold's model read only its start (at ``limit`` tokens; :mod:`tsteval.metrics.truncation`)."""

    def __init__(self, backend: str, params: Mapping[str, object]) -> None:
        self.backend, self.params = backend, dict(params)
        self.cut: dict[str, bool] = {}
        self.limit: int | None = None

    def __call__(self, train: list[str], labels: list[str], score: list[str]) -> np.ndarray:
        """P(human) of ``score`` from a model fitted on ``train``."""
        model = make_classifier(self.backend, **self.params).fit(train, labels)
        self.limit = getattr(model, "length_limit", None)  # none: a model that reads every text whole
        if self.limit is not None:
            for text, cut in zip(score, model.truncated(score).tolist(), strict=True):
                self.cut[text] = self.cut.get(text, False) or cut
        column = [str(c) for c in model.classes_].index(HUMAN)
        return model.predict_proba(score)[:, column]


def classifier_fitter(backend: str, params: Mapping[str, object]) -> ClassifierFolds:
    """A fold fitter that trains a fresh ``make_classifier(backend, **params)`` per fold."""
    return ClassifierFolds(backend, params)


def make_fitter(backend: str, texts: Sequence[str], params: Mapping[str, object], seed: int) -> FoldFitter:
    """The fold fitter of an adversarial ``backend`` (``unigram`` or ``textcnn``) with defaults filled in."""
    if backend == "unigram":
        return UnigramFolds(texts, **{**UNIGRAM_DEFAULTS, **params, "seed": seed})
    if backend == "textcnn":
        return classifier_fitter("textcnn", {**TEXTCNN_DEFAULTS, **params, "seed": seed})
    raise TstevalError(f"unknown adversarial backend {backend!r}; choose one of {list(ADVERSARIAL_BACKENDS)}"
                       f"{did_you_mean(backend, ADVERSARIAL_BACKENDS, '; ')}")


def cross_fit(human: Sequence[str], outputs: Sequence[str], inputs: Sequence[str], fitter: FoldFitter, *,
              k: int = 5, seed: int = 0, where: str = "these transfers") -> CrossFit:
    """Cross-fitted P(human) of every output and input (item i = ``outputs[i]``, ``inputs[i]``).

    ``human`` has one text per item and shares the item's fold, so each fold is balanced.  The model of fold
    f trains on the human and output texts of the other folds, minus any text that fold f scores.
    """
    n = len(outputs)
    if not (len(human) == len(inputs) == n):
        raise InputError(f"{where}: {len(human)} human texts, {len(outputs)} outputs and {len(inputs)} inputs; "
                         "one of each per item is needed")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise TstevalError(f"k must be an integer >= 2 folds, not {k!r}")
    if n < k:
        raise InputError(f"{where} has {n} outputs, fewer than k={k} folds: each fold needs at least one human "
                         "and one system text", fix=f"lower k to at most {max(n, 2)} or score more outputs")
    folds = assign_folds(n, k, seed)
    p_output, p_input = np.empty(n), np.empty(n)
    for fold in progress(range(k), f"naturalness folds ({where})", unit="fold"):
        held = np.flatnonzero(folds == fold)
        scored = [outputs[i] for i in held] + [inputs[i] for i in held]
        blocked = set(scored)
        train = [(t, HUMAN) for i, t in enumerate(human) if folds[i] != fold and t not in blocked]
        train += [(t, SYSTEM) for i, t in enumerate(outputs) if folds[i] != fold and t not in blocked]
        if {label for _, label in train} != {HUMAN, SYSTEM}:
            raise InputError(f"{where}: fold {fold} has no training text of one class once texts it scores are "
                             "removed (the outputs repeat the human texts)", fix="use another human corpus")
        p = np.asarray(fitter([t for t, _ in train], [label for _, label in train], scored), dtype=float)
        p_output[held], p_input[held] = p[:len(held)], p[len(held):]
    return CrossFit(p_output, p_input, folds)


def human_sample(corpus: Sequence[str], n: int, exclude: set[str], seed: int) -> list[str]:
    """``n`` distinct-position corpus texts not in ``exclude``, drawn without replacement with ``seed``."""
    pool = [t for t in corpus if t not in exclude]
    if len(pool) < n:
        raise InputError(f"the human corpus has {len(pool)} usable texts but {n} are needed (one per output)",
                         fix="give a larger human corpus or use human='inputs'")
    return [pool[i] for i in np.sort(np.random.default_rng(seed).choice(len(pool), n, replace=False))]


@dataclass(frozen=True)
class GroupTask:
    """One (system, setting)'s adversarial classifiers to cross-fit: its rows in the scorecard, texts and settings
    (picklable, so that a process beside a GPU can score it: :mod:`tsteval.experiment.run.overlap`)."""

    rows: np.ndarray
    outputs: list[str]
    inputs: list[str]
    humans: list[str]
    where: str
    backend: str
    params: Mapping[str, object]
    k: int
    seed: int


@dataclass(frozen=True)
class GroupCuts:
    """Per row of a task, whether its output and its input were read only up to the backend's ``limit``."""

    output: np.ndarray
    input: np.ndarray
    limit: int


# What score_group gives a task: naturalness, more_natural, and the texts cut (None: the backend reads them whole).
GroupScores = tuple[np.ndarray, np.ndarray, GroupCuts | None]


def score_group(task: GroupTask) -> GroupScores:
    """``naturalness`` and ``more_natural`` of ``task``'s rows, and what the backend cut of them."""
    fitter = make_fitter(task.backend, [*task.humans, *task.outputs, *task.inputs], task.params, task.seed)
    fit = cross_fit(task.humans, task.outputs, task.inputs, fitter, k=task.k, seed=task.seed, where=task.where)
    cuts = None
    if isinstance(fitter, ClassifierFolds) and fitter.limit is not None:
        cuts = GroupCuts(np.array([fitter.cut[t] for t in task.outputs], dtype=bool),
                         np.array([fitter.cut[t] for t in task.inputs], dtype=bool), fitter.limit)
    return fit.p_output, more_natural(fit.p_output, fit.p_input), cuts


def group_tasks(card: Scorecard, backend: str = "unigram", *, human: Literal["corpus", "inputs"] = "corpus",
                corpus: Sequence[str] | None = None, k: int = 5, seed: int = 0,
                params: Mapping[str, object] | None = None) -> tuple[list[GroupTask], dict[str, object]]:
    """:func:`score_naturalness`'s work on ``card``: a task per (system, setting), and the signature's fields."""
    if human not in ("corpus", "inputs"):
        raise TstevalError(f"human must be 'corpus' or 'inputs', not {human!r}")
    if human == "corpus" and corpus is None:
        raise TstevalError("human='corpus' needs corpus= (human sentences without the evaluation inputs), "
                           "or pass human='inputs'")
    params = dict(params or {})
    frame = card.frame
    check_texts(frame["input"].tolist(), "inputs")
    check_texts(frame["output"].tolist(), "outputs")
    corpus_texts = check_texts(corpus, "human corpus") if human == "corpus" else []
    everything = set(frame["input"]) | set(frame["output"])
    tasks = []
    for key, group in frame.groupby(list(GROUP), sort=False):
        outputs, inputs = group["output"].tolist(), group["input"].tolist()
        humans = inputs if human == "inputs" else human_sample(corpus_texts, len(outputs), everything, seed)
        tasks.append(GroupTask(frame.index.get_indexer(group.index), outputs, inputs, humans,
                               "system {!r}, setting {!r}".format(*key), backend, params, k, seed))
    defaults = UNIGRAM_DEFAULTS if backend == "unigram" else TEXTCNN_DEFAULTS
    fields = {"clf": backend, "params": content_hash({**defaults, **params}), "human": human,
              "corpus": texts_hash(corpus_texts) if corpus_texts else "none", "k": k, "seed": seed,
              "per": "system+setting"}
    return tasks, fields


def add_group_scores(card: Scorecard, tasks: Sequence[GroupTask], scores: Sequence[GroupScores],
                     fields: Mapping[str, object]) -> dict[str, dict[str, int]]:
    """Add the columns of :func:`score_naturalness` from each task's :func:`score_group`; returns, for a backend
    with a length limit, the columns' counts of texts it cut (``naturalness`` reads the output, ``more_natural``
    the input too)."""
    from tsteval.metrics.truncation import cut_counts

    natural, relative = np.empty(len(card.frame)), np.empty(len(card.frame))
    cut_output, cut_input = np.zeros(len(card.frame), dtype=bool), np.zeros(len(card.frame), dtype=bool)
    limits = set()
    for task, (p_output, more, cut) in zip(tasks, scores, strict=True):
        natural[task.rows], relative[task.rows] = p_output, more
        if cut is not None:
            cut_output[task.rows], cut_input[task.rows] = cut.output, cut.input
            limits.add(cut.limit)
    backend = fields["clf"]
    libraries = ("numpy", "scikit-learn") if backend == "unigram" else ("numpy", "torch")
    declared = {m.name: m for m in NATURALNESS}
    card.add(f"naturalness@{backend}", natural, str(declared["naturalness"].signature(libraries, **fields)))
    card.add(f"more_natural@{backend}", relative, str(declared["more_natural"].signature(libraries, **fields)))
    if not limits:
        return {}
    limit = min(limits)
    return {f"naturalness@{backend}": cut_counts(cut_output, limit),
            f"more_natural@{backend}": cut_counts(cut_output | cut_input, limit)}


def score_naturalness(card: Scorecard, backend: str = "unigram", *, human: Literal["corpus", "inputs"] = "corpus",
                      corpus: Sequence[str] | None = None, k: int = 5, seed: int = 0,
                      params: Mapping[str, object] | None = None) -> dict[str, dict[str, int]]:
    """Add ``naturalness@<backend>`` and ``more_natural@<backend>`` to ``card``, one classifier per setting; returns
    their counts of texts cut at the backend's length limit (:func:`add_group_scores`).

    ``corpus`` (human sentences, e.g. the Yelp corpus without the evaluation inputs) is required when
    ``human="corpus"``; texts that also occur among the transfers' inputs or outputs are never sampled.
    """
    tasks, fields = group_tasks(card, backend, human=human, corpus=corpus, k=k, seed=seed, params=params)
    return add_group_scores(card, tasks, [score_group(task) for task in tasks], fields)


JUDGEMENTS = ("input", "output", "tie")


def judgement(more_natural_values: np.ndarray) -> np.ndarray:
    """``more_natural`` values (1 / 0 / 0.5) as the text judged more natural: ``output`` / ``input`` / ``tie``."""
    values = np.asarray(more_natural_values, dtype=float)
    if not np.isin(values, (0.0, 0.5, 1.0)).all():
        raise InputError("more_natural values must be 0, 0.5 or 1")
    return np.where(values == 1.0, "output", np.where(values == 0.0, "input", "tie")).astype(object)


def absolute_judgement(rating_input: np.ndarray, rating_output: np.ndarray,
                       threshold: float | None = None) -> np.ndarray:
    """Which text absolute 1–5 ratings call more natural: ``input`` / ``output`` / ``tie``.

    Without ``threshold`` the mean ratings are compared, as Mir's code does for Table 4.6.  With one, each
    text is binned natural (mean >= threshold) or not, as for Mir's Table 4.2 kappas; a text is more natural
    only when it is natural and the other is not, otherwise the pair ties.
    """
    x, y = np.asarray(rating_input, dtype=float), np.asarray(rating_output, dtype=float)
    if x.shape != y.shape or not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("input and output ratings must be paired and finite", fix="drop unrated items first")
    if threshold is not None:
        x, y = (x >= threshold).astype(float), (y >= threshold).astype(float)
    return np.where(x > y, "input", np.where(x < y, "output", "tie")).astype(object)


@dataclass(frozen=True)
class Agreement:
    """Percent agreement of machine and human judgements, with the counts behind it."""

    percent: float
    n: int
    human_ties: int
    machine_ties: int


def percent_agreement(machine: np.ndarray, human: np.ndarray, ties: Literal["mir", "exclude"] = "mir") -> Agreement:
    """Percent of items where machine and human pick the same text as more natural.

    ``ties="mir"`` (Mir's code): labels must match exactly, so a tie agrees only with a tie, over all rated
    items.  ``ties="exclude"``: items humans called a tie are left out, a machine tie counts half.
    """
    machine, human = np.asarray(machine, dtype=object), np.asarray(human, dtype=object)
    if machine.shape != human.shape or machine.ndim != 1 or not machine.size:
        raise InputError(f"machine {machine.shape} and human {human.shape} judgements must be paired, 1-D, non-empty")
    for name, values in (("machine", machine), ("human", human)):
        bad = set(values) - set(JUDGEMENTS)
        if bad:
            raise InputError(f"{name} judgements must be one of {JUDGEMENTS}, found {sorted(map(str, bad))}",
                             fix="drop unrated items (NaN) first")
    human_ties, machine_ties = int((human == "tie").sum()), int((machine == "tie").sum())
    if ties == "mir":
        return Agreement(100.0 * float((machine == human).mean()), machine.size, human_ties, machine_ties)
    if ties != "exclude":
        raise TstevalError(f"ties must be 'mir' or 'exclude', not {ties!r}")
    keep = human != "tie"
    if not keep.any():
        raise InputError("every human judgement is a tie: agreement is undefined with ties='exclude'")
    m, h = machine[keep], human[keep]
    credit = np.where(m == "tie", 0.5, (m == h).astype(float))
    return Agreement(100.0 * float(credit.mean()), int(keep.sum()), human_ties, machine_ties)
