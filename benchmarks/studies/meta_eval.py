"""Do the metrics track human judgement?  Meta-evaluation on the two rated datasets of the data root.

For Mir et al. (2019, Yelp sentiment) and Lai et al. (2022, GYAFC formality): score the rated outputs with every
applicable registered metric (:mod:`tsteval.metaeval.rated.datasets`), run ``meta_evaluate`` and write
``benchmarks/results/meta_eval/{mir,lai}/`` (metaeval.csv, baseline.csv, counts.csv, metaeval.md, metaeval.png,
notes.json).
Rerun after new metrics are registered: they are picked up from the registry.  Classifiers come from the cache.

Run: ``python -m benchmarks.studies.meta_eval [--dataset mir|lai] [--resamples 1000]`` (or ``make meta-eval``);
``--language-model gemma3-270m --out benchmarks/results/meta_eval_gemma3-270m`` scores the LM metrics with Gemma 3
270M instead of SmolLM2.  LogProp is scored with every packaged LM either way (about 50 minutes of the two runs'
hour and a half on the 2-core machine).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tsteval.aggregate import N_RESAMPLES
from tsteval.metaeval.rated.datasets import DATASETS, MIR_TEMPLATES, rated_dataset
from tsteval.metaeval.rated.lm_subset import LOGPROP_PRECISION

RESULTS = Path(__file__).resolve().parents[1] / "results" / "meta_eval"
CACHE = Path(__file__).resolve().parents[2] / "runs" / "meta_eval"  # each set's scorecard: a rerun reads it


def templates_of(text: str) -> dict[str, int]:
    """``cond_lp=3,judge_style=1`` as a mapping (every LM metric of the rated run must be named).

    >>> templates_of("cond_lp=3,judge_style=1,judge_content=2,judge_fluency=1")["cond_lp"]
    3
    """
    from tsteval.metaeval.rated.datasets import JUDGES

    pairs = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
    if sorted(pairs) != sorted(JUDGES) or not all(v in ("1", "2", "3") for v in pairs.values()):
        raise argparse.ArgumentTypeError(f"give NAME=K for each of {list(JUDGES)}, K in 1..3: {text!r}")
    return {name: int(k) for name, k in pairs.items()}


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=DATASETS, action="append", help="default: both")
    parser.add_argument("--resamples", type=int, default=N_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--language-model", default="smollm2", help="the causal LM of the LM metrics")
    parser.add_argument("--cache", type=Path, default=CACHE, help="each set's scorecard (delete it to score again)")
    parser.add_argument("--mir-templates", type=templates_of, default=None,
                        help="the one template per LM metric scored on Mir, e.g. cond_lp=3,judge_style=1 (default: "
                             "those chosen on Lai with SmolLM2)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    for name in args.dataset or DATASETS:
        start = time.perf_counter()
        run = rated_dataset(name, n_resamples=args.resamples, seed=args.seed, language_model=args.language_model,
                            mir_templates=args.mir_templates,
                            cache=args.cache / f"{name}-{args.language_model}")
        seconds = time.perf_counter() - start
        target = args.out / name
        notes = {**run.notes, "seconds": round(seconds, 1), "rows": len(run.card.frame), "metrics": run.card.metrics,
                 "language_model": args.language_model, "logprop_precision": LOGPROP_PRECISION,
                 **({"templates": args.mir_templates or MIR_TEMPLATES} if name == "mir" else {})}
        run.result.write(target, overwrite=True, title=f"Meta-evaluation on the {name} ratings", notes=notes)
        print(f"{name}: written to {target} in {seconds:.0f} s")


if __name__ == "__main__":
    main()
