"""The hooks of ``multilingual_lm.yaml``: a causal LM's hidden-state cosine (no metric computes it), its style judge
asked how formal each sentence of an InFormal pair is, and the description that checks those ratings order the pairs
as the raters' majority does (:func:`tsteval.metaeval.rated.pairwise.pairwise_order`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from benchmarks.common import by_text

INFORMAL = ("informal_hi", "informal_te", "informal_kn", "informal_bn")


def lm_cosine(data: object, *, seed: int, model: str) -> dict[str, np.ndarray]:
    """``lm_cos@MODEL``: the cosine of ``model``'s mean-pooled last hidden states of each input and output
    (:meth:`tsteval.metrics.naturalness.causal_lm.CausalLM.mean_hidden_states`, float32)."""
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    del seed  # deterministic
    inputs, outputs = by_text(CausalLM(model, threads=2, precision="fp32").mean_hidden_states, data.frame)
    return {f"lm_cos@{model}": np.sum(inputs * outputs, axis=1)}


def formality(data: object, *, seed: int, model: str) -> dict[str, np.ndarray]:
    """``formal_first@MODEL``, ``formal_second@MODEL``: the rated tables' style judge (``judge_style`` t3, English,
    chosen on Lai) asked how "formal" each sentence of the pair is, in the precision they score ``model`` in."""
    from tsteval.metaeval.rated.lm_subset import PRECISION
    from tsteval.metrics.judges.rating import judge_style
    from tsteval.metrics.naturalness.causal_lm import CausalLM

    del seed  # greedy: the expected rating, no sampling
    lm = CausalLM(model, threads=2, precision=PRECISION.get(model, "fp32"))
    first, second = by_text(lambda texts: judge_style([""] * len(texts), texts, ["formal"] * len(texts), lm,
                                                      template=3), data.frame)
    return {f"formal_first@{model}": first, f"formal_second@{model}": second}


def formality_order(scores: pd.DataFrame, sets: Mapping[str, object]) -> list[dict]:
    """Per InFormal set: the raters' nominal alpha on "which is more formal" and the longer-is-more-formal ordering on
    every pair; per sampled set, each model's formality judge and the longer sentence on the same pairs (accuracy on
    the pairs a majority decides, its interval from the one resampler, each pair its own cluster)."""
    from tsteval.metaeval.rated.pairwise import choice_table, pairwise_order
    from tsteval.metaeval.rated.rater_agreement import rated_agreement
    from tsteval.readers.rated import read_rated_set

    out = []
    for name in INFORMAL:
        rated = read_rated_set(name)
        choices = rated.spec.question("more_formal").choices
        table = choice_table(rated.raters, "more_formal", choices)
        alpha = float(rated_agreement(rated).set_index("question").loc["more_formal", "alpha_nominal"])
        pairs = rated.frame.set_index(rated.frame["item"].astype(int), drop=False)  # a pair's texts by its item
        views = {f"{name}, every pair": pairs, **{label: scores[scores["set"] == label] for label, data in
                                                  sets.items() if data.entry.name == name}}
        for label, rows in views.items():
            items = rows["item"].astype(int).to_numpy()
            sub = table[table["item"].isin(items)].replace({"item": {item: k for k, item in enumerate(items)}})
            columns = {"longer sentence": [pairs.loc[items, c].astype(str).str.len() for c in ("input", "output")]}
            columns |= {f"judge_style@{c[13:]}-t3 (formal)": (rows[c], rows[f"formal_second@{c[13:]}"]) for c in rows
                        if c.startswith("formal_first@") and rows[c].notna().all()}
            for column, (first, second) in columns.items():
                check = pairwise_order(sub, choices[0], choices[-1], input_scores=np.asarray(first),
                                       output_scores=np.asarray(second))
                out.append({"set": label, "column": column, "pairs decided": check["pairs"],
                            "accuracy": check["accuracy"], "low": check["ci_low"], "high": check["ci_high"],
                            "raters' accuracy": check["rater_accuracy"], "alpha (nominal)": alpha})
    return out
