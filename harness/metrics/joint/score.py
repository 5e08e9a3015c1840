"""The joint score J and the leaderboard: one number per sentence, one ranking per transfer direction.

J is computed **per sentence, then averaged** (Krishna et al. 2020, STRAP: J = mean over sentences of
ACC x SIM x FL), so a system cannot trade style on some sentences against content on others.  Each factor is a
scorecard column of a registered metric, turned into a number in [0, 1]:

* with a threshold, ``COLUMN>=T`` or the strict ``COLUMN>T`` (a higher-is-better metric), ``COLUMN<=T`` or
  ``COLUMN<T`` (lower-is-better, e.g. ``ppl@kn3<=200``): an indicator, 1 when the sentence passes, else 0;
* without one, the value rescaled from the metric's declared range with negative values clipped to 0:
  ``clip((v - max(lo, 0)) / (hi - max(lo, 0)), 0, 1)``, so ``target_acc`` and ``naturalness`` stay as they are,
  BLEU and chrF are divided by 100 and a negative cosine (``sbert``) counts as no similarity.  A lower-is-better
  or unbounded metric needs a threshold.

**STRAP's recipe** (``strap``, the default) maps STRAP's three factors onto tsteval's metrics: ACC =
``target_acc@CLF`` (the first style classifier: the output is classified as the target style), SIM =
``sbert@none`` (cosine of all-MiniLM-L6-v2 embeddings of output and input; STRAP uses Wieting et al.'s SIM, also a
cosine of sentence embeddings; when no ``sbert@none`` is scored, the first of ``meteor@none``, ``chrf@none``,
``bleu@none``), FL = ``naturalness@unigram>0.5`` (the cross-fitted adversarial classifier takes the output for
human-written; STRAP uses a RoBERTa CoLA classifier's "acceptable" decision, which tsteval does not ship).  The
threshold is **strict**: a classifier that cannot tell the output from human text gives exactly 0.5 (a copied input
when the human side is the inputs themselves), and that tie must not pass.  When the adversarial classifier's human
side is the transfers' inputs (signature ``human:inputs``), every copy is such a tie, so J is still scored but
:func:`fluency_warning` says so (the run's log, stderr and the leaderboard files).

**Sanity check.** On a leaderboard with baseline systems (``baseline:NAME``), :func:`sanity_notes` gives one line
per direction where ``baseline:copy`` ranks above a system that is not a baseline: such a J rewards not
transferring at all, and the leaderboard says so.

>>> import numpy as np
>>> joint_values(np.array([1.0, 1.0, 0.0]), np.array([0.5, 1.0, 1.0]), np.array([1.0, 0.0, 1.0])).tolist()
[0.5, 0.0, 0.0]
>>> str(Component.parse("ppl@kn3<=200"))
'ppl@kn3<=200'
>>> JointRecipe.parse("mine=target_acc@ft,bleu@none,ppl@kn3<=200").column
'joint@mine'
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core import markdown as md
from tsteval.core.errors import TstevalError
from tsteval.core.options import check_column_name
from tsteval.core.records import failed
from tsteval.core.signature import content_hash
from tsteval.core.styles import direction_label, style_names
from tsteval.metrics.registry import METRICS, find_metric
from tsteval.scorecard import Scorecard

STRAP = "strap"
FACTORS = ("style", "content", "fluency")
FACTOR_ASPECTS = {"style": ("style",), "content": ("content", "compatibility"), "fluency": ("naturalness",)}
_COMPONENT = re.compile(r"^\s*([^<>=\s]+@[^<>=\s]+)\s*(?:(>=|<=|>|<)\s*([-+0-9.eE]+)\s*)?$")
_OPERATORS = {">=": np.greater_equal, ">": np.greater, "<=": np.less_equal, "<": np.less}
COPY = "baseline:copy"
BASELINE_PREFIX = "baseline:"
_NAMED = re.compile(r"^\s*([A-Za-z0-9_.-]+)=(.*)$")
STRAP_CONTENT = ("sbert@none", "meteor@none", "chrf@none", "bleu@none")
STRAP_FLUENCY = ("naturalness@unigram", "naturalness@textcnn")


@dataclass(frozen=True)
class Component:
    """One factor of J: a scorecard column, optionally turned into an indicator by ``operator`` ``threshold``."""

    column: str
    operator: str | None = None
    threshold: float | None = None

    @classmethod
    def parse(cls, text: str) -> Component:
        """``COLUMN``, ``COLUMN>=T``, ``COLUMN>T``, ``COLUMN<=T`` or ``COLUMN<T``."""
        match = _COMPONENT.match(str(text))
        if not match:
            raise TstevalError(f"{str(text)[:80]!r} is not a J factor: give METRIC@NAME, METRIC@NAME>=T, >T, "
                               "<=T or <T (e.g. naturalness@unigram>0.5)")
        column, operator, threshold = match.groups()
        if column.split("@", 1)[0] not in METRICS:
            raise TstevalError(f"J factor {column!r}: {column.split('@', 1)[0]!r} is not a metric; known: "
                               f"{sorted(METRICS)}")
        try:
            value = None if threshold is None else float(threshold)
        except ValueError:
            raise TstevalError(f"J factor {text!r}: the threshold {threshold!r} is not a number") from None
        if value is not None and not math.isfinite(value):
            raise TstevalError(f"J factor {text!r}: the threshold must be finite")
        return cls(column, operator, value)

    def __str__(self) -> str:
        return self.column if self.operator is None else f"{self.column}{self.operator}{self.threshold:g}"

    def values(self, card: Scorecard) -> np.ndarray:
        """This factor of every row of ``card``, in [0, 1] (see the module docstring)."""
        if self.column not in card.signatures:
            raise TstevalError(f"J needs the column {self.column!r}, which this run did not score (it has "
                               f"{card.metrics[:12]}); score that metric or name another column")
        metric = find_metric(self.column, card.signatures[self.column])
        if metric is None or metric.aspect == "joint":
            raise TstevalError(f"J factor {self.column!r} is not a style, content or naturalness metric")
        values = card.frame[self.column].to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        if bad.any():
            raise TstevalError(f"J factor {self.column!r} has {int(bad.sum())} NaN or infinite values (row "
                               f"{int(np.argmax(bad))}); fix or drop those rows")
        if self.operator is not None:
            wanted = (">=", ">") if metric.higher_is_better else ("<=", "<")
            if self.operator not in wanted:
                better = "higher" if metric.higher_is_better else "lower"
                raise TstevalError(f"J factor {self}: {metric.name} is {better}-is-better, so its indicator is "
                                   f"{self.column}{wanted[0]}T or {self.column}{wanted[1]}T")
            return _OPERATORS[self.operator](values, self.threshold).astype(float)
        low, high = metric.range
        if not metric.higher_is_better or not math.isfinite(high):
            raise TstevalError(f"J factor {self.column!r}: {metric.name} is lower-is-better or unbounded; give a "
                               f"threshold, e.g. {self.column}{'<=' if not metric.higher_is_better else '>='}T")
        low = max(low, 0.0)
        return np.clip((values - low) / (high - low), 0.0, 1.0)


@dataclass(frozen=True)
class JointRecipe:
    """The three factors of J and the name of its column (``joint@NAME``)."""

    style: Component
    content: Component
    fluency: Component
    name: str = STRAP

    def __post_init__(self) -> None:
        check_column_name(self.name, "the J recipe name")
        for factor, component in self.components.items():
            aspect = METRICS[component.column.split("@", 1)[0]].aspect
            if aspect not in FACTOR_ASPECTS[factor]:
                raise TstevalError(f"the {factor} factor of J must be a {' or '.join(FACTOR_ASPECTS[factor])} "
                                   f"metric, and {component.column!r} is {aspect}")

    @property
    def column(self) -> str:
        return f"joint@{self.name}"

    @property
    def components(self) -> dict[str, Component]:
        return {"style": self.style, "content": self.content, "fluency": self.fluency}

    @classmethod
    def parse(cls, spec: str | Sequence[str] | Mapping[str, str], name: str = "custom") -> JointRecipe:
        """``[NAME=]STYLE,CONTENT,FLUENCY`` (a string), three factors, or ``{style:, content:, fluency:, name?:}``."""
        if isinstance(spec, Mapping):
            unknown = sorted(set(spec) - {*FACTORS, "name"})
            missing = [f for f in FACTORS if f not in spec]
            if unknown or missing:
                raise TstevalError(f"a J recipe has the keys style, content, fluency and name (unknown: {unknown}, "
                                   f"missing: {missing})")
            return cls(*(Component.parse(spec[f]) for f in FACTORS), name=str(spec.get("name", name)))
        if isinstance(spec, str):
            named = _NAMED.match(spec)
            if named:
                name, spec = named.groups()
            spec = spec.split(",")
        parts = [p.strip() for p in spec]
        if len(parts) != 3:
            raise TstevalError(f"a J recipe has three factors STYLE,CONTENT,FLUENCY (e.g. target_acc@ft,sbert@none,"
                               f"naturalness@unigram>0.5), not {len(parts)}: {','.join(parts)[:120]!r}")
        return cls(*(Component.parse(p) for p in parts), name=name)


def strap_recipe(card: Scorecard, style_names: Sequence[str]) -> JointRecipe | None:
    """STRAP's J on ``card``'s columns (see the module docstring), or None when a factor has no column."""
    content = next((c for c in STRAP_CONTENT if c in card.signatures), None)
    fluency = next((c for c in STRAP_FLUENCY if c in card.signatures), None)
    if not style_names or content is None or fluency is None:
        return None
    return JointRecipe(Component(f"target_acc@{style_names[0]}"), Component(content),
                       Component(fluency, ">", 0.5), STRAP)


def missing_for_strap(card: Scorecard, style_names: Sequence[str]) -> list[str]:
    """What STRAP's recipe lacks on ``card``: a style classifier, a content or a fluency column."""
    missing = [] if style_names else ["a style classifier (target_acc)"]
    if not any(c in card.signatures for c in STRAP_CONTENT):
        missing.append(f"a content column ({', '.join(STRAP_CONTENT)})")
    if not any(c in card.signatures for c in STRAP_FLUENCY):
        missing.append(f"a naturalness column ({', '.join(STRAP_FLUENCY)})")
    return missing


def fluency_warning(card: Scorecard, recipe: JointRecipe) -> str | None:
    """One line when J's fluency factor is an adversarial classifier whose human side is the transfers' own
    inputs (signature ``human:inputs``): a copy then looks exactly as human as the human text; else None."""
    signature = card.signatures.get(recipe.fluency.column, "")
    if "|human:inputs|" not in f"{signature}|":
        return None
    return (f"J's fluency factor treats the inputs as the human text: give --human FILE (manifest metrics.human) "
            f"so that {recipe.fluency.column} compares outputs with human sentences that are not the inputs "
            "(a copied input is a tie, 0.5, and cannot pass)")


def sanity_notes(board: pd.DataFrame) -> list[str]:
    """One line per transfer direction of ``board`` (a :func:`leaderboard`) where ``baseline:copy`` ranks above a
    system that is not a baseline (``baseline:NAME``); empty when there is none or no copy baseline."""
    notes = []
    for _, part in board.groupby(["source_style", "target_style"], sort=False):
        copy = part[part["system"] == COPY]
        if copy.empty:
            continue
        rank = int(copy["rank"].min())
        below = part[(part["rank"] > rank) & ~part["system"].astype(str).str.startswith(BASELINE_PREFIX)]
        if below.empty:
            continue
        systems = sorted(set(below["system"].astype(str)))
        shown = ", ".join(systems[:5]) + (f" and {len(systems) - 5} more" if len(systems) > 5 else "")
        notes.append(f"sanity: {part['direction'].iloc[0]}: {COPY} (the unchanged input) ranks {rank} of "
                     f"{len(part)} by J, above {len(systems)} system(s) ({shown}): this J rewards not transferring")
    return notes


def joint_values(style: np.ndarray, content: np.ndarray, fluency: np.ndarray) -> np.ndarray:
    """The per-sentence J: the product of the three factors (each in [0, 1])."""
    return np.asarray(style, float) * np.asarray(content, float) * np.asarray(fluency, float)


def score_joint(card: Scorecard, recipe: JointRecipe) -> str:
    """Add the column ``joint@NAME`` to ``card`` (its signature names the factors and hashes their signatures);
    returns the column name."""
    factors = {name: c.values(card) for name, c in recipe.components.items()}
    fields = {name: str(c) for name, c in recipe.components.items()}
    fields["parts"] = content_hash("\n".join(card.signatures[c.column] for c in recipe.components.values()),
                                   length=8)
    card.add(recipe.column, joint_values(*factors.values()), str(METRICS["joint"].signature(**fields)))
    return recipe.column


def leaderboard(card: Scorecard, recipe: JointRecipe, n_resamples: int = N_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """One ranking per transfer direction (source style -> target style): per (system, setting) the mean J with its
    95% percentile-bootstrap interval and the mean of each factor (on the same resamples), sorted by J; ``n_empty``:
    how many outputs are empty (failures, J 0: :mod:`tsteval.failures`)."""
    from tsteval.aggregate import bootstrap_means

    if recipe.column not in card.frame.columns:
        raise TstevalError(f"the leaderboard needs the column {recipe.column!r}: score J first (score_joint)")
    frame = card.frame[["system", "setting", "source_style", "target_style"]].copy()
    frame["J"] = card.frame[recipe.column].to_numpy(float)
    frame["failed"] = failed(card.frame["output"])
    for name, component in recipe.components.items():
        frame[name] = component.values(card)
    rows, names = [], style_names(card.frame)
    for (source, target, system, setting), group in frame.groupby(
            ["source_style", "target_style", "system", "setting"], sort=False):
        stats = bootstrap_means({c: group[c].to_numpy() for c in ("J", *FACTORS)}, n_resamples=n_resamples,
                                seed=seed)
        rows.append({"source_style": source, "target_style": target,
                     "direction": direction_label(source, target, names), "system": system, "setting": setting,
                     "n": len(group), "n_empty": int(group["failed"].sum()), "J": stats["J"][0],
                     "J_low": stats["J"][1], "J_high": stats["J"][2],
                     **{name: stats[name][0] for name in FACTORS}})
    board = pd.DataFrame(rows).sort_values(["source_style", "target_style", "J"], ascending=[True, True, False],
                                           kind="stable")
    board.insert(3, "rank", board.groupby(["source_style", "target_style"]).cumcount() + 1)
    board = board.reset_index(drop=True)
    return board.assign(copy_above=_copy_above(board))


def _copy_above(board: pd.DataFrame) -> list[bool]:
    """Per row: the row is a system that is not a baseline and ``baseline:copy`` ranks above it (same direction)."""
    copy_rank = board[board["system"] == COPY].groupby(["source_style", "target_style"])["rank"].min().to_dict()
    return [not str(row.system).startswith(BASELINE_PREFIX)
            and row.rank > copy_rank.get((row.source_style, row.target_style), math.inf)
            for row in board.itertuples()]


def leaderboard_tables(board: pd.DataFrame, recipe: JointRecipe) -> list[tuple[str, pd.DataFrame]]:
    """The leaderboard as one display table per direction: a title and the rows (J as ``mean [low, high]``)."""
    out = []
    names = {name: f"{name}: {component}" for name, component in recipe.components.items()}
    for _, part in board.groupby(["source_style", "target_style"], sort=False):
        shown = part.assign(J=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                               zip(part["J"], part["J_low"], part["J_high"], strict=True)])
        empty = ["n_empty"] if board["n_empty"].any() else []  # the failed outputs, where there are any
        shown = shown[["rank", "system", "setting", "n", *empty, "J", *FACTORS]].rename(
            columns={"J": f"{recipe.column} [95% CI]", **names})
        out.append((str(part["direction"].iloc[0]), shown.reset_index(drop=True)))
    return out


def leaderboard_notes(board: pd.DataFrame, warnings: Sequence[str] = ()) -> list[str]:
    """The warning lines a leaderboard carries: ``warnings`` (e.g. :func:`fluency_warning`, or every notice of the
    run: :attr:`tsteval.experiment.run.execute.Run.notices`), then the :func:`sanity_notes` not among them."""
    return list(dict.fromkeys([*warnings, *sanity_notes(board)]))


def leaderboard_markdown(board: pd.DataFrame, recipe: JointRecipe, warnings: Sequence[str] | None = ()) -> str:
    """The leaderboard section of ``summary.md`` (and ``leaderboard.md``): its warning lines (see
    :func:`leaderboard_notes`; none with ``warnings=None``, for a page that shows them already), then one escaped
    Markdown table per direction."""
    lines = ["", f"## Leaderboard: {md.inline(recipe.column)} per transfer direction", "",
             md.inline(f"J = mean over sentences of {recipe.style} × {recipe.content} × {recipe.fluency} "
                       "(each factor in [0, 1]; the factor columns are their means; an empty output is a "
                       "failure: J 0; n_empty counts them)."), ""]
    if warnings is not None:
        lines += [f"**Warning:** {md.inline(note)}\n" for note in leaderboard_notes(board, warnings)]
    for title, table in leaderboard_tables(board, recipe):
        lines += [f"### {md.inline(title)}", "", md.table(table, lambda v: f"{v:.3f}" if isinstance(v, float)
                                                              else str(v)), ""]
    return "\n".join(lines)


def leaderboard_text(board: pd.DataFrame, recipe: JointRecipe, warnings: Sequence[str] = ()) -> str:
    """The leaderboard as plain text for the terminal: the same warning lines and tables as
    :func:`leaderboard_markdown`, without Markdown escapes."""
    from tsteval.core.texttable import text_table

    lines = [f"Leaderboard: {recipe.column} per transfer direction",
             f"J = mean over sentences of {recipe.style} x {recipe.content} x {recipe.fluency}", ""]
    lines += [f"warning: {note}" for note in leaderboard_notes(board, warnings)]
    for title, table in leaderboard_tables(board, recipe):
        lines += ["", title, text_table(table, lambda v: f"{v:.3f}" if isinstance(v, float) else str(v))]
    return "\n".join(lines) + "\n"


def write_leaderboard(directory: str | Path, board: pd.DataFrame, recipe: JointRecipe,
                      warnings: Sequence[str] = ()) -> None:
    """Write ``leaderboard.csv`` (its column ``copy_above`` marks the systems ``baseline:copy`` outranks) and
    ``leaderboard.md`` with the ``warnings``, and append the leaderboard to ``summary.md`` in ``directory`` (whose
    notes carry the warnings: :meth:`~tsteval.scorecard.Scorecard.write`)."""
    directory = Path(directory)
    board.to_csv(directory / "leaderboard.csv", index=False)
    (directory / "leaderboard.md").write_text(leaderboard_markdown(board, recipe, warnings).lstrip("\n"),
                                              encoding="utf-8")
    with (directory / "summary.md").open("a", encoding="utf-8") as summary:
        summary.write(leaderboard_markdown(board, recipe, None))
