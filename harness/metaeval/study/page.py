"""The one renderer of evidence pages: a study's JSON (``study.json``) in, its Markdown page (``study.md``) out.

Every table is :func:`tsteval.core.markdown.table` (cells escaped) and is followed by its signature line: the
statistic, the levels, the clustering unit, the resamples, the seed and the tsteval version it was computed with.
A page is a function of its JSON alone, so a test renders the committed JSON and compares it with the committed page.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tsteval.core import markdown as md
from tsteval.core.atomic import output_directory

KIND = "tsteval-study"
LEVEL_NAMES = {"sentence": "sentence", "within_system": "within system", "system": "system"}


def cell(r: float | None, lo: float | None = None, hi: float | None = None, signed: bool = False) -> str:
    """A figure with its interval, three decimals (``undefined`` when it is not defined).

    >>> cell(0.4567, 0.4, 0.5), cell(0.02, -0.01, 0.05, signed=True), cell(None)
    ('0.457 [0.400, 0.500]', '+0.020 [-0.010, +0.050]', 'undefined')
    """
    if r is None:
        return "undefined"
    form = "{:+.3f}" if signed else "{:.3f}"
    if lo is None or hi is None:
        return form.format(r)
    return f"{form.format(r)} [{form.format(lo)}, {form.format(hi)}]"


def signature_line(signature: dict, statistic: str, levels: list[str]) -> str:
    """The line under a table: how its figures were computed.

    >>> signature_line({"cluster": "input", "resamples": 1000, "seed": 0, "confidence": 0.95, "tsteval": "0.1.0"},
    ...                "pearson", ["sentence"])
    '*pearson · sentence · 95% percentile intervals · 1000 resamples clustered by input · seed 0 · tsteval 0.1.0*'
    """
    return (f"*{statistic} · {', '.join(LEVEL_NAMES.get(level, level) for level in levels)} · "
            f"{signature['confidence']:.0%} percentile intervals · {signature['resamples']} resamples clustered by "
            f"{signature['cluster']} · seed {signature['seed']} · tsteval {signature['tsteval']}*")


def _against(comparisons: list[dict], where: str, rating: str, column: str, statistic: str) -> str:
    for row in comparisons:
        if (row["set"], row["rating"], row["column"], row["statistic"], row["level"]) == (
                where, rating, column, statistic, "sentence") and row["comparison"] in ("baseline", "incumbent"):
            return f"{row['verdict']}: {cell(row['diff'], row['lo'], row['hi'], signed=True)} vs {row['against']}"
    return ""


def figure_table(data: dict, rows: list[dict], where: str, rating: str, statistic: str) -> pd.DataFrame:
    """One table: a row per column (best sentence-level figure first), a cell per level, the comparison with the
    baseline at sentence level."""
    levels = data["signature"]["levels"]
    part = [r for r in rows if r["set"] == where and r["rating"] == rating and r["statistic"] == statistic]
    columns = list(dict.fromkeys(r["column"] for r in part))
    by = {(r["column"], r["level"]): r for r in part}

    def key(column: str) -> float:
        value = by.get((column, levels[0]), {}).get("r")
        return -value if value is not None else float("inf")

    table = []
    for column in sorted(columns, key=key):
        first = by[(column, levels[0])]
        row = {"column": column, "source": first["source"]}
        for level in levels:
            figure = by.get((column, level), {})
            row[LEVEL_NAMES[level]] = cell(figure.get("r"), figure.get("lo"), figure.get("hi"))
        if "sets" in first:
            row["sets"] = len(first["sets"])
        row["beats the baseline? (sentence)"] = _against(data["comparisons"], where, rating, column, statistic)
        table.append(row)
    return pd.DataFrame(table)


def pairwise_table(data: dict, where: str, rating: str, statistic: str) -> pd.DataFrame:
    """The pairwise comparisons of ``where`` and ``rating`` (``comparisons: [pairwise]``): a row per pair, the
    column's figure minus the other's at each level, with the verdict at sentence level (empty without them)."""
    levels = data["signature"]["levels"]
    part = [r for r in data["comparisons"] if r["comparison"] == "pairwise" and r["set"] == where
            and r["rating"] == rating and r["statistic"] == statistic]
    by = {(r["column"], r["against"], r["level"]): r for r in part}
    table = []
    for column, against in dict.fromkeys((r["column"], r["against"]) for r in part):
        row = {"column": column, "minus": against}
        for level in levels:
            figure = by.get((column, against, level), {})
            row[LEVEL_NAMES[level]] = cell(figure.get("diff"), figure.get("lo"), figure.get("hi"), signed=True)
        row["verdict (sentence)"] = by.get((column, against, "sentence"), {}).get("verdict", "")
        table.append(row)
    return pd.DataFrame(table)


def _tables(data: dict, rows: list[dict], where: str, rating: str) -> list[str]:
    """Each statistic's figure table of ``where`` and ``rating``, then its pairwise table where there is one, each
    with its signature line."""
    signature, lines = data["signature"], []
    for statistic in signature["statistics"]:
        lines += [md.table(figure_table(data, rows, where, rating, statistic)), "",
                  signature_line(signature, statistic, signature["levels"]), ""]
    for statistic in signature["statistics"]:
        pairs = pairwise_table(data, where, rating, statistic)
        if len(pairs):
            lines += [f"Pairwise ({md.escape(statistic)}): each column minus the other, on the same resamples.", "",
                      md.table(pairs), "", signature_line(signature, statistic, signature["levels"]), ""]
    return lines


def _sets_table(data: dict) -> pd.DataFrame:
    return pd.DataFrame([{"set": s["label"], "source": s["source"] or s["name"], "task": s["task"],
                          "language": s["language"], "rows": s["rows"], "inputs": s["inputs"],
                          "ratings": ", ".join(f"{c} ({a})" for c, a in s["ratings"].items())}
                         for s in data["sets"]])


def _rule_section(data: dict) -> list[str]:
    rule = data["rule"]
    lines = ["## The profile rule", "",
             md.inline(f"Version {rule['version']}, declared before it was applied: per aspect, a column's gain is the "
                       f"mean over sets of its {rule['level']}-level {rule['statistic']} minus the reference's (every "
                       "set weighs the same), its interval from the sets' resamples; a candidate gains at least "
                       f"{rule['min_gain']:+.2f} with the interval's lower end above 0 and is significantly worse "
                       "than the reference on no set; the candidates whose difference from the best has an interval "
                       "holding 0 are tied, and the cheapest tied one is chosen (CPU seconds per 1,000 pairs on 2 "
                       f"cores, `{rule['costs']}`); without a candidate the reference stays."), ""]
    for group in rule["groups"]:
        lines += [f"### {md.escape(group['group'])}", ""]
        summary = pd.DataFrame([{"aspect": p["aspect"], "reference": p["reference"],
                                 "reference cost": _cost(p["reference_cost"]), "chosen": p["chosen"],
                                 "chosen cost": _cost(p["chosen_cost"]), "sets": ", ".join(p["sets"])}
                                for p in group["picks"]])
        lines += [md.table(summary), ""]
        for pick in group["picks"]:
            rows = [{"column": c["column"], "mean gain": cell(c["gain"], c["lo"], c["hi"], signed=True),
                     **{label: cell(*c["per_set"][label], signed=True) for label in pick["sets"]},
                     "candidate": "yes" if c["candidate"] else "no", "tied with best": "yes" if c["tied"] else "",
                     "cost": _cost(c["cost"])} for c in pick["columns"]]
            if rows:
                lines += [f"{md.escape(pick['aspect'])} against `{md.escape(pick['reference'])}`:", "",
                          md.table(pd.DataFrame(rows)), "",
                          signature_line(data["signature"], rule["statistic"], [rule["level"]]), ""]
    return lines


def _cost(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.1f} s"


def render(data: dict) -> str:
    """The whole page of a study's JSON (module notes)."""
    lines = [f"# {md.escape(data['title'])}", ""]
    if data.get("text"):
        lines += [data["text"], ""]
    lines += [md.inline(f"Declared in `{'`, `'.join(data['declaration'])}`; rerun with `tsteval meta-eval --study "
                        f"{data['declaration'][0]}`."), "", "## Sets", "", md.table(_sets_table(data)), ""]
    warned = [(info["label"], notice) for info in data["sets"] for notice in info.get("notices", [])]
    if warned:  # what scoring warned of, kept with the page rather than left on stderr
        lines += ["Warnings of the scoring runs:", "", *(f"- {md.escape(f'{label}: {n}')}" for label, n in warned), ""]
    for info in data["sets"]:
        for rating, aspect in info["ratings"].items():
            if not any(r["set"] == info["label"] and r["rating"] == rating for r in data["figures"]):
                continue
            counts = info["counts"].get(rating, {})
            lines += [f"## {md.escape(info['label'])}: {md.escape(rating)} ({md.escape(aspect)})", "",
                      md.inline(f"{counts.get('used', 0)} of {counts.get('rated', 0)} rated rows "
                                f"({counts.get('inputs', 0)} inputs, {counts.get('groups', 0)} system settings); "
                                f"{counts.get('missing_metric', 0)} left out for a missing metric value."), ""]
            lines += _tables(data, data["figures"], info["label"], rating)
    for where in dict.fromkeys(r["set"] for r in data["aggregates"]):
        rows = [r for r in data["aggregates"] if r["set"] == where]
        title = {"mean": "Mean over sets", "pooled": "All sets pooled"}.get(where, where[:1].upper() + where[1:])
        for aspect in dict.fromkeys(r["aspect"] for r in rows):
            lines += [f"## {md.escape(title)}: {md.escape(aspect)}", "", *_tables(data, rows, where, aspect)]
    if data.get("describe"):
        lines += ["## Description", "", md.table(pd.DataFrame(data["describe"]), md.floats(".3f")), ""]
    if data.get("published"):
        lines += ["## Published figures beside ours", "",
                  md.table(pd.DataFrame([{"column": p["column"], "set": p["set"], "aspect": p["aspect"],
                                          "statistic": p["statistic"], "level": p["level"],
                                          "value": f"{p['value']:.3f}", "source": p["source"]}
                                         for p in data["published"]])), ""]
    if data.get("rule"):
        lines += _rule_section(data)
    return "\n".join(lines).rstrip() + "\n"


def write(data: dict, directory: Path, scores: pd.DataFrame | None = None) -> Path:
    """``study.json``, ``study.md`` and the scores every figure was computed from (``scores.parquet``: a row per
    rated transfer of every set) in ``directory`` (replaced whole when it is a study's output)."""
    with output_directory(directory, KIND, overwrite=True) as tmp:
        if scores is not None:
            scores.to_parquet(tmp / "scores.parquet", index=False)
        (tmp / "study.json").write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
        (tmp / "study.md").write_text(render(data), encoding="utf-8")
    return directory
