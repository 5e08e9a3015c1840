"""How reliable a study's ratings are (``tsteval annotate agreement``).

Per question, on the rated pairs (quality-control pairs left out):

* **Krippendorff's alpha**, interval and ordinal (the ``krippendorff`` package), with a 95% percentile interval
  from a bootstrap over pairs (each resample draws pairs with replacement and keeps all their ratings).  The
  resamples are computed at once by :func:`alpha_resamples` (the package takes a third of a second per call on
  720 pairs of 0-100 ratings, so a thousand resamples of four questions at two levels would take most of an
  hour); it equals the package on every sample it is checked on (``tests/test_annotate_loop.py``);
* **each annotator against the mean of the others** (Pearson r over the pairs both rated); an annotator is
  *flagged* when their r is more than :data:`FLAG_BELOW` under the median annotator's;
* **split-half reliability** of the mean rating: each pair's raters split at random into two halves, the half means
  correlated over the pairs (Pearson) and stepped up to the full number of raters by Spearman-Brown,
  2r / (1 + r), averaged over :data:`SPLITS` random splits.  Its square root is the **noise ceiling**: the highest
  correlation any metric can reach with these mean ratings (a metric's r with the true mean is attenuated by the
  ratings' unreliability).

Where a statistic cannot be computed (one rating per pair; fewer than three pairs rated twice; ratings that never
vary) one line per question says why and what would make it available (:func:`unavailable`).  A rating of an
overlap copy (``o:ID``) is a second rating of its pair (:meth:`~tsteval.annotate.study.Study.rated`).

Per question and kind of pair (the systems' outputs, the human references, the checks): the mean rating, a
sanity check of the scale (a copy should score top on content, a reference above the systems).

Per annotator: **consistency** on repeated pairs (exact agreement and mean absolute difference between the two
judgements) and **accuracy** on check pairs (a copy's content rated within one point of the top).

Every figure says what it rests on (:func:`controls`): the overlap copies that are a second rating (a copy rated only
by its pair's own annotator is none) and the repeats rated by their original's annotator.  The ratings are read once,
by :func:`collect`, which meta-evaluation shares: a "can't judge" answer (no value) counts as not rated, and an
:class:`Exclusion` leaves annotators out, named or failing the quality controls (:func:`failed_controls`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.annotate.study import Study
from tsteval.core.markdown import escape
from tsteval.core.markdown import table as markdown_table

FLAG_BELOW = 0.25
FAIL_CHECKS_BELOW = 1.0  # an annotator fails the checks who passes fewer than all of their check pairs
FAIL_REPEATS_ABOVE = 0.25  # ... the repeats whose judgements differ by more than this share of the scale on average
SPLITS = 200
LEVELS = ("interval", "ordinal")
PACKAGE_VALUES = 101  # the most distinct values :func:`alpha` hands to the krippendorff package (a 0-100 scale)


def alpha(matrix: np.ndarray, level: str, domain: np.ndarray | None = None) -> float:
    """Krippendorff's alpha of ``matrix`` (annotators x units, NaN = not rated); NaN when undefined.

    The ``krippendorff`` package computes it, unless the ratings take more than :data:`PACKAGE_VALUES` distinct
    values (real-valued published means): its coincidence tensor is units x values x values (1.3 GB and 11 s for
    Lai's 720 pairs of 478 values), so :func:`alpha_resamples` computes the same number then.

    >>> round(alpha(np.array([[1, 2, 3, 3], [1, 2, 3, 4]], dtype=float), "interval"), 3)
    0.889
    """
    import krippendorff

    pairable = (np.isfinite(matrix).sum(axis=0) >= 2)
    values = matrix[:, pairable]
    distinct = np.unique(values[np.isfinite(values)])
    if values.shape[1] < 2 or distinct.size < 2:
        return float("nan")
    if distinct.size > PACKAGE_VALUES:
        return float(alpha_resamples(values, np.ones((1, values.shape[1])), level)[0])
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level,
                                    value_domain=domain if level == "ordinal" else None))


def alpha_resamples(matrix: np.ndarray, weights: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha of ``matrix`` (annotators x units) for each row of ``weights`` (resamples x units: how
    many times each unit is drawn), all at once.

    With the values' interval distances alpha = 1 - (n - 1) sum_u D_u / (2 n S): D_u the unit's sum of squared
    differences between its values (each ordered pair), divided by its count less one; n the pairable values and
    S their sum of squares about the mean.  The ordinal distance of two values is the interval distance of their
    mid-ranks in the resample's value frequencies (Krippendorff's ordinal metric), so ordinal alpha is the same
    formula on the mid-ranks.

    >>> m = np.array([[1, 2, 3, 3], [1, 2, 3, 4]], dtype=float)
    >>> [round(float(a), 3) for a in alpha_resamples(m, np.ones((1, 4)), "interval")]
    [0.889]
    """
    counts_u = np.isfinite(matrix).sum(axis=0)
    keep = counts_u >= 2
    values = matrix[:, keep]
    weights = weights[:, keep]
    m = counts_u[keep].astype(float)
    by_unit = values.T  # units x annotators
    domain, codes = np.unique(by_unit[np.isfinite(by_unit)], return_inverse=True)
    counts = np.zeros((by_unit.shape[0], len(domain)))  # units x values
    np.add.at(counts, (np.nonzero(np.isfinite(by_unit))[0], codes.ravel()), 1.0)
    freq = weights @ counts  # resamples x values
    if level == "ordinal":
        scores = np.cumsum(freq, axis=1) - freq / 2.0  # mid-ranks per resample
    else:
        scores = np.broadcast_to(domain, freq.shape)
    s1 = scores @ counts.T  # resamples x units: each unit's sum of scores
    s2 = (scores ** 2) @ counts.T
    observed = (weights * (2 * m * s2 - 2 * s1 ** 2) / (m - 1)).sum(axis=1)
    n = freq.sum(axis=1)
    spread = (freq * scores ** 2).sum(axis=1) - (freq * scores).sum(axis=1) ** 2 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - (n - 1) * observed / (2 * n * spread)


def ordinal_domain(scale: tuple[float, float], values: np.ndarray) -> np.ndarray | None:
    """The ordinal scale's whole points with every value between them that the ratings hold (a rated set's means,
    Tox600's halves); None beyond :data:`PACKAGE_VALUES` values, where :func:`alpha` does without the package.

    >>> ordinal_domain((0, 1), np.array([0.5, 1.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    low, high = scale
    domain = np.union1d(np.arange(low, high + 1, dtype=float), values)
    return None if domain.size > PACKAGE_VALUES else domain


def split_half(matrix: np.ndarray, splits: int = SPLITS, seed: int = 0) -> tuple[float, int]:
    """Spearman-Brown-corrected split-half reliability of the mean of ``matrix``'s rows (annotators x units) and
    how many units had two raters or more; NaN with fewer than 3 such units.

    >>> m = np.array([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5], [2, 2, 3, 5, 5]], dtype=float)
    >>> round(split_half(m)[0], 2) > 0.9
    True
    """
    rated = np.isfinite(matrix)
    units = np.flatnonzero(rated.sum(axis=0) >= 2)
    if len(units) < 3:
        return float("nan"), len(units)
    m, rated = np.nan_to_num(matrix[:, units]), rated[:, units]
    count = rated.sum(axis=0)
    half = count // 2
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(splits):
        keys = np.where(rated, rng.random(rated.shape), np.inf)  # a random order of each pair's raters
        rank = np.argsort(np.argsort(keys, axis=0), axis=0)
        first = rated & (rank < half)
        a = (m * first).sum(axis=0) / half
        b = (m * (rated & ~first)).sum(axis=0) / (count - half)
        if np.ptp(a) > 0 and np.ptp(b) > 0:
            r = float(np.corrcoef(a, b)[0, 1])
            values.append(2 * r / (1 + r) if r > -1 else float("nan"))
    return (float(np.nanmean(values)) if values else float("nan")), len(units)


def ceiling(reliability: float) -> float:
    """The noise ceiling of a correlation with ratings of split-half ``reliability``: sqrt(max(0, reliability)).

    >>> ceiling(0.81)
    0.9
    """
    return float(np.sqrt(max(0.0, reliability))) if np.isfinite(reliability) else float("nan")


@dataclass(frozen=True)
class Exclusion:
    """The annotators to leave out of agreement and meta-evaluation: those ``named``, and with ``failed`` every
    annotator who fails the check pairs or the repeats (:func:`failed_controls`)."""

    named: tuple[str, ...] = ()
    failed: bool = False


@dataclass
class Collected:
    """A study's current ratings as the statistics read them: the kept annotators' judgements (``ratings``; a
    "can't judge" answer is no rating), the annotators ``excluded`` with the reason, and per question how many
    "can't judge" answers the kept annotators gave."""

    ratings: pd.DataFrame
    excluded: dict[str, str]
    cant_judge: dict[str, int]

    def lines(self) -> list[str]:
        """The exclusions and the "can't judge" answers in words, one line each."""
        return ([f"excluded {name}: {reason}" for name, reason in self.excluded.items()]
                + [f"{question}: {n} answers \"can't judge\", counted as not rated"
                   for question, n in self.cant_judge.items()])


def collect(study: Study, exclusion: Exclusion | None = None) -> Collected:
    """``study``'s current ratings without the annotators ``exclusion`` leaves out and without "can't judge"
    answers (a stored rating without a value); an unknown name in ``exclusion`` is one line naming the study."""
    from tsteval.core.errors import InputError

    store = study.store()
    try:
        everything, names = store.ratings(), store.progress(0)["annotator"].tolist()
    finally:
        store.close()
    judged = everything[everything["value"].notna()]
    exclusion = exclusion or Exclusion()
    unknown = [name for name in exclusion.named if name not in names]
    if unknown:
        raise InputError(f"--exclude {unknown[0]!r}: no annotator of that name in the study (its annotators: "
                         f"{', '.join(names[:8])}{', ...' if len(names) > 8 else ''})", path=study.path,
                         fix="name annotators as tsteval annotate status lists them")
    excluded = dict.fromkeys(exclusion.named, "named with --exclude")
    if exclusion.failed:
        excluded |= {n: r for n, r in failed_controls(study, judged).items() if n not in excluded}
    kept = everything[~everything["annotator"].isin(excluded)]
    cant = kept[kept["value"].isna()].groupby("question").size()
    return Collected(kept[kept["value"].notna()].reset_index(drop=True), excluded,
                     {q: int(cant[q]) for q in study.template.names if q in cant})


TIDY = ["annotator", "source", "pair_id", "kind", "of", "system", "setting", "item", "source_style",
        "target_style", "question", "aspect", "value", "cant_judge", "at"]


def tidy_ratings(study: Study, exclusion: Exclusion | None = None) -> tuple[pd.DataFrame, Collected]:
    """Every current rating of the annotators ``exclusion`` keeps, one row each with its pair's kind, system and
    keys and its question's aspect (columns :data:`TIDY`; a "can't judge" answer has no value), and the
    :class:`Collected` it follows."""
    collected = collect(study, exclusion)
    store = study.store()
    try:
        records = store.records()
    finally:
        store.close()
    records = records[~records["annotator"].isin(collected.excluded)]
    aspects = {q.name: q.aspect for q in study.template.questions}
    frame = records.merge(study.pairs.drop(columns=["target_name", "input", "output"]), on="pair_id", how="left")
    frame = frame.assign(aspect=frame["question"].map(aspects), cant_judge=frame["value"].isna())
    return frame[TIDY].reset_index(drop=True), collected


def failed_controls(study: Study, ratings: pd.DataFrame) -> dict[str, str]:
    """The annotators of ``ratings`` who fail the quality controls, with the first reason: a check pair's known
    answer missed by more than a point (passed below :data:`FAIL_CHECKS_BELOW`), or repeats that differ from
    their first judgement by more than :data:`FAIL_REPEATS_ABOVE` of the scale on average."""
    low, high = study.template.scale
    limit = FAIL_REPEATS_ABOVE * (high - low)
    out: dict[str, str] = {}
    for row in _checks(study, ratings).itertuples():
        if row.passed < FAIL_CHECKS_BELOW:
            out.setdefault(row.annotator, f"failed the check pairs ({row.passed:.0%} of {row.checks} {row.question} "
                                          f"answers within a point of {row.answer})")
    for row in _repeats(study, ratings).itertuples():
        if row.repeated and row.mean_abs_diff > limit:
            out.setdefault(row.annotator, f"inconsistent on the repeated pairs ({row.question} judgements "
                                          f"{row.mean_abs_diff:.2f} points apart on average, over {limit:g})")
    return out


@dataclass
class Agreement:
    """The tables of ``tsteval annotate agreement``."""

    alpha: pd.DataFrame
    annotators: pd.DataFrame
    repeats: pd.DataFrame
    checks: pd.DataFrame
    ceiling: pd.DataFrame
    kinds: pd.DataFrame
    info: dict = field(default_factory=dict)

    def markdown(self) -> str:
        """The report, every name escaped."""
        parts = [f"# Agreement of study {escape(self.info.get('signature', ''))}", "",
                 f"{self.info['annotators']} annotators, {self.info['ratings']} current ratings; alpha intervals "
                 f"from {self.info['resamples']} bootstrap resamples over pairs (seed {self.info['seed']}).", "",
                 *(f"- {escape(question)}: {escape(reason)}" for question, reason in
                   self.info["unavailable"].items()),
                 *([""] if self.info["unavailable"] else []),
                 "## What the figures rest on", "",
                 *(f"- {escape(line)}" for line in [*self.info["collected"], *self.info["controls"]]
                   or ["every annotator's ratings; no overlap copy or repeated pair was planned"]), "",
                 "## Krippendorff's alpha", "", _table(self.alpha), "",
                 "## Split-half reliability and noise ceiling", "", _table(self.ceiling), "",
                 "## Each annotator against the mean of the others", "", _table(self.annotators), ""]
        flagged = self.annotators[self.annotators["flagged"]]
        for row in flagged.itertuples():
            parts.append(f"- flagged: {escape(row.annotator)} on {escape(row.question)} (r = {row.r:.2f}, "
                         f"more than {FLAG_BELOW} below the median annotator)")
        parts += ["", "## Repeated pairs", "", _table(self.repeats), "", "## Check pairs", "",
                  _table(self.checks), "", "## Mean rating by kind of pair", "", _table(self.kinds), ""]
        return "\n".join(parts)


def _table(frame: pd.DataFrame) -> str:
    return markdown_table(frame, lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)) if len(frame) else "(none)"


def matrices(ratings: pd.DataFrame, questions: list[str], pairs: list[str]) -> dict[str, pd.DataFrame]:
    """Per question, the annotators x pairs table of current ratings (NaN where not rated), over ``pairs``."""
    out = {}
    for question in questions:
        sub = ratings[(ratings["question"] == question) & ratings["pair_id"].isin(pairs)]
        out[question] = sub.pivot(index="annotator", columns="pair_id", values="value")
    return out


def unavailable(matrix: np.ndarray) -> str | None:
    """Why alpha, the split-half reliability or the ceiling of ``matrix`` (annotators x rated pairs, NaN = not
    rated) cannot be computed, and what would make them available; None when all of them can."""
    twice = np.isfinite(matrix).sum(axis=0) >= 2
    remedy = ("rate a share of the pairs twice: tsteval annotate plan --overlap 0.2 gives a fifth of them a second "
              "annotator (repeats by the same annotator measure consistency, not agreement)")
    if matrix.shape[1] == 0:
        return "no rated pair has a rating yet, so no statistic is available: collect ratings first"
    if not twice.any():
        return (f"every one of the {matrix.shape[1]} rated pairs has one rating, so alpha, the split-half reliability "
                f"and the noise ceiling are unavailable (each compares two ratings of a pair): {remedy}")
    if twice.sum() < 3:
        return (f"only {int(twice.sum())} of the {matrix.shape[1]} rated pairs have two ratings, and the split-half "
                f"reliability and the noise ceiling need 3: {remedy}")
    if np.unique(matrix[:, twice][np.isfinite(matrix[:, twice])]).size < 2:
        return ("every rating of the pairs rated twice is the same value, so alpha and the split-half reliability "
                "are undefined (nothing varies): rate more pairs, or check the question's scale")
    return None


def agreement(study: Study, n_resamples: int = N_RESAMPLES, seed: int = 0, exclusion: Exclusion | None = None,
              ) -> Agreement:
    """The reliability of ``study``'s current ratings, without the annotators ``exclusion`` leaves out (see the
    module notes)."""
    collected = collect(study, exclusion)
    ratings = collected.ratings
    kinds = study.pairs.set_index("pair_id")["kind"]
    rated = kinds.index[kinds == "rated"].tolist()
    tables = matrices(study.rated(ratings), study.template.names, rated)
    domain = ordinal_domain(study.template.scale, ratings["value"].to_numpy(dtype=float))
    rng = np.random.default_rng(seed)
    alpha_rows, ceiling_rows, annotator_rows, reasons = [], [], [], {}
    for question, table in tables.items():
        aspect = study.template.question(question).aspect
        m = table.to_numpy(dtype=float)
        if (reason := unavailable(m)) is not None:
            reasons[question] = reason
        reliability, units = split_half(m, seed=seed)
        ceiling_rows.append({"question": question, "aspect": aspect, "pairs": units,
                             "split_half": reliability, "ceiling": ceiling(reliability)})
        draws = rng.integers(0, m.shape[1], size=(n_resamples, m.shape[1])) if m.shape[1] else None
        weights = (np.stack([np.bincount(d, minlength=m.shape[1]) for d in draws]).astype(float)
                   if draws is not None else None)
        for level in LEVELS:
            point = alpha(m, level, domain) if m.size else float("nan")
            boot = alpha_resamples(m, weights, level) if weights is not None and np.isfinite(point) else np.array([])
            boot = boot[np.isfinite(boot)]
            lo, hi = np.percentile(boot, [2.5, 97.5]) if len(boot) else (np.nan, np.nan)
            alpha_rows.append({"question": question, "aspect": aspect, "level": level, "alpha": point,
                               "lo": float(lo), "hi": float(hi), "pairs": m.shape[1], "annotators": m.shape[0]})
        annotator_rows += _against_others(table, question)
    annotators = pd.DataFrame(annotator_rows, columns=["annotator", "question", "r", "n", "flagged"])
    for _, group in annotators.groupby("question"):
        median = group["r"].median()
        annotators.loc[group.index, "flagged"] = group["r"] < median - FLAG_BELOW
    annotators["flagged"] = annotators["flagged"].astype(bool)
    info = {"signature": study.info["signature"], "annotators": int(ratings["annotator"].nunique()),
            "ratings": len(ratings), "resamples": n_resamples, "seed": seed, "flag_below": FLAG_BELOW,
            "splits": SPLITS, "unavailable": reasons}
    kind_of = ratings["pair_id"].map(kinds).replace({"rated": "system output", "repeat": "system output",
                                                     "overlap": "system output"})
    by_kind = ratings.assign(kind=kind_of).groupby(["question", "kind"])["value"].agg(["mean", "count"])
    info["controls"] = controls_lines(controls(study, ratings))
    info |= {"excluded": collected.excluded, "cant_judge": collected.cant_judge, "collected": collected.lines()}
    return Agreement(pd.DataFrame(alpha_rows), annotators, _repeats(study, ratings), _checks(study, ratings),
                     pd.DataFrame(ceiling_rows), by_kind.reset_index(), info)


def controls(study: Study, ratings: pd.DataFrame) -> pd.DataFrame:
    """Per question, what its figures rest on: the overlap copies planned, rated, and counted as a second rating
    (``overlap_used``; the rest, rated only by the annotator of the pair they copy, are left out: ``overlap_own``),
    and the repeated pairs planned, rated, and rated by the annotator of their original (``repeat_same``, what the
    consistency rests on; ``repeat_other`` are left out)."""
    kinds = study.pairs.set_index("pair_id")["kind"]
    own = study.own(ratings)
    rows = []
    for question in study.template.names:
        asked = ratings["question"] == question
        row: dict[str, object] = {"question": question}
        for kind, name, kept in (("overlap", "overlap", ~own), ("repeat", "repeat", own)):
            mine = asked & (ratings["pair_id"].map(kinds) == kind)
            rated, used = ratings.loc[mine, "pair_id"].nunique(), ratings.loc[mine & kept, "pair_id"].nunique()
            row |= {f"{name}_planned": int((kinds == kind).sum()), f"{name}_rated": rated,
                    f"{name}_{'used' if kind == 'overlap' else 'same'}": used,
                    f"{name}_{'own' if kind == 'overlap' else 'other'}": rated - used}
        rows.append(row)
    return pd.DataFrame(rows)


def controls_lines(table: pd.DataFrame) -> list[str]:
    """:func:`controls` in words, one line per question and kind of control that was planned."""
    lines = []
    for row in table.itertuples():
        if row.overlap_planned:
            lines.append(f"{row.question}: {row.overlap_used} of {row.overlap_planned} overlap copies counted as a "
                         f"second rating ({row.overlap_rated} rated; {row.overlap_own} left out, rated only by the "
                         "annotator of the pair they copy)")
        if row.repeat_planned:
            lines.append(f"{row.question}: consistency rests on {row.repeat_same} of {row.repeat_planned} repeated "
                         f"pairs ({row.repeat_rated} rated; {row.repeat_other} left out, rated by another annotator "
                         "than their original)")
    return lines


def _against_others(table: pd.DataFrame, question: str) -> list[dict]:
    rows = []
    for name in table.index:
        own = table.loc[name]
        others = table.drop(index=name).mean(axis=0)
        both = own.notna() & others.notna()
        r = (float(np.corrcoef(own[both], others[both])[0, 1])
             if both.sum() >= 3 and own[both].std() > 0 and others[both].std() > 0 else float("nan"))
        rows.append({"annotator": name, "question": question, "r": r, "n": int(both.sum()), "flagged": False})
    return rows


def _repeats(study: Study, ratings: pd.DataFrame) -> pd.DataFrame:
    """Per annotator and question: repeated pairs rated twice, exact agreement, mean absolute difference."""
    of: Mapping[str, str] = study.pairs.loc[study.pairs["kind"] == "repeat"].set_index("pair_id")["of"].to_dict()
    first = ratings.set_index(["annotator", "pair_id", "question"])["value"]
    rows = []
    for (name, question), group in ratings[ratings["pair_id"].isin(of)].groupby(["annotator", "question"]):
        pairs = [(v, first.get((name, of[p], question))) for p, v in zip(group["pair_id"], group["value"],
                                                                            strict=True)]
        diffs = np.array([abs(a - b) for a, b in pairs if b is not None])
        rows.append({"annotator": name, "question": question, "repeated": len(diffs),
                     "exact": float(np.mean(diffs == 0)) if len(diffs) else np.nan,
                     "mean_abs_diff": float(diffs.mean()) if len(diffs) else np.nan})
    return pd.DataFrame(rows, columns=["annotator", "question", "repeated", "exact", "mean_abs_diff"])


def _checks(study: Study, ratings: pd.DataFrame) -> pd.DataFrame:
    """Per annotator and question with a known answer: check pairs rated and the share within one point of it."""
    answers = study.info.get("check_answers", {})
    checks = set(study.pairs.loc[study.pairs["kind"] == "check", "pair_id"])
    sub = ratings[ratings["pair_id"].isin(checks) & ratings["question"].isin(answers)]
    rows = [{"annotator": name, "question": question, "checks": len(group), "answer": answers[question],
             "passed": float(np.mean(np.abs(group["value"] - answers[question]) <= 1))}
            for (name, question), group in sub.groupby(["annotator", "question"])]
    return pd.DataFrame(rows, columns=["annotator", "question", "checks", "answer", "passed"])
