"""The run report: one Markdown and one self-contained HTML file from the same list of blocks.

Sections: run metadata and signatures, corpus aggregates with bootstrap intervals, the J leaderboard per transfer
direction and the system x system significance matrices, tradeoff plots with their reading, agreement with human
ratings (the meta-evaluation's tables, one per rating column), and the worst-scoring examples per system.  The
HTML embeds its plots as base64 PNG and links nothing external.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tsteval.core import markdown as md
from tsteval.experiment.compare.significance import matrix_table
from tsteval.experiment.compare.tradeoff import Tradeoff, frontier_reading, lower_is_better, setting_means
from tsteval.experiment.manifest.loader import ReportSpec
from tsteval.metaeval.pages import rating_tables, statistics_note
from tsteval.metaeval.tables import MetaEvaluation
from tsteval.metrics.joint.score import JointRecipe, leaderboard_tables
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import Scorecard, wide_summary


@dataclass(frozen=True)
class Heading:
    """A section heading."""

    level: int
    text: str


@dataclass(frozen=True)
class Text:
    """A paragraph; `backticks` mark code."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table (cells rendered as given; floats with 3 decimals)."""

    frame: pd.DataFrame


@dataclass(frozen=True)
class Image:
    """A plot: PNG (embedded in HTML) and SVG, paths relative to the report folder."""

    png: Path
    svg: Path
    alt: str


Block = Heading | Text | Bullets | Table | Image


def _ci(mean: float, low: float, high: float) -> str:
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def aggregates_table(summary: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Wide table: one row per (system, setting, direction), ``mean [low, high]`` per metric."""
    return wide_summary(summary, metrics)


def human_table(frame: pd.DataFrame, humans: list[str], seed: int, n_resamples: int) -> pd.DataFrame:
    """Mean human rating per (system, setting) with bootstrap intervals; unrated settings show "—"."""
    table = frame[["system", "setting"]].drop_duplicates().reset_index(drop=True)
    for column in humans:
        means = setting_means(frame, column, seed, n_resamples).set_index(["system", "setting"])
        table[column] = [_ci(*means.loc[key, ["mean", "ci_low", "ci_high"]]) if key in means.index else "—"
                         for key in zip(table["system"], table["setting"], strict=True)]
    return table


def worst_examples(frame: pd.DataFrame, column: str, k: int, extra: list[str]) -> pd.DataFrame:
    """The ``k`` rows of each system that score worst on ``column``: the lowest, or the highest for a metric that
    declares lower values better (WMD, perplexity)."""
    keep = ["system", "setting", "item", "input", "output", *dict.fromkeys([column, *extra])]
    ordered = frame.sort_values(column, ascending=not lower_is_better(column), kind="stable")
    return ordered.groupby("system", sort=False).head(k)[keep].sort_values("system", kind="stable")


def points_table(t: Tradeoff) -> pd.DataFrame:
    """The tradeoff points with their intervals; the hyperparameter columns only when some system has one, and
    "—" for a system that has none (one setting), never a made-up value."""
    points = t.points.assign(x_ci=[_ci(*v) for v in t.points[["x", "x_low", "x_high"]].to_numpy()],
                             y_ci=[_ci(*v) for v in t.points[["y", "y_low", "y_high"]].to_numpy()])
    swept = points["hp_name"] != ""
    points = points.assign(hp_name=points["hp_name"].where(swept, "—"),
                           hp_value=[f"{v:g}" if keep else "—" for v, keep in zip(points["hp_value"], swept,
                                                                                  strict=True)])
    columns = ["system", "setting", *(["hp_name", "hp_value"] if swept.any() else []), "x_ci", "y_ci", "pareto"]
    return points[columns].rename(columns={"x_ci": t.x, "y_ci": t.y})


def ranking_blocks(board: pd.DataFrame | None, recipe: JointRecipe | None, pairs: pd.DataFrame | None,
                   spec: ReportSpec, seed: int) -> list[Block]:
    """The leaderboard (one table per transfer direction, sorted by J) and the significance matrices."""
    blocks: list[Block] = []
    if board is not None and recipe is not None:
        blocks += [Heading(2, "Leaderboard"),
                   Text(f"`{recipe.column}` = mean over sentences of the per-sentence product `{recipe.style}` × "
                        f"`{recipe.content}` × `{recipe.fluency}` (each factor in [0, 1]; STRAP's J when the recipe "
                        f"is `strap`), with a 95% percentile-bootstrap interval ({spec.bootstrap_resamples} "
                        f"resamples, seed {seed}); the factor columns are their means on the same rows. One table "
                        "per transfer direction. Full table: `leaderboard.csv`.")]
        for title, table in leaderboard_tables(board, recipe):
            blocks += [Heading(3, title), Table(table)]
    if pairs is not None:
        resamples = int(pairs["resamples"].iloc[0])
        blocks += [Heading(2, "Significance between systems"),
                   Text("One matrix per transfer direction and column (directions are not pooled). Row minus "
                        "column: the difference of the means over the inputs both share in that direction; `*` = "
                        "significant at 0.05 by the paired bootstrap (sacreBLEU's --paired-bs, "
                        f"{resamples} resamples, seed {seed}) after Holm's correction over the pairs of that "
                        "matrix; `n/a` = no shared input. Full table with intervals and p-values: "
                        "`significance.csv`.")]
        for direction, part in pairs.groupby("direction", sort=False):
            for column in dict.fromkeys(part["metric"]):
                n_pairs = int((part["metric"] == column).sum())
                floor = n_pairs / (resamples + 1)
                blocks += [Heading(3, f"{direction}: `{column}`"), Table(matrix_table(part, column))]
                if floor >= 0.05:
                    blocks.append(Text(f"With {resamples} resamples the smallest Holm-adjusted p of these "
                                       f"{n_pairs} pairs is {floor:.3f}, so none can show as significant: raise "
                                       "compare.resamples."))
    return blocks


def agreement_blocks(agreements: MetaEvaluation | None) -> list[Block]:
    """The meta-evaluation of the run's metrics against its human ratings: one table per rating column."""
    if agreements is None or agreements.table.empty:
        return [Text("No agreement to show: the transfers carry no human ratings (`human_*` columns) for the scored "
                     "aspects.")]
    blocks: list[Block] = [Text(statistics_note(agreements.info) + " The same computation as `tsteval meta-eval`; "
                                "Spearman, Kendall, the baseline comparisons with Williams' t and the counts of rows "
                                "used: `meta_eval/` (`metaeval.csv`, `baseline.csv`, `counts.csv`).")]
    used = agreements.counts.set_index("rating")["used"]
    for rating, aspect, table in rating_tables(agreements):
        blocks += [Heading(3, f"{aspect}: `{rating}` (n = {int(used[rating])} rated transfers)"), Table(table)]
    return blocks


def build_blocks(metadata: dict, card: Scorecard, summary: pd.DataFrame, agreements: MetaEvaluation | None,
                 curves: list[Tradeoff], plots: dict[int, list[Path]], humans: list[str],
                 spec: ReportSpec, style_column: str | None, content_column: str | None,
                 board: pd.DataFrame | None = None, recipe: JointRecipe | None = None,
                 pairs: pd.DataFrame | None = None) -> list[Block]:
    """The report's content, independent of the output format."""
    blocks: list[Block] = [Heading(1, f"tsteval run: {metadata['name']}"),
                           Text("Every sentence, sortable and filterable, with each input's outputs side by side: "
                                "`explorer.html` in this folder (open it in a browser; it works offline).")]
    corpus = metadata["training_corpus"]
    blocks += [Heading(2, "Run"), Bullets((
        f"manifest: `{metadata['manifest']}` (hash `{metadata['manifest_hash']}`, copy in `manifest.yaml`)",
        f"seed: {metadata['seed']}; started {metadata['started']}; {metadata['seconds']} s",
        f"transfers: {metadata['rows']} rows, {len(metadata['systems'])} systems "
        f"({', '.join(metadata['systems'])}), {metadata['settings']} settings, from `{metadata['transfers_origin']}`",
        "training corpus: " + ("none" if corpus is None else
                               f"{corpus['texts']} texts, styles {corpus['styles']}, from `{corpus['origin']}` "
                               "(evaluation inputs removed unless the manifest says otherwise)"),
        "lexicon: " + ("none" if metadata["lexicon"] is None else
                       f"{metadata['lexicon']['words']} words from `{metadata['lexicon']['origin']}`"),
        "empty outputs (failures, scored: style as not transferred, content 0, every other metric its worst, J 0): "
        + (", ".join(f"{system} {n}" for system, n in metadata["empty_outputs"].items() if n) or "none"),
        "versions: " + ", ".join(f"{k} {v}" for k, v in metadata["versions"].items()),
    ))]
    if metadata["notices"]:  # the run's warnings: leakage, swapped styles, the copy baseline's rank, ...
        blocks += [Heading(2, "Notes"), Bullets(tuple(f"Warning: {note}" for note in metadata["notices"]))]
    if metadata["classifiers"]:
        rows = [{"name": name, **{k: c[k] for k in ("backend", "key", "cached", "n_train", "n_heldout", "accuracy",
                                                   "macro_f1")}} for name, c in metadata["classifiers"].items()]
        blocks += [Text("Style classifiers (`cached` = loaded from the content-hash cache, not retrained):"),
                   Table(pd.DataFrame(rows))]

    blocks += [Heading(2, "Corpus aggregates"),
               Text(f"Mean per (system, setting) with a 95% percentile-bootstrap interval "
                    f"({spec.bootstrap_resamples} resamples, seed {metadata['seed']}). Full table: `summary.csv`.")]
    by_aspect: dict[str, list[str]] = {}
    for metric in card.metrics:
        declared = find_metric(metric, card.signatures.get(metric))
        aspect = {"style": "Style", "joint": "Joint score"}.get(getattr(declared, "aspect", None),
                                                                "Content and other")
        by_aspect.setdefault(aspect, []).append(metric)
    for aspect, metrics in by_aspect.items():
        blocks += [Heading(3, aspect), Table(aggregates_table(summary, metrics))]
    if humans:
        blocks += [Heading(3, "Human ratings"), Table(human_table(card.frame, humans, metadata["seed"],
                                                                  spec.bootstrap_resamples))]
    blocks += ranking_blocks(board, recipe, pairs, spec, metadata["seed"])

    blocks.append(Heading(2, "Tradeoff curves"))
    if not curves:
        blocks.append(Text("No tradeoff: the manifest gives no style column or no second aspect."))
    for k, t in enumerate(curves):
        png, svg = plots[k]
        blocks += [Heading(3, t.title("`") + (f", {t.direction}" if t.direction else "")),
                   Image(png, svg, f"{t.x} vs {t.y}"),
                   Text("Each point is one setting; a system's points are joined in the order of its hyperparameter. "
                        "Circled points are on the Pareto frontier over all systems (maximising both aspects"
                        + ("; lower values of the y metric are better, so its axis is inverted" if
                           t.y_lower_is_better else "") + "); crosses mark where two systems' curves meet."),
                   Bullets(tuple(frontier_reading(t)))]
        blocks.append(Table(points_table(t)))

    blocks.append(Heading(2, "Agreement with human ratings"))
    blocks += agreement_blocks(agreements)

    blocks.append(Heading(2, "Worst-scoring examples"))
    extra = [c for c in (style_column, content_column) if c] + [h for h in humans if h in card.frame.columns]
    for column, what in ((content_column, "lowest content preservation"), (style_column, "weakest style transfer")):
        if column and spec.worst_examples:
            blocks += [Heading(3, f"{what}: `{column}`"),
                       Table(worst_examples(card.frame, column, spec.worst_examples, extra))]

    blocks += [Heading(2, "Signatures"), Bullets(tuple(f"`{m}`: `{s}`" for m, s in metadata["signatures"].items()))]
    return blocks


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def to_markdown(blocks: list[Block]) -> str:
    """Render blocks as Markdown (images as relative links to the PNG, with the SVG linked).

    Every text is escaped (:mod:`tsteval.core.markdown`): system names, labels and outputs are the user's and must
    render as text, never as HTML or Markdown.
    """
    lines: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            lines += ["#" * b.level + " " + md.inline(b.text), ""]
        elif isinstance(b, Text):
            lines += [md.inline(b.text), ""]
        elif isinstance(b, Bullets):
            lines += [f"- {md.inline(item)}" for item in b.items] + [""]
        elif isinstance(b, Table):
            lines += [md.table(b.frame, _cell), ""]
        else:
            lines += [f"![{md.escape(b.alt)}]({b.png.as_posix()})", "",
                      f"Vector version: [{md.escape(b.svg.name)}]({b.svg.as_posix()})", ""]
    return "\n".join(lines)


def _inline(text: str) -> str:
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0 1.5em}"
         "th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
         "th{background:#f3f3f3}code{background:#f3f3f3;padding:0 3px}img{max-width:100%}"
         ".scroll{overflow-x:auto;max-width:100%;margin:0.5em 0 1.5em}.scroll table{margin:0}")


def to_html(blocks: list[Block], title: str, directory: Path) -> str:
    """Render blocks as one self-contained HTML page (plots embedded as base64 PNG)."""
    body: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            body.append(f"<h{b.level}>{_inline(b.text)}</h{b.level}>")
        elif isinstance(b, Text):
            body.append(f"<p>{_inline(b.text)}</p>")
        elif isinstance(b, Bullets):
            body.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            # A wide table scrolls inside its own box instead of running past the page.
            body.append('<div class="scroll">' + b.frame.map(_cell).to_html(index=False, escape=True, border=0)
                        + "</div>")
        else:
            data = base64.b64encode((directory / b.png).read_bytes()).decode("ascii")
            body.append(f'<figure><img alt="{html.escape(b.alt)}" src="data:image/png;base64,{data}">'
                        f"<figcaption>{html.escape(b.alt)}</figcaption></figure>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def write_report(directory: Path, metadata: dict, card: Scorecard, summary: pd.DataFrame,
                 agreements: MetaEvaluation | None, curves: list[Tradeoff], plots: dict[int, list[Path]],
                 humans: list[str], spec: ReportSpec,
                 style_column: str | None = None, content_column: str | None = None,
                 board: pd.DataFrame | None = None, recipe: JointRecipe | None = None,
                 pairs: pd.DataFrame | None = None) -> None:
    """Write ``report.md`` and ``report.html`` into ``directory`` (plots already there)."""
    blocks = build_blocks(metadata, card, summary, agreements, curves, plots, humans, spec, style_column,
                          content_column, board, recipe, pairs)
    (directory / "report.md").write_text(to_markdown(blocks), encoding="utf-8")
    (directory / "report.html").write_text(to_html(blocks, f"tsteval run: {metadata['name']}", directory),
                                           encoding="utf-8")
