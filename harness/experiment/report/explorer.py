"""The explorer: one self-contained interactive HTML page over a scorecard (``explorer.html`` in a run folder).

The page embeds the per-sentence scorecard as JSON and two pinned libraries inline, so it opens from a file path
with no server and no network: Plotly (``plotly.min.js`` read at build time from the installed ``plotly`` wheel,
nothing vendored into git) draws the tradeoff scatter and the metric x metric correlation heatmap, and Tabulator
(vendored under ``assets/`` with its MIT licence) the sortable per-sentence table.  Filters (system, setting,
direction, text search, metric ranges) are a small layer of ours (``assets/explorer.js``) feeding Tabulator's
filter function.  System outputs are untrusted: the JSON is escaped so no ``</script>`` can end its element, and
the page puts every text in with ``textContent`` (Tabulator cells through a formatter returning text nodes; Plotly
labels with ``<``, ``>``, ``&`` as entities, which Plotly shows as characters).

Masked text: the scorecard keeps only scores, so the explorer recomputes what the masking metrics saw, with the
run's lexicon (:func:`tsteval.lexicons.modify.modify_texts`, mode ``mask``): cheap, one tokenisation per text.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import pandas as pd

from tsteval.core.errors import TstevalError
from tsteval.core.records import HP_PREFIX
from tsteval.core.styles import direction_labels
from tsteval.failures import failure_counts
from tsteval.lexicons.lexicon import Lexicon
from tsteval.metrics.registry import find_metric
from tsteval.scorecard import Scorecard

GENERATOR = "tsteval explorer"
ASSETS = ("tabulator.min.css", "explorer.css", "tabulator.min.js", "explorer.js")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def script_json(value: object) -> str:
    r"""``value`` as JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>`` and ``&`` are written as
    ``\u`` escapes (same value for ``JSON.parse``), so a ``</script>`` in a system output cannot end the element.

    >>> script_json({"output": "</script><b>"})
    '{"output": "\\u003c/script\\u003e\\u003cb\\u003e"}'
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _numbers(values: pd.Series) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.astype(float).tolist()]


def _strings(values: pd.Series) -> list[str]:
    return ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values.tolist()]


def numeric_columns(card: Scorecard) -> list[str]:
    """The columns the explorer treats as scores: the metric columns, then numeric human ratings (``human_*``)."""
    humans = [c for c in card.frame.columns if c.startswith("human_") and c not in card.signatures
              and pd.api.types.is_numeric_dtype(card.frame[c])]
    return [*card.metrics, *humans]


def correlations(frame: pd.DataFrame, columns: list[str]) -> dict[str, list[list[float | None]]]:
    """Pearson and Spearman correlation of every pair of ``columns`` over all rows (pairwise complete; None where a
    column is constant or too few rows are shared)."""
    out = {}
    for method in ("pearson", "spearman"):
        matrix = frame[columns].astype(float).corr(method=method, min_periods=3).to_numpy()
        out[method] = [[None if math.isnan(v) else round(float(v), 6) for v in row] for row in matrix]
    return out


def masked_texts(texts: pd.Series, lexicon: Lexicon | None, placeholder: str) -> tuple[list[str], list[str]] | None:
    """What the masking metrics saw (lexicon words replaced by ``placeholder``) and the words masked, per text;
    None without a lexicon."""
    if lexicon is None:
        return None
    from tsteval.core.tokenize import tokenize
    from tsteval.lexicons.modify import modify_texts

    unique = list(dict.fromkeys(_strings(texts)))
    masked = dict(zip(unique, modify_texts(unique, lexicon, "mask", placeholder), strict=True))
    words = lexicon.words
    removed = {text: " ".join(t for t in tokenize(text) if t in words) for text in unique}
    shown = _strings(texts)
    return [masked[t] for t in shown], [removed[t] for t in shown]


def recommended_column(names: list[str], aspect: str) -> str | None:
    """The first of ``names`` that is the recommended metric of ``aspect`` (:mod:`tsteval.metaeval.recommended`; the
    style metric with any classifier), else None.

    >>> recommended_column(["sti@ft", "style_strength@lr", "style_strength@ft"], "style")
    'style_strength@lr'
    >>> recommended_column(["bleu@none", "sbert@mask"], "content") is None
    True
    """
    from tsteval.metaeval.recommended import RECOMMENDED

    for r in RECOMMENDED:
        if r.aspect == aspect:
            return next((n for n in names if (n.startswith(f"{r.metric}@") if aspect == "style" else
                                              n == r.column())), None)
    return None


def default_axes(columns: list[dict], tradeoff: tuple[str | None, str | None] = (None, None)) -> tuple[str, str]:
    """The tradeoff scatter's first axes: x style, y content.  Each is the given ``tradeoff`` column (a manifest's
    axes, those of its report's tradeoff plots) where the scorecard has it, else the recommended metric of its aspect,
    else the first column of the aspect (y: of any aspect but style), else the first columns."""
    names = [c["name"] for c in columns]
    given = dict(zip("xy", tradeoff, strict=True))
    picked = {}
    for axis, aspect, fallback in (("x", "style", lambda c: c["aspect"] == "style"),
                                   ("y", "content", lambda c: c["aspect"] not in (None, "style"))):
        picked[axis] = ((given[axis] if given[axis] in names else None) or recommended_column(names, aspect)
                        or next((c["name"] for c in columns if fallback(c)), None)
                        or names[0 if axis == "x" else min(1, len(names) - 1)])
    return picked["x"], picked["y"]


def explorer_data(card: Scorecard, *, title: str, lexicon: Lexicon | None = None, placeholder: str = "<masked>",
                  tradeoff: tuple[str | None, str | None] = (None, None)) -> dict:
    """Everything the page shows, as one JSON-ready dict: columnar rows, the score columns with their direction and
    signature, the correlation matrices, the default tradeoff axes, the card's notices (the run's warnings:
    :attr:`~tsteval.scorecard.Scorecard.notices`) and the count of empty outputs per system."""
    frame = card.frame.reset_index(drop=True)
    scores = numeric_columns(card)
    if not scores:
        raise TstevalError("the scorecard has no metric columns to explore; score some metrics first")
    hps = [c for c in frame.columns if c.startswith(HP_PREFIX)]
    rows: dict[str, list] = {
        "system": _strings(frame["system"]), "setting": _strings(frame["setting"]),
        "direction": direction_labels(frame).tolist(),
        "item": _strings(frame["item"]), "input": _strings(frame["input"]), "output": _strings(frame["output"]),
    }
    for column in hps:
        rows[column] = _strings(frame[column])
    for which in ("input", "output"):
        masked = masked_texts(frame[which], lexicon, placeholder)
        if masked is not None:
            rows[f"{which}_masked"], rows[f"{which}_style_words"] = masked
    for column in scores:
        rows[column] = _numbers(frame[column])
    columns = []
    for column in scores:
        metric = find_metric(column, card.signatures.get(column))
        columns.append({"name": column, "signature": card.signatures.get(column, "human rating"),
                        "aspect": None if metric is None else metric.aspect,
                        "higher_is_better": True if metric is None else bool(metric.higher_is_better)})
    x, y = default_axes(columns, tradeoff)
    return {"title": title, "n": len(frame), "rows": rows, "scores": columns, "hyperparameters": hps,
            "masked": lexicon is not None, "placeholder": placeholder, "tradeoff": {"x": x, "y": y},
            "correlations": correlations(frame, scores), "notices": list(card.notices),
            "empty_outputs": failure_counts(frame)}


def _asset(name: str) -> str:
    return (resources.files("tsteval.experiment.report") / "assets" / name).read_text(encoding="utf-8")


def plotly_js() -> str:
    """Plotly's minified bundle from the installed ``plotly`` package (the version pinned in pyproject)."""
    try:
        bundle = resources.files("plotly") / "package_data" / "plotly.min.js"
        return bundle.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as error:
        raise TstevalError("the explorer needs Plotly's JavaScript bundle from the Python package plotly: "
                           "pip install 'plotly>=6,<8'") from error


def _inline_script(code: str) -> str:
    if "</script" in code.lower():
        raise TstevalError("a bundled script contains '</script' and cannot be inlined (a broken package?)")
    return f"<script>{code}</script>"


def explorer_html(data: dict) -> str:
    """The page: the assets and the data inlined; the title is set by the script (textContent)."""
    css = "".join(f"<style>{_asset(n)}</style>" for n in ASSETS if n.endswith(".css"))
    scripts = [plotly_js(), *(_asset(n) for n in ASSETS if n.endswith(".js"))]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"{GENERATOR}\"><title>tsteval explorer</title>{css}</head>\n"
            f"<body>{_asset('explorer.html')}\n"
            f"<script type=\"application/json\" id=\"tsteval-data\">{script_json(data)}</script>\n"
            + "\n".join(_inline_script(s) for s in scripts) + "\n</body></html>\n")


def is_explorer(path: Path) -> bool:
    """True when ``path`` is a page this module wrote (its generator meta tag in the first kilobyte)."""
    with open(path, "rb") as handle:
        return f'content="{GENERATOR}"'.encode() in handle.read(1024)


def read_explorer_data(path: str | Path) -> dict:
    """The data embedded in an explorer page (for tests and scripts)."""
    text = Path(path).read_text(encoding="utf-8")
    start = text.index('id="tsteval-data">') + len('id="tsteval-data">')
    return json.loads(text[start:text.index("</script>", start)])


def write_explorer(path: str | Path, card: Scorecard, *, title: str, lexicon: Lexicon | None = None,
                   placeholder: str = "<masked>", tradeoff: tuple[str | None, str | None] = (None, None)) -> Path:
    """Write the explorer page for ``card`` to ``path`` (a file in a folder being written, e.g. a run's)."""
    data = explorer_data(card, title=title, lexicon=lexicon, placeholder=placeholder, tradeoff=tradeoff)
    Path(path).write_text(explorer_html(data), encoding="utf-8")
    return Path(path)



def _run_lexicon(directory: Path) -> Lexicon | None:
    """The lexicon a run folder's ``run.json`` names, when it lies under the data root (``$TSTEVAL_DATA/...``)."""
    from tsteval.core.datapaths import data_root
    from tsteval.core.errors import read_json

    run = directory / "run.json"
    origin = (read_json(run, "run metadata", fix="run the manifest again").get("lexicon") or {}).get("origin", "") \
        if run.is_file() else ""
    prefix = "$TSTEVAL_DATA/"
    if not origin.startswith(prefix) or not (data_root() / origin[len(prefix):]).is_file():
        return None
    return Lexicon.load(data_root() / origin[len(prefix):])


def _run_tradeoff(directory: Path) -> tuple[str | None, str | None]:
    """The style and content axes of a run folder's report (``run.json``'s ``tradeoff``: the manifest's axes or the
    defaults the run chose), else those its copied manifest names (a run written before run.json kept them), else
    none."""
    import yaml

    try:
        spec = json.loads((directory / "run.json").read_text(encoding="utf-8")).get("tradeoff")
    except (OSError, ValueError, AttributeError):
        spec = None
    try:
        spec = spec or yaml.safe_load((directory / "manifest.yaml").read_text(encoding="utf-8")).get("tradeoff") or {}
        return spec.get("style"), spec.get("content")
    except (OSError, yaml.YAMLError, AttributeError):
        return None, None


def explore_folder(directory: str | Path, out: str | Path | None = None, lexicon: str | Path | None = None,
                   overwrite: bool = False) -> Path:
    """Write the explorer of a folder written by ``tsteval run`` or ``tsteval score`` (``out`` defaults to
    ``explorer.html`` inside it, which the folder's marker then lists).  Masked text needs a lexicon: ``lexicon``,
    else the one ``run.json`` names under the data root."""
    from tsteval.core.atomic import add_to_marker, output_file

    directory = Path(directory)
    card = Scorecard.load(directory)
    target = Path(out) if out is not None else directory / "explorer.html"
    words = Lexicon.load(lexicon) if lexicon is not None else _run_lexicon(directory)
    data = explorer_data(card, title=directory.resolve().name, lexicon=words, tradeoff=_run_tradeoff(directory))
    with output_file(target, "an explorer page", is_explorer, overwrite) as tmp:
        tmp.write_text(explorer_html(data), encoding="utf-8")
    if target.resolve().parent == directory.resolve():
        add_to_marker(directory, target.name)
    return target
