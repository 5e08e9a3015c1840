"""The README's profile table, generated from the three profile pages (``profile_{style,content,naturalness}``,
rule version 2 of ``profile_sets.yaml``): each aspect's pick with its cost per 1,000 pairs, its sentence-level
Pearson r on each set (rows used in brackets), its mean gain over the fast profile's column, and that column with
its cost.  ``python -m benchmarks.evidence.profile`` prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tsteval.core import markdown as md
from tsteval.metaeval.study.page import cell

RESULTS = Path(__file__).resolve().parents[1] / "results" / "evidence"
ASPECTS = ("style", "content", "naturalness")
ALL = "all sets"


def page(aspect: str, results: Path = RESULTS) -> dict:
    """The profile page of ``aspect`` (its study.json)."""
    return json.loads((results / f"profile_{aspect}" / "study.json").read_text(encoding="utf-8"))


def pick(data: dict, aspect: str, group: str = ALL) -> dict:
    """The rule's pick for ``aspect`` on the sets of ``group`` (``all sets``, ``task formality``, ...)."""
    found = next(g for g in data["rule"]["groups"] if g["group"] == group)
    return next(p for p in found["picks"] if p["aspect"] == aspect)


def _sets_cell(data: dict, column: str, aspect: str, labels: list[str]) -> str:
    parts = []
    for info in data["sets"]:
        if info["label"] not in labels:
            continue
        rating = next(r for r, a in info["ratings"].items() if a == aspect)
        row = next(r for r in data["figures"] if r["set"] == info["label"] and r["rating"] == rating
                   and r["column"] == column and r["level"] == "sentence" and r["statistic"] == "pearson")
        parts.append(f"{info['label']} {cell(row['r'], row['lo'], row['hi'])} ({info['counts'][rating]['used']})")
    return "; ".join(parts)


def profile_table(results: Path = RESULTS) -> str:
    """The table (module notes)."""
    rows = []
    for aspect in ASPECTS:
        data = page(aspect, results)
        chosen = pick(data, aspect)
        gain = next((c for c in chosen["columns"] if c["column"] == chosen["chosen"]), None)
        rows.append({"aspect": aspect, "recommended column": chosen["chosen"],
                     "CPU s per 1,000 pairs": _cost(chosen["chosen_cost"]),
                     "sentence r per set [95%] (rows)": _sets_cell(data, chosen["chosen"], aspect, chosen["sets"]),
                     "mean gain over the fast profile [95%]": "the fast profile's column" if gain is None else
                     cell(gain["gain"], gain["lo"], gain["hi"], signed=True),
                     "fast profile (CPU s per 1,000 pairs)": f"{chosen['reference']} "
                                                             f"({_cost(chosen['reference_cost'])})"})
    return md.table(pd.DataFrame(rows)) + "\n"


def _cost(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.1f}"


if __name__ == "__main__":
    print(profile_table(), end="")
