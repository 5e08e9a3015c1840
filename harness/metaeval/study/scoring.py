"""A study's rated sets read and scored: each set's transfers with their human ratings, and each column group of the
declaration scored through :func:`tsteval.evaluate` (the one plan and runner), cached per set and group.

A built-in set brings what its declaration names: its ratings, its published scores (the authors' metrics), the
corpus its style classifiers are trained on (:data:`tsteval.metaeval.rated.datasets.STYLE_CORPORA`, every rated
text left out), human-written text for the naturalness scorers (a seeded sample of that corpus in the target styles)
and its language.  A rated table (``table:``) or an annotate study (``study:``) brings its ratings and texts; a
style column there needs ``style_corpus:`` in its entry.  A sample (``sample: {inputs: N}``) keeps every output of
N inputs drawn by :func:`tsteval.metaeval.rated.lm_subset.input_subset`.

A scored group is kept under the cache root (``study-columns/KEY``), the key hashing the set's rows, the group, the
seed and the version of each of its metrics past the first (:attr:`tsteval.metrics.base.Metric.version`), so a
rerun scores only what changed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, TstevalError, did_you_mean, quote
from tsteval.core.records import Corpus, Transfers
from tsteval.metaeval.study.declaration import LEXICONS, ColumnGroup, StudySet
from tsteval.metaeval.tables import RATING_ASPECTS, MetricColumn, Rating

Log = Callable[[str], None]
HUMAN_SAMPLE = 20000  # human-written texts for the naturalness scorers, as the rated-set tables use


@dataclass
class SetData:
    """A rated set as a study reads it: its transfers (ratings as columns), which ratings judge which aspect, and
    what its columns are scored with."""

    entry: StudySet
    transfers: Transfers
    ratings: list[Rating]
    task: str
    language: str
    published: dict[str, tuple[str, bool]] = field(default_factory=dict)
    source: str = ""
    corpus: Callable[[], tuple[Corpus, dict]] | None = None
    style_view: Callable[[Transfers], Transfers] | None = None
    notes: dict = field(default_factory=dict)
    lexicon: Path | None = None  # the authors' published style lexicon (a column's ``lexicon: published``)

    @property
    def frame(self) -> pd.DataFrame:
        return self.transfers.frame


def _keep_ratings(entry: StudySet, ratings: list[Rating], origin: str) -> list[Rating]:
    if entry.ratings is None:
        return ratings
    wanted = list(entry.ratings)
    known = [r.column for r in ratings] + [r.aspect for r in ratings]
    for name in wanted:
        if name not in known:
            raise InputError(f"set {entry.label}: no rating or aspect {name!r}", path=origin,
                             fix=did_you_mean(name, known) or f"use some of {sorted(set(known))}")
    return [r for r in ratings if r.column in wanted or r.aspect in wanted]


def _builtin(entry: StudySet) -> SetData:
    from tsteval.core.datapaths import dataset_dir
    from tsteval.metaeval.rated.datasets import STYLE_CORPORA, dualrl_form, ratings_of
    from tsteval.readers.rated import read_rated_set

    rated = read_rated_set(entry.name)
    spec = rated.spec
    corpus_name = entry.style_corpus or spec.style_corpus
    corpus = None if corpus_name is None else (lambda: STYLE_CORPORA[corpus_name](rated))
    published = {c: (a, h) for c, (a, h) in rated.transfers.extra.get("published", {}).items()}
    return SetData(entry, rated.transfers, _keep_ratings(entry, list(ratings_of(spec)), spec.name), spec.task,
                   entry.language or spec.language, published, spec.citation or spec.title, corpus,
                   dualrl_form if corpus_name == "gyafc" else None,
                   lexicon=None if spec.lexicon is None else dataset_dir(spec.folder) / spec.lexicon)


def _table(entry: StudySet) -> SetData:
    from tsteval.readers.tables import load_table_transfers, read_table

    assert entry.table is not None and isinstance(entry.ratings, Mapping)
    read = read_table(entry.table)
    transfers = load_table_transfers(entry.table)
    if len(read.frame) != len(transfers.frame):
        raise InputError("the rows of the table and its transfers differ", path=entry.table)
    frame = transfers.frame.copy()
    ratings = []
    for column, aspect in entry.ratings.items():
        if aspect not in RATING_ASPECTS:
            raise InputError(f"set {entry.label}: the rating {column!r} judges {aspect!r}, not one of "
                             f"{list(RATING_ASPECTS)}", path=entry.table)
        if column not in read.frame.columns:
            raise InputError(f"no rating column {column!r}; the columns are {quote(list(read.frame.columns), 300)}",
                             path=entry.table, fix=did_you_mean(column, read.frame.columns) or "name one of them")
        frame[column] = read.ratings(column).to_numpy()
        ratings.append(Rating(column, aspect))
    return SetData(entry, Transfers(frame, transfers.origin, dict(transfers.extra)), ratings, entry.task or "user",
                   entry.language or "en", source=str(entry.table), corpus=_named_corpus(entry))


def _study(entry: StudySet) -> SetData:
    from tsteval.annotate.study import KEYS, Study
    from tsteval.metaeval.rated.loop import study_ratings

    assert entry.study is not None
    study = Study.open(entry.study)
    means, aspects = study_ratings(study)
    texts = study.pairs.drop_duplicates(list(KEYS))[[*KEYS, "input", "output"]]
    frame = means.merge(texts, on=list(KEYS), how="left")
    if frame["input"].isna().any():
        raise InputError("a rated pair has no text in pairs.csv", path=entry.study)
    transfers = Transfers(frame.assign(setting=frame["setting"].astype(str)), str(entry.study))
    ratings = _keep_ratings(entry, [Rating(c, a) for c, a in aspects.items()], str(entry.study))
    return SetData(entry, transfers, ratings, entry.task or "user", entry.language or "en",
                   source=str(entry.study), corpus=_named_corpus(entry))


def _named_corpus(entry: StudySet) -> Callable[[], tuple[Corpus, dict]] | None:
    """A user set's style corpus by name: ``yelp`` (Yelp without the set's inputs) or ``detox2021``."""
    if entry.style_corpus is None:
        return None
    if entry.style_corpus == "yelp":
        def yelp() -> tuple[Corpus, dict]:
            from tsteval.readers.yelp import load_yelp_corpus

            return load_yelp_corpus(), {}
        return yelp
    raise TstevalError(f"set {entry.label}: style_corpus {entry.style_corpus!r} is known only for built-in sets; "
                       "for your own set use yelp, or score style with a hook")


def load_set(entry: StudySet) -> SetData:
    """The rated set of ``entry``, sampled as it asks."""
    from tsteval.metaeval.rated.lm_subset import input_subset

    data = _builtin(entry) if entry.table is None and entry.study is None else (
        _table(entry) if entry.table is not None else _study(entry))
    if entry.rows is not None:
        keep = np.asarray(call_hook(entry.rows, data))
        if keep.dtype != bool or keep.shape != (len(data.frame),):
            raise TstevalError(f"the hook {entry.rows!r} gave {keep.dtype} {keep.shape}, not a bool per row of set "
                               f"{entry.label} ({len(data.frame)})")
        data.notes["rows_kept"] = {"hook": entry.rows, "of": len(data.frame), "kept": int(keep.sum())}
        data.transfers = Transfers(data.frame[keep].reset_index(drop=True), data.transfers.origin,
                                   dict(data.transfers.extra))
    if not data.ratings:
        raise InputError(f"set {entry.label}: no rating left to judge against", path=data.source or entry.name)
    if entry.sample is not None:
        data.notes["sampled_from"] = {"rows": len(data.frame), "inputs": int(data.frame["input"].nunique())}
        data.transfers = input_subset(data.transfers, entry.sample, entry.sample_seed)
    return data


# --- scoring the columns --------------------------------------------------------------------------------------

@dataclass
class Scored:
    """The columns one group gave a set: values, signatures, aspect and direction of each, and what it cost."""

    values: dict[str, np.ndarray]
    signatures: dict[str, str]
    judged: dict[str, MetricColumn]
    seconds: float
    cached: bool = False
    notices: tuple[str, ...] = ()  # the run's warnings (leakage, cut texts, swapped styles...), kept with the cache


def metric_versions(group: ColumnGroup) -> dict[str, int]:
    """The registered metrics of ``group`` past their first version, by name (``sbert@none``'s name is ``sbert``).

    >>> from tsteval.metaeval.study.declaration import ColumnGroup
    >>> metric_versions(ColumnGroup(metrics=("bleu", "sbert", "judge_fluency@gemma3-270m:template=2")))
    {'sbert': 2}
    """
    from tsteval.metrics.registry import METRICS
    from tsteval.metrics.selection import parse_metric

    names = sorted({parse_metric(entry)[0].partition("@")[0] for entry in group.metrics})
    return {name: METRICS[name].version for name in names if name in METRICS and METRICS[name].version > 1}


def _key(data: SetData, group: ColumnGroup, seed: int) -> str:
    columns = [c for c in ("input", "output", "source_style", "target_style", "reference") if c in data.frame]
    rows = pd.util.hash_pandas_object(data.frame[columns], index=False).to_numpy()
    fields = {"group": group.spec(), "seed": seed, "set": data.entry.name, "language": data.language,
              "style_corpus": data.entry.style_corpus}
    if versions := metric_versions(group):  # absent while every metric is at its first version: those keys stand
        fields["versions"] = versions
    spec = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(rows.tobytes() + spec.encode()).hexdigest()[:32]


def _human(corpus: Corpus, targets: set[str], seed: int) -> list[str]:
    texts = [t for t, label in zip(corpus.texts, corpus.labels, strict=True) if label in targets] or corpus.texts
    if len(texts) <= HUMAN_SAMPLE:
        return list(texts)
    keep = np.sort(np.random.default_rng(seed).choice(len(texts), HUMAN_SAMPLE, replace=False))
    return [texts[i] for i in keep]


def _evaluate(data: SetData, group: ColumnGroup, seed: int, log: Log) -> tuple[dict, dict, list[str]]:
    """The group's columns through :func:`tsteval.evaluate` on the set's transfers."""
    from tsteval.api import evaluate
    from tsteval.metaeval.rated.datasets import STYLE_CLASSIFIERS, style_classifiers

    options: dict = {"seed": seed, "precision": "fp32", "language": data.language, **group.options}
    lexicon = options.pop("lexicon", "fitted")
    if lexicon not in LEXICONS:
        raise InputError(f"set {data.entry.label}: lexicon {lexicon!r} is neither fitted nor published",
                         path=data.source or data.entry.name, fix="give the column options: {lexicon: published} "
                         "(the set's authors' lexicon) or leave it out (one fitted on the set's style corpus)")
    if group.modifications:
        options["modifications"] = tuple(group.modifications)
    if group.language_model:
        options["language_model"] = group.language_model
    kwargs: dict = {}
    transfers = data.transfers
    needs_corpus = bool(group.classifier) or any(m in ("mask", "remove", "erase") for m in group.modifications)
    naturalness = any(m.partition(":")[0].partition("@")[0] in ("ppl", "lp_mean", "slor", "naturalness")
                      for m in group.metrics)
    if needs_corpus or naturalness:
        if data.corpus is None:
            if needs_corpus:
                raise InputError(f"set {data.entry.label}: columns {list(group.metrics)} need a style corpus and the "
                                 "set names none", path=data.source or data.entry.name,
                                 fix="give the set style_corpus: NAME, or leave these columns out")
        else:
            corpus, counts = data.corpus()
            data.notes.setdefault("style_corpus", counts)
            kwargs["corpus"] = corpus
            if naturalness:
                kwargs["human"] = _human(corpus, set(transfers.frame["target_style"].astype(str)), seed)
            if any(m in ("mask", "remove") for m in group.modifications):
                kwargs["lexicon"] = _lexicon(data, lexicon)
    if group.classifier:
        unknown = [b for b in group.classifier.values() if b not in STYLE_CLASSIFIERS]
        if unknown:
            hint = did_you_mean(unknown[0], STYLE_CLASSIFIERS) or f"use one of {list(STYLE_CLASSIFIERS)}"
            raise TstevalError(f"set {data.entry.label}: unknown classifier {unknown[0]!r}; {hint}")
        specs = style_classifiers(list(group.classifier.values()))
        kwargs["classifier"] = {name: specs[backend] for name, backend in group.classifier.items()}
        if data.style_view is not None:
            transfers = data.style_view(transfers)
    if any(m.partition(":")[0] == "learned" for m in group.metrics):
        from tsteval.metrics.learned.folder import load, refuse_in_set

        if options.get("learned") is None:
            raise InputError(f"set {data.entry.label}: the learned column needs its model", path=data.entry.label,
                             fix="give the column options: {learned: DIR} (a folder from tsteval train-metric)")
        refuse_in_set(load(str(options["learned"])), transfers.frame["input"].astype(str).tolist(),
                      transfers.frame["output"].astype(str).tolist(), data.entry.label, data.entry.name)
    log(f"{data.entry.label}: scoring {len(transfers.frame)} rows with {list(group.metrics)}"
        f"{' and ' + str(dict(group.classifier)) if group.classifier else ''}")
    card = evaluate(transfers=transfers, metrics=group.metrics, **kwargs, **options)
    return ({c + group.suffix: card.frame[c].to_numpy(dtype=float) for c in card.metrics},
            {c + group.suffix: card.signatures.get(c, "") for c in card.metrics}, list(card.notices))


def _lexicon(data: SetData, choice: str) -> object:
    """The lexicon of the mask and remove modifications: fitted on the set's style corpus, or the one its authors
    published."""
    from tsteval.experiment.manifest.loader import LexiconSpec

    if choice == "fitted":
        return LexiconSpec()
    if data.lexicon is None:
        raise InputError(f"set {data.entry.label}: lexicon: published, and the set has no published lexicon",
                         path=data.source or data.entry.name, fix="leave lexicon out: one is fitted on its corpus")
    return data.lexicon


def call_hook(hook: str, *args: object, **kwargs: object) -> object:
    """The function a declaration names as ``MODULE:FUNCTION``, called with ``args`` and ``kwargs``."""
    module, _, name = hook.partition(":")
    try:
        function = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise TstevalError(f"the hook {hook!r} cannot be imported: {error}") from None
    return function(*args, **kwargs)


def _hook(data: SetData, group: ColumnGroup, seed: int) -> tuple[dict, dict, list[str]]:
    columns = call_hook(str(group.hook), data, seed=seed, **group.params)
    if not isinstance(columns, Mapping):
        raise TstevalError(f"the hook {group.hook!r} returned {type(columns).__name__}, not {{COLUMN: values}}")
    values = {c + group.suffix: np.asarray(v, dtype=float) for c, v in columns.items()}
    for column, array in values.items():
        if array.shape != (len(data.frame),):
            raise TstevalError(f"the hook {group.hook!r} gave {column} {array.shape} values for {len(data.frame)} "
                               "rows")
    return values, {c: f"hook:{group.hook}|{json.dumps(group.params, sort_keys=True)}" for c in values}, []


def _judged(group: ColumnGroup, columns: Mapping[str, str], data: SetData) -> dict[str, MetricColumn]:
    from tsteval.metrics.registry import find_metric

    out = {}
    for column, signature in columns.items():
        if group.authors:
            aspect, higher = data.published[column]
            out[column] = MetricColumn(column, aspect, higher, data.source)
        elif group.hook is not None:
            if group.aspect is None:
                raise TstevalError(f"the hook {group.hook!r}: give its columns' aspect: in the declaration")
            out[column] = MetricColumn(column, group.aspect, group.higher_is_better)
        elif (metric := find_metric(column.removesuffix(group.suffix) if group.suffix else column, signature)):
            out[column] = MetricColumn(column, metric.aspect, metric.higher_is_better)
    return out


def score_group(data: SetData, group: ColumnGroup, seed: int, log: Log = print,
                cache: Path | None = None) -> Scored:
    """The columns of ``group`` on ``data``: read from the cache when its key is there, else scored and kept."""
    if group.authors:
        if not data.published:
            raise TstevalError(f"set {data.entry.label}: authors: true, and the set carries no published scores")
        values = {c: data.frame[c].to_numpy(dtype=float) for c in data.published}
        return Scored(values, {c: f"published:{data.source}" for c in values},
                      _judged(group, dict.fromkeys(values, ""), data), 0.0)
    from tsteval.core.cache import cache_root

    folder = (cache or cache_root() / "study-columns") / data.entry.name.replace("/", "_")
    target = folder / f"{_key(data, group, seed)}.parquet"
    meta = target.with_suffix(".json")
    if target.is_file() and meta.is_file():
        try:
            info = json.loads(meta.read_text(encoding="utf-8"))
            table = pd.read_parquet(target)
            if len(table) == len(data.frame) and list(table.columns) == list(info["signatures"]):
                values = {c: table[c].to_numpy(dtype=float) for c in table.columns}
                return Scored(values, info["signatures"], _judged(group, info["signatures"], data),
                              float(info["seconds"]), cached=True, notices=tuple(info["notices"]))
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            pass  # a damaged entry is scored again
    start = time.perf_counter()
    values, signatures, notices = _hook(data, group, seed) if group.hook else _evaluate(data, group, seed, log)
    seconds = time.perf_counter() - start
    folder.mkdir(parents=True, exist_ok=True)
    meta.unlink(missing_ok=True)
    tmp = target.with_suffix(".tmp")
    pd.DataFrame(values).to_parquet(tmp, index=False)
    tmp.replace(target)
    meta.write_text(json.dumps({"signatures": signatures, "seconds": round(seconds, 2), "notices": notices,
                                "group": group.spec()}, default=str) + "\n", encoding="utf-8")
    return Scored(values, signatures, _judged(group, signatures, data), seconds, notices=tuple(notices))
