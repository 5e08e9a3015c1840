"""The three-LM meta-evaluation and the recommended profile chosen by the rule fixed before it.

SmolLM2, Gemma 3 270M and Qwen2.5-Coder-1.5B score their LM columns (``lp_mean``, ``slor``, ``ppl``,
``logprop_content``, ``logprop_style``, the judges) on a seeded subset of inputs of each rated dataset
(:mod:`tsteval.metaeval.rated.lm_subset`), meta-evaluated against the aspects' baselines (``baseline.csv``) and against
the current recommendations (``recommendation.csv``); :mod:`tsteval.metaeval.profile_rule` then decides the profile
(``profile.json``, ``profile.md``).  Writes ``benchmarks/results/meta_eval_lm/``.

Run: ``python -m benchmarks.studies.meta_eval_lm [--dataset lai|mir] [--inputs 24] [--models smollm2,...]`` (about
an hour on the 2-core machine; the rule is applied to whatever both datasets' folders hold).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from tsteval.metaeval.profile_rule import Z, choose, pooled_differences
from tsteval.metaeval.rated.datasets import DATASETS, LAI_RATINGS, MIR_RATINGS
from tsteval.metaeval.rated.lm_subset import LANGUAGE_MODELS, PRECISION, RULE_RECOMMENDATIONS, SUBSET_INPUTS, lm_tables

RESULTS = Path(__file__).resolve().parents[1] / "results" / "meta_eval_lm"
FULL = Path(__file__).resolve().parents[1] / "results" / "meta_eval"  # every rated row (benchmarks.studies.meta_eval)
RATED = {r.column for r in (*MIR_RATINGS, *LAI_RATINGS)}  # each aspect's rating (Lai's content vs the input)


def apply_rule(out: Path) -> dict:
    """The rule on the committed ``recommendation.csv`` of both datasets: the profile and every pooled difference."""
    tables = {name: pd.read_csv(out / name / "recommendation.csv") for name in DATASETS}
    # the recommendations the tables were compared with (what the rule reads), not today's RECOMMENDED
    compared = pd.concat(tables.values())[["aspect", "baseline"]].drop_duplicates()
    current = {aspect: compared[compared["aspect"] == aspect]["baseline"].iloc[0]
               for aspect in RULE_RECOMMENDATIONS if aspect in set(compared["aspect"])}
    pooled = sorted(pooled_differences(tables), key=lambda p: (p.aspect, -p.diff))
    return {"current": current, "chosen": choose(tables, current), "z": Z,
            "pooled": [{"metric": p.metric, "aspect": p.aspect, "recommendation": p.recommendation,
                        "diff": p.diff, "lo": p.diff - Z * p.se, "hi": p.diff + Z * p.se, "qualifies": p.qualifies,
                        **{f"{name}_diff": v[0] for name, v in p.per_dataset.items()},
                        **{f"{name}_lo": v[1] for name, v in p.per_dataset.items()},
                        **{f"{name}_hi": v[2] for name, v in p.per_dataset.items()}} for p in pooled]}


def profile_page(profile: dict) -> str:
    """``profile.md``: the chosen profile and each aspect's pooled differences."""
    lines = ["# The recommended profile by the rule (README: \"Which column is recommended\")", "",
             "| aspect | current | chosen |", "|---|---|---|"]
    lines += [f"| {aspect} | `{column}` | `{profile['chosen'][aspect]}` |"
              for aspect, column in profile["current"].items()]
    lines += ["", "Sentence-level Pearson difference from the current recommendation, per dataset and pooled by "
              "inverse variance (95% intervals):", "",
              "| aspect | column | Mir | Lai | pooled | qualifies |", "|---|---|---|---|---|---|"]
    for p in profile["pooled"]:
        cells = [f"{p[f'{d}_diff']:+.3f} [{p[f'{d}_lo']:+.3f}, {p[f'{d}_hi']:+.3f}]" for d in ("mir", "lai")]
        lines.append(f"| {p['aspect']} | `{p['metric']}` | {cells[0]} | {cells[1]} | {p['diff']:+.3f} "
                     f"[{p['lo']:+.3f}, {p['hi']:+.3f}] | {'yes' if p['qualifies'] else 'no'} |")
    return "\n".join(lines) + "\n"


def evidence_rows(out: Path, models: list[str], metrics: tuple[str, ...] = ()) -> list[dict]:
    """Every LM column of ``models`` (only those of ``metrics`` when given) against its aspect's baseline on both
    datasets of ``out`` (sentence-level Pearson, each aspect's rating of :data:`RATED`)."""
    rows = []
    for name in DATASETS:
        base = pd.read_csv(out / name / "baseline.csv")
        table = pd.read_csv(out / name / "metaeval.csv")
        part = base[(base["level"] == "sentence") & (base["method"] == "pearson")]
        for row in part.itertuples():
            metric, _, model = row.metric.partition("@")
            if model.split("-t")[0] not in models or (metrics and metric not in metrics) or row.rating not in RATED:
                continue
            r = table[(table["metric"] == row.metric) & (table["rating"] == row.rating)
                      & (table["level"] == "sentence") & (table["method"] == "pearson")].iloc[0]
            rows.append({"dataset": name, "metric": row.metric, "aspect": row.aspect, "rating": row.rating,
                         "r": r["r"], "lo": r["lo"], "hi": r["hi"], "baseline": row.baseline,
                         "r_baseline": row.r_baseline, "diff": row.diff, "diff_lo": row.lo, "diff_hi": row.hi,
                         "verdict": row.verdict})
    return rows


def evidence_page(rows: list[dict]) -> str:
    """``evidence.md``: one line per LM column and dataset (the README's evidence table is taken from it)."""
    lines = ["# Every LM column against its aspect's baseline (sentence-level Pearson, 95% clustered intervals)", "",
             "| aspect | column | dataset | r | baseline (r) | difference | verdict |", "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["aspect"], r["metric"], r["dataset"])):
        lines.append(f"| {r['aspect']} | `{r['metric']}` | {r['dataset']} | {r['r']:.3f} [{r['lo']:.3f}, "
                     f"{r['hi']:.3f}] | `{r['baseline']}` ({r['r_baseline']:.3f}) | {r['diff']:+.3f} "
                     f"[{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}] | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def readme_table(rows: list[dict]) -> str:
    """The README's evidence table: one line per LM column, Mir and Lai side by side (from :func:`evidence_rows`)."""
    verdict = {"yes": "yes", "no": "**worse**", "not significant": "n.s."}
    by = {(r["metric"], r["dataset"]): r for r in rows}
    lines = ["| column | aspect | Mir r | vs baseline on Mir | Lai r | vs baseline on Lai |",
             "|---|---|---|---|---|---|"]
    for metric, aspect in sorted({(r["metric"], r["aspect"]) for r in rows}, key=lambda m: (m[1], m[0])):
        cells = []
        for name in ("mir", "lai"):
            r = by[(metric, name)]
            cells += [f"{r['r']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]",
                      f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}] {verdict[r['verdict']]}"]
        lines.append(f"| `{metric}` | {aspect} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def profile_table(out: Path = RESULTS) -> str:
    """The README's profile table: each aspect's recommended column (``profile.json``), its sentence-level Pearson r
    with the aspect's rating on both datasets of ``out`` and its pooled difference from the column it replaced."""
    profile = json.loads((out / "profile.json").read_text())
    pooled = {(p["aspect"], p["metric"]): p for p in profile["pooled"]}
    rated = {name: {r.aspect: r.column for r in ratings} for name, ratings in (("mir", MIR_RATINGS),
                                                                                ("lai", LAI_RATINGS))}
    lines = ["| aspect | recommended column | Mir r [95%] | Lai r [95%] | pooled gain over the previous choice |",
             "|---|---|---|---|---|"]
    for aspect, column in profile["chosen"].items():
        cells = []
        for name in DATASETS:
            table = pd.read_csv(out / name / "metaeval.csv")
            r = table[(table["metric"] == column) & (table["rating"] == rated[name][aspect])
                      & (table["level"] == "sentence") & (table["method"] == "pearson")].iloc[0]
            cells.append(f"{r['r']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]")
        previous = profile["current"][aspect]
        p = pooled.get((aspect, column))
        gain = (f"{p['diff']:+.3f} [{p['lo']:+.3f}, {p['hi']:+.3f}] over `{previous}`" if p else
                "kept: no column qualified")
        lines.append(f"| {aspect} | `{column}` | {cells[0]} | {cells[1]} | {gain} |")
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=DATASETS, action="append", help="default: both")
    parser.add_argument("--models", default=",".join(LANGUAGE_MODELS), help="comma-separated causal LMs")
    parser.add_argument("--inputs", type=int, default=SUBSET_INPUTS, help="inputs in the seeded subset")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--rule-only", action="store_true", help="score nothing: apply the rule to --out's tables")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    for name in [] if args.rule_only else args.dataset or DATASETS:
        start = time.perf_counter()
        run, against = lm_tables(name, models, inputs=args.inputs, seed=args.seed, n_resamples=args.resamples,
                                 threads=args.threads)
        seconds = round(time.perf_counter() - start, 1)
        target = args.out / name
        notes = {**run.notes, "seconds": seconds, "rows": len(run.card.frame), "metrics": run.card.metrics,
                 "language_models": models, "precision": {m: PRECISION.get(m, "fp32") for m in models}}
        run.result.write(target, overwrite=True, title=f"Three-LM meta-evaluation on the {name} ratings (subset)",
                         notes=notes)
        against.baseline.to_csv(target / "recommendation.csv", index=False)
        print(f"{name}: written to {target} in {seconds:.0f} s")
    if all((args.out / name / "recommendation.csv").is_file() for name in DATASETS):
        profile = apply_rule(args.out)
        (args.out / "profile.json").write_text(json.dumps(profile, indent=1) + "\n", encoding="utf-8")
        (args.out / "profile.md").write_text(profile_page(profile), encoding="utf-8")
        evidence = evidence_rows(args.out, list(LANGUAGE_MODELS))
        (args.out / "evidence.md").write_text(evidence_page(evidence), encoding="utf-8")
        print(profile_page(profile))


if __name__ == "__main__":
    main()
