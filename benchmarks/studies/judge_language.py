"""Does an LM judge read Russian better when it is asked in Russian?  (Issue 48 item 3: "the judges' templates may
stay English; measure whether a template in the text's language helps".)

On a seeded sample of RUSSE-2022 (Russian detoxification, binary human judgments of content and fluency), two
judges are scored by each packaged LM whose model card lists Russian (Gemma 3 270M, Qwen2.5-Coder-1.5B), each with
its English template from ``templates.yaml`` (the one the rated meta-evaluation scores: ``judge_content`` 1,
``judge_fluency`` 2) and with that template translated into Russian here (:data:`RUSSIAN`, written before any score;
the fluency template's "perfect English" becomes "perfect Russian").  Both go through the same code as every judge
(:func:`tsteval.backends.interface.answer_log_probs` of the model's chat-rendered prompt, the expected rating over
the answers 1-5).  Statistics: sentence-level Spearman and Pearson with the human judgment, 95% intervals of a
bootstrap clustered by input (1,000 resamples), and the Russian template's paired difference from the English one
(:func:`benchmarks.studies.multilingual.correlations`).  chrF and Gemma's ``lp_mean`` (the profile's naturalness
column beyond English) are beside.  Nothing is fitted on the ratings.

Run: ``python -m benchmarks.studies.judge_language [--rows 200]``; results in ``results/judge_language.{md,json}``
and the per-row scores in ``results/judge_language_rows.csv`` (about 12 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.studies.multilingual import correlations, sample_rows
from tsteval.core.records import Transfers
from tsteval.readers.rated import Ratings, read_rated_set

RESULTS = Path(__file__).resolve().parents[1] / "results"
SET = "russe2022"
MODELS = ("gemma3-270m", "qwen2.5-coder-1.5b")
# The English template each judge is scored with (rated.MIR_TEMPLATES, chosen on Lai) and its Russian translation.
TEMPLATES = {"judge_content": 1, "judge_fluency": 2}
RUSSIAN = {
    "judge_content": "Если не учитывать стиль, сохраняет ли переписанный текст смысл исходного? Оцени от 1 (совсем "
                     "другой смысл) до 5 (тот же смысл). Ответь одной цифрой от 1 до 5.\nИсходный текст: {input}\n"
                     "Переписанный текст: {output}",
    "judge_fluency": "Оцени грамматическую правильность следующего предложения от 1 (неграмматично) до 5 (безупречный "
                     "русский язык). Ответь одной цифрой от 1 до 5.\nПредложение: {output}",
}
ASPECTS = {"judge_content": ("content", "human_content"), "judge_fluency": ("naturalness", "human_fluency")}
THREADS = 2


def prompts(metric: str, language: str, inputs: list[str], outputs: list[str]) -> list[str]:
    """The judge's questions in ``language`` (``en``: its template in ``templates.yaml``; ``ru``: :data:`RUSSIAN`).

    >>> prompts("judge_fluency", "ru", ["a"], ["б"])[0].endswith("Предложение: б")
    True
    """
    from tsteval.metrics.judges.prompts import chosen_templates, fill

    template = RUSSIAN[metric] if language == "ru" else str(chosen_templates(metric, [TEMPLATES[metric]])[0]["prompt"])
    return [fill(template, input=x, output=y, style="", source="") for x, y in zip(inputs, outputs, strict=True)]


def judged(lm: object, metric: str, language: str, inputs: list[str], outputs: list[str]) -> np.ndarray:
    """The expected rating 1-5 of each pair, as every judge computes it."""
    from tsteval.backends.interface import answer_log_probs
    from tsteval.metrics.judges.answers import ANSWERS
    from tsteval.metrics.judges.rating import expected_rating

    return expected_rating(answer_log_probs(lm, prompts(metric, language, inputs, outputs), ANSWERS))


def score(rows: int, log=print) -> tuple[pd.DataFrame, Ratings, dict[str, float]]:
    """The sample's rows with chrF, Gemma's ``lp_mean`` and each model's judges in both languages."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import execute
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    rated = read_rated_set(SET)
    chosen = sample_rows(len(rated.transfers.frame), rows)
    transfers = Transfers(rated.transfers.frame.iloc[chosen].reset_index(drop=True), rated.transfers.origin,
                          rated.transfers.extra)
    frame = execute(Plan(transfers, content=("chrf",), language="ru", precision="fp32", threads=1)).card.frame
    frame.insert(0, "row", chosen)
    inputs, outputs = frame["input"].tolist(), frame["output"].tolist()
    seconds = {}
    for model in MODELS:
        start = time.perf_counter()
        lm = CausalLM(model, threads=THREADS, precision="fp32")
        if model == "gemma3-270m":
            frame[f"lp_mean@{model}"] = lm.sentence_log_probs(outputs).lp_mean()
        for metric in TEMPLATES:
            for language in ("en", "ru"):
                frame[f"{metric}@{model}-{language}"] = judged(lm, metric, language, inputs, outputs)
        seconds[model] = round(time.perf_counter() - start, 1)
        log(f"{model}: {len(frame)} rows in {seconds[model]:.0f} s")
    return frame, rated, seconds


def measure(frame: pd.DataFrame, rated: Ratings, seconds: dict[str, float]) -> dict:
    """Each judge's correlations in both languages, the Russian template's difference from the English one."""
    out = {"set": SET, "rows": len(frame), "models": list(MODELS), "templates": TEMPLATES, "russian": RUSSIAN,
           "seconds": seconds, "results": []}
    for metric, (aspect, rating) in ASPECTS.items():
        for model in MODELS:
            english = f"{metric}@{model}-en"
            rows = correlations(frame, rated, [english, f"{metric}@{model}-ru"], aspect, rating, baseline=english)
            out["results"] += [_renamed(r) for r in rows if r["source"] == "tsteval"]
        beside = ["chrf@none"] if aspect == "content" else ["lp_mean@gemma3-270m"]
        out["results"] += [_renamed(r) for r in correlations(frame, rated, beside, aspect, rating, baseline=None)
                           if r["source"] == "tsteval"]
    return out


def _renamed(row: dict) -> dict:
    """A row of :func:`~benchmarks.studies.multilingual.correlations` with its difference named for the English
    template it is taken from."""
    renamed = {"diff_chrf": "diff_english", "diff_lo": "diff_english_lo", "diff_hi": "diff_english_hi"}
    return {renamed.get(k, k): v for k, v in row.items()}


def markdown(result: dict) -> str:
    """The results page."""
    lines = ["# LM judges on Russian: English templates against Russian ones", "",
             f"Generated by `python -m benchmarks.studies.judge_language` (see its docstring): {result['rows']} "
             f"seeded rows of RUSSE-2022, each judge with its English template (judge_content "
             f"{result['templates']['judge_content']}, judge_fluency {result['templates']['judge_fluency']}) and its "
             "Russian translation; sentence-level correlations with the human judgment, 95% intervals from 1,000 "
             "bootstrap resamples clustered by input; \"Russian minus English\" is the paired difference on the same "
             f"rows. Seconds per model (every column it scores): "
             f"{', '.join(f'{m} {s:.0f}' for m, s in result['seconds'].items())}.", ""]
    for aspect, title in (("content", "Content (`human_content`)"), ("naturalness", "Fluency (`human_fluency`)")):
        lines += [f"## {title}", "", "| column | Spearman [95% CI] | Pearson [95% CI] | Russian minus English, "
                  "Pearson [95% CI] |", "|---|---|---|---|"]
        rows = [r for r in result["results"] if r["rating"] == ASPECTS_BY_ASPECT[aspect]]
        for metric in dict.fromkeys(r["metric"] for r in rows):
            by = {r["method"]: r for r in rows if r["metric"] == metric}
            diff = by["pearson"]["diff_english"]
            shown = "" if diff is None or metric.endswith("-en") else \
                f"{diff:+.3f} [{by['pearson']['diff_english_lo']:+.3f}, {by['pearson']['diff_english_hi']:+.3f}]"
            lines.append(f"| `{metric}` | {_ci(by['spearman'])} | {_ci(by['pearson'])} | {shown} |")
        lines.append("")
    lines += ["The Russian prompts:", "", *(f"- {m}: `{t}`".replace("\n", "\\n") for m, t in result["russian"].items()),
              ""]
    return "\n".join(lines)


ASPECTS_BY_ASPECT = {aspect: rating for aspect, rating in ASPECTS.values()}


def _ci(row: dict) -> str:
    return f"{row['r']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}]"


def parser() -> argparse.ArgumentParser:
    """This study's command line."""
    command = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    command.add_argument("--rows", type=int, default=200, help="seeded rows of the set")
    return command


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    frame, rated, seconds = score(args.rows)
    result = measure(frame, rated, seconds)
    (RESULTS / "judge_language.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    (RESULTS / "judge_language.md").write_text(markdown(result))
    keep = ["row", "human_content", "human_fluency", "chrf@none",
            *(c for c in frame.columns if c.startswith(("judge_", "lp_mean@")))]
    frame[keep].to_csv(RESULTS / "judge_language_rows.csv", index=False, float_format="%.6g")
    print(markdown(result))


if __name__ == "__main__":
    main()
