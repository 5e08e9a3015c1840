"""A small study for the annotate tests: a hand-made scorecard (two directions, three systems, hostile outputs)
saved as a run folder, and a study planned from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.annotate.study import Study, plan_study
from tsteval.scorecard import Scorecard

HOSTILE = "<script>window.pwned = 1</script><img src=x onerror=alert(1)> & \"quoted\""
SIGNATURES = {"bleu@none": "metric:bleu", "chrf@none": "metric:chrf", "sbert@none": "metric:sbert"}


def scorecard(inputs: int = 12, seed: int = 0) -> tuple[Scorecard, np.ndarray]:
    """``inputs`` inputs per direction x systems copy, good, hostile with three content columns, and the true
    quality of each row (what simulated raters see)."""
    rng = np.random.default_rng(seed)
    rows = []
    for direction, (src, tgt) in enumerate((("0", "1"), ("1", "0"))):
        for item in range(inputs):
            text = f"input {direction}-{item} was fine ."
            for system, output in (("copy", text), ("good", f"output {direction}-{item} was great ."),
                                   ("hostile", f"{HOSTILE} {item}")):
                rows.append({"system": system, "setting": "default", "item": direction * inputs + item,
                             "input": text, "output": output, "source_style": src, "source_name": src,
                             "target_style": tgt, "target_name": tgt})
    frame = pd.DataFrame(rows)
    quality = rng.normal(size=len(frame))
    frame["bleu@none"] = 50 + 10 * quality + rng.normal(scale=8, size=len(frame))
    frame["chrf@none"] = 50 + 10 * quality + rng.normal(scale=12, size=len(frame))
    frame["sbert@none"] = 0.5 + 0.1 * quality + rng.normal(scale=0.1, size=len(frame))
    return Scorecard(frame, dict(SIGNATURES)), quality


def make_study(tmp_path: Path, items: int = 6, inputs: int = 12, **options: object) -> Study:
    """A run folder and a study of ``items`` inputs planned from it, under ``tmp_path``."""
    card, _ = scorecard(inputs)
    card.save(tmp_path / "run")
    return plan_study(tmp_path / "run", tmp_path / "study", items=items, seed=0, **options)
