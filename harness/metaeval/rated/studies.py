"""The rated sets as studies (``tsteval annotate plan --dataset NAME``): every rated transfer a pair, every published
rating of a judged question a rating, so that ``tsteval meta-eval RUN --ratings STUDY`` on a run that scored the same
transfers reproduces the committed tables (``benchmarks/results/meta_eval/``), and ``tsteval annotate agreement``
computes the raters' agreement.

Each rater of the set is an annotator ``SET:RATER`` (Lai et al.'s ``lai:human_1`` and ``lai:human_2``, Tox600's
five labellers); a set that publishes only each output's mean rating (Mir et al.'s, the content-pair sets) has one,
``SET:mean``, so its agreement is unavailable and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from tsteval.annotate.store import Store
from tsteval.annotate.study import KEYS, KIND, PAIR_COLUMNS, Study, read_pairs, sample_hash, signature
from tsteval.core.errors import TstevalError
from tsteval.core.signature import content_hash, package_version
from tsteval.readers.rated import Ratings, read_rated_set


def _template(rated: Ratings) -> str:
    spec = rated.spec
    scales = {spec.scale_of(q) for q in spec.judged}
    if len(scales) != 1 or any(float(v) != int(v) for v in next(iter(scales))):
        raise TstevalError(f"the judged questions of {spec.name} need one integer scale for a study, not {scales}")
    low, high = (int(v) for v in scales.pop())
    return "\n".join([f"# The published ratings of the {spec.name} rated set, imported by tsteval annotate plan "
                      "--dataset.", f"title: {spec.name} ratings", f"scale: [{low}, {high}]", "questions:",
                      *(f"  - {{name: {q.name}, aspect: {q.aspect}, prompt: the published {q.column}}}"
                        for q in spec.judged), ""])


def rated_study(name: str, out: str | Path, overwrite: bool = False) -> Study:
    """The rated set ``name`` as a new study folder ``out``."""
    from tsteval.annotate.template import parse_template
    from tsteval.core.atomic import check_output_directory, output_directory

    rated = read_rated_set(name)
    check_output_directory(out, KIND, overwrite)
    frame = rated.frame
    template = parse_template(_template(rated), f"<{name} template>")
    pairs = frame.assign(target_name=frame["target_style"]).astype({k: str for k in KEYS})
    pairs.insert(0, "pair_id", [f"p{i + 1:05d}" for i in range(len(pairs))])
    pairs = pairs.assign(kind="rated", of="")[PAIR_COLUMNS]
    ids = dict(zip(zip(frame["system"], frame["setting"], frame["item"], strict=True), pairs["pair_id"],
                   strict=True))
    judged = {q.name for q in rated.spec.judged}
    raters = rated.raters[rated.raters["question"].isin(judged)]
    ratings = [(f"{name}:{r.rater}", ids[(r.system, r.setting, r.item)], r.question, float(r.value))
               for r in raters.itertuples()]
    info = {"run": f"the {name} rated set", "dataset": name, "items": int(frame["item"].nunique()),
            "systems": sorted(frame["system"].unique()), "seed": 0, "questions": template.names,
            "aspects": {q.name: q.aspect for q in template.questions}, "scale": list(template.scale),
            "pairs": len(pairs), "repeats": 0, "checks": 0, "template": template.hash, "check_answers": {},
            "published_ratings": content_hash(ratings), "tsteval": package_version("tsteval")}
    with output_directory(out, KIND, overwrite) as tmp:
        pairs.to_csv(tmp / "pairs.csv", index=False)
        info["sample"] = sample_hash(read_pairs(tmp))
        info["signature"] = signature(info, read_pairs(tmp))
        (tmp / "template.yaml").write_text(template.text, encoding="utf-8")
        (tmp / "study.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        store = Store(tmp / "ratings.sqlite", create=True)
        try:
            store.import_ratings(ratings, name)
        finally:
            store.close()
    return Study.open(out)
