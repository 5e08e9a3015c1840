"""What each candidate metric column costs to score: CPU seconds (the process's, every thread) and wall seconds per
1,000 pairs on this machine, for the columns the profile rule chooses among (its ties go to the cheapest column).

Pairs: a seeded sample of Mir et al.'s rated transfers (``read_rated_set("mir").transfers``, rows drawn by
``numpy.random.default_rng(seed).permutation``), ``--pairs`` of them, the Qwen2.5-Coder-1.5B columns the first
``--qwen-pairs`` of those. Every column group is scored by the scorer that scores it in the evidence, through
``tsteval.evaluate`` (fp32, ``--threads`` torch threads, the evidence's human text: a seeded 20,000-text sample of the
Yelp corpus without the rated inputs, for ``kn3`` and SLOR's unigram model). Each group is called three times: cold on
``--warmup-pairs`` pairs (model load, imports), then on the measured pairs, then warm on as many other warm-up pairs
(what every call pays whatever its size: fitting ``kn3`` or SLOR's unigram model on the human text, the cache's sha256
check of a packaged LM's GGUF file, the plan); the warm-up pairs share no input or output text with the measured ones,
so the sentence-embedding cache holds none of them. The figures per 1,000 pairs are the measured call's seconds over its
pairs; ``marginal_cpu_s_per_1000`` leaves the warm call's seconds out. Columns one scorer gives together (a classifier's
five style columns, an LM's ``ppl``/``lp_mean``/``slor``, both LogProp columns) carry that scorer's whole cost each. The
style classifiers are trained on a seeded ``--train-texts`` sample of the same Yelp corpus (the evidence's recipes,
:data:`tsteval.metaeval.rated.datasets.STYLE_CLASSIFIERS`), outside the timed calls: that cost is reported once under
``one_time``, with each LM's GGUF conversion and model load. Everything runs in a fresh temporary cache (``--cache``:
another), so nothing scored earlier is read back, and with ``OMP_WAIT_POLICY=PASSIVE`` (:data:`WAIT_POLICY`), so that on
a shared machine the seconds a thread waits for its descheduled partner are not counted as CPU time.

Run (nice'd, once, alone: about half an hour on a shared 2-core machine): ``nice -n 10 python -m
benchmarks.speed.column_costs [--pairs 200] [--qwen-pairs 40] [--warmup-pairs 4]``.  Results:
the JSON as the package's data, ``harness/metaeval/column_costs.json`` (:data:`tsteval.metaeval.study.rule.COSTS`:
the one copy, which the profile rule reads, in the wheel and in the declarations' ``costs:``), the page
``results/column_costs.md``; with ``--out DIR`` both into DIR (a measurement of another machine); ``--only
SCORER,...`` measures those groups alone and merges them into the JSON, with a note.  ``learned@bi-loso`` is
measured on a bi-encoder saved with no epochs (a bi model's cost does not depend on its weights).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import timed
from tsteval.core.markdown import escape, table
from tsteval.metaeval.rated.datasets import STYLE_CLASSIFIERS
from tsteval.metaeval.rated.lm_subset import (
    JUDGE_TEMPLATES,
    LANGUAGE_MODELS,
    LOGPROP_PRECISION,
    SUBSET_CLASSIFIERS,
)
from tsteval.metaeval.rated.lm_subset import PRECISION as SUBSET_PRECISION
from tsteval.metaeval.study.rule import COSTS
from tsteval.metrics.naturalness.packaged import QWEN_CODER

RESULTS = Path(__file__).resolve().parents[1] / "results"
STYLE_COLUMNS = ("sti", "sti_norm", "target_prob", "style_strength", "target_acc")
LM_SCORES = ("ppl", "lp_mean", "slor")
LOGPROP = ("logprop_content", "logprop_style")
CONTENT = ("bleu", "chrf", "sbert", "bertscore_f1", "e5")
PRECISION = "fp32"
# OpenMP threads that wait sleep instead of spinning: on a shared machine a spinning thread, waiting for its
# descheduled partner, counts the wait as the process's CPU time (unless OMP_WAIT_POLICY is set already).
WAIT_POLICY = "PASSIVE"


@dataclass(frozen=True)
class Group:
    """Columns one scorer gives in one ``tsteval.evaluate`` call: ``metrics`` (its entries), ``columns`` (the
    scorecard's column -> the evidence's name), the run's ``language_model`` and style ``classifier`` (a name of
    :data:`STYLE_CLASSIFIERS`), whether it reads the ``human`` text, and ``loads``: the one-time entry its cold
    call's extra seconds are recorded under (the sentence encoder's load; an LM is loaded and timed before its
    first group)."""

    scorer: str
    metrics: tuple[str, ...]
    columns: dict[str, str]
    language_model: str | None = None
    classifier: str | None = None
    human: bool = False
    loads: str | None = None
    learned: bool = False


def _same(*columns: str) -> dict[str, str]:
    return {c: c for c in columns}


def groups() -> list[Group]:
    """Every column group, in the order they are scored (each LM's groups together: one LM is loaded at a time)."""
    out = [Group(name, (name,), _same(f"{name}@none"), loads="sentence encoder: load" if name == "sbert" else None)
           for name in CONTENT]
    out.append(Group("learned", ("learned",), {"learned@none": "learned@bi-loso"}, learned=True))
    out.append(Group("kn3", ("kn3",), _same(*(f"{f}@kn3" for f in LM_SCORES)), human=True))
    out += [Group(f"classifier {name}", ("sti",), _same(*(f"{c}@{name}" for c in STYLE_COLUMNS)), classifier=name)
            for name in SUBSET_CLASSIFIERS]
    for model in LANGUAGE_MODELS:
        out.append(Group(f"{model} ppl/lp_mean/slor", (f"ppl@{model}",), _same(*(f"{f}@{model}" for f in LM_SCORES)),
                         language_model=model, human=True))
        out.append(Group(f"{model} logprop", LOGPROP, _same(*(f"{f}@{model}" for f in LOGPROP)),
                         language_model=model))
        out += [Group(f"{model} {judge} template {k}", (f"{judge}@{model}:template={k}",),
                      {f"{judge}@{model}": f"{judge}@{model}-t{k}"}, language_model=model)
                for judge, k in JUDGE_TEMPLATES.items()]
    return out


def per_thousand(seconds: float, pairs: int) -> float:
    """Seconds per 1,000 pairs.

    >>> per_thousand(3.0, 200)
    15.0
    """
    return seconds / pairs * 1000


def pair_sample(frame: pd.DataFrame, n: int, warmup: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Row numbers: ``n`` measured pairs (the first of a seeded permutation), then two sets of ``warmup`` pairs
    from the rest, sharing no input or output text with the measured pairs or with each other."""
    order = np.random.default_rng(seed).permutation(len(frame)).tolist()
    measured = order[:n]
    texts = frame["input"].tolist(), frame["output"].tolist()
    used = {t for i in measured for t in (texts[0][i], texts[1][i])}
    warm: list[list[int]] = [[], []]
    for i in order[n:]:
        current = next((w for w in warm if len(w) < warmup), None)
        if current is None:
            break
        if texts[0][i] in used or texts[1][i] in used:
            continue
        current.append(i)
        used |= {texts[0][i], texts[1][i]}
    if min(map(len, warm)) < warmup:
        raise SystemExit(f"only {min(map(len, warm))} warm-up pairs share no text with the {n} measured ones")
    return measured, warm[0], warm[1]


def machine() -> dict[str, object]:
    """The machine the figures are from."""
    import torch

    from tsteval.core.devices import cpu_capability

    names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
             if line.startswith("model name")] if Path("/proc/cpuinfo").is_file() else []
    return {"cores": os.cpu_count(), "cpu": names[0] if names else platform.processor() or platform.machine(),
            "torch_cpu_capability": cpu_capability(), "python": platform.python_version(), "torch": torch.__version__,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "load_average_before": round(os.getloadavg()[0], 2)}


class Bench:
    """The run's pairs, corpus, human text and trained classifiers, and what it has measured so far."""

    def __init__(self, args: argparse.Namespace, log: Callable[[str], None] = print) -> None:
        from benchmarks.common import subsample
        from tsteval.metaeval.rated.datasets import mir_materials
        from tsteval.readers.rated import read_rated_set

        self.machine = machine()  # the load average before anything runs
        self.args, self.log = args, log
        transfers = read_rated_set("mir").transfers
        self.frame, self.labels = transfers.frame, dict(transfers.extra["style_labels"])
        _, corpus, self.human, _ = mir_materials(args.seed, log=lambda _: None)
        self.training = subsample(corpus, args.train_texts, args.seed)
        self.measured, self.warm_a, self.warm_b = pair_sample(self.frame, args.pairs, args.warmup_pairs, args.seed)
        self.classifiers: dict[str, object] = {}
        self.columns: dict[str, dict] = {}
        self.scorers: dict[str, dict] = {}
        self.one_time: dict[str, dict] = {}
        self.learned: str | None = None

    def train(self, name: str) -> None:
        """Train style classifier ``name`` by the evidence's recipe (through the cache, as a run trains it)."""
        from tsteval.classifiers.base import backend_class
        from tsteval.classifiers.training import train_classifier

        backend, params = STYLE_CLASSIFIERS[name]
        quiet = {"verbose": False} if "verbose" in backend_class(backend)._get_param_names() else {}
        trained, wall, cpu = timed(lambda: train_classifier(backend, self.training, {**params, **quiet},
                                                            seed=self.args.seed, heldout=0.1))
        self.classifiers[name] = trained
        self.one_time[f"classifier {name}: training"] = {
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "what": f"training on {len(self.training)} texts ({backend} {params or 'defaults'}, 10% held out)"}

    def prepare(self, model: str) -> None:
        """The packaged LM's GGUF file joined and converted to float32 safetensors in the cache (once per cache),
        then loaded as a run loads it (kept for the process, so the group's calls reuse it)."""
        from tsteval.metrics.naturalness.causal_lm import PACKAGED_GGUF, CausalLM, loaded_lm
        from tsteval.metrics.naturalness.gguf_conversion import converted_gguf

        _, wall, cpu = timed(lambda: converted_gguf(PACKAGED_GGUF[model]()))
        self.one_time[f"{model}: GGUF conversion"] = {
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "what": "GGUF file assembled and converted to float32 safetensors in the cache (once per cache)"}
        loaded_lm.cache_clear()
        _, wall, cpu = timed(lambda: CausalLM(model, device="cpu", threads=self.args.threads, precision=PRECISION))
        self.one_time[f"{model}: model load"] = {
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "what": f"CausalLM({model!r}, precision={PRECISION!r}) built as a run builds it (once per process)"}

    def prepare_learned(self) -> None:
        """A bi-encoder learned metric with no epochs (Lai's pairs, its held-out figure only), in the cache."""
        from tsteval.metrics.learned.learn import train_metric
        from tsteval.metrics.learned.training import Recipe

        folder, wall, cpu = timed(lambda: train_metric("content", None, recipe=Recipe(epochs=0), sets=["lai"],
                                                       log=lambda _m: None))
        self.learned = str(folder)
        self.one_time["learned: train-metric (no epochs)"] = {
            "cpu_s": round(cpu, 3), "wall_s": round(wall, 3),
            "what": "tsteval train-metric content --sets lai --epochs 0 (the base encoder saved, its held-out figure "
                    "computed): the folder the learned column is scored with"}

    def evaluate(self, group: Group, rows: list[int]) -> object:
        """``tsteval.evaluate`` of ``group`` on ``rows``; every column it should give is there and scored."""
        import tsteval

        frame = self.frame.iloc[rows]
        kwargs: dict[str, object] = {"language_model": group.language_model} if group.language_model else {}
        if group.classifier:
            kwargs["classifier"] = {group.classifier: self.classifiers[group.classifier]}
        if group.human:
            kwargs["human"] = self.human
        if group.learned:
            kwargs["learned"] = self.learned
        card = tsteval.evaluate(frame["input"].tolist(), frame["output"].tolist(),
                                source_style=frame["source_style"].astype(str).tolist(),
                                target_style=frame["target_style"].astype(str).tolist(), metrics=list(group.metrics),
                                style_labels=self.labels, threads=self.args.threads, precision=PRECISION,
                                seed=self.args.seed, **kwargs)
        missing = [c for c in group.columns if c not in card.metrics or card.frame[c].isna().all()]
        if missing:
            raise SystemExit(f"{group.scorer}: evaluate gave no {missing[0]} (it gave {card.metrics})")
        return card

    def measure(self, group: Group) -> None:
        """The group's three calls (cold, measured, warm) and its columns' figures."""
        n = self.args.qwen_pairs if group.language_model == QWEN_CODER else self.args.pairs
        rows, w = self.measured[:n], len(self.warm_b)
        calls = {}
        for name, chosen in (("cold_call", self.warm_a), ("measured", rows), ("warm_call", self.warm_b)):
            _, wall, cpu = timed(lambda chosen=chosen: self.evaluate(group, chosen))
            calls[name] = {"pairs": len(chosen), "cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
        cold, measured, warm = calls["cold_call"], calls.pop("measured"), calls["warm_call"]
        texts = set(self.frame["input"].iloc[rows]) | set(self.frame["output"].iloc[rows])
        self.scorers[group.scorer] = {
            "metrics": list(group.metrics), "columns": list(group.columns.values()),
            "language_model": group.language_model, "classifier": group.classifier, "precision": PRECISION,
            "distinct_texts": len(texts), **measured, **calls}
        if group.loads:
            self.one_time[group.loads] = {
                "cpu_s": round(cold["cpu_s"] - warm["cpu_s"], 3), "wall_s": round(cold["wall_s"] - warm["wall_s"], 3),
                "what": f"model load and first-call set-up: the cold call on {w} pairs less the warm call on {w} "
                        "others"}
        cpu, wall = measured["cpu_s"], measured["wall_s"]
        for column in group.columns.values():
            self.columns[column] = {
                "cpu_s_per_1000": round(per_thousand(cpu, n), 2), "wall_s_per_1000": round(per_thousand(wall, n), 2),
                "marginal_cpu_s_per_1000": round(per_thousand(cpu - warm["cpu_s"], n - w), 2),
                "scorer": group.scorer, "pairs_measured": n, "cpu_s": cpu, "wall_s": wall,
                "warm_call_cpu_s": warm["cpu_s"], "warm_call_pairs": w}
        self.log(f"{group.scorer}: {per_thousand(cpu, n):.1f} CPU s / 1000 pairs ({n} pairs, {wall:.1f} s wall; "
                 f"cold call {cold['cpu_s']:.1f} s, warm call {warm['cpu_s']:.1f} s CPU)")

    def report(self, cache: str) -> dict[str, object]:
        """The results as JSON."""
        return {"machine": self.machine, "pairs": self.args.pairs, "qwen_pairs": self.args.qwen_pairs,
                "pairs_source": f"read_rated_set('mir').transfers: rows numpy.random.default_rng({self.args.seed})"
                                f".permutation(2928)[:{self.args.pairs}] (the Qwen2.5-Coder-1.5B columns: the first "
                                f"{self.args.qwen_pairs} of them, given by --qwen-pairs)",
                "warmup_pairs": self.args.warmup_pairs, "threads": self.args.threads, "precision": PRECISION,
                "human_texts": len(self.human), "training_texts": len(self.training), "cache": cache,
                "load_average_after": round(os.getloadavg()[0], 2), "notes": notes(), "columns": self.columns,
                "scorers": self.scorers, "one_time": self.one_time}


def merged(earlier: dict[str, object], report: dict[str, object], scorers: list[str]) -> dict[str, object]:
    """``earlier`` with the columns, scorers and one-time entries of ``report`` (a run of ``scorers`` alone) in it,
    and a note of when and how they were measured."""
    out = {**earlier, **{key: {**earlier[key], **report[key]} for key in ("columns", "scorers", "one_time")}}
    load = report["machine"]["load_average_before"]
    out["notes"] = [*earlier["notes"], f"The column group {', '.join(scorers)} was measured later, alone (--only), "
                    "with the same pairs, "
                    f"seed and threads, in {report['cache']} (load average {load} before), and merged into this file."]
    return out


def notes() -> list[str]:
    """What a reader of the figures should know about how they were taken."""
    subset = ", ".join(f"{model} in {p}" for model, p in SUBSET_PRECISION.items())
    return ["The LM columns run in process through transformers on the float32 safetensors copy of each packaged GGUF "
            "file (tsteval.metrics.naturalness.causal_lm), as the evidence scored them; llama.cpp is not used.",
            f"Every model at {PRECISION}; the evidence scored the three-LM subset with {subset} and LogProp of the "
            f"full rated tables in {LOGPROP_PRECISION} (tsteval.metaeval.rated.lm_subset), which is faster on a CPU "
            "that computes bf16 natively.",
            f"OMP_WAIT_POLICY={WAIT_POLICY} (unless set otherwise; machine.omp_wait_policy): with the default, "
            "a torch thread spins while it waits for its partner, and on a shared machine, where the partner is often "
            "descheduled, that wait counts as CPU time, a multiple of the work itself; on an idle machine the "
            "default costs little more than the work.",
            "A measured call's seconds include what every call pays whatever its size (warm_call_cpu_s, a warm call "
            "on warmup_pairs other pairs): the cache's sha256 check of a packaged LM's GGUF file, fitting kn3 or "
            "SLOR's unigram model on the human text, the plan; marginal_cpu_s_per_1000 "
            "leaves it out (noisy where a column is cheap)."]


def cost_table(report: dict[str, object]) -> pd.DataFrame:
    """One row per column, cheapest first (then by name)."""
    rows = sorted(report["columns"].items(), key=lambda kv: (kv[1]["cpu_s_per_1000"], kv[0]))
    return pd.DataFrame([{"column": c, "scorer": v["scorer"], "pairs": v["pairs_measured"],
                          "CPU s / 1000 pairs": f"{v['cpu_s_per_1000']:.2f}",
                          "wall s / 1000 pairs": f"{v['wall_s_per_1000']:.2f}",
                          "CPU s / 1000 pairs, per-call part left out": f"{v['marginal_cpu_s_per_1000']:.2f}"}
                         for c, v in rows])


def markdown(report: dict[str, object]) -> str:
    """The results page of ``report``."""
    m = report["machine"]
    once = pd.DataFrame([{"what": name, "CPU s": f"{v['cpu_s']:.1f}", "wall s": f"{v['wall_s']:.1f}",
                          "how": v["what"]} for name, v in report["one_time"].items()])
    return "\n".join([
        "# What each candidate column costs to score", "",
        f"CPU seconds of the process (every thread) and wall seconds per 1,000 pairs of Mir et al.'s rated transfers "
        f"({report['pairs']} seeded pairs, the Qwen2.5-Coder-1.5B columns {report['qwen_pairs']}), each column group "
        f"scored through `tsteval.evaluate` by its scorer ({report['precision']}, {report['threads']} torch threads, "
        f"OMP_WAIT_POLICY={m['omp_wait_policy']}) "
        f"after a cold call on {report['warmup_pairs']} other pairs, so model loading is left out; columns one scorer "
        "gives together carry its whole cost each. The last column leaves out what a warm call on "
        f"{report['warmup_pairs']} pairs costs (fitting kn3 or SLOR's unigram model on the {report['human_texts']:,} "
        f"human texts, the plan). Machine: {m['cores']} cores, {m['cpu']}, Python {m['python']}, torch {m['torch']}, "
        f"load average {m['load_average_before']} before and {report['load_average_after']} after (the machine is "
        "shared).", "",
        table(cost_table(report)), "",
        *(f"- {escape(line)}" for line in report["notes"]), "",
        f"Once per process or machine (the classifiers trained on {report['training_texts']:,} Yelp texts):", "",
        table(once), ""])


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200, help="measured pairs per column (default: 200)")
    parser.add_argument("--qwen-pairs", type=int, default=40,
                        help="measured pairs of the Qwen2.5-Coder-1.5B columns, the first of --pairs (default: 40)")
    parser.add_argument("--warmup-pairs", type=int, default=4, help="pairs of the cold and warm calls (default: 4)")
    parser.add_argument("--train-texts", type=int, default=2000,
                        help="Yelp texts the style classifiers are trained on (default: 2000)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", help="the tsteval cache to use (default: a fresh temporary folder, removed after)")
    parser.add_argument("--only", metavar="SCORER,...", help="measure only these column groups (their scorer "
                        "names: sbert, learned, gemma3-270m ppl/lp_mean/slor, ...) and merge them into the existing "
                        "JSON")
    parser.add_argument("--out", help="folder of column_costs.{json,md} (default: the JSON as the package's data, "
                        "the page into results/)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if not 0 < args.warmup_pairs < args.qwen_pairs <= args.pairs:
        raise SystemExit("give 0 < --warmup-pairs < --qwen-pairs <= --pairs")
    if "torch" in sys.modules and os.environ.get("OMP_WAIT_POLICY") != WAIT_POLICY:
        raise SystemExit(f"torch is loaded already: run this in a process of its own (OMP_WAIT_POLICY={WAIT_POLICY})")
    os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)
    fresh = args.cache is None
    cache = tempfile.mkdtemp(prefix="tsteval-costs-") if fresh else args.cache
    os.environ["TSTEVAL_CACHE"] = cache
    try:
        bench = Bench(args)
        chosen = groups() if args.only is None else [g for g in groups() if g.scorer in args.only.split(",")]
        if not chosen:
            raise SystemExit(f"--only {args.only}: no such column group (the groups: "
                             f"{', '.join(g.scorer for g in groups())})")
        for group in chosen:
            if group.classifier and group.classifier not in bench.classifiers:
                bench.train(group.classifier)
            if group.language_model and f"{group.language_model}: model load" not in bench.one_time:
                bench.prepare(group.language_model)
            if group.learned and bench.learned is None:
                bench.prepare_learned()
            bench.measure(group)
        report = bench.report("a fresh temporary cache" if fresh else "an existing cache (--cache)")
    finally:
        if fresh:
            shutil.rmtree(cache, ignore_errors=True)
    json_path, page_path = ((COSTS, RESULTS / "column_costs.md") if args.out is None else
                            (Path(args.out) / "column_costs.json", Path(args.out) / "column_costs.md"))
    if args.only is not None:
        report = merged(json.loads(json_path.read_text()), report, [g.scorer for g in chosen])
    json_path.write_text(json.dumps(report, indent=1) + "\n")
    page = markdown(report)
    page_path.write_text(page)
    print(page)


if __name__ == "__main__":
    main()
