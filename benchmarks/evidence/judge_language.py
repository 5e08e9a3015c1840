"""The LM judges asked in Russian: the hook of ``judge_language.yaml``.

No metric has a template in another language, so the judges' Russian questions are scored here, by the code every
judge runs (:func:`tsteval.metrics.judges.rating.expected_rating` of
:func:`tsteval.backends.interface.answer_log_probs` on the model's chat-rendered prompt), with the template of
:data:`RUSSIAN` in place of the English one of ``templates.yaml`` (``judge_content`` 1, ``judge_fluency`` 2, which
the declaration scores beside as registered metrics).  The translations were written before any score; the fluency
template's "perfect English" becomes "perfect Russian".  The hook gives columns only; the engine judges them.
"""

from __future__ import annotations

import numpy as np

RUSSIAN = {
    "judge_content": "Если не учитывать стиль, сохраняет ли переписанный текст смысл исходного? Оцени от 1 (совсем "
                     "другой смысл) до 5 (тот же смысл). Ответь одной цифрой от 1 до 5.\nИсходный текст: {input}\n"
                     "Переписанный текст: {output}",
    "judge_fluency": "Оцени грамматическую правильность следующего предложения от 1 (неграмматично) до 5 (безупречный "
                     "русский язык). Ответь одной цифрой от 1 до 5.\nПредложение: {output}",
}


def questions(metric: str, inputs: list[str], outputs: list[str]) -> list[str]:
    """The Russian question of ``metric`` about each pair.

    >>> questions("judge_fluency", ["а"], ["б"])[0].endswith("Предложение: б")
    True
    """
    from tsteval.metrics.judges.prompts import fill

    return [fill(RUSSIAN[metric], input=x, output=y, style="", source="") for x, y in zip(inputs, outputs, strict=True)]


def russian_judge(data: object, *, seed: int, model: str, metric: str,
                  precision: str = "fp32") -> dict[str, np.ndarray]:
    """``{METRIC@MODEL-ru: expected rating 1-5}`` of every row of the set ``data`` (a study's set)."""
    from tsteval.backends.interface import answer_log_probs
    from tsteval.metrics.judges.answers import ANSWERS
    from tsteval.metrics.judges.rating import expected_rating
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    del seed  # deterministic: no sampling
    frame = data.frame
    lm = CausalLM(model, threads=2, precision=precision)
    asked = questions(metric, frame["input"].astype(str).tolist(), frame["output"].astype(str).tolist())
    return {f"{metric}@{model}-ru": expected_rating(answer_log_probs(lm, asked, ANSWERS))}
