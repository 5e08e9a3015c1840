"""The content benchmark's results page (``benchmarks/results/content_benchmark.md``), rendered from its JSON
(:mod:`benchmarks.studies.content_benchmark` computes it)."""

from __future__ import annotations

TOP = 6  # columns shown per set with their intervals


def _r(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ci(entry: dict, method: str = "spearman") -> str:
    return f"{_r(entry[method])} [{_r(entry[f'{method}_lo'])}, {_r(entry[f'{method}_hi'])}]"


def _mean(entry: dict, method: str = "spearman") -> str:
    return f"{_r(entry[f'mean_{method}'])} [{_r(entry[f'mean_{method}_lo'])}, {_r(entry[f'mean_{method}_hi'])}]"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header(cells: list[str]) -> list[str]:
    return [_row(cells), _row(["---"] * len(cells))]


def _mean_table(columns: dict, names: list[str], sets: list[str], counts: dict[str, int]) -> list[str]:
    """Mean Spearman and Pearson over the six with intervals, then each set's Spearman."""
    lines = _header(["column", "sets", "mean Spearman [95% CI]", "mean Pearson [95% CI]",
                     *(f"{s} (n={counts[s]})" for s in sets)])
    for name in names:
        entry = columns[name]
        lines.append(_row([f"`{name}`", str(entry["sets"]), _mean(entry), _mean(entry, "pearson"),
                           *(_r(entry["per_set"].get(s, {}).get("spearman")) for s in sets)]))
    return lines


def _same_sets_none(columns: dict, name: str, sets: list[str]) -> float | None:
    """The mean Spearman of the unmodified column over the ``sets`` where ``name`` (a modified one) is scored."""
    base = columns.get(name.split("@")[0] + "@none")
    sets = [s for s in sets if s in columns[name]["per_set"]]
    if base is None or not sets:
        return None
    return sum(base["per_set"][s]["spearman"] for s in sets) / len(sets)


def markdown(report: dict) -> str:
    """The page, from the JSON the benchmark writes."""
    columns, sets, pairs = report["columns"], report["sets"], report["pairs"]
    best, rec, aim = report["best"], report["recommended"], report["aim"]
    bleurt = report["published"]["means"]["BLEURT"]
    lines = ["# Content benchmark: tsteval's content columns on the mis_benchmark sets", "",
             "Babakov et al. (2022)'s sets of human content-similarity judgements (`mis_benchmark/datasets`), each "
             "read as a table of transfers (`text1` the input, `text2` the output) and scored by every content "
             "column through the Plan and runner (`python -m benchmarks.studies.content_benchmark`). Spearman and "
             "Pearson with the human mean per pair; intervals: 95% percentile intervals of the project's bootstrap "
             f"clustered by input ({report['resamples']} resamples, seed {report['seed']}); the mean over the six "
             "style-transfer sets with the interval from the sets' independent resamples. A lower-is-better column "
             "(WMD) has its sign flipped. Nothing is fitted on these ratings.", "",
             f"**Best column: `{best['column']}`, mean Spearman {best['mean_spearman']:.3f} over the six**; the "
             f"recommended content column `{rec['column']}` {rec['mean_spearman']:.3f}. Aim: {aim:.2f} "
             f"(gap of the best: {aim - best['mean_spearman']:+.3f}); published BLEURT {bleurt:.3f}.", ""]
    if "compare" in report:
        lines += _compare_summary(report), ""
    lines += ["## Every column scored on all six sets (every pair)", ""]
    lines += _mean_table(columns, report["ranking"], sets, pairs)
    published = report["published"]
    lines += ["", "Published (upstream README, Spearman on 100-pair samples):", ""]
    lines += _header(["measure", "mean", *sets, "yamsh_para"])
    for name, values in published["sets"].items():
        lines.append(_row([name, f"{published['means'][name]:.3f}", *(f"{v:.3f}" for v in values),
                           f"{published['paraphrase'][name]:.3f}"]))
    partial = [c for c in columns if 0 < columns[c]["sets"] < len(sets)]
    if partial:
        lines += ["", "## Style-masked and style-erased columns (the sets whose style has a lexicon and corpus)", ""]
        lines += _header(["column", "sets", "mean Spearman [95% CI]", "same sets, unmodified",
                          *(s for s in sets)])
        for name in sorted(partial, key=lambda c: -columns[c]["mean_spearman"]):
            entry = columns[name]
            lines.append(_row([f"`{name}`", str(entry["sets"]), _mean(entry), _r(_same_sets_none(columns, name, sets)),
                               *(_r(entry["per_set"].get(s, {}).get("spearman")) for s in sets)]))
        lines += ["", "How each set's style was handled:", ""]
        lines += [f"- {name}: {note}" for name, note in report["style_materials"].items()]
    top = report["ranking"][:TOP] + ([rec["column"]] if rec["column"] not in report["ranking"][:TOP] else [])
    lines += ["", f"## Per set, the top {TOP} columns and the recommended one (95% CI)", ""]
    for name in [*sets, *report["paraphrase_sets"]]:
        lines += [f"**{name}** ({pairs[name]} pairs)", ""]
        lines += _header(["column", "Spearman", "Pearson"])
        lines += [_row([f"`{c}`", _ci(columns[c]["per_set"][name]), _ci(columns[c]["per_set"][name], "pearson")])
                  for c in top if name in columns[c]["per_set"]]
        lines.append("")
    if "lm" in report:
        lines += _lm_section(report, "lm", "## LM columns on a seeded sample of each set (SmolLM2-135M)",
                             "judge_content (template 1) and cond_lp (template 3), as the rated meta-evaluation "
                             "scores them, and LogProp's content score (bfloat16). The non-LM columns beside, on the "
                             "same pairs.")
    if "compare" in report:
        lines += _lm_section(report, "compare", "## judge_content with a bigger model (the same pairs)",
                             f"judge_content (template 1) of {', '.join(report['compare']['models'])} on the "
                             "first pairs of each set's LM sample: what a bigger model behind `--lm-endpoint` would "
                             "change, "
                             "measured on the packaged ones.")
    lines += _published_section(report)
    return "\n".join(lines).rstrip() + "\n"


def _lm_section(report: dict, stage: str, title: str, intro: str) -> list[str]:
    part = report[stage]
    columns, pairs = part["columns"], part["pairs"]
    sets = [s for s in report["sets"] if s in pairs]
    lm = [c for c in columns if "@" in c and c.split("@")[1].startswith(("smollm2", "gemma", "qwen"))]
    names = sorted(lm, key=lambda c: -(columns[c].get("mean_spearman") or -9))
    others = [report["recommended"]["column"], report["best"]["column"]]
    names += [c for c in dict.fromkeys(others) if c in columns and c not in names]
    lines = [title, "", f"{intro} Pairs per set: {', '.join(f'{s} {n}' for s, n in pairs.items())}.", ""]
    lines += _mean_table(columns, names, sets, pairs)
    extra = [s for s in pairs if s not in report["sets"]]
    if extra:
        lines += ["", "Paraphrase set:", ""]
        lines += _header(["column", *(f"{s} Spearman (n={pairs[s]})" for s in extra)])
        lines += [_row([f"`{c}`", *(_ci(columns[c]["per_set"][s]) if s in columns[c]["per_set"] else "–"
                                    for s in extra)]) for c in names]
    return [*lines, ""]


def _compare_summary(report: dict) -> str:
    columns = report["compare"]["columns"]
    judged = {c: columns[c]["mean_spearman"] for c in columns if c.startswith("judge_content@")}
    recommended = columns[report["recommended"]["column"]]["mean_spearman"]
    cells = ", ".join(f"`{c}` {v:.3f}" for c, v in sorted(judged.items(), key=lambda kv: -kv[1]))
    n = sum(report["compare"]["pairs"].get(s, 0) for s in report["sets"])
    top, value = max(judged.items(), key=lambda kv: kv[1])
    reaches = report["best"]["mean_spearman"] >= report["aim"]
    verdict = (f"The best judge, `{top}`, is {value - recommended:+.3f} from `{report['recommended']['column']}` on "
               f"those pairs: {'it' if value > recommended else 'no packaged model'} beats the embedding cosine "
               "there.")
    largest = report["compare"]["models"][-1]  # the models in order of size
    if top.startswith(f"judge_content@{largest}"):
        verdict += (f" The judge is best with the largest packaged model, {largest} (the smaller ones: "
                    f"{', '.join(f'{v:.3f}' for c, v in judged.items() if c != top)}): a larger model behind "
                    "`--lm-endpoint` is the measure to try" + ("." if reaches else ", not one measured here to "
                                                                "reach the aim."))
    return (f"{'The aim is reached.' if reaches else 'No column that runs here reaches the aim.'} On the same {n} "
            f"pairs ({report['compare']['target_pairs']} a set), judge_content's mean Spearman by model: {cells}; "
            f"`{report['recommended']['column']}` {recommended:.3f}. {verdict}")


def _published_section(report: dict) -> list[str]:
    comparison = report["published_comparison"]
    lines = ["## Our BLEU and chrF against the published ones", "",
             "Upstream scored `df.sample(100, random_state=1)` of each set with `sacrebleu` corpus BLEU and chrF of "
             "one pair, **`text1` as the hypothesis and `text2` as the reference** (their `rank_metrics.py`; 13a "
             "tokenisation, exponential smoothing, no effective order). tsteval scores `text2` (the output) against "
             "`text1` (the input) with its own tokenisation (lower-cased) and sentence BLEU's effective order; chrF "
             "weighs recall twice (beta 2), so the direction matters. Columns: the published figure; upstream's "
             "computation recomputed here on upstream's sample; ours on that sample; ours on the whole set; ours on "
             f"{report['samples_100']:,} random 100-pair samples (median and 95% range).", ""]
    lines += _header(["set", "metric", "published", "upstream recomputed", "ours, same sample", "ours, whole set",
                      "ours, 100-pair samples: median [2.5%, 97.5%]"])
    for name in report["sets"]:
        for metric, entry in comparison[name].items():
            lines.append(_row([name, metric, _r(entry["published"]), _r(entry["upstream_recomputed"]),
                               _r(entry["ours_upstream_sample"]), _r(entry["ours_full"]),
                               f"{_r(entry['ours_100_p50'])} [{_r(entry['ours_100_p2.5'])}, "
                               f"{_r(entry['ours_100_p97.5'])}]"]))
    entries = [e for name in report["sets"] for e in comparison[name].values()]
    gap = lambda a, b: max(abs(e[a] - e[b]) for e in entries)  # noqa: E731
    mean_gap = lambda a, b: sum(abs(e[a] - e[b]) for e in entries) / len(entries)  # noqa: E731
    width = sum(e["ours_100_p97.5"] - e["ours_100_p2.5"] for e in entries) / len(entries)
    lines += ["", "Upstream's computation on upstream's sample is at most "
              f"{gap('published', 'upstream_recomputed'):.3f} from the published figure ({len(entries)} figures); "
              "ours on the same sample differ from it by "
              f"{mean_gap('published', 'ours_upstream_sample'):.3f} on average (at most "
              f"{gap('published', 'ours_upstream_sample'):.3f}), and ours on the whole set by "
              f"{mean_gap('published', 'ours_full'):.3f} on average. A 100-pair sample's 95% range of our Spearman is "
              f"{width:.3f} wide on average: one sample of 100 pairs fixes a set's figure only to about "
              f"±{width / 2:.2f}."]
    lines += ["", "From upstream's computation to ours, step by step, on the whole set (Spearman): upstream's "
              "(`text1` the hypothesis); reversed (`text2` the hypothesis, still 13a and a one-pair corpus score); "
              "for BLEU also sentence BLEU's effective order; then ours (tsteval's tokenisation, which also "
              "lower-cases: chrF too is case-blind here).", ""]
    lines += _header(["set", "metric", "upstream", "reversed", "reversed, effective order", "ours"])
    for name in report["sets"]:
        for metric, entry in comparison[name].items():
            lines.append(_row([name, metric, _r(entry["full_upstream"]), _r(entry["full_reversed"]),
                               _r(entry.get("full_reversed, effective order")), _r(entry["ours_full"])]))
    return [*lines, ""]
