"""Aspect tradeoff curves (Mir et al. 2019, 4.2.3 and A.3): one curve per system across its settings.

Each point is a corpus-level score of one (system, setting) with percentile-bootstrap intervals on both axes,
computed from the scorecard.  A system's points are joined in the order of its hyperparameter, so where two
systems' piecewise-linear curves cross, both reach the same pair of aspect scores (Mir's "points of
intersection").  The Pareto frontier over all points shows which system dominates where.  Both axes are
maximised; a metric that declares ``higher_is_better=False`` (WMD, perplexity; see
:data:`tsteval.metrics.registry.METRICS`) on the y axis is plotted as is on an inverted axis, and the frontier
treats its lower values as better — the axis label says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tsteval.aggregate import N_RESAMPLES, bootstrap_mean
from tsteval.core.records import HP_PREFIX
from tsteval.core.styles import direction_labels
from tsteval.metrics.registry import find_metric

# The aspects' names on axes and in headings, each beside the column it shows (``Style: target_acc@ft``): the style
# aspect is not "style transfer intensity", which is one of its metrics (sti).
ASPECT_NAMES = {"style": "Style", "content": "Content preservation",
                "naturalness": "Naturalness", "compatibility": "Content compatibility",
                "joint": "Joint score J"}
_EPS = 1e-12


def lower_is_better(column: str, signature: str | None = None) -> bool:
    """Whether lower values of this scorecard column mean more of its aspect, as its metric declares (a column
    that is no declared metric, such as a ``human_*`` rating, reads higher = more)."""
    metric = find_metric(column, signature)
    return metric is not None and not metric.higher_is_better


def axis_label(column: str, aspect: str) -> str:
    """Axis label naming the aspect and the scorecard column, and saying when the axis is inverted."""
    if lower_is_better(column):
        return f"{aspect}: {column}\n(lower = more {aspect.lower()}, axis inverted)"
    return f"{aspect}: {column}\n(higher = more)"


def setting_means(frame: pd.DataFrame, column: str, seed: int = 0, n_resamples: int = N_RESAMPLES) -> pd.DataFrame:
    """Mean and 95% bootstrap interval of ``column`` per (system, setting); unrated (NaN) rows are left out
    and settings without any value are dropped."""
    rows = []
    for (system, setting), group in frame.groupby(["system", "setting"], sort=False):
        values = pd.to_numeric(group[column], errors="coerce").dropna().to_numpy()
        if values.size:
            mean, low, high = bootstrap_mean(values, n_resamples=n_resamples, seed=seed)
            rows.append({"system": system, "setting": setting, "mean": mean, "ci_low": low, "ci_high": high,
                         "n": int(values.size)})
    return pd.DataFrame(rows, columns=["system", "setting", "mean", "ci_low", "ci_high", "n"])


def hyperparameters(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (system, setting): the system's hyperparameter name and value (its first ``hp.*`` column that is
    set; the setting's position, named "setting", when it has none), which orders the points of its curve.  A
    system with one setting and no hyperparameter has none: empty name, NaN value (never a made-up 0)."""
    hp_cols = [c for c in frame.columns if c.startswith(HP_PREFIX)]
    rows = []
    for system, group in frame.groupby("system", sort=False):
        settings = group.drop_duplicates("setting")
        name = next((c for c in hp_cols if settings[c].notna().all()), None)
        for position, (_, row) in enumerate(settings.iterrows()):
            shown = name[len(HP_PREFIX):] if name else "setting" if len(settings) > 1 else ""
            rows.append({"system": system, "setting": row["setting"], "hp_name": shown,
                         "hp_value": float(row[name]) if name else float(position) if shown else np.nan})
    return pd.DataFrame(rows, columns=["system", "setting", "hp_name", "hp_value"])


def pareto_frontier(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Boolean mask of the points no other point dominates, maximising both ``x`` and ``y``.

    Point j dominates i when ``x[j] >= x[i]`` and ``y[j] >= y[i]`` with at least one strict; ties are all kept.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    geq = (x[None, :] >= x[:, None]) & (y[None, :] >= y[:, None])
    strict = (x[None, :] > x[:, None]) | (y[None, :] > y[:, None])
    return ~np.any(geq & strict, axis=1)


def segment_intersections(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where the polyline through points ``a`` (n, 2) meets the one through ``b`` (m, 2).

    Returns a (k, 4) array of ``x, y, i, j``: the crossing point, on segment i of ``a`` (from ``a[i]`` to
    ``a[i+1]``) and segment j of ``b``.  Touching at an end counts; parallel segments (also collinear
    overlaps) are not reported.  A point found on two adjacent segments (a crossing at a vertex) is kept once.
    """
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    if len(a) < 2 or len(b) < 2:
        return np.empty((0, 4))
    p, r = a[:-1, None, :], (a[1:] - a[:-1])[:, None, :]
    q, s = b[None, :-1, :], (b[1:] - b[:-1])[None, :, :]
    denom = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    qp = q - p
    parallel = np.abs(denom) < _EPS
    safe = np.where(parallel, 1.0, denom)
    t = (qp[..., 0] * s[..., 1] - qp[..., 1] * s[..., 0]) / safe
    u = (qp[..., 0] * r[..., 1] - qp[..., 1] * r[..., 0]) / safe
    tol = 1e-9
    hit = ~parallel & (t >= -tol) & (t <= 1 + tol) & (u >= -tol) & (u <= 1 + tol)
    i, j = np.nonzero(hit)
    points = (p + t[..., None] * r)[i, j] if i.size else np.empty((0, 2))
    out = np.column_stack([points, i, j]) if i.size else np.empty((0, 4))
    keep: list[int] = []
    for k, row in enumerate(out):
        if all(np.abs(row[:2] - out[m, :2]).max() > 1e-9 for m in keep):
            keep.append(k)
    return out[keep]


@dataclass(frozen=True)
class Tradeoff:
    """Tradeoff curves of ``y`` against ``x``: the points (with ``pareto``) and the curves' intersections, in one
    transfer ``direction`` (named by style; empty for rows not split by direction)."""

    x: str
    y: str
    x_aspect: str
    y_aspect: str
    points: pd.DataFrame
    intersections: pd.DataFrame
    direction: str = ""

    def title(self, code: str = "") -> str:
        """``Style (target_acc@ft) vs Content preservation (bleu@ref)``: both aspects with the columns they show,
        each column between ``code`` marks (a Markdown heading's backticks)."""
        return f"{self.x_aspect} ({code}{self.x}{code}) vs {self.y_aspect} ({code}{self.y}{code})"

    @property
    def y_lower_is_better(self) -> bool:
        """Whether the y metric is a distance (plotted on an inverted axis)."""
        return lower_is_better(self.y)


def tradeoff_curves(frame: pd.DataFrame, x: str, y: str, y_aspect: str, seed: int = 0,
                    n_resamples: int = N_RESAMPLES) -> Tradeoff:
    """The tradeoff of scorecard column ``y`` (aspect ``y_aspect``) against style column ``x``, per system."""
    xs = setting_means(frame, x, seed, n_resamples)
    ys = setting_means(frame, y, seed, n_resamples)
    points = (hyperparameters(frame)
              .merge(xs.rename(columns={"mean": "x", "ci_low": "x_low", "ci_high": "x_high", "n": "n_x"}),
                     on=["system", "setting"])
              .merge(ys.rename(columns={"mean": "y", "ci_low": "y_low", "ci_high": "y_high", "n": "n_y"}),
                     on=["system", "setting"])
              .sort_values(["system", "hp_value"], kind="stable").reset_index(drop=True))
    sign = -1.0 if lower_is_better(y) else 1.0
    points["pareto"] = pareto_frontier(points["x"].to_numpy(), sign * points["y"].to_numpy()) \
        if len(points) else np.array([], dtype=bool)
    rows = []
    systems = list(dict.fromkeys(points["system"]))
    for k, sa in enumerate(systems):
        ca = points[points["system"] == sa]
        for sb in systems[k + 1:]:
            cb = points[points["system"] == sb]
            for px, py, i, j in segment_intersections(ca[["x", "y"]].to_numpy(), cb[["x", "y"]].to_numpy()):
                rows.append({"system_a": sa, "between_a": _segment(ca, int(i)), "system_b": sb,
                             "between_b": _segment(cb, int(j)), "x": px, "y": py})
    intersections = pd.DataFrame(rows, columns=["system_a", "between_a", "system_b", "between_b", "x", "y"])
    metric = find_metric(x)
    x_aspect = ASPECT_NAMES[metric.aspect] if metric is not None else x
    return Tradeoff(x, y, x_aspect, y_aspect, points, intersections)


def direction_tradeoffs(frame: pd.DataFrame, x: str, y: str, y_aspect: str, seed: int = 0,
                        n_resamples: int = N_RESAMPLES) -> list[Tradeoff]:
    """:func:`tradeoff_curves` in each transfer direction of ``frame`` on its own (a system's settings in two
    directions are two curves, never one pooled point), named by style (:mod:`tsteval.core.styles`)."""
    labels = direction_labels(frame)
    return [replace(tradeoff_curves(part, x, y, y_aspect, seed, n_resamples), direction=str(labels[part.index[0]]))
            for _, part in frame.groupby(["source_style", "target_style"], sort=False)]


def _segment(curve: pd.DataFrame, i: int) -> str:
    return f"{curve['setting'].iloc[i]} → {curve['setting'].iloc[i + 1]}"


def frontier_reading(t: Tradeoff) -> list[str]:
    """Plain-language reading: which system holds the Pareto frontier over which x range, and where curves meet."""
    front = t.points[t.points["pareto"]].sort_values("x")
    lines = []
    runs: list[list] = []
    for row in front.itertuples():
        if runs and runs[-1][0] == row.system:
            runs[-1][1].append(row)
        else:
            runs.append([row.system, [row]])
    for system, members in runs:
        settings = ", ".join(m.setting for m in members)
        lines.append(f"{t.x} {members[0].x:.3f}–{members[-1].x:.3f}: {system} is on the Pareto frontier "
                     f"({settings}).")
    dominated = sorted(set(t.points["system"]) - set(front["system"]))
    if dominated:
        lines.append(f"Never on the frontier (dominated everywhere): {', '.join(dominated)}.")
    for row in t.intersections.itertuples():
        lines.append(f"{row.system_a} ({row.between_a}) meets {row.system_b} ({row.between_b}) at "
                     f"{t.x} = {row.x:.3f}, {t.y} = {row.y:.3f}.")
    if t.intersections.empty:
        lines.append("No two systems' curves intersect.")
    return lines


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "p", "h", "d", "8", "H")


def separate_labels(fig: Figure, labels: list, steps: int = 40) -> int:
    """Nudge overlapping labels (annotations placed in offset points) apart: each round moves a label that overlaps
    an earlier one down by the overlap, up to ``steps`` rounds.  Returns how many overlapping pairs are left; a
    greedy pass, not an optimiser, so a crowded corner may keep some."""
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw_without_rendering()
    for _ in range(steps):
        boxes = [label.get_window_extent(renderer) for label in labels]
        moved = False
        for i in range(len(labels)):
            for j in range(i):
                if boxes[i].overlaps(boxes[j]):
                    x, y = labels[i].get_position()
                    overlap = min(boxes[i].y1, boxes[j].y1) - max(boxes[i].y0, boxes[j].y0)
                    labels[i].set_position((x, y - overlap * 72 / fig.dpi - 1))
                    boxes[i] = labels[i].get_window_extent(renderer)
                    moved = True
        if not moved:
            break
    boxes = [label.get_window_extent(renderer) for label in labels]
    return sum(boxes[i].overlaps(boxes[j]) for i in range(len(boxes)) for j in range(i))


def plain(text: str) -> str:
    r"""``text`` drawn as written: ``$`` would start matplotlib's mathtext (a parse error on untrusted names) and a
    leading ``_`` would hide a legend entry.

    >>> plain("_cost $5")
    '\u200b_cost \\$5'
    """
    text = text.replace("$", r"\$")
    return "\u200b" + text if text.startswith("_") else text


def points_caption(t: Tradeoff) -> str:
    """What the plot's points are and how they are labelled: by hyperparameter only when some system has one.

    >>> points_caption(Tradeoff("x", "y", "Style", "Content", pd.DataFrame({"hp_name": ["", ""]}), pd.DataFrame()))
    'points: systems, one setting each'
    """
    names = set(t.points["hp_name"]) - {""}
    if names - {"setting"}:
        return "points: settings, labelled by hyperparameter"
    return "points: settings, labelled by setting name" if names else "points: systems, one setting each"


def plot_tradeoff(t: Tradeoff, stem: Path, title: str) -> list[Path]:
    """Draw the tradeoff (:func:`draw_tradeoff`); write ``stem``.png and .svg."""
    fig = draw_tradeoff(t, title)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    fig.savefig(paths[0], dpi=150)
    fig.savefig(paths[1])
    return paths


def draw_tradeoff(t: Tradeoff, title: str) -> Figure:
    """The curves with error bars, each system with its own colour and marker and its name at its last point,
    hyperparameter values beside swept points, the Pareto frontier and the intersections."""
    systems = list(t.points.groupby("system", sort=False))
    fig = Figure(figsize=(7.0, 5.0) if len(systems) <= 10 else (9.0, 6.5), layout="constrained")
    ax = fig.add_subplot()
    # tab10 for up to 10 systems, tab20 beyond, and a marker of its own for each system (up to 15), so no two
    # systems share a colour and marker; every curve is also labelled with its system's name at its last point.
    colours = matplotlib.colormaps["tab10" if len(systems) <= 10 else "tab20"]
    labels = []
    for k, (system, curve) in enumerate(systems):
        xerr = np.vstack([curve["x"] - curve["x_low"], curve["x_high"] - curve["x"]])
        yerr = np.vstack([curve["y"] - curve["y_low"], curve["y_high"] - curve["y"]])
        swept = len(curve) > 1
        colour = colours(k % colours.N)
        ax.errorbar(curve["x"], curve["y"], xerr=xerr, yerr=yerr, marker=MARKERS[k % len(MARKERS)], markersize=6,
                    color=colour, capsize=3, linewidth=1.5, elinewidth=0.8,
                    label=plain(f"{system} ({curve['hp_name'].iloc[0]})" if swept else str(system)))
        last = curve.iloc[-1]
        labels.append(ax.annotate(plain(str(system)), (last["x"], last["y"]), textcoords="offset points",
                                  xytext=(6, -10), fontsize=7, color=colour, fontweight="bold"))
        for row in curve.itertuples() if swept else ():
            text = plain(str(row.setting)) if row.hp_name == "setting" else f"{row.hp_value:g}"
            labels.append(ax.annotate(text, (row.x, row.y), textcoords="offset points", xytext=(5, 5), fontsize=7))
    front = t.points[t.points["pareto"]].sort_values("x")
    if len(front):
        ax.plot(front["x"], front["y"], linestyle="--", color="0.3", linewidth=1, zorder=0)
        ax.scatter(front["x"], front["y"], s=160, facecolors="none", edgecolors="0.2", linewidths=1.2,
                   label="Pareto frontier", zorder=3)
    if len(t.intersections):
        ax.scatter(t.intersections["x"], t.intersections["y"], marker="x", s=90, color="crimson", linewidths=2,
                   label="curves intersect", zorder=4)
    ax.set_xlabel(axis_label(t.x, t.x_aspect))
    ax.set_ylabel(axis_label(t.y, t.y_aspect))
    if t.y_lower_is_better:
        ax.invert_yaxis()
    ax.set_title(plain(title) + f"\n({points_caption(t)}; bars: 95% bootstrap CI)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7 if len(systems) > 10 else 8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    separate_labels(fig, labels)
    return fig
