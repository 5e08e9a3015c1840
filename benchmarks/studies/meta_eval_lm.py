"""The three-LM meta-evaluation on every rated set of the rule, and the recommended profile chosen by the rule fixed
before it: pooled over the four sets, and per task family.

SmolLM2, Gemma 3 270M and Qwen2.5-Coder-1.5B score their LM columns (``lp_mean``, ``slor``, ``ppl``,
``logprop_content``, ``logprop_style``, the judges) on every input of each rated set of :data:`RULE_SETS`, or a
seeded sample of :data:`~tsteval.metaeval.rated.lm_subset.SUBSET_INPUTS` inputs where a set has more
(:mod:`tsteval.metaeval.rated.lm_subset`), beside the style classifiers, the content columns and the Kneser-Ney
trigram; each set is meta-evaluated against the aspects' baselines (``baseline.csv``) and against the
recommendations the rule was fixed against (``recommendation.csv``).  The content sets of Babakov et al.
(:data:`CONTENT_SETS`) add the non-LM content columns on every pair.  :mod:`tsteval.metaeval.profile_rule` then
decides the profile on the four sets pooled (``profile.json``, ``profile.md``), checks the content pick on the four
plus the content sets, and applies the same rule to each task family's sets (:data:`FAMILIES`): a family's pick is
offered as ``--metrics recommended:FAMILY`` only where it is significantly better than the pooled pick on the
family's own sets.  Writes ``benchmarks/results/meta_eval_lm/``; each LM's scores and each set's scorecard are
cached under ``runs/meta_eval_lm/``, so a rerun scores only what is missing.

Run: ``python -m benchmarks.studies.meta_eval_lm [--dataset NAME ...] [--inputs 100] [--models smollm2,...]``
(``make meta-eval``; about two and a half hours on the 2-core machine from nothing, Qwen2.5-Coder-1.5B most of it;
``--rule-only`` applies the rule to what the folders hold).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core import markdown as md
from tsteval.metaeval.engine import meta_evaluate
from tsteval.metaeval.profile_rule import Z, choose, pooled_differences
from tsteval.metaeval.rated.card_cache import load_cached, save_cached
from tsteval.metaeval.rated.datasets import ratings_of
from tsteval.metaeval.rated.lm_subset import (
    LANGUAGE_MODELS,
    PRECISION,
    RULE_RECOMMENDATIONS,
    SUBSET_INPUTS,
    content_set_tables,
    lm_tables,
)
from tsteval.readers.rated_sets import rated_set
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results" / "meta_eval_lm"
FULL = Path(__file__).resolve().parents[1] / "results" / "meta_eval"  # every rated row (benchmarks.studies.meta_eval)
CACHE = Path(__file__).resolve().parents[2] / "runs" / "meta_eval_lm"  # each LM's columns and each set's scorecard
# The rated sets the rule pools: sentiment (Mir), formality (Lai), toxicity (Tox600, CAE-T5).
RULE_SETS = ("mir", "lai", "tox600", "cae_t5")
# The content-pair sets of style transfer (Babakov et al. 2022) that rate other outputs than the rule's sets
# (content_cae and content_tox600 are CAE-T5's and Tox600's outputs, rated again: left out, not counted twice).
CONTENT_SETS = ("content_pg_yelp", "content_yamsh_bible", "content_yamsh_gyafc", "content_yamsh_yelp")
# The task family of a content set's style transfer (yamsh_bible, Bible versions, is none of them: pooled only).
CONTENT_FAMILY = {"content_pg_yelp": "sentiment", "content_yamsh_yelp": "sentiment",
                  "content_yamsh_gyafc": "formality"}
LABELS = {"mir": "Mir", "lai": "Lai", "tox600": "Tox600", "cae_t5": "CAE-T5", "content_pg_yelp": "PG_YELP",
          "content_yamsh_bible": "yamsh_bible", "content_yamsh_gyafc": "yamsh_gyafc",
          "content_yamsh_yelp": "yamsh_yelp"}


# Issue 46: every input of a set, or this many where it has more, before the rule's pick becomes the profile.
COMPLETE_INPUTS = 100


def distinct_inputs(name: str) -> int:
    """How many distinct inputs rated set ``name`` has."""
    from tsteval.readers.rated import read_rated_set

    return read_rated_set(name).frame["input"].nunique()


def families(sets: Sequence[str] = RULE_SETS) -> dict[str, tuple[str, ...]]:
    """The task families of ``sets`` (each declaration's ``task``), each with its sets.

    >>> families()
    {'sentiment': ('mir',), 'formality': ('lai',), 'toxicity': ('tox600', 'cae_t5')}
    """
    out: dict[str, tuple[str, ...]] = {}
    for name in sets:
        task = rated_set(name).task
        out[task] = (*out.get(task, ()), name)
    return out


FAMILIES = families()


def primary_ratings(name: str) -> dict[str, str]:
    """Aspect -> the rating column of rated set ``name`` the rule reads (each aspect's first)."""
    return {r.aspect: r.column for r in ratings_of(rated_set(name), primary=True)}


def _tables(out: Path, sets: Sequence[str], file: str = "recommendation.csv") -> dict[str, pd.DataFrame]:
    return {name: pd.read_csv(out / name / file) for name in sets}


def _row(p: object) -> dict:
    return {"metric": p.metric, "aspect": p.aspect, "recommendation": p.recommendation, "diff": p.diff,
            "lo": p.diff - Z * p.se, "hi": p.diff + Z * p.se, "qualifies": p.qualifies,
            **{f"{name}_diff": v[0] for name, v in p.per_dataset.items()},
            **{f"{name}_lo": v[1] for name, v in p.per_dataset.items()},
            **{f"{name}_hi": v[2] for name, v in p.per_dataset.items()}}


def card_key(name: str, notes: dict) -> dict:
    """What a set's cached scorecard is kept under: the set and the rows its table was scored on (``notes.json``)."""
    return {"set": name, "inputs": notes["inputs"], "rows": notes["subset_rows"], "seed": notes["seed"]}


def load_card(cache: Path, out: Path, name: str) -> Scorecard | None:
    """Set ``name``'s scorecard as :func:`main` cached it for the table in ``out``; None when the cache holds none
    for those rows."""
    notes = json.loads((out / name / "notes.json").read_text(encoding="utf-8"))
    found = load_cached(cache / name / "card", None, card_key(name, notes))
    return found[0] if found else None


def family_comparison(cards: dict[str, Scorecard], chosen: dict[str, str], pick: str, aspect: str,
                      seed: int = 0, n_resamples: int = N_RESAMPLES) -> dict:
    """``pick`` against the pooled profile's column of ``aspect`` (``chosen``) on each of ``cards``' sets, pooled by
    the rule: is the family's pick significantly better than the pooled one on the family's own sets?"""
    tables = {}
    for name, card in cards.items():
        rating = primary_ratings(name)[aspect]
        result = meta_evaluate(card, [r for r in ratings_of(rated_set(name), primary=True) if r.column == rating],
                               baselines={rating: chosen[aspect]}, n_resamples=n_resamples, seed=seed)
        tables[name] = result.baseline
    found = [p for p in pooled_differences(tables) if p.metric == pick and p.aspect == aspect]
    return _row(found[0]) | {"significant": found[0].qualifies}


def apply_rule(out: Path, cache: Path | None = CACHE, sets: Sequence[str] = RULE_SETS,
               content_sets: Sequence[str] = CONTENT_SETS) -> dict:
    """The rule on the ``recommendation.csv`` of ``sets`` (and, for content, of ``content_sets`` too, where ``out``
    holds them): the profile and every pooled difference; each task family's pick on the family's sets, and where it
    differs from the pooled one, whether it is significantly better there (scored from ``cache``'s scorecards)."""
    tables = _tables(out, sets)
    # the recommendations the tables were compared with (what the rule reads), not today's RECOMMENDED
    compared = pd.concat(tables.values())[["aspect", "baseline"]].drop_duplicates()
    current = {aspect: compared[compared["aspect"] == aspect]["baseline"].iloc[0]
               for aspect in RULE_RECOMMENDATIONS if aspect in set(compared["aspect"])}
    pooled = sorted(pooled_differences(tables), key=lambda p: (p.aspect, -p.diff))
    rated_only = choose(tables, current)
    present = [name for name in content_sets if (out / name / "recommendation.csv").is_file()]
    notes = {name: json.loads((out / name / "notes.json").read_text()) for name in (*sets, *present)}
    profile = {"sets": {name: {"inputs": notes[name]["inputs"], "rows": notes[name]["subset_rows"],
                               "needed": min(COMPLETE_INPUTS, distinct_inputs(name))} for name in (*sets, *present)},
               "current": current, "chosen": dict(rated_only), "rated_sets_only": rated_only, "z": Z,
               "pooled": [_row(p) for p in pooled]}
    content_tables = {**tables, **_tables(out, present)}
    if present:  # content is pooled over the content sets too: the columns scored on all of them
        profile["chosen"]["content"] = choose(content_tables, {"content": current["content"]})["content"]
        profile["content"] = {"sets": [*sets, *present],
                              "pooled": [_row(p) for p in sorted(pooled_differences(content_tables),
                                                                 key=lambda p: -p.diff) if p.aspect == "content"]}
    profile["complete"] = all(profile["sets"][n]["inputs"] >= profile["sets"][n]["needed"] for n in sets)
    previous = json.loads((out / "profile.json").read_text()) if (out / "profile.json").is_file() else {}
    profile["in_force"] = (dict(profile["chosen"]) if profile["complete"] else
                           previous.get("in_force", previous.get("chosen", dict(current))))
    chosen = profile["chosen"]
    profile["families"] = {}
    for family, names in families(sets).items():
        own = [n for n in present if CONTENT_FAMILY.get(n) == family]
        picks = choose({name: tables[name] for name in names}, current)
        picks["content"] = choose({n: content_tables[n] for n in (*names, *own)}, current)["content"]
        entry = {"sets": list(names), "content_sets": own, "chosen": picks, "compared": []}
        for aspect in (a for a in current if picks[a] != chosen[a]):
            family_sets = [*names, *own] if aspect == "content" else list(names)
            cards = {n: load_card(cache, out, n) for n in family_sets} if cache is not None else {}
            if cards and all(card is not None for card in cards.values()):
                entry["compared"].append(family_comparison(cards, chosen, picks[aspect], aspect))
            else:  # tables scored before the scorecards were kept: rescore the family's sets to compare
                entry.setdefault("not_compared", []).append(aspect)
        entry["offered"] = {c["aspect"]: c["metric"] for c in entry["compared"] if c["significant"]}
        before = previous.get("families", {}).get(family, {}).get("in_force", {})
        entry["in_force"] = entry["offered"] if profile["complete"] else before  # as the profile: on complete tables
        profile["families"][family] = entry
    return profile


def _cell(p: dict, name: str) -> str:
    if f"{name}_diff" not in p:
        return "—"
    return f"{p[f'{name}_diff']:+.3f} [{p[f'{name}_lo']:+.3f}, {p[f'{name}_hi']:+.3f}]"


def _pooled_rows(pooled: list[dict], sets: Sequence[str], aspect: bool = True) -> pd.DataFrame:
    """One row per pooled difference: its aspect (when ``aspect``), column, per-set cells, pooled cell, verdict."""
    return pd.DataFrame([{**({"aspect": p["aspect"]} if aspect else {}), "column": p["metric"],
                          **{LABELS[n]: _cell(p, n) for n in sets},
                          "pooled": f"{p['diff']:+.3f} [{p['lo']:+.3f}, {p['hi']:+.3f}]",
                          "qualifies": "yes" if p["qualifies"] else "no"} for p in pooled])


def _family_row(family: str, entry: dict, aspect: str, pick: str, pooled_pick: str) -> dict:
    """A task family's pick for ``aspect`` beside the pooled one, and whether it is offered."""
    c = {c["aspect"]: c for c in entry["compared"]}.get(aspect)
    if pick == pooled_pick:
        cell, offered = "the same column", "—"
    elif c is None:
        cell, offered = "not compared: the table was scored before its scorecard was cached", "no"
    else:
        cell, offered = f"{c['diff']:+.3f} [{c['lo']:+.3f}, {c['hi']:+.3f}]", "yes" if c["significant"] else "no"
    return {"family": family, "sets": ", ".join(LABELS[n] for n in (*entry["sets"], *entry["content_sets"])),
            "aspect": aspect, "family's pick": pick, "pooled pick": pooled_pick,
            "family's pick minus pooled pick": cell, "offered": offered}


def profile_page(profile: dict) -> str:
    """``profile.md``: the chosen profile, each aspect's pooled differences, the content check and the families."""
    sets = [name for name in RULE_SETS if name in profile["sets"]]
    lines = ["# The recommended profile by the rule (README: \"Which column is recommended\")", "",
             "Made by `python -m benchmarks.studies.meta_eval_lm`.  Inputs and rows scored per set (every column, the "
             "three LMs' too): " + "; ".join(f"{LABELS[n]} {profile['sets'][n]['inputs']} inputs, "
                                             f"{profile['sets'][n]['rows']} rows" for n in sets) + ".", "",
             md.table(pd.DataFrame([{"aspect": aspect, "when the rule was fixed": column,
                                     "the rule on these tables": profile["chosen"][aspect],
                                     "in force (--metrics recommended)": profile["in_force"][aspect]}
                                    for aspect, column in profile["current"].items()]))]
    if not profile["complete"]:
        short = [f"{LABELS[n]} ({profile['sets'][n]['inputs']} inputs)" for n in sets
                 if profile["sets"][n]["inputs"] < profile["sets"][n]["needed"]]
        lines += ["", f"**Not yet complete**: {', '.join(short)} below every input or {COMPLETE_INPUTS} of them, so "
                  "the profile in force stays as it was; the rule's pick on complete tables replaces it."]
    lines += ["", "Sentence-level Pearson difference from the current recommendation, per set and pooled by "
              "inverse variance (95% intervals clustered by input):", "",
              md.table(_pooled_rows(profile["pooled"], sets))]
    content = profile.get("content")
    if content:
        extra = [n for n in content["sets"] if n not in sets]
        pick, rated = profile["chosen"]["content"], profile["rated_sets_only"]["content"]
        counts = ", ".join(f"{LABELS[n]} {profile['sets'][n]['rows']:,}" for n in extra)
        lines += ["", f"## Content on the content sets too (every pair: {counts})", "",
                  f"Content is pooled over the {len(content['sets'])} sets, over the columns scored on all of them "
                  "(the LM columns are not scored on the content sets: the content benchmark has them on samples). "
                  + (f"The rule picks **`{pick}`** (on the four rated sets alone: `{rated}`)." if pick != rated else
                     f"The rule picks **`{pick}`**, as on the four rated sets alone."), "",
                  md.table(_pooled_rows(content["pooled"], content["sets"], aspect=False))]
    lines += ["", "## Per task family", "",
              "The same rule on each family's sets alone.  Where a family's pick differs from the pooled one, the "
              "family's pick is compared with the pooled pick on the family's sets (the rule's test: pooled "
              "difference above 0 with 95% confidence, worse on no set); only then is it offered as "
              "`--metrics recommended:FAMILY`"
              + ("." if profile["complete"] else ", once the tables are complete, as the profile is (in force now: "
                 + (", ".join(f"{f} {e['in_force']}" for f, e in profile["families"].items() if e["in_force"])
                    or "none") + ")."), "",
              md.table(pd.DataFrame([_family_row(family, entry, aspect, pick, profile["chosen"][aspect])
                                     for family, entry in profile["families"].items()
                                     for aspect, pick in entry["chosen"].items()]))]
    return "\n".join(lines) + "\n"


def evidence_rows(out: Path, models: list[str], metrics: tuple[str, ...] = (),
                  sets: Sequence[str] = RULE_SETS) -> list[dict]:
    """Every LM column of ``models`` (only those of ``metrics`` when given) against its aspect's baseline on each of
    ``sets`` that ``out`` holds (sentence-level Pearson, each aspect's rating the rule reads)."""
    rows = []
    for name in sets:
        if not (out / name / "baseline.csv").is_file():
            continue
        rated = set(primary_ratings(name).values())
        base = pd.read_csv(out / name / "baseline.csv")
        table = pd.read_csv(out / name / "metaeval.csv")
        part = base[(base["level"] == "sentence") & (base["method"] == "pearson")]
        for row in part.itertuples():
            metric, _, model = row.metric.partition("@")
            if model.split("-t")[0] not in models or (metrics and metric not in metrics) or row.rating not in rated:
                continue
            r = table[(table["metric"] == row.metric) & (table["rating"] == row.rating)
                      & (table["level"] == "sentence") & (table["method"] == "pearson")].iloc[0]
            rows.append({"dataset": name, "metric": row.metric, "aspect": row.aspect, "rating": row.rating,
                         "r": r["r"], "lo": r["lo"], "hi": r["hi"], "n": int(r["n"]), "baseline": row.baseline,
                         "r_baseline": row.r_baseline, "diff": row.diff, "diff_lo": row.lo, "diff_hi": row.hi,
                         "verdict": row.verdict})
    return rows


def evidence_page(rows: list[dict]) -> str:
    """``evidence.md``: one line per LM column and set (the docs' evidence table is taken from it)."""
    ordered = sorted(rows, key=lambda r: (r["aspect"], r["metric"], RULE_SETS.index(r["dataset"])))
    return "\n".join([
        "# Every LM column against its aspect's baseline (sentence-level Pearson, 95% clustered intervals)", "",
        md.table(pd.DataFrame([{"aspect": r["aspect"], "column": r["metric"], "set": LABELS[r["dataset"]],
                                "rows": r["n"], "r": f"{r['r']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}]",
                                "baseline (r)": f"{r['baseline']} ({r['r_baseline']:.3f})",
                                "difference": f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}]",
                                "verdict": r["verdict"]} for r in ordered]))]) + "\n"


def readme_table(rows: list[dict]) -> str:
    """The docs' evidence table: one line per LM column, the sets side by side (from :func:`evidence_rows`): r and
    the difference from the aspect's baseline with its verdict."""
    verdict = {"yes": "yes", "no": "worse", "not significant": "n.s."}
    by = {(r["metric"], r["dataset"]): r for r in rows}
    sets = [name for name in RULE_SETS if any(r["dataset"] == name for r in rows)]

    def cells(metric: str, name: str) -> dict[str, str]:
        r = by.get((metric, name))
        return {f"{LABELS[name]} r (rows)": f"{r['r']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] ({r['n']})" if r else "—",
                f"vs baseline on {LABELS[name]}": (f"{r['diff']:+.3f} [{r['diff_lo']:+.3f}, {r['diff_hi']:+.3f}] "
                                                   f"{verdict[r['verdict']]}" if r else "—")}

    columns = sorted({(r["metric"], r["aspect"]) for r in rows}, key=lambda m: (m[1], m[0]))
    return md.table(pd.DataFrame([{"column": metric, "aspect": aspect,
                                   **{k: v for name in sets for k, v in cells(metric, name).items()}}
                                  for metric, aspect in columns])) + "\n"


ANNOTATE = Path(__file__).resolve().parents[2] / "docs" / "annotate.md"
SETS_MARKER = "<!-- generated: benchmarks.studies.meta_eval_lm.rule_sets_phrase() -->"
SETS_END = "<!-- end -->"
# Each rated set of the rule as a phrase names it.
DESCRIBED = {"mir": "Mir et al.'s Yelp sentiment", "lai": "Lai et al.'s GYAFC formality",
             "tox600": "Dale et al.'s Tox600 detoxification", "cae_t5": "Laugier et al.'s CAE-T5 detoxification"}
NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def rule_sets_phrase(out: Path = RESULTS) -> str:
    """How many rated sets the rule pooled for the profile in force (``out``'s ``profile.json``) and which, as
    docs/annotate.md says it (between :data:`SETS_MARKER` and :data:`SETS_END`)."""
    sets = [name for name in RULE_SETS if name in json.loads((out / "profile.json").read_text())["sets"]]
    return f"{NUMBERS[len(sets)]} public rated sets ({', '.join(DESCRIBED[n] for n in sets)})"


def with_phrase(text: str, phrase: str) -> str:
    """``text`` with what stands between :data:`SETS_MARKER` and :data:`SETS_END` replaced by ``phrase``.

    >>> with_phrase(f"on {SETS_MARKER}two sets{SETS_END}.", "four sets")
    'on <!-- generated: benchmarks.studies.meta_eval_lm.rule_sets_phrase() -->four sets<!-- end -->.'
    """
    pattern = re.compile(re.escape(SETS_MARKER) + ".*?" + re.escape(SETS_END))
    if not pattern.search(text):
        raise SystemExit(f"{ANNOTATE.name} has no {SETS_MARKER} ... {SETS_END}")
    return pattern.sub(lambda _: f"{SETS_MARKER}{phrase}{SETS_END}", text, count=1)


def parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=(*RULE_SETS, *CONTENT_SETS), action="append",
                        help="default: all of them")
    parser.add_argument("--models", default=",".join(LANGUAGE_MODELS), help="comma-separated causal LMs")
    parser.add_argument("--inputs", type=int, default=SUBSET_INPUTS, help="inputs in the seeded subset")
    parser.add_argument("--resamples", type=int, default=N_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--cache", type=Path, default=CACHE, help="each LM's columns and each set's scorecard")
    parser.add_argument("--rule-only", action="store_true", help="score nothing: apply the rule to --out's tables")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    for name in [] if args.rule_only else args.dataset or (*RULE_SETS, *CONTENT_SETS):
        start = time.perf_counter()
        if name in CONTENT_SETS:
            run, against = content_set_tables(name, seed=args.seed, n_resamples=args.resamples)
            notes = {}
        else:
            run, against = lm_tables(name, models, inputs=args.inputs, seed=args.seed, n_resamples=args.resamples,
                                     threads=args.threads, cache=args.cache / name)
            notes = {"language_models": models, "precision": {m: PRECISION.get(m, "fp32") for m in models}}
        seconds = round(time.perf_counter() - start, 1)
        target = args.out / name
        notes = {**run.notes, "seconds": seconds, "rows": len(run.card.frame), "metrics": run.card.metrics, **notes}
        run.result.write(target, overwrite=True, title=f"Meta-evaluation on the {LABELS[name]} ratings "
                         f"({notes['inputs']} inputs)", notes=notes)
        against.baseline.to_csv(target / "recommendation.csv", index=False)
        save_cached(args.cache / name / "card", run.card, card_key(name, notes))
        print(f"{name}: written to {target} in {seconds:.0f} s")
    if all((args.out / name / "recommendation.csv").is_file() for name in RULE_SETS):
        profile = apply_rule(args.out, args.cache)
        (args.out / "profile.json").write_text(json.dumps(profile, indent=1) + "\n", encoding="utf-8")
        (args.out / "profile.md").write_text(profile_page(profile), encoding="utf-8")
        evidence = evidence_rows(args.out, list(LANGUAGE_MODELS))
        (args.out / "evidence.md").write_text(evidence_page(evidence), encoding="utf-8")
        if args.out == RESULTS:  # docs/annotate.md names the sets of the committed tables
            ANNOTATE.write_text(with_phrase(ANNOTATE.read_text(encoding="utf-8"), rule_sets_phrase()),
                                encoding="utf-8")
        print(profile_page(profile))


if __name__ == "__main__":
    main()
