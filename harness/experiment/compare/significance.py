"""Paired significance between two scored runs of the same inputs: paired bootstrap resampling and approximate
randomisation, as sacreBLEU's ``--paired-bs`` and ``--paired-ar`` do them, with Holm's correction across metrics.

sacreBLEU's corpus BLEU is not a mean of sentence scores: each resample re-aggregates the sentences' sufficient
statistics.  Both tests here therefore take a *statistic* that maps resampled per-row statistics to one number per
resample; for tsteval's per-sentence scorecard columns the statistic is the mean (:func:`mean_statistic`).

Given the same statistic and seed, :func:`paired_bootstrap` draws the same resamples as sacreBLEU's
``_paired_bs_test`` and computes its p-value: the share of resamples whose centred absolute difference
``|d*| - mean(|d*|)`` reaches the observed ``|d|``, with ``(c + 1) / (R + 1)``.  One deliberate difference: a
resample *reaching* the observed difference counts (sacreBLEU counts only those exceeding it), so a system compared
with itself gets p = 1 rather than 1 / (R + 1); on continuous scores the two never differ.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.errors import InputError, TstevalError, clip
from tsteval.core.styles import direction_label, style_names
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import Scorecard

Statistic = Callable[[np.ndarray], np.ndarray]
"""Maps per-row statistics stacked as ``(resamples, rows, ...)`` to one value per resample."""

# Resample indices are drawn in blocks of at most this many entries (memory stays bounded on large corpora; the
# draws are the same as one big draw, so small corpora reproduce sacreBLEU's resamples exactly).
_MAX_BLOCK_ENTRIES = 10_000_000
KEYS = ("source_style", "target_style", "input")


def mean_statistic(stacked: np.ndarray) -> np.ndarray:
    """The statistic of a per-sentence score column: the mean over the rows of each resample."""
    return stacked.mean(axis=1)


def _blocks(n_rows: int, n_resamples: int) -> list[int]:
    block = max(1, _MAX_BLOCK_ENTRIES // max(n_rows, 1))
    return [min(block, n_resamples - start) for start in range(0, n_resamples, block)]


def _p_value(null: np.ndarray, observed: float) -> float:
    """``(c + 1) / (R + 1)``, c = resamples at least as extreme as ``observed`` (a relative tolerance absorbs the
    rounding of sums taken in another order)."""
    count = int(np.sum(null >= observed - 1e-12 * max(1.0, abs(observed))))
    return (count + 1) / (null.size + 1)


@dataclass(frozen=True)
class PairedResult:
    """Statistic of A and of B, the difference B - A with its 95% bootstrap interval, and both p-values."""

    a: float
    b: float
    difference: float
    low: float
    high: float
    p_bootstrap: float
    p_randomisation: float


def paired_bootstrap(a: np.ndarray, b: np.ndarray, statistic: Statistic = mean_statistic,
                     n_resamples: int = N_RESAMPLES, seed: int | None = 12345) -> tuple[float, float, float]:
    """sacreBLEU's paired bootstrap resampling test of B against A: ``(p, low, high)`` with the 95% percentile
    interval of the resampled difference ``statistic(B*) - statistic(A*)``.  Rows of ``a`` and ``b`` are paired."""
    observed = abs(float(statistic(b[None])[0]) - float(statistic(a[None])[0]))
    rng = np.random.default_rng(seed)
    diffs = []
    for size in _blocks(len(a), n_resamples):
        idx = rng.choice(len(a), size=(size, len(a)), replace=True)
        diffs.append(np.asarray(statistic(b[idx]), dtype=float) - np.asarray(statistic(a[idx]), dtype=float))
    diff = np.concatenate(diffs)
    magnitude = np.abs(diff)
    low, high = np.percentile(diff, [2.5, 97.5])
    return _p_value(magnitude - magnitude.mean(), observed), float(low), float(high)


def approximate_randomisation(a: np.ndarray, b: np.ndarray, statistic: Statistic = mean_statistic,
                              n_resamples: int = N_RESAMPLES, seed: int | None = 12345) -> float:
    """sacreBLEU's paired approximate randomisation test: each trial swaps the A and B values of a random half of
    the rows; p = share of trials whose ``|statistic(A') - statistic(B')|`` reaches the observed one.

    With ``2**rows <= n_resamples`` every swap pattern is enumerated instead, giving the exact p-value
    ``count / 2**rows`` (the unswapped pattern included)."""
    observed = abs(float(statistic(b[None])[0]) - float(statistic(a[None])[0]))
    n = len(a)
    exact = n < 63 and 2**n <= n_resamples
    if exact:
        patterns = np.array(list(itertools.product((False, True), repeat=n)), dtype=bool).reshape(-1, n)
        sizes = [len(patterns)]
    else:
        rng = np.random.default_rng(seed)
        sizes = _blocks(n, n_resamples)
    null = []
    for size in sizes:
        swap = patterns if exact else rng.integers(2, size=(size, n), dtype=bool)
        mask = swap.reshape(swap.shape + (1,) * (a.ndim - 1))
        shuffled_a, shuffled_b = np.where(mask, b[None], a[None]), np.where(mask, a[None], b[None])
        null.append(np.abs(np.asarray(statistic(shuffled_a), float) - np.asarray(statistic(shuffled_b), float)))
    stats = np.concatenate(null)
    if exact:
        return int(np.sum(stats >= observed - 1e-12 * max(1.0, abs(observed)))) / stats.size
    return _p_value(stats, observed)


def paired_test(a: np.ndarray, b: np.ndarray, statistic: Statistic = mean_statistic, n_resamples: int = N_RESAMPLES,
                seed: int | None = 12345) -> PairedResult:
    """Both tests of B against A on paired rows, with the statistic of each and the difference's interval."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    value_a, value_b = float(statistic(a[None])[0]), float(statistic(b[None])[0])
    p_bs, low, high = paired_bootstrap(a, b, statistic, n_resamples, seed)
    p_ar = approximate_randomisation(a, b, statistic, n_resamples, seed)
    return PairedResult(value_a, value_b, value_b - value_a, low, high, p_bs, p_ar)


def signature_difference(a: str, b: str) -> str | None:
    """The first ``field:value`` of two signatures that differs, as ``FIELD (A: ..., B: ...)``; None when equal."""
    if a == b:
        return None
    fields_a = dict(part.partition(":")[::2] for part in a.split("|"))
    fields_b = dict(part.partition(":")[::2] for part in b.split("|"))
    for name in list(fields_a) + [f for f in fields_b if f not in fields_a]:
        if fields_a.get(name) != fields_b.get(name):
            return f"{name!r} (A: {fields_a.get(name, 'absent')}, B: {fields_b.get(name, 'absent')})"
    return "order of fields"


def _one_system(card: Scorecard, origin: str) -> None:
    groups = card.frame[["system", "setting"]].drop_duplicates()
    if len(groups) != 1:
        names = ", ".join(f"{s}/{t}" for s, t in groups.itertuples(index=False))
        raise InputError(f"the run holds {len(groups)} system/setting groups ({names[:200]}), not one",
                         path=origin, fix="compare runs that each scored one system and setting")


def _ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of one system and setting with ``_rank``: repeated inputs are paired in the order of their item
    ids."""
    frame = frame.assign(_item=frame["item"].astype(str)).sort_values("_item", kind="stable")
    return frame.assign(_rank=frame.groupby(list(KEYS), sort=False).cumcount())


def _paired(left: pd.DataFrame, right: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The rows of two ranked frames that share input, source and target style (and rank), with the columns of
    the left as ``COLUMN_a`` and of the right as ``COLUMN_b``."""
    keys = [*KEYS, "_rank"]
    return left[keys + columns].merge(right[keys + columns], on=keys, suffixes=("_a", "_b"))


def compare_runs(a: Scorecard, b: Scorecard, *, origin_a: str = "A", origin_b: str = "B",
                 n_resamples: int = N_RESAMPLES, seed: int = 12345,
                 ignore_signatures: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Compare every metric column the two runs share over the inputs they share (same input text, source and
    target style; repeated inputs in item order), each transfer direction on its own (:func:`compare_systems`:
    directions are never pooled).

    Returns :func:`compare_systems`' table (``source_style, target_style, metric, mean_a, mean_b, difference, low,
    high, p_bootstrap, p_randomisation``, their Holm-adjusted ``*_holm`` over the columns of one direction, and
    ``better``: ``A``, ``B`` or ``-`` by the metric's direction when significant at 0.05 after Holm on both tests,
    ``?`` for a column whose direction is unknown) and its counts (``matched, rows_a, rows_b`` per direction)."""
    if n_resamples < 1:
        raise TstevalError(f"--resamples must be at least 1, got {n_resamples}")
    columns = [c for c in a.metrics if c in b.signatures]
    if not columns:
        raise TstevalError(f"{origin_a} and {origin_b} share no metric column (A: {a.metrics[:10]}, "
                           f"B: {b.metrics[:10]}); score both runs with the same metrics")
    if not ignore_signatures:
        for column in columns:
            field = signature_difference(a.signatures[column], b.signatures[column])
            if field:
                raise TstevalError(f"the signatures of {column!r} differ in {field}: the scores are not comparable; "
                                   "score both runs with the same settings, or pass --ignore-signatures")
    _one_system(a, origin_a)
    _one_system(b, origin_b)
    keep = ["item", *KEYS, *columns]
    sides = {("A", origin_a): a, ("B", origin_b): b}
    both = pd.concat([card.frame[keep].assign(system=f"{side} = {origin}", setting="")
                      for (side, origin), card in sides.items()], ignore_index=True)
    groups = [(f"{side} = {origin}", "") for side, origin in sides]
    return compare_systems(Scorecard(both, {c: a.signatures[c] for c in columns}), *groups, directions(both),
                           columns, n_resamples, seed)


def _metric_table(matched: pd.DataFrame, columns: list[str], signatures: dict[str, str], n_resamples: int,
                  seed: int, origins: str) -> pd.DataFrame:
    """Both paired tests of every column of a :func:`_paired` frame, Holm-adjusted across the columns."""
    from statsmodels.stats.multitest import multipletests

    rows = []
    for column in columns:
        values = matched[[f"{column}_a", f"{column}_b"]].to_numpy(dtype=float)
        if not np.isfinite(values).all():
            raise TstevalError(f"{column!r} has {int((~np.isfinite(values)).sum())} NaN or infinite values in the "
                               f"matched rows of {origins}; fix or rescore those rows")
        result = paired_test(values[:, 0], values[:, 1], mean_statistic, n_resamples, seed)
        rows.append({"metric": column, "mean_a": result.a, "mean_b": result.b, "difference": result.difference,
                     "low": result.low, "high": result.high, "p_bootstrap": result.p_bootstrap,
                     "p_randomisation": result.p_randomisation})
    table = pd.DataFrame(rows)
    for test in ("p_bootstrap", "p_randomisation"):
        table[f"{test}_holm"] = multipletests(table[test].to_numpy(), method="holm")[1]
    table["better"] = [_better(r, signatures[r.metric]) for r in table.itertuples()]
    return table


def _better(row: object, signature: str) -> str:
    metric = find_metric(row.metric, signature)
    if metric is None:
        return "?"
    if max(row.p_bootstrap_holm, row.p_randomisation_holm) >= 0.05 or row.difference == 0:
        return "-"
    return "B" if (row.difference > 0) == metric.higher_is_better else "A"


def _require_columns(card: Scorecard, columns: list[str]) -> None:
    missing = [c for c in columns if c not in card.signatures]
    if missing:
        raise TstevalError(f"the comparison needs the columns {missing}, which this run did not score "
                           f"(it has {card.metrics[:12]})")


def group_labels(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """A display name per (system, setting): the system alone when it has one setting, else ``system / setting``."""
    groups = frame[["system", "setting"]].drop_duplicates()
    settings = groups["system"].value_counts()
    return {(system, setting): system if settings[system] == 1 else f"{system} / {setting}"
            for system, setting in groups.itertuples(index=False)}


def matrix_resamples(n_pairs: int, minimum: int = N_RESAMPLES) -> int:
    """Bootstrap resamples for ``n_pairs`` Holm-corrected comparisons: at least ``minimum`` and enough that the
    smallest p-value, 1 / (R + 1), survives Holm's factor ``n_pairs`` below 0.05 (R + 1 >= 20 x pairs)."""
    return max(minimum, 20 * n_pairs)


def significance_matrix(card: Scorecard, columns: list[str], n_resamples: int | None = None,
                        seed: int = 12345, labels: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Every pair of (system, setting) groups of one scorecard, on every column: the paired bootstrap over the
    inputs both share (as :func:`compare_runs`), with p Holm-adjusted over all pairs of one column.

    ``n_resamples`` defaults to :func:`matrix_resamples` of the number of pairs (with the bootstrap's p-value floor
    1 / (R + 1), 1000 resamples could never show one of 153 pairs significant after Holm).  One row per
    (column, A, B) with A before B in the card's order: ``metric, a, b, n, mean_a, mean_b, difference`` (B - A),
    ``low, high, p_bootstrap, p_holm``, ``better`` (A, B or ``-`` at 0.05 after Holm, by the metric's direction)
    and ``resamples``.  A pair with no shared input has ``n`` 0 and no p-value.  ``labels`` names the groups (default:
    :func:`group_labels` of the card)."""
    from statsmodels.stats.multitest import multipletests

    _require_columns(card, columns)
    labels = labels or group_labels(card.frame)
    ranked = {key: _ranked(group) for key, group in card.frame.groupby(["system", "setting"], sort=False)}
    keys = list(ranked)
    if n_resamples is None:
        n_resamples = matrix_resamples(len(keys) * (len(keys) - 1) // 2)
    parts = []
    for column in columns:
        rows = []
        for i, key_a in enumerate(keys):
            for key_b in keys[i + 1:]:
                matched = _paired(ranked[key_a], ranked[key_b], [column])
                row = {"metric": column, "a": labels[key_a], "b": labels[key_b], "n": len(matched)}
                if len(matched):
                    values_a = matched[f"{column}_a"].to_numpy(float)
                    values_b = matched[f"{column}_b"].to_numpy(float)
                    if not (np.isfinite(values_a).all() and np.isfinite(values_b).all()):
                        raise TstevalError(f"{column!r} has NaN or infinite values in the rows of {labels[key_a]} "
                                           f"or {labels[key_b]}; fix or rescore those rows")
                    p, low, high = paired_bootstrap(values_a, values_b, mean_statistic, n_resamples, seed)
                    row |= {"mean_a": values_a.mean(), "mean_b": values_b.mean(),
                            "difference": values_b.mean() - values_a.mean(), "low": low, "high": high,
                            "p_bootstrap": p}
                rows.append(row)
        table = pd.DataFrame(rows, columns=["metric", "a", "b", "n", "mean_a", "mean_b", "difference", "low", "high",
                                            "p_bootstrap"])
        tested = table["n"] > 0
        table["p_holm"] = np.nan
        if tested.any():
            table.loc[tested, "p_holm"] = multipletests(table.loc[tested, "p_bootstrap"].to_numpy(float),
                                                        method="holm")[1]
        metric = find_metric(column, card.signatures[column])
        table["better"] = [("?" if metric is None else "-" if not (p < 0.05) or d == 0 else
                            "B" if (d > 0) == metric.higher_is_better else "A")
                           for p, d in zip(table["p_holm"], table["difference"], strict=True)]
        parts.append(table.assign(resamples=n_resamples))
    return pd.concat(parts, ignore_index=True)


def matrix_table(pairs: pd.DataFrame, column: str) -> pd.DataFrame:
    """One column's pairs as a square table: the cell of row R and column C is mean(R) - mean(C) over their shared
    inputs, ``*`` when the Holm-adjusted paired-bootstrap p is below 0.05, ``n/a`` without shared inputs."""
    part = pairs[pairs["metric"] == column]
    names = list(dict.fromkeys([*part["a"], *part["b"]]))
    cells = {(name, name): "—" for name in names}
    for row in part.itertuples(index=False):
        if row.n == 0:
            cells[(row.a, row.b)] = cells[(row.b, row.a)] = "n/a"
            continue
        star = "*" if row.p_holm < 0.05 else ""
        cells[(row.a, row.b)] = f"{-row.difference:+.3f}{star}"
        cells[(row.b, row.a)] = f"{row.difference:+.3f}{star}"
    return pd.DataFrame([{"system": r, **{c: cells.get((r, c), "n/a") for c in names}} for r in names])


# --- systems of one run, per transfer direction ------------------------------------------------------------------

Direction = tuple[str, str]


def direction_name(direction: Direction) -> str:
    """``SOURCE->TARGET``, as ``--direction`` takes it."""
    return f"{direction[0]}->{direction[1]}"


def direction_title(direction: Direction, names: Mapping[str, str]) -> str:
    """The direction named by style, with the labels ``--direction`` takes where the names differ from them.

    >>> direction_title(("0", "1"), {"0": "formal", "1": "informal"})
    'formal → informal (0->1)'
    >>> direction_title(("neg", "pos"), {})
    'neg → pos'
    """
    named = direction_label(*direction, names)
    return named if named == direction_label(*direction, {}) else f"{named} ({direction_name(direction)})"


def directions(frame: pd.DataFrame) -> list[Direction]:
    """The (source style, target style) pairs of a scorecard, in the order of their first row."""
    return list(dict.fromkeys(zip(frame["source_style"].astype(str), frame["target_style"].astype(str),
                                  strict=True)))


def choose_direction(card: Scorecard, text: str | None) -> list[Direction]:
    """Every direction of the card (``text`` None), or the one ``text`` (``SOURCE->TARGET``, by label or by style
    name) names; an unknown one is an error listing the card's."""
    known = directions(card.frame)
    if text is None:
        return known
    source, arrow, target = (part.strip() for part in text.partition("->"))
    labels = {name: label for label, name in style_names(card.frame).items()}
    for direction in ((source, target), (labels.get(source, source), labels.get(target, target))):
        if direction in known and arrow:
            return [direction]
    raise TstevalError(f"the run has no direction {clip(text, 80)!r}; its directions are "
                       f"{clip(', '.join(direction_name(d) for d in known))} (give --direction SOURCE->TARGET)")


def choose_systems(card: Scorecard, names: list[str] | None) -> list[tuple[str, str]]:
    """The (system, setting) groups ``names`` gives, by the names :func:`group_labels` shows (a system with one
    setting is its name; else ``system / setting``); None or ``["all"]`` gives every group.  An unknown or repeated
    name is an error listing the run's systems."""
    labels = group_labels(card.frame)
    if not names or names == ["all"]:
        return list(labels)
    by_label = {label: key for key, label in labels.items()}
    known = clip(", ".join(labels.values()), 2000)
    chosen = []
    for name in names:
        if name not in by_label:
            raise TstevalError(f"unknown system {clip(name, 80)!r}; the run's systems are: {known}")
        if by_label[name] in chosen:
            raise TstevalError(f"the system {clip(name, 80)!r} is named twice; give each system once")
        chosen.append(by_label[name])
    if len(chosen) < 2:
        raise TstevalError(f"give two systems or more to compare, or all; the run's systems are: {known}")
    return chosen


def _in_direction(frame: pd.DataFrame, direction: Direction) -> pd.Series:
    return (frame["source_style"].astype(str) == direction[0]) & (frame["target_style"].astype(str) == direction[1])


def _of_group(frame: pd.DataFrame, key: tuple[str, str]) -> pd.Series:
    return (frame["system"] == key[0]) & (frame["setting"] == key[1])


def compare_systems(card: Scorecard, a: tuple[str, str], b: tuple[str, str], chosen: list[Direction],
                    columns: list[str] | None = None, n_resamples: int = N_RESAMPLES,
                    seed: int = 12345) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Group ``b`` against group ``a`` of one scorecard, each direction of ``chosen`` on its own: the rows of the
    direction paired by input (as :func:`compare_runs`), both tests on every column, Holm-adjusted across the
    columns of that direction.  Directions are never pooled: a pooled mean weighs the directions by their row
    counts, and can show the opposite of both.

    Returns the :func:`compare_runs` table with ``source_style, target_style`` in front (directions without a shared
    input left out) and one row per chosen direction: ``source_style, target_style, matched, rows_a, rows_b``."""
    if n_resamples < 1:
        raise TstevalError(f"--resamples must be at least 1, got {n_resamples}")
    columns = list(columns or card.metrics)
    _require_columns(card, columns)
    labels = group_labels(card.frame)
    parts, counts = [], []
    for direction in chosen:
        frame = card.frame[_in_direction(card.frame, direction)]
        left, right = frame[_of_group(frame, a)], frame[_of_group(frame, b)]
        matched = _paired(_ranked(left), _ranked(right), columns)
        counts.append({"source_style": direction[0], "target_style": direction[1], "matched": len(matched),
                       "rows_a": len(left), "rows_b": len(right)})
        if len(matched):
            table = _metric_table(matched, columns, card.signatures, n_resamples, seed,
                                  f"{labels[a]} and {labels[b]} ({direction_name(direction)})")
            parts.append(table.assign(source_style=direction[0], target_style=direction[1]))
    if not parts:
        raise TstevalError(f"{labels[a]} and {labels[b]} share no input in "
                           f"{', '.join(direction_name(d) for d in chosen)} (same input text, source and target "
                           "style): compare two systems' outputs for the same inputs")
    return _direction_first(pd.concat(parts, ignore_index=True)), pd.DataFrame(counts)


def direction_matrices(card: Scorecard, groups: list[tuple[str, str]], chosen: list[Direction],
                       columns: list[str] | None = None, n_resamples: int | None = None,
                       seed: int = 12345) -> pd.DataFrame:
    """:func:`significance_matrix` of ``groups`` in each direction of ``chosen`` on its own (Holm over the pairs of
    one column in one direction), with ``source_style, target_style`` in front; a direction where fewer than two
    of the groups have rows is left out."""
    columns = list(columns or card.metrics)
    _require_columns(card, columns)
    labels = group_labels(card.frame)
    selected = card.frame[pd.concat([_of_group(card.frame, key) for key in groups], axis=1).any(axis=1)]
    parts = []
    for direction in chosen:
        frame = selected[_in_direction(selected, direction)]
        if len(frame[["system", "setting"]].drop_duplicates()) < 2:
            continue
        pairs = significance_matrix(Scorecard(frame, card.signatures), columns, n_resamples, seed, labels)
        parts.append(pairs.assign(source_style=direction[0], target_style=direction[1]))
    if not parts:
        raise TstevalError(f"no direction of {', '.join(direction_name(d) for d in chosen)} has two of the chosen "
                           "systems; choose systems scored in the same direction")
    return _direction_first(pd.concat(parts, ignore_index=True))


def _direction_first(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["source_style", "target_style"]
    return table[keys + [c for c in table.columns if c not in keys]]
