"""The two published rated sets as studies (``tsteval annotate plan --dataset mir|lai``): every rated transfer a
pair, every published rating a rating, so that ``tsteval meta-eval RUN --ratings STUDY`` on a run that scored the same
transfers reproduces the committed tables (``benchmarks/results/meta_eval/``).

``mir``: Mir et al. (2019) publish each transfer's mean over its raters (1-5), one annotator here (``mir:mean``);
the naturalness of the output is rated for 9 of the 12 settings.  ``lai``: Lai et al. (2022)'s two annotators'
own scores (0-100), ``lai:human_1`` and ``lai:human_2``, so agreement and the noise ceiling can be computed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tsteval.annotate.store import Store
from tsteval.annotate.study import KEYS, KIND, PAIR_COLUMNS, Study, read_pairs, signature
from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash, package_version

# dataset -> (scale, [(question, aspect, rating column of the loader)])
RATED = {
    "mir": ((1, 5), [("style_intensity", "style", "human_style_intensity"),
                     ("content_preservation", "content", "human_content_preservation"),
                     ("naturalness_output", "naturalness", "human_naturalness_output")]),
    "lai": ((0, 100), [("style", "style", "human_style"), ("content_src", "content", "human_content_src"),
                       ("content_ref", "content", "human_content_ref"), ("fluency", "naturalness", "human_fluency")]),
}


def _template(name: str) -> str:
    scale, questions = RATED[name]
    return "\n".join([f"# The published ratings of the {name} rated set, imported by tsteval annotate plan --dataset.",
                      f"title: {name} ratings", f"scale: [{scale[0]}, {scale[1]}]", "questions:",
                      *(f"  - {{name: {q}, aspect: {a}, prompt: the published {c}}}" for q, a, c in questions), ""])


def _ratings(name: str, frame: pd.DataFrame, ids: pd.Series) -> list[tuple[str, str, str, float]]:
    """(annotator, pair, question, value) of every published rating."""
    _, questions = RATED[name]
    if name == "mir":
        return [("mir:mean", pair, q, float(v)) for q, _, column in questions
                for pair, v in zip(ids, frame[column], strict=True) if pd.notna(v)]
    from tsteval.readers.lai import load_lai_raters

    raters = load_lai_raters()
    key = pd.Series(ids.to_numpy(), index=pd.MultiIndex.from_frame(frame[["system", "item"]]))
    question = {column: q for q, _, column in questions}
    return [(f"lai:{r.annotator}", key[(r.system, r.item)], question[r.rating], float(r.value))
            for r in raters.itertuples()]


def rated_study(name: str, out: str | Path, overwrite: bool = False) -> Study:
    """The rated set ``name`` (``mir`` or ``lai``) as a new study folder ``out``."""
    from tsteval.annotate.template import parse_template
    from tsteval.core.atomic import check_output_directory, output_directory

    if name not in RATED:
        raise TstevalError(f"unknown rated set {name!r}; choose from {list(RATED)}")
    check_output_directory(out, KIND, overwrite)
    if name == "mir":
        from tsteval.readers.mir import load_mir

        frame = load_mir().frame
    else:
        from tsteval.readers.lai import load_lai

        frame = load_lai().frame
    template = parse_template(_template(name), f"<{name} template>")
    pairs = frame.assign(target_name=frame["target_style"]).astype({k: str for k in KEYS})
    pairs.insert(0, "pair_id", [f"p{i + 1:05d}" for i in range(len(pairs))])
    pairs = pairs.assign(kind="rated", of="")[PAIR_COLUMNS]
    ratings = _ratings(name, frame, pairs["pair_id"])
    info = {"run": f"the {name} rated set", "dataset": name, "items": int(frame["item"].nunique()),
            "systems": sorted(frame["system"].unique()), "seed": 0, "questions": template.names,
            "aspects": {q.name: q.aspect for q in template.questions}, "scale": list(template.scale),
            "pairs": len(pairs), "repeats": 0, "checks": 0, "template": template.hash, "check_answers": {},
            "published_ratings": content_hash(ratings), "tsteval": package_version("tsteval")}
    with output_directory(out, KIND, overwrite) as tmp:
        pairs.to_csv(tmp / "pairs.csv", index=False)
        info["signature"] = signature(info, read_pairs(tmp))
        (tmp / "template.yaml").write_text(template.text, encoding="utf-8")
        (tmp / "study.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        store = Store(tmp / "ratings.sqlite", create=True)
        try:
            store.import_ratings(ratings, name)
        finally:
            store.close()
    return Study.open(out)
