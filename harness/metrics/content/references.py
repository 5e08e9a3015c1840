"""Content metrics against human references: columns ``metric@ref``, beside the input-based ``metric@none``.

Each transfer has one or several references (reference set k, line i = a reference for item i).  BLEU and chrF
are multi-reference as sacreBLEU defines them: BLEU clips n-gram matches by their largest count in any reference
and takes the reference length closest to the hypothesis (``BLEU.sentence_score(hyp, refs)``, same smoothing and
tokenisation as ``bleu@none``); chrF keeps the statistics of the best-matching reference.  The other metrics
score against every reference and keep the best: the largest similarity, the smallest WMD.  The empty-text
policy (:mod:`tsteval.metrics.content.policy`) applies per reference, so an empty output scores the worst.

Signatures add ``ref:N`` (references per transfer) and ``refhash`` (a hash of every reference text).
The corpus-level numbers papers report are corpus BLEU (and chrF) over the summed sentence statistics:
:func:`corpus_table`, per system, setting and transfer direction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.core.errors import InputError, TstevalError
from tsteval.core.records import Transfers
from tsteval.core.signature import texts_hash
from tsteval.core.tokenize import tokens_of
from tsteval.metrics.content.declarations import CONTENT
from tsteval.metrics.content.overlap import MAX_ORDER, bleu_from_statistics, segment_statistics
from tsteval.metrics.content.policy import MetricResult, PolicyCounts, apply_policy, empty_masks
from tsteval.metrics.resources import Resources
from tsteval.scorecard import Scorecard

REFERENCE_LABEL = "ref"
# The transfers' column of one human reference per item (as the table and rated-set readers name it).
REFERENCE_COLUMN = "reference"
DUALRL_PREFIX = "dualrl"
References = tuple[tuple[str, ...], ...]
_METRICS = {m.name: m for m in CONTENT}


def _item_positions(transfers: Transfers) -> tuple[list[object], np.ndarray]:
    """The distinct items in order of first appearance, and each row's position among them."""
    codes, uniques = pd.factorize(transfers.frame["item"], sort=False)
    return list(uniques), codes


def has_references(transfers: Transfers) -> bool:
    """Whether the transfers carry a :data:`REFERENCE_COLUMN` (a table's, a rated set's)."""
    return REFERENCE_COLUMN in transfers.frame.columns


def resolve_references(source: object, transfers: Transfers) -> References:
    """The references of every row: one tuple per reference set, aligned with ``transfers.frame``.

    ``source`` is ``"dualrl:DATASET"`` (the four DualRL references, by item), or a sequence of reference sets,
    each a file or a list of texts whose line i is the reference for the i-th distinct item (for one system:
    transfer i), or None.  A count that does not match is an :class:`InputError` naming the file.  The transfers'
    own :data:`REFERENCE_COLUMN` is the first set, the ones of ``source`` identical to it not counted again.
    """
    own = _column_references(transfers) if has_references(transfers) else None
    given = () if source is None else _given_references(source, transfers)
    return given if own is None else (own, *(refs for refs in given if refs != own))


def with_reference_column(transfers: Transfers, references: References) -> Transfers:
    """``transfers`` with the first reference set as their :data:`REFERENCE_COLUMN` (the scorecard's, from which
    ``tsteval annotate plan`` plans reference pairs) where they have none."""
    if has_references(transfers) or not references:
        return transfers
    return replace(transfers, frame=transfers.frame.assign(**{REFERENCE_COLUMN: list(references[0])}))


def _column_references(transfers: Transfers) -> tuple[str, ...]:
    """The transfers' :data:`REFERENCE_COLUMN` as a reference set: each row the reference of its item (rows
    without one, such as a baseline's, take their item's); an item with none is an :class:`InputError`."""
    frame = transfers.frame
    column = frame[REFERENCE_COLUMN].where(frame[REFERENCE_COLUMN].astype(str).str.strip() != "")
    by_item = column.groupby(frame["item"], sort=False).transform("first")
    missing = by_item.isna() | ~by_item.map(lambda v: isinstance(v, str))
    if missing.any():
        raise InputError(f"item {frame['item'][missing].iloc[0]!r} has no text in the {REFERENCE_COLUMN!r} column",
                         path=transfers.origin, fix=f"give every item a reference, or drop the {REFERENCE_COLUMN!r} "
                         "column and pass reference files")
    return tuple(by_item)


def _given_references(source: object, transfers: Transfers) -> References:
    """:func:`resolve_references` of ``source`` alone."""
    if isinstance(source, str) and source.startswith(f"{DUALRL_PREFIX}:"):
        return _dualrl(source.split(":", 1)[1], transfers)
    if isinstance(source, (str, Path)) or not isinstance(source, Sequence) or not source:
        raise TstevalError("references must be 'dualrl:DATASET' or a list of reference sets (files or lists of "
                           f"texts), not {type(source).__name__}")
    items, positions = _item_positions(transfers)
    rows = len(transfers.frame)
    resolved = []
    for k, reference_set in enumerate(source):
        if isinstance(reference_set, (str, Path)):
            from tsteval.readers.lines import read_lines

            lines, where = read_lines(reference_set), reference_set
        elif isinstance(reference_set, Sequence) and all(isinstance(t, str) for t in reference_set):
            lines, where = list(reference_set), None
        else:
            raise TstevalError(f"reference set {k} must be a file or a list of texts")
        if len(lines) == rows and len(items) != rows:
            resolved.append(tuple(lines))
            continue
        if len(lines) != len(items):
            message = f"{len(lines)} references but the transfers have {len(items)} items"
            fix = "line i must be a reference for item i (transfer i of one system)"
            if where is None:
                raise TstevalError(f"reference set {k}: {message} ({fix})")
            raise InputError(message, path=where, fix=fix)
        resolved.append(tuple(lines[p] for p in positions))
    return tuple(resolved)


def _dualrl(dataset: str, transfers: Transfers) -> References:
    """The DualRL references of ``dataset`` for each row, by item; the inputs must be that dataset's."""
    from tsteval.readers.dualrl import load_dualrl_references

    table = load_dualrl_references(dataset).set_index("item")
    frame = transfers.frame
    columns = [c for c in table.columns if c.startswith("reference")]
    missing = ~frame["item"].isin(table.index)
    if missing.any():
        raise TstevalError(f"item {frame['item'][missing].iloc[0]!r} has no DualRL {dataset} reference (they "
                           f"cover items 0..{len(table) - 1}); score --dualrl {dataset} with --references dualrl")
    expected = table.loc[frame["item"], "input"].to_numpy()
    wrong = np.flatnonzero(expected != frame["input"].to_numpy())
    if len(wrong):
        row = frame.iloc[wrong[0]]
        raise TstevalError(f"item {row['item']!r}: the input {row['input'][:60]!r} is not DualRL {dataset}'s test "
                           f"input {expected[wrong[0]][:60]!r}; give the references of the dataset you score")
    return tuple(tuple(table.loc[frame["item"], c].astype(str)) for c in columns)


def _tokenized(texts: Sequence[str]) -> list[list[str]]:
    """tsteval's tokens of each text, each distinct text tokenized once."""
    distinct = dict(zip(set(texts), tokens_of(list(set(texts))), strict=True))
    return [distinct[t] for t in texts]


def _policy(values: np.ndarray, references: References, hyps: Sequence[str], scale: float) -> MetricResult:
    """The empty-text policy against the references: per reference, then the best case kept."""
    hyp_tokens = _tokenized(hyps)
    results = [apply_policy(values, _tokenized(refs), hyp_tokens, scale=scale) for refs in references]
    return _best(results, references, hyps, higher_is_better=True)


def _best(results: Sequence[MetricResult], references: References, hyps: Sequence[str],
          higher_is_better: bool) -> MetricResult:
    """Per row the best value over the references.  Counts: an empty output with an empty reference (both
    empty), an output or all its references empty (one empty); out-of-vocabulary pairs: the fewest of any set; cut
    at a model's limit: the rows where the output or any reference was."""
    stacked = np.stack([r.values for r in results])
    best = stacked.max(axis=0) if higher_is_better else stacked.min(axis=0)
    hyp_tokens = _tokenized(hyps)
    masks = [empty_masks(_tokenized(refs), hyp_tokens) for refs in references]
    both = np.any([b for b, _ in masks], axis=0)
    one = np.all([o for _, o in masks], axis=0) & ~both
    cut = [r.truncated for r in results if r.truncated is not None]
    truncated = np.any(cut, axis=0) if cut else None
    counts = PolicyCounts(int(both.sum()), int(one.sum()), min(r.counts.n_all_oov for r in results),
                          0 if truncated is None else int(truncated.sum()), results[0].counts.max_tokens)
    return MetricResult(best, counts, truncated)


def _joined(texts: Sequence[str], cache: dict[str, str]) -> list[str]:
    """Texts as tsteval's tokens joined by spaces, each distinct text tokenized once."""
    new = list(set(texts) - cache.keys())
    cache.update(zip(new, (" ".join(t) for t in tokens_of(new)), strict=True))
    return [cache[t] for t in texts]


def _statistics(metric: object, references: References, hyps: Sequence[str]) -> list[list[int]]:
    """``metric._extract_corpus_statistics(hyps, references)`` on tsteval's tokens (sacreBLEU's per-sentence
    multi-reference statistics, :func:`~tsteval.metrics.content.overlap.segment_statistics`)."""
    cache: dict[str, str] = {}
    return segment_statistics(metric, _joined(hyps, cache), [_joined(refs, cache) for refs in references])


def bleu_statistics(references: References, hyps: Sequence[str]) -> np.ndarray:
    """sacreBLEU's multi-reference BLEU statistics per sentence, shape (n, 2 + 2*4), on tsteval's tokens."""
    from sacrebleu.metrics import BLEU

    stats = _statistics(BLEU(tokenize="none", force=True), references, hyps)
    return np.asarray(stats, dtype=np.float64).reshape(len(hyps), 2 + 2 * MAX_ORDER)


def _chrf(**params: object) -> object:
    """sacreBLEU's CHRF with chrF's declared parameters, ``params`` over them."""
    from sacrebleu.metrics import CHRF

    return CHRF(**_METRICS["chrf"].check_params(params))


def chrf_statistics(references: References, hyps: Sequence[str], **params: object) -> np.ndarray:
    """sacreBLEU's chrF statistics per sentence (of its best-matching reference), on tsteval's tokens."""
    return np.asarray(_statistics(_chrf(**params), references, hyps), dtype=np.int64)


def multi_reference(name: str, references: References, hyps: Sequence[str],
                    statistics: np.ndarray | None = None, params: Mapping[str, object] | None = None,
                    **kwargs: object) -> MetricResult:
    """Metric ``name`` (with ``params``, checked over its defaults) of each hypothesis against its references
    (multi-reference or best-of); ``statistics`` are the BLEU or chrF statistics when already extracted."""
    metric = _METRICS[name]
    params = metric.check_params(params or {})
    if name in ("bleu", "bleu_mir"):
        stats = bleu_statistics(references, hyps) if statistics is None else statistics
        values = bleu_from_statistics(stats, **params)
        return _policy(values, references, hyps, scale=100.0)
    if name == "chrf":
        stats = chrf_statistics(references, hyps, **params) if statistics is None else statistics
        chrf = _chrf(**params)
        values = np.array([chrf._compute_score_from_stats(row.tolist()).score for row in stats])
        return _policy(values, references, hyps, scale=100.0)
    function = metric.function()
    results = [function(list(refs), list(hyps), **kwargs, **params) for refs in references]
    return _best(results, references, hyps, metric.higher_is_better)


def score_references(card: Scorecard, metrics: Sequence[str], references: References, *,
                     resources: Resources | None = None, params: Mapping[str, Mapping[str, object]] | None = None
                     ) -> tuple[dict[str, dict[str, int]], pd.DataFrame]:
    """Add ``metric@ref`` for each metric to ``card`` (its resources from ``resources``, its parameters from
    ``params`` by metric name); returns the empty/OOV policy counts per column and the corpus-level table
    (:func:`corpus_table`)."""
    if not references or any(len(refs) != len(card.frame) for refs in references):
        raise TstevalError(f"references must give one text per transfer ({len(card.frame)} rows)")
    hyps = card.frame["output"].tolist()
    resources = resources if resources is not None else Resources()
    params = params or {}
    statistics = {"bleu": bleu_statistics, "chrf": lambda r, h: chrf_statistics(r, h, **params.get("chrf", {}))}
    extracted = {m: statistics[m](references, hyps) for m in statistics if m in metrics}
    counts = {}
    for name in metrics:
        metric = _METRICS[name]
        fields: dict[str, object] = {"mod": "none", "ref": len(references),
                                     "refhash": texts_hash([t for refs in references for t in refs])}
        kwargs, used = resources.scorer_arguments(metric)
        values = metric.check_params(params.get(name, {}))
        stats = extracted.get("bleu" if name == "bleu_mir" else name)
        result = multi_reference(name, references, hyps, stats, values, **kwargs)
        column = f"{name}@{REFERENCE_LABEL}"
        card.add(column, metric.clipped(result.values), str(metric.signature(param_values=values, **fields, **used)))
        counts[column] = result.counts.as_dict()
    return counts, corpus_table(card, extracted, len(references), params.get("chrf", {}))


def corpus_table(card: Scorecard, statistics: dict[str, np.ndarray], n_references: int,
                 chrf_params: Mapping[str, object] | None = None) -> pd.DataFrame:
    """Corpus BLEU / chrF from the summed sentence ``statistics`` (``sacrebleu.corpus_bleu`` / ``corpus_chrf`` on
    tsteval's tokens) per system, setting and direction (``source-target``, and ``all``); empty without them."""
    frame, stats = card.frame, statistics
    if not stats:
        return pd.DataFrame()
    direction = frame["source_style"].astype(str) + "-" + frame["target_style"].astype(str)
    rows = []
    for (system, setting), group in frame.groupby(["system", "setting"], sort=False):
        directions = direction[group.index]
        parts = [(d, group.index[directions == d]) for d in directions.unique()]
        if len(parts) > 1:
            parts.append(("all", group.index))
        for label, index in parts:
            positions = frame.index.get_indexer(index)
            row: dict[str, object] = {"system": system, "setting": setting, "direction": label, "n": len(index),
                                      "references": n_references}
            if "bleu" in stats:
                total = stats["bleu"][positions].sum(axis=0, keepdims=True)
                row["corpus_bleu"] = float(bleu_from_statistics(total, "exp", None, False)[0])
            if "chrf" in stats:
                total = stats["chrf"][positions].sum(axis=0).tolist()
                row["corpus_chrf"] = _chrf(**(chrf_params or {}))._compute_score_from_stats(total).score
            rows.append(row)
    return pd.DataFrame(rows)


def corpus_markdown(frame: pd.DataFrame) -> str:
    """The corpus table as Markdown (names escaped), scores with two decimals."""
    from tsteval.core.markdown import table

    return table(frame, lambda v: f"{v:.2f}" if isinstance(v, float) else str(v)) + "\n"
