"""The calibrated ensemble style classifier on Yelp: held-out accuracy and calibration, and agreement with Mir et
al.'s human style ratings of each member vs the ensemble.

Trains, on Yelp dev + test without any copy of Mir et al.'s rated inputs (``benchmarks.common.mir_and_yelp``),
each member backend alone and the ``ensemble`` of them (members trained on 80 % of the training texts, one
temperature each fitted on the other 20 %), all with the same 10 % of the corpus held out.  On that held-out
split it reports accuracy, negative log-likelihood and expected calibration error (top-label, 15 equal-width
bins) of every model: each member alone, each member inside the ensemble before and after its temperature, and
the ensemble.  On Mir's 2,928 rated transfers it reports the sentence-level Pearson r of ``target_prob``,
``sti`` and ``sti_norm`` with ``human_style_intensity`` (pooled, and the mean over the three models as Mir et al.
report it), and Williams' tests of the ensemble against each member alone and of ``sti`` against ``target_prob``.
The same is done for GYAFC formality: classifiers trained on DualRL's GYAFC sentences (plus, alone, the fine-tuned
MiniLM transformer) against Lai et al.'s (2022) style scores of 720 outputs, beside the authors' own classifier.

Run: ``python -m benchmarks.studies.style_ensemble`` (a few minutes on one CPU core once the models are cached; training
the GYAFC transformer took about 70 minutes on two heavily shared cores; ``--lai-extra ""`` leaves it out).
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import mir_and_yelp
from tsteval.classifiers.calibration import apply_temperature, expected_calibration_error, temperature_nll
from tsteval.classifiers.training import split_heldout, train_classifier
from tsteval.core.datapaths import dataset_dir
from tsteval.core.records import Corpus, Transfers
from tsteval.core.tokenize import tokenize
from tsteval.metaeval.agreement import by_system, compare_dependent_correlations, correlate
from tsteval.metrics.style.scorer import score_style
from tsteval.readers.lai import load_lai
from tsteval.readers.lines import load_style_files
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
HELDOUT = 0.1
HUMAN = "human_style_intensity"
HUMAN_LAI = "human_style"
# Lai et al.'s own GYAFC formality classifier's P(formal | output), stored beside the ratings: the published bar.
LAI_CLASSIFIER = "lai_c_gyafc"
MODELS = ("CAAE", "ARAE", "DAR")
METRICS = ("target_prob", "sti", "sti_norm")
# On the small GYAFC corpus the bag-of-words members are weak; the fine-tuned MiniLM transformer is tried too
# (alone: it is slow to train on a CPU, then cached).
LAI_EXTRA = {"transformer": {"epochs": 1, "verbose": False}}
# Below this pooled r with the ratings a classifier is taken not to track them (no verdict on the question).
MIN_TRACKING_R = 0.2
ENSEMBLE_KIND = "ensemble (mean of scaled members)"


@dataclass
class Scaled:
    """A fitted classifier's probabilities at a temperature (an ensemble member as the ensemble uses it)."""

    model: object
    temperature: float

    @property
    def classes_(self) -> np.ndarray:
        return self.model.classes_

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        return apply_temperature(self.model.predict_proba(texts), self.temperature)


def heldout_row(name: str, kind: str, proba: np.ndarray, y: np.ndarray, temperature: float | None) -> dict:
    """Accuracy, NLL and ECE of held-out probabilities."""
    return {"model": name, "kind": kind, "temperature": temperature,
            "accuracy": float(np.mean(proba.argmax(axis=1) == y)), "nll": temperature_nll(proba, y, 1.0),
            "ece": expected_calibration_error(proba, y)}


def correlations(frame: pd.DataFrame, names: list[str], human: str, systems: tuple[str, ...]) -> pd.DataFrame:
    """Sentence-level Pearson r with the human rating, pooled (95% Fisher interval) and per system of ``systems``
    with their mean (Mir et al.'s "Average")."""
    rows = []
    for name in names:
        for metric in METRICS:
            column = f"{metric}@{name}"
            rated = frame.dropna(subset=[column, human])
            pooled = correlate(rated[column], rated[human])
            row = {"classifier": name, "metric": metric, "r_pooled": pooled.r, "ci_low": pooled.fisher_low,
                   "ci_high": pooled.fisher_high}
            if systems:
                table = by_system(rated, column, human)
                row.update({f"r_{m}": table[m].r for m in systems})
                row["r_model_mean"] = float(np.mean([table[m].r for m in systems]))
            rows.append({**row, "n": pooled.n})
    return pd.DataFrame(rows)


def williams(frame: pd.DataFrame, members: list[str], human: str, extra: tuple[str, ...] = ()) -> pd.DataFrame:
    """Pooled sentence-level comparisons on the same rows (Williams' t, two-sided): the ensemble against each
    member alone per metric, and ``sti`` against ``target_prob`` per classifier (the ``extra`` ones too)."""
    pairs = [(metric, "ensemble", member) for metric in METRICS for member in members]
    pairs += [("sti-vs-target_prob", name, name) for name in [*members, "ensemble", *extra]]
    rows = []
    for metric, a, b in pairs:
        first, second = ((f"sti@{a}", f"target_prob@{b}") if metric == "sti-vs-target_prob"
                         else (f"{metric}@{a}", f"{metric}@{b}"))
        test = compare_dependent_correlations(frame[first], frame[second], frame[human])
        rows.append({"comparison": f"{first} vs {second}", "r_first": test.r1, "r_second": test.r2,
                     "difference": test.r1 - test.r2, "r_between": test.r12, "williams_t": test.t,
                     "p_value": test.p_value, "n": test.n})
    return pd.DataFrame(rows)


def evaluate(corpus: Corpus, transfers: Transfers, members: list[str], seed: int,
             extra: dict[str, dict] | None = None) -> dict:
    """Train each member alone, the ensemble and the ``extra`` backends (with their parameters) on ``corpus`` (the
    same stratified part held out from all), and score ``transfers``: held-out calibration rows, the scorecard and
    the training reports."""
    _, _, test_x, test_y = split_heldout(corpus, HELDOUT, seed)
    card = Scorecard.from_transfers(transfers)
    trained, heldout_rows = {}, []
    models = [*((m, {}) for m in members), ("ensemble", {"members": members}), *(extra or {}).items()]
    for backend, params in models:
        start = time.perf_counter()
        result = train_classifier(backend, corpus, params, seed=seed, heldout=HELDOUT)
        trained[backend] = {**result.report, "seconds_incl_cache": round(time.perf_counter() - start, 1)}
        print(f"{backend}: held-out accuracy {result.report['accuracy']:.4f} "
              f"({trained[backend]['seconds_incl_cache']} s)")
        model = result.model
        classes = list(model.classes_)
        y = np.array([classes.index(label) for label in test_y])
        if backend == "ensemble":
            trained[backend]["temperatures"] = model.temperatures_
            trained[backend]["calibration"] = model.calibration_report_
            raw = model.member_probabilities(test_x, calibrated=False)
            for name, member in model.members_.items():
                temperature = model.temperatures_[name]
                heldout_rows.append(heldout_row(name, "in ensemble, raw", raw[name], y, None))
                heldout_rows.append(heldout_row(name, "in ensemble, temperature-scaled",
                                                apply_temperature(raw[name], temperature), y, temperature))
                score_style(card, member, f"{name}-in-ensemble", model_id=f"{result.identity}-{name}")
                score_style(card, Scaled(member, temperature), f"{name}-in-ensemble-T",
                            model_id=f"{result.identity}-{name}-T")
        kind = ENSEMBLE_KIND if backend == "ensemble" else "alone, all training texts"
        heldout_rows.append(heldout_row(backend, kind, model.predict_proba(test_x), y, None))
        score_style(card, model, backend, model_id=result.identity)
    return {"heldout": pd.DataFrame(heldout_rows), "frame": card.frame, "trained": trained,
            "n_corpus": len(corpus), "n_heldout": len(test_x)}


def tables(part: dict) -> list[str]:
    """The Markdown lines of one dataset's held-out calibration, agreement and Williams tables."""
    return ["### Held-out accuracy and calibration", "", part["heldout"].to_markdown(index=False, floatfmt=".4f"), "",
            ece_sentence(part["heldout"]), "", "### Agreement with the human style rating", "",
            part["agreement"].to_markdown(index=False, floatfmt=".3f"), "",
            part["williams"].to_markdown(index=False, floatfmt=".3f"), ""]


def lai_verdict(part: dict) -> str:
    """Whether the classifiers trained here track Lai et al.'s ratings well enough to compare the two questions."""
    table = part["agreement"]
    rows = table[(table["metric"] == "target_prob") & ~table["classifier"].str.contains("-in-ensemble")]
    best = rows.loc[rows["r_pooled"].idxmax()]
    if best["r_pooled"] < MIN_TRACKING_R:
        return (f"The classifiers trained here do not track these ratings (best `target_prob` r = "
                f"{best['r_pooled']:.3f}, {best['classifier']}), so this part cannot tell `target_prob` and `sti` "
                "apart; it shows only that a style classifier must first be shown to track the ratings at all.")
    return (f"The best classifier trained here, {best['classifier']}, reaches r = {best['r_pooled']:.3f} with "
            "`target_prob`; compare its `sti` row and the Williams test `sti vs target_prob` below.")


def ece_sentence(heldout: pd.DataFrame) -> str:
    """Where the ensemble's held-out ECE lies among the other rows (members, and backends trained alone)."""
    ensemble = heldout[heldout["kind"] == ENSEMBLE_KIND]["ece"].iloc[0]
    others = heldout[heldout["kind"] != ENSEMBLE_KIND]["ece"]
    below = int((others >= ensemble).sum())
    return (f"The ensemble's held-out ECE is {ensemble:.4f}, not above {below} of the {len(others)} other rows "
            f"(from {others.min():.4f} to {others.max():.4f}).")


def lai_transfers() -> Transfers:
    """Lai et al.'s (2022) 720 rated outputs (:func:`~tsteval.readers.lai.load_lai`: the mean of the two
    annotators' style scores), texts lower-cased and tokenised as the GYAFC corpus is."""
    frame = load_lai().frame
    frame = frame.assign(input=frame["input"].map(normalise), output=frame["output"].map(normalise))
    return Transfers(frame.rename(columns={"lai.c-gyafc@style": LAI_CLASSIFIER}), "lai2022")


def normalise(text: str) -> str:
    """Lower-cased tsteval tokens joined by spaces (GYAFC in DualRL's release is lower-cased and tokenised)."""
    return " ".join(tokenize(text))


def gyafc_corpus(exclude: set[str]) -> Corpus:
    """Formal and informal GYAFC sentences from DualRL's release (the test sets and the four human references of
    each direction), normalised, without any text in ``exclude``."""
    root = dataset_dir("dualrl")
    files = {"formal": [root / "data" / "GYAFC" / "test.0", *(root / "references" / "GYAFC" / f"reference{i}.1"
                                                              for i in range(4))],
             "informal": [root / "data" / "GYAFC" / "test.1", *(root / "references" / "GYAFC" / f"reference{i}.0"
                                                                 for i in range(4))]}
    corpus = load_style_files(files)
    return Corpus([normalise(t) for t in corpus.texts], corpus.labels, corpus.origin).without(exclude)


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", default="fasttext,tfidf-lr", help="comma-separated member backends")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--lai-extra", default=",".join(LAI_EXTRA),
                        help="comma-separated backends also trained alone for the GYAFC/Lai part (of: transformer)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    members = [m.strip() for m in args.members.split(",") if m.strip()]
    names = [*members, *[f"{m}-in-ensemble{t}" for m in members for t in ("", "-T")], "ensemble"]

    transfers, corpus = mir_and_yelp()
    print(f"Yelp: {len(corpus)} sentences ({corpus.removed} holding Mir's rated inputs removed)")
    yelp = evaluate(corpus, transfers, members, args.seed)
    yelp["agreement"] = correlations(yelp["frame"], names, HUMAN, MODELS)
    yelp["williams"] = williams(yelp["frame"], members, HUMAN)

    lai_rated = lai_transfers()
    rated_texts = set(lai_rated.frame["input"]) | set(lai_rated.frame["output"])
    gyafc = gyafc_corpus(rated_texts)
    print(f"GYAFC: {len(gyafc)} sentences after removing Lai et al.'s rated inputs and outputs")
    extra = {name: LAI_EXTRA[name] for name in args.lai_extra.split(",") if name}
    lai = evaluate(gyafc, lai_rated, members, args.seed, extra)
    lai["agreement"] = correlations(lai["frame"], [*names, *extra], HUMAN_LAI, ())
    lai["williams"] = williams(lai["frame"], members, HUMAN_LAI, tuple(extra))
    theirs = correlate(lai["frame"][LAI_CLASSIFIER], lai["frame"][HUMAN_LAI])

    args.out.mkdir(parents=True, exist_ok=True)
    md = ["# The calibrated ensemble style classifier, and which style question is which", "",
          f"Members: {', '.join(members)}. The ensemble trains its members on 80% of its training texts and fits "
          "one temperature per member on the other 20% (NLL minimum; the members are kept as trained, not "
          "refitted); a member alone trains on all of them. Every model of a dataset has the same stratified "
          f"{HELDOUT:.0%} of the corpus held out (seed {args.seed}).", "",
          "NLL: mean negative log-likelihood; ECE: top-label expected calibration error, 15 equal-width bins "
          "(Guo et al. 2017); lower is better for both. `NAME-in-ensemble` is a member inside the ensemble before "
          "its temperature, `-T` after it. Correlations are sentence-level Pearson r, pooled over all systems "
          "(95% Fisher interval); Williams' t compares two correlations on the same rows (two-sided).", "",
          "## Yelp sentiment: Mir et al. (2019), raters judged the change from input to output", "",
          f"Training: Yelp dev + test without every copy of Mir et al.'s rated inputs ({yelp['n_corpus']} "
          f"sentences, {yelp['n_heldout']} held out). Rated: {len(yelp['frame'])} transfers (12 settings of "
          f"CAAE, ARAE, DAR), `{HUMAN}`; `r_CAAE` ... per model, `r_model_mean` their mean (the paper's "
          "\"Average\").", "",
          *tables(yelp),
          "## GYAFC formality: Lai et al. (2022), style-strength scores of each output", "",
          f"Training: GYAFC sentences of DualRL's release (test sets and four references per direction: formal = "
          f"`test.0` + `reference*.1`, informal = `test.1` + `reference*.0`), lower-cased and tokenised, without "
          f"Lai et al.'s rated inputs and outputs ({lai['n_corpus']} sentences, {lai['n_heldout']} held out). "
          f"Rated: {len(lai['frame'])} informal -> formal outputs (80 inputs x 8 systems and the human reference), "
          f"`{HUMAN_LAI}` = the mean of the two annotators' 0-100 scores; the outputs are lower-cased and tokenised "
          "the same way, so the classifiers cannot see case (a strong formality cue the raters could).", "",
          f"The published bar: Lai et al.'s own GYAFC classifier (trained on the full, cased GYAFC training set; its "
          f"P(formal) of each output is stored as `c-gyafc` in `style.json`) reaches r = {theirs.r:.3f} "
          f"[{theirs.fisher_low:.3f}, {theirs.fisher_high:.3f}] with the same ratings. {lai_verdict(lai)}", "",
          *tables(lai)]
    (args.out / "style_ensemble.md").write_text("\n".join(md))
    result = {"members": members, "seed": args.seed, "heldout": HELDOUT}
    for name, part in (("yelp_mir", yelp), ("gyafc_lai", lai)):
        result[name] = {"n_corpus": part["n_corpus"], "n_heldout": part["n_heldout"], "classifiers": part["trained"],
                        "heldout_calibration": part["heldout"].astype(object).where(part["heldout"].notna(), None)
                        .to_dict("records"),
                        "agreement": part["agreement"].to_dict("records"),
                        "williams": part["williams"].to_dict("records")}
    (args.out / "style_ensemble.json").write_text(json.dumps(result, indent=2, default=str))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
