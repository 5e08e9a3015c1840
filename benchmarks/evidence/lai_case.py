"""The hooks of ``lai_case.yaml``: whether an output is all in lower case, and P(formal) of fastText and the
transformer (its default recipe, in fp32) trained as written on the Corpus of Diverse Styles sample (``cds/``, MIT),
held-out 10%, seed 0, through the classifier cache; the yaml's text says why this corpus."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np
import pandas as pd

FORMAL = ("coha_1990-2000", "coha_1890-1910")
INFORMAL = ("english_tweets", "switchboard")
BACKENDS = {"transformer": {"verbose": False, "precision": "fp32"}, "fasttext": {}}
LOWER = "all_lowercase"


@cache  # the column hook and the describe hook both read it
def _trained(backend: str) -> object:
    """``backend`` trained on the CDS files of :data:`FORMAL` and :data:`INFORMAL` as written."""
    from tsteval.classifiers.training import train_classifier
    from tsteval.core.datapaths import dataset_dir
    from tsteval.core.records import Corpus
    from tsteval.readers.lines import read_lines

    files = [(label, read_lines(dataset_dir("cds") / f"{name}.txt"))
             for label, names in (("formal", FORMAL), ("informal", INFORMAL)) for name in names]
    texts, labels = [t for _, lines in files for t in lines], [label for label, lines in files for _ in lines]
    return train_classifier(backend, Corpus(texts, labels, str(dataset_dir("cds"))), BACKENDS[backend])  # 10%, seed 0


def case(data: object, *, seed: int) -> dict[str, np.ndarray]:
    """1 where an output has letters and no capital, 0 where it has a capital, NaN where it has no letter; and each
    cased classifier's P(formal | output) as written (``p_formal@cds-BACKEND``) and lower-cased (``...-lowercased``)."""
    from tsteval.classifiers.text_forms import all_lowercase

    del seed  # the classifiers' seed is fixed: they are trained once, on CDS, for every set
    outputs = data.frame["output"].astype(str).tolist()
    columns = {LOWER: np.array([np.nan if v is None else float(v) for v in all_lowercase(outputs)])}
    for backend in BACKENDS:
        model = _trained(backend).model
        formal = list(model.classes_).index("formal")
        columns[f"p_formal@cds-{backend}"] = model.predict_proba(outputs)[:, formal]
        columns[f"p_formal@cds-{backend}-lowercased"] = model.predict_proba([t.lower() for t in outputs])[:, formal]
    return columns


def describe(scores: pd.DataFrame, sets: Mapping[str, object]) -> list[dict]:
    """On the first set: the share of outputs all in lower case and the mean style rating with and without, and per
    cased classifier its training (text form, training texts, held-out accuracy), its mean P(formal) as written and
    whether lower-casing the outputs changes any probability."""
    label = next(iter(sets))
    rows = scores[scores["set"] == label].reset_index(drop=True)
    rating = sets[label].frame[sets[label].ratings[0].column].to_numpy(dtype=float)
    lower = rows[LOWER].to_numpy(dtype=float)
    out = [{"column": LOWER, "text form": "—", "training texts": "—", "held-out accuracy": "—",
            "mean": f"{np.nanmean(lower):.1%} of {int(np.isfinite(lower).sum()):,} outputs with letters",
            "reads case": f"mean rating {rating[lower == 1].mean():.1f} all lower case, {rating[lower == 0].mean():.1f}"
                          " the others"}]
    for backend in BACKENDS:
        trained, column = _trained(backend), f"p_formal@cds-{backend}"
        same = np.allclose(rows[column], rows[f"{column}-lowercased"], atol=1e-9)
        out.append({"column": column, "text form": trained.model.text_form_,
                    "training texts": f"{trained.report['n_train']:,}",
                    "held-out accuracy": f"{trained.report['accuracy']:.3f}", "mean": f"{rows[column].mean():.3f}",
                    "reads case": "no: the same probabilities lower-cased" if same else "yes"})
    return out
