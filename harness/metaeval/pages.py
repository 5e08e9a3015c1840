"""The pages of a meta-evaluation: ``metaeval.md`` (escaped Markdown tables), the plot, and the atomic output folder.

The Markdown shows, per rating column, every metric's correlation at each level (``sentence``, ``within_system``,
``system``) with its clustered-bootstrap interval, the best metric of each column marked, and whether it beats the
baseline.  The run report (:mod:`tsteval.experiment.report.report`) shows the same tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from tsteval.core import markdown as md
from tsteval.core.atomic import output_directory
from tsteval.core.errors import TstevalError

if TYPE_CHECKING:
    from tsteval.metaeval.tables import MetaEvaluation

KIND = "meta-eval"
SHOWN_METHOD = "pearson"


def _cell(r: float, lo: float, hi: float) -> str:
    if not np.isfinite(r):
        return "undefined"
    return f"{r:.3f} [{lo:.3f}, {hi:.3f}]"


def _beats(baseline: pd.DataFrame, rating: str, metric: str, level: str, method: str) -> str:
    row = baseline[(baseline["rating"] == rating) & (baseline["metric"] == metric) & (baseline["level"] == level)
                   & (baseline["method"] == method)]
    if row.empty:
        return "(baseline)" if metric in set(baseline.loc[baseline["rating"] == rating, "baseline"]) else ""
    r = row.iloc[0]
    p = "" if not np.isfinite(r["p"]) else f", Williams p={r['p']:.3g}"
    return f"{r['verdict']} ({r['diff']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]{p})"


def rating_table(result: MetaEvaluation, rating: str, method: str = SHOWN_METHOD) -> pd.DataFrame:
    """One row per metric for ``rating``: r [lo, hi] at each level, the best sentence-level r marked (and tsteval's
    best, when a published score is better), and whether it beats the baseline."""
    part = result.table[(result.table["rating"] == rating) & (result.table["method"] == method)]
    # unstack keeps an undefined level (all NaN, e.g. the system level of 2 systems), shown as "undefined"; the
    # reindex keeps the table's metric order
    wide = part.set_index(["metric", "source", "level"])[["r", "lo", "hi"]].unstack("level").reindex(
        pd.MultiIndex.from_frame(part[["metric", "source"]].drop_duplicates()))
    sentence = wide[("r", "sentence")]
    best = sentence.idxmax() if sentence.notna().any() else None
    ours = sentence[[source == "tsteval" for _, source in sentence.index]]
    best_ours = ours.idxmax() if ours.notna().any() else None
    rows = []
    for key in sentence.sort_values(ascending=False, na_position="last").index:
        metric, source = key
        cells = {level: _cell(wide.loc[key, ("r", level)], wide.loc[key, ("lo", level)], wide.loc[key, ("hi", level)])
                 for level in ("sentence", "within_system", "system")}
        mark = " (best)" if key == best else " (best of tsteval)" if key == best_ours else ""
        rows.append({"metric": metric + mark, "source": source,
                     "sentence r [95% CI]": cells["sentence"], "within_system r": cells["within_system"],
                     "system r": cells["system"],
                     "beats baseline? (sentence)": _beats(result.baseline, rating, metric, "sentence", method)})
    return pd.DataFrame(rows)


def statistics_note(info: dict) -> str:
    """What the tables show, in plain text with `code` spans: the levels, the intervals, the signs, the verdict."""
    return (f"Pearson r with 95% percentile intervals from {info['resamples']} bootstrap resamples clustered by "
            f"`{info['cluster']}` (seed {info['seed']}; the same resamples for every metric, so differences are "
            "paired), at three levels: `sentence` (one point per rated transfer), `within_system` (the mean of the "
            f"per-group correlations; groups: {', '.join(f'`{g}`' for g in info['group'])}) and `system` (the "
            "correlation of the group means). Lower-is-better metrics are sign-flipped, so higher r is better "
            "agreement. \"beats baseline?\": yes / no when the 95% interval of the difference from the baseline "
            "excludes 0, else not significant.")


def rating_tables(result: MetaEvaluation) -> list[tuple[str, str, pd.DataFrame]]:
    """(rating column, aspect, :func:`rating_table`) for each rating column that some metric was judged against."""
    return [(rating, aspect, rating_table(result, rating)) for rating, aspect in result.info["ratings"].items()
            if (result.table["rating"] == rating).any()]


def markdown(result: MetaEvaluation, title: str = "Meta-evaluation") -> str:
    """The whole page: settings, the counts per rating, then one table per rating column."""
    info = result.info
    lines = [f"# {md.escape(title)}", "",
             md.inline(statistics_note(info) + " Spearman and Kendall: `metaeval.csv`; differences from the baseline "
                       "with Williams' t: `baseline.csv`."), "",
             "## Rows", "", md.table(result.counts), "",
             "Policy: unrated rows and rows with a missing metric value are counted above and left out of that "
             "rating's statistics; identical outputs of several systems for the same input are kept (each is a "
             "rated transfer), counted in `duplicate_outputs`; rank correlations give ties their average rank "
             "(Kendall: tau-b).", ""]
    from tsteval.metaeval.rated.loop import overlap_words

    ceilings = {row["rating"]: row for row in info.get("ceiling", [])}  # a rating study's (tsteval annotate)
    for rating, aspect, table in rating_tables(result):
        base = info["baselines"].get(rating)
        lines += [f"## {md.escape(rating)} ({md.escape(aspect)})", "",
                  f"Baseline: `{md.escape(base)}`." if base else "No baseline column present.", "",
                  md.table(table), ""]
        if rating in ceilings:
            c = ceilings[rating]
            lines += [f"Noise ceiling {c['ceiling']:.3f}: the highest r any metric can reach with these mean ratings "
                      f"(split-half reliability {c['split_half']:.3f} over {c['pairs_2_raters']} pairs rated twice "
                      f"or more{overlap_words(c)})." if np.isfinite(c["split_half"]) else
                      f"Noise ceiling unknown: {c['pairs_2_raters']} pairs are rated twice or more{overlap_words(c)}, "
                      "and the split-half reliability needs 3 (a second annotator on a share of the pairs: tsteval "
                      "annotate plan --overlap).", ""]
    return "\n".join(lines)


def plot(result: MetaEvaluation, stem: Path, level: str = "sentence", method: str = SHOWN_METHOD) -> list[Path]:
    """Metric x rating: r with its interval, one panel per rating column; ``stem``.png and .svg."""
    from matplotlib.figure import Figure

    from tsteval.experiment.compare.tradeoff import plain

    ratings = [r for r in result.info["ratings"] if (result.table["rating"] == r).any()]
    heights = [max(1, int(((result.table["rating"] == r) & (result.table["level"] == level)
                           & (result.table["method"] == method)).sum())) for r in ratings]
    fig = Figure(figsize=(7.0, 1.2 + 0.28 * sum(heights) + 0.6 * len(ratings)), layout="constrained")
    axes = fig.subplots(len(ratings), 1, squeeze=False, gridspec_kw={"height_ratios": heights})[:, 0]
    for ax, rating in zip(axes, ratings, strict=True):
        part = result.table[(result.table["rating"] == rating) & (result.table["level"] == level)
                            & (result.table["method"] == method)].sort_values("r")
        y = np.arange(len(part))
        base = result.info["baselines"].get(rating)
        colours = ["crimson" if m == base else ("0.5" if s != "tsteval" else "tab:blue")
                   for m, s in zip(part["metric"], part["source"], strict=True)]
        # a percentile interval need not hold its point estimate (small samples): never a negative bar
        err = np.clip(np.nan_to_num(np.vstack([part["r"] - part["lo"], part["hi"] - part["r"]])), 0, None)
        ax.errorbar(part["r"], y, xerr=err, fmt="none", ecolor="0.4", capsize=2, linewidth=0.8)
        ax.scatter(part["r"], y, c=colours, zorder=3, s=18)
        ax.set_yticks(y, [plain(f"{m}" + ("" if s == "tsteval" else f" ({s})"))
                          for m, s in zip(part["metric"], part["source"], strict=True)], fontsize=7)
        ax.axvline(0, color="0.7", linewidth=0.8)
        ax.set_title(plain(f"{rating} ({result.info['ratings'][rating]})"), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[-1].set_xlabel(f"{method} r at {level} level, 95% clustered-bootstrap CI\n(red: baseline; grey: published "
                        "scores; lower-is-better metrics sign-flipped)", fontsize=8)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=130)
    fig.savefig(paths[1])
    return paths


def read(directory: str | Path) -> MetaEvaluation:
    """A meta-evaluation folder read back (its tables and settings), e.g. to render the pages again."""
    from tsteval.core.errors import read_json
    from tsteval.metaeval.tables import MetaEvaluation

    directory = Path(directory)
    info = read_json(directory / "metaeval.json", "meta-evaluation settings")
    if not isinstance(info, dict):
        raise TstevalError(f"{directory / 'metaeval.json'}: expected a JSON object")
    return MetaEvaluation(*(pd.read_csv(directory / f"{name}.csv") for name in ("metaeval", "baseline", "counts")),
                          info)


def write_files(result: MetaEvaluation, directory: Path, title: str = "Meta-evaluation",
                notes: dict | None = None) -> None:
    """Every file of the output into an existing folder (``notes``, when given, as notes.json)."""
    result.table.to_csv(directory / "metaeval.csv", index=False)
    result.baseline.to_csv(directory / "baseline.csv", index=False)
    result.counts.to_csv(directory / "counts.csv", index=False)
    (directory / "metaeval.json").write_text(json.dumps(result.info, indent=2, default=str) + "\n")
    (directory / "metaeval.md").write_text(markdown(result, title) + "\n")
    if notes is not None:
        (directory / "notes.json").write_text(json.dumps(notes, indent=2, default=str) + "\n")
    if len(result.table):
        plot(result, directory / "metaeval")


def write(result: MetaEvaluation, directory: str | Path, *, overwrite: bool = False,
          title: str = "Meta-evaluation", notes: dict | None = None) -> Path:
    """Write the output folder by :mod:`tsteval.core.atomic`'s rule (kind ``meta-eval``)."""
    with output_directory(directory, KIND, overwrite=overwrite) as tmp:
        write_files(result, tmp, title, notes)
    return Path(directory)
