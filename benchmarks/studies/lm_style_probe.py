"""Can a small causal LM score style without a trained classifier?  A zero-shot probe on the two rated datasets.

The probe: SmolLM2-135M-Instruct (the packaged ``smollm2``) reads each output after a prompt naming a style, once
with the target style s and once with the source style r, and the score is the mean over the output's tokens of

    ln P(y_t | prompt(s), y_<t) - ln P(y_t | prompt(r), y_<t),

by Bayes' rule the per-token log-odds of s against r given the output, with equal priors (a language model as a
noisy-channel classifier; it needs the styles' names only).  The prompts are the three style-alone ("marginal")
prompts of ``cond_lp`` in ``harness/metrics/judges/templates.yaml``, written before any correlation was computed
and not changed since.  Protocol, as for the LM judges: every template is scored on Lai et al. (2022, formality),
the best at sentence level is chosen there, and only that one is scored on Mir et al. (2019, sentiment) to
confirm.  Each is judged against the style baseline of the meta-evaluation, ``target_prob@fasttext`` (trained as
:mod:`tsteval.metaeval.rated.datasets` trains it), with the same clustered bootstrap (by input) and verdict.

It is not a registered metric: it would earn a place only by beating the baseline on both datasets.

Run: ``python -m benchmarks.studies.lm_style_probe`` (about 20 minutes on the 2-core machine); writes
``benchmarks/results/lm_style_probe.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES

RESULTS = Path(__file__).resolve().parents[1] / "results"
BASELINE = "target_prob@fasttext"
RATING = {"lai": "human_style", "mir": "human_style_intensity"}


def style_log_odds(outputs: Sequence[str], targets: Sequence[str], sources: Sequence[str], lm: object,
                   template: dict[str, object]) -> np.ndarray:
    """The per-token log-odds of the target against the source style of each output under ``template``'s
    style-alone prompt (``marginal``)."""
    from tsteval.metrics.judges.cond_lp import continuations, mean_log_probs
    from tsteval.metrics.judges.prompts import fill, render_many

    chat = bool(template.get("chat", False))
    conts = continuations(lm, outputs, chat)
    target, source = (render_many(lm, [fill(str(template["marginal"]), input="", output="", style=s, source="")
                                       for s in styles], chat) for styles in (targets, sources))
    return mean_log_probs(lm, target, conts) - mean_log_probs(lm, source, conts)


def _baseline(name: str, transfers: object) -> np.ndarray:
    """``target_prob@fasttext`` of the rated transfers, with the classifier trained as the meta-evaluation trains
    it (on the style view the meta-evaluation scores for Lai)."""
    from tsteval.experiment.manifest.loader import ClassifierSpec
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run
    from tsteval.metaeval.rated.datasets import dualrl_form, lai_training_corpus
    from tsteval.readers.yelp import load_yelp_corpus

    if name == "lai":
        corpus, view = lai_training_corpus(transfers)[0], dualrl_form(transfers)
    else:
        corpus, view = load_yelp_corpus(exclude=set(transfers.frame["input"])), transfers
    spec = ClassifierSpec("fasttext", "fasttext", {}, heldout=0.1)
    card = run(Plan(view, classifiers={"fasttext": spec}, corpus=corpus, seed=0))
    return card.frame[BASELINE].to_numpy(float)


def probe(name: str, which: Sequence[int], resamples: int) -> dict:
    """The probe's columns (templates ``which``, numbered from 1) and the baseline on dataset ``name``,
    meta-evaluated at sentence level (Pearson)."""
    from tsteval.metaeval.engine import meta_evaluate_frame
    from tsteval.metaeval.tables import MetricColumn, Rating
    from tsteval.metrics.judges.prompts import chosen_templates
    from tsteval.metrics.judges.scorer import lm_texts
    from tsteval.metrics.naturalness.causal_lm import CausalLM
    from tsteval.readers.lai import load_lai
    from tsteval.readers.mir import load_mir
    from tsteval.scorecard import Scorecard

    transfers = load_lai() if name == "lai" else load_mir()
    frame = transfers.frame.reset_index(drop=True)
    labels = transfers.extra.get("style_labels", {})
    targets = [labels.get(str(s), str(s)) for s in frame["target_style"]]
    sources = [labels.get(str(s), str(s)) for s in frame["source_style"]]
    _, outputs, form = lm_texts(Scorecard(frame), "auto")
    lm = CausalLM("smollm2", threads=2, precision="fp32")
    start = time.process_time()
    columns = {}
    for k, template in zip(which, chosen_templates("cond_lp", which), strict=True):
        columns[f"style_lp@smollm2-t{k}"] = style_log_odds(outputs, targets, sources, lm, template)
    cpu = time.process_time() - start
    scored = frame.assign(**columns, **{BASELINE: _baseline(name, transfers)})
    result = meta_evaluate_frame(scored, [MetricColumn(c, "style", True) for c in [*columns, BASELINE]],
                                 [Rating(RATING[name], "style")], baselines={"style": BASELINE},
                                 n_resamples=resamples, methods=("pearson",))
    table = result.table[result.table["level"] == "sentence"].set_index("metric")
    versus = result.baseline[result.baseline["level"] == "sentence"].set_index("metric")
    rows = [{"metric": c, "r": table.loc[c, "r"], "lo": table.loc[c, "lo"], "hi": table.loc[c, "hi"],
             **({"diff": versus.loc[c, "diff"], "diff_lo": versus.loc[c, "lo"], "diff_hi": versus.loc[c, "hi"],
                 "verdict": versus.loc[c, "verdict"]} if c in versus.index else {})}
            for c in [*columns, BASELINE]]
    return {"dataset": name, "rating": RATING[name], "rows": len(frame), "text_form": form,
            "styles": sorted(set(targets) | set(sources)), "lm_cpu_seconds": round(cpu, 1),
            "columns": [{k: (round(float(v), 4) if isinstance(v, float | np.floating) else v) for k, v in r.items()}
                        for r in rows]}


def chosen(lai: dict) -> int:
    """The template with the highest sentence-level Pearson on Lai (the one Mir confirms or not)."""
    best = max((c for c in lai["columns"] if c["metric"] != BASELINE), key=lambda c: c["r"])
    return int(best["metric"].rsplit("-t", 1)[1])


def markdown(report: dict) -> str:
    """The result page."""
    lines = ["# A small LM as a zero-shot style scorer (not a registered metric)", "",
             "SmolLM2-135M-Instruct's per-token log-odds of the target against the source style of each output, "
             "under the three style-alone prompts of `cond_lp` (`python -m benchmarks.studies.lm_style_probe`; see its "
             "docstring). Every template scored on Lai, the best there (template "
             f"{report['chosen']}) scored on Mir to confirm. Sentence-level Pearson with 95% intervals from "
             f"{report['resamples']} bootstrap resamples clustered by input; the difference is with the "
             f"meta-evaluation's style baseline `{BASELINE}`.", ""]
    for part in report["datasets"]:
        lines += [f"## {part['dataset']} (`{part['rating']}`, {part['rows']} outputs, styles "
                  f"{', '.join(part['styles'])}, text {part['text_form']}; LM {part['lm_cpu_seconds']} CPU-s)", "",
                  "| column | r [95%] | difference with the baseline [95%] | verdict |", "|---|---|---|---|"]
        for c in part["columns"]:
            diff = f"{c['diff']:+.3f} [{c['diff_lo']:+.3f}, {c['diff_hi']:+.3f}]" if "diff" in c else "(baseline)"
            lines.append(f"| `{c['metric']}` | {c['r']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}] | {diff} | "
                         f"{c.get('verdict', '')} |")
        lines.append("")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=N_RESAMPLES)
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    lai = probe("lai", [1, 2, 3], args.resamples)
    k = chosen(lai)
    mir = probe("mir", [k], args.resamples)
    report = {"resamples": args.resamples, "chosen": k, "datasets": [lai, mir]}
    (args.out / "lm_style_probe.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "lm_style_probe.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    pd.set_option("display.width", 200)
    main()
