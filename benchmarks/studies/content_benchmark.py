"""The content-preservation benchmark of Babakov et al. (2022): every tsteval content column against the human
similarity of the ``mis_benchmark`` sets, beside the published BLEURT, MIS, SimCSE, chrF and BLEU.

Each set (``mis_benchmark/datasets/NAME.csv``: ``text1, text2, human``) is read as a user reads a table of
transfers (:func:`tsteval.readers.tables.load_table_transfers`, ``text1`` the input, ``text2`` the output) and
scored through the Plan and runner, every pair, by the non-LM content metrics (:data:`CONTENT`) at each
modification the set's style allows (:func:`style_materials`: Mir's lexicon and the Yelp corpus for the Yelp sets,
a lexicon fitted on the toxicity corpus for the toxicity sets, one fitted on GYAFC for yamsh_gyafc; none for the
Bible and paraphrase sets).  The LM columns (judge_content, cond_lp and LogProp with SmolLM2) are scored on a seeded
sample of :data:`LM_PAIRS` pairs a set; judge_content of the three packaged LMs on the first :data:`COMPARE_PAIRS`
pairs of that sample.  Statistics: Spearman and Pearson per set with 95% intervals of the project's bootstrap
clustered by input (:func:`tsteval.metaeval.statistics.bootstrap_statistics`), and the mean over the six style-transfer
sets with the interval of the mean over the sets' independent resamples.  Nothing is fitted on the ratings.

The published figures ran on ``df.sample(100, random_state=1)`` of each set (upstream ``evaluation.py``), BLEU and
chrF as ``sacrebleu`` corpus scores of one pair with ``text1`` the hypothesis: :func:`published_comparison` scores
that very sample both ways, and our columns on many random 100-pair samples.

Run: ``python -m benchmarks.studies.content_benchmark`` (scores cached under ``runs/content_benchmark/``; stages
``--stage full|lm|logprop|cond_lp|compare|page``; about two hours on the 2-core machine, mostly the LM columns).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import TstevalError
from tsteval.core.records import Corpus, Transfers
from tsteval.metaeval.recommended import RECOMMENDED as PROFILE

RESULTS = Path(__file__).resolve().parents[1] / "results"
SCORES = Path(__file__).resolve().parents[2] / "runs" / "content_benchmark"
SETS = ("CAE", "PG_YELP", "tox600", "yamsh_bible", "yamsh_gyafc", "yamsh_yelp")
PARAPHRASE = ("yamsh_para",)
ALL_SETS = (*SETS, *PARAPHRASE)
# Published Spearman on samples of 100 pairs (data README, upstream benchmarking/README.md), in the order of SETS.
PUBLISHED = {"BLEURT": (.529, .381, .622, .595, .698, .394), "MIS": (.416, .215, .610, .594, .683, .472),
             "SimCSE": (.468, .369, .444, .619, .689, .424), "chrF": (.517, .311, .245, .656, .610, .418),
             "BLEU": (.415, .336, .103, .587, .605, .357)}
PUBLISHED_MEANS = {"BLEURT": .537, "MIS": .498, "SimCSE": .502, "chrF": .460, "BLEU": .401}  # as published (unrounded)
PUBLISHED_PARA = {"BLEURT": .605, "MIS": .612, "SimCSE": .662, "chrF": .492, "BLEU": -.025}
CONTENT = ("bleu", "chrf", "meteor", "rougeL", "wmd", "sbert", "bertscore_p", "bertscore_r", "bertscore_f1")
# What each set is, for its lexicon and style corpus and for the LM prompts' target style (fixed before any score).
FAMILY = {"CAE": "toxicity", "tox600": "toxicity", "PG_YELP": "sentiment", "yamsh_yelp": "sentiment",
          "yamsh_gyafc": "formality", "yamsh_bible": "bible", "yamsh_para": "paraphrase"}
TARGET_STYLE = {"toxicity": "non-toxic", "sentiment": "of the opposite sentiment",
                "formality": "of the other formality", "bible": "in the wording of another Bible translation",
                "paraphrase": "a paraphrase"}
# The LM content columns: judge_content and cond_lp with these templates (rated.MIR_TEMPLATES: chosen on Lai,
# before these sets; cond_lp scored in a stage of its own, added after the others) and LogProp's content score.
LM_TEMPLATES = {"judge_content": 1}
COND_LP_TEMPLATES = {"cond_lp": 3}
LANGUAGE_MODEL = "smollm2"
LM_PAIRS = 300
COMPARE_MODELS = ("smollm2", "gemma3-270m", "qwen2.5-coder-1.5b")
COMPARE_PAIRS = 50
SAMPLES_100 = 1000
AIM = 0.60
RECOMMENDED = next(r for r in PROFILE if r.aspect == "content").column()  # the profile's content column
Log = Callable[[str], None]


def load_set(name: str) -> Transfers:
    """The set as transfers (``text1`` input, ``text2`` output, one system named after the set) with its mean human
    similarity as ``human_content``."""
    from tsteval.readers.tables import load_table_transfers

    path = dataset_dir("mis_benchmark") / "datasets" / f"{name}.csv"
    transfers = load_table_transfers(path, "text1", "text2", source_style="original",
                                     target_style=TARGET_STYLE[FAMILY[name]], system=name)
    frame = transfers.frame.rename(columns={"human": "human_content"})
    frame["human_content"] = pd.to_numeric(frame["human_content"])
    return Transfers(frame, transfers.origin)


def _gyafc_corpus(transfers: Transfers) -> Corpus:
    """DualRL's GYAFC test sets and references minus the set's texts and the lines parallel to them."""
    from tsteval.metaeval.rated.datasets import lai_training_corpus

    frame = transfers.frame.assign(reference=transfers.frame["output"])
    corpus, _ = lai_training_corpus(Transfers(frame, transfers.origin))
    return corpus


def style_materials(name: str, transfers: Transfers) -> tuple[tuple[str, ...], object, Corpus | None, str]:
    """The modifications, lexicon, style corpus (for the lexicon fit and the erasers) and a note saying which."""
    from tsteval.experiment.manifest.specs import LexiconSpec

    family = FAMILY[name]
    texts = {*transfers.frame["input"], *transfers.frame["output"]}
    if family == "sentiment":
        from tsteval.readers.yelp import load_yelp_corpus

        corpus = load_yelp_corpus(exclude=texts)
        lexicon = dataset_dir("mir2019") / "style_lexicon" / "style_words_and_weights.json"
        return ("none", "mask", "erase"), lexicon, corpus, \
            f"Mir et al.'s published lexicon; erasers on Yelp dev+test ({len(corpus)} texts, {corpus.removed} " \
            "lines of the set removed)"
    if family == "toxicity":
        from tsteval.readers.detox import load_detox_corpus, rated_texts

        corpus = load_detox_corpus(set().union(texts, *rated_texts().values()))
        return ("none", "mask", "erase"), LexiconSpec(), corpus, \
            f"lexicon (L1 logistic regression, Mir et al.'s C=3, D=2) and erasers fitted on detox2021 toxic vs " \
            f"normal ({len(corpus)} texts; {corpus.removed} lines matching a rated text removed)"
    if family == "formality":
        corpus = _gyafc_corpus(transfers)
        return ("none", "mask", "erase"), LexiconSpec(), corpus, \
            f"lexicon and erasers fitted on DualRL's GYAFC test sets and references ({len(corpus)} texts, the " \
            "set's texts and their parallel lines removed)"
    return ("none",), None, None, "no two-style corpus for this set: unmodified text only"


def _store(frame: pd.DataFrame, signatures: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path)
    path.with_suffix(".json").write_text(json.dumps(signatures, indent=1))


def score_full(name: str, seed: int = 0, log: Log = print) -> pd.DataFrame:
    """Every pair of the set by every non-LM content column (cached in :data:`SCORES`)."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.experiment.run.execute import run

    path = SCORES / f"{name}.parquet"
    if path.is_file():
        return pd.read_parquet(path)
    transfers = load_set(name)
    modifications, lexicon, corpus, note = style_materials(name, transfers)
    start = time.perf_counter()
    card = run(Plan(transfers, content=CONTENT, modifications=modifications, lexicon=lexicon, corpus=corpus,
                    seed=seed, precision="fp32"))
    seconds = time.perf_counter() - start
    log(f"{name}: {len(transfers.frame)} pairs x {len(card.metrics)} columns in {seconds:.0f} s ({note})")
    _store(card.frame, {"signatures": card.signatures, "note": note, "seconds": round(seconds, 1)}, path)
    return card.frame


def lm_sample(n: int, size: int, seed: int = 0) -> np.ndarray:
    """The rows of the LM sample: ``size`` of ``n`` drawn by ``default_rng(seed)``, in draw order (a prefix of it is
    the comparison's sample).

    >>> lm_sample(10, 3).tolist() == lm_sample(10, 5)[:3].tolist()
    True
    >>> sorted(lm_sample(4, 10).tolist())
    [0, 1, 2, 3]
    """
    return np.random.default_rng(seed).permutation(n)[:size]


def _lm_plan(name: str, rows: np.ndarray, seed: int) -> tuple[object, object]:
    """An empty scorecard of the set's ``rows`` (in file order) and the plan whose options the LM resources take."""
    from tsteval.experiment.plan.plan import Plan
    from tsteval.scorecard import Scorecard

    transfers = load_set(name)
    subset = Transfers(transfers.frame.iloc[np.sort(rows)].reset_index(drop=True), transfers.origin)
    plan = Plan(subset, seed=seed, language_model=LANGUAGE_MODEL, precision="fp32")
    card = Scorecard(subset.frame.assign(row=np.sort(rows)), {})
    return card, plan


def score_lm(name: str, seed: int = 0, log: Log = print, kind: str = "lm") -> pd.DataFrame:
    """judge_content (``kind`` ``"lm"``), cond_lp (``"cond_lp"``) or LogProp's content score (``"logprop"``) with
    SmolLM2 on the set's LM sample (:func:`lm_sample`, :data:`LM_PAIRS` pairs; cached, one file each): the judge and
    cond_lp as the rated meta-evaluation scores them (fp32, :data:`LM_TEMPLATES`, :data:`COND_LP_TEMPLATES`), LogProp
    in bfloat16 (:func:`tsteval.metaeval.rated.lm_subset.score_logprop`)."""
    from tsteval.metaeval.rated.lm_subset import PRECISION, model_resources, score_logprop
    from tsteval.metrics.judges.scorer import score_judges

    path = SCORES / f"{name}.{kind}.parquet"
    if path.is_file():
        return pd.read_parquet(path)
    n = len(load_set(name).frame)
    card, plan = _lm_plan(name, lm_sample(n, LM_PAIRS, seed), seed)
    start = time.perf_counter()
    if kind == "logprop":
        score_logprop(card, plan, models=(LANGUAGE_MODEL,), log=log)
    else:
        templates = COND_LP_TEMPLATES if kind == "cond_lp" else LM_TEMPLATES
        resources = model_resources(plan, LANGUAGE_MODEL, PRECISION.get(LANGUAGE_MODEL, "fp32"))
        score_judges(card, tuple(templates), resources, {}, plan.text_form, plan.style_name, LANGUAGE_MODEL,
                     only=templates)
    seconds = time.perf_counter() - start
    log(f"{name}: {kind} on {len(card.frame)} pairs in {seconds:.0f} s")
    _store(card.frame, {"signatures": card.signatures, "seconds": round(seconds, 1)}, path)
    return card.frame


def score_compare(name: str, seed: int = 0, log: Log = print) -> pd.DataFrame:
    """judge_content (template 1) of each of :data:`COMPARE_MODELS` on the first :data:`COMPARE_PAIRS` pairs of the
    set's LM sample (cached): what a bigger model behind ``--lm-endpoint`` would add, measured on the packaged ones."""
    from tsteval.metaeval.rated.lm_subset import PRECISION, model_resources
    from tsteval.metrics.judges.scorer import score_judges

    path = SCORES / f"{name}.compare.parquet"
    if path.is_file():
        return pd.read_parquet(path)
    n = len(load_set(name).frame)
    card, plan = _lm_plan(name, lm_sample(n, LM_PAIRS, seed)[:COMPARE_PAIRS], seed)
    seconds = {}
    for model in COMPARE_MODELS:
        start = time.perf_counter()
        resources = model_resources(plan, model, PRECISION.get(model, "fp32"))
        score_judges(card, ("judge_content",), resources, {}, plan.text_form, plan.style_name, model,
                     only={"judge_content": LM_TEMPLATES["judge_content"]})
        seconds[model] = round(time.perf_counter() - start, 1)
        log(f"{name}: judge_content with {model} on {len(card.frame)} pairs in {seconds[model]:.0f} s")
    _store(card.frame, {"signatures": card.signatures, "seconds": seconds}, path)
    return card.frame


def _signed(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The columns as a matrix, a lower-is-better metric's sign flipped (so a higher r is always better)."""
    from tsteval.metrics.registry import find_metric

    signs = [1.0 if find_metric(c).higher_is_better else -1.0 for c in columns]
    return frame[columns].to_numpy(dtype=float) * np.array(signs)


def content_columns(frame: pd.DataFrame) -> list[str]:
    """The frame's registered content columns, in order."""
    from tsteval.metrics.registry import find_metric

    return [c for c in frame.columns if "@" in c and (m := find_metric(c)) is not None and m.aspect == "content"]


def set_statistics(frame: pd.DataFrame, columns: list[str], seed: int = 0,
                   resamples: int = N_RESAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Spearman and Pearson of each column with ``human_content``, shape (2, k), and their clustered-bootstrap
    resamples, shape (resamples, 2, k) (the project's :func:`~tsteval.metaeval.statistics.bootstrap_statistics`,
    rows sharing an input resampled together)."""
    from tsteval.metaeval.statistics import bootstrap_statistics, cluster_resamples, level_statistics

    methods = ("spearman", "pearson")
    x = _signed(frame, columns)
    y = frame["human_content"].to_numpy(dtype=float)
    clusters, _ = pd.factorize(frame["input"], sort=True)
    groups = np.zeros(len(frame), dtype=int)
    point = level_statistics(x, y, groups, 1, methods)[0]
    boot = bootstrap_statistics(x, y, groups, clusters, cluster_resamples(clusters, resamples, seed), methods)[:, 0]
    return point, boot


def correlation_table(frames: dict[str, pd.DataFrame], seed: int = 0, resamples: int = N_RESAMPLES) -> dict:
    """Per column: per set Spearman and Pearson with intervals, and the mean over the :data:`SETS` where it is
    scored (the interval of the mean from the sets' independent resamples)."""
    from tsteval.metaeval.statistics import percentile_interval

    columns = list(dict.fromkeys(c for f in frames.values() for c in content_columns(f)))
    out: dict[str, dict] = {c: {"per_set": {}} for c in columns}
    boots: dict[str, dict[str, np.ndarray]] = {c: {} for c in columns}
    for name, frame in frames.items():
        present = [c for c in columns if c in frame.columns]
        point, boot = set_statistics(frame, present, seed, resamples)
        low, high = percentile_interval(boot)
        for j, column in enumerate(present):
            out[column]["per_set"][name] = {
                "spearman": point[0, j], "spearman_lo": low[0, j], "spearman_hi": high[0, j],
                "pearson": point[1, j], "pearson_lo": low[1, j], "pearson_hi": high[1, j],
                "n": len(frame), "inputs": int(frame["input"].nunique())}
            boots[column][name] = boot[:, :, j]
    for column, entry in out.items():
        sets = [s for s in SETS if s in entry["per_set"]]
        entry["sets"] = len(sets)
        if not sets:
            continue
        mean_boot = np.mean([boots[column][s] for s in sets], axis=0)
        low, high = percentile_interval(mean_boot)
        entry |= {"mean_spearman": float(np.mean([entry["per_set"][s]["spearman"] for s in sets])),
                  "mean_spearman_lo": float(low[0]), "mean_spearman_hi": float(high[0]),
                  "mean_pearson": float(np.mean([entry["per_set"][s]["pearson"] for s in sets])),
                  "mean_pearson_lo": float(low[1]), "mean_pearson_hi": float(high[1])}
    return _plain(out)


def _plain(value: object) -> object:
    """``value`` with numpy numbers as Python floats/ints (for JSON)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else round(float(value), 4)
    return value


def upstream_sample(name: str) -> pd.DataFrame:
    """The 100 pairs the published figures ran on: ``pandas.read_csv(...).sample(100, random_state=1)`` as upstream
    ``evaluation.py`` draws them (the whole set when smaller)."""
    frame = pd.read_csv(dataset_dir("mis_benchmark") / "datasets" / f"{name}.csv")
    return frame.sample(100, random_state=1) if len(frame) > 100 else frame


def upstream_scores(frame: pd.DataFrame, metric: str, reverse: bool = False, effective_order: bool = False
                    ) -> np.ndarray:
    """BLEU or chrF as upstream ``rank_metrics.py`` computes them: ``sacrebleu`` corpus scores of one pair with
    ``text1`` the hypothesis and ``text2`` the reference (13a tokenisation, exponential smoothing); ``reverse``:
    ``text2`` the hypothesis (tsteval's direction); ``effective_order``: sentence BLEU's (``sentence_score``)."""
    from sacrebleu.metrics import BLEU, CHRF

    scorer = BLEU(effective_order=effective_order) if metric == "bleu" else CHRF()
    pairs = zip(frame["text2"], frame["text1"], strict=True) if reverse else \
        zip(frame["text1"], frame["text2"], strict=True)
    if effective_order:
        return np.array([scorer.sentence_score(a, [b]).score for a, b in pairs])
    return np.array([scorer.corpus_score([a], [[b]]).score for a, b in pairs])


# The steps from upstream's computation to ours, each on the whole set: (label, metric, reverse, effective order).
VARIANTS = (("upstream", "bleu", False, False), ("reversed", "bleu", True, False),
            ("reversed, effective order", "bleu", True, True), ("upstream", "chrf", False, False),
            ("reversed", "chrf", True, False))


def published_comparison(frames: dict[str, pd.DataFrame], seed: int = 0, samples: int = SAMPLES_100) -> dict:
    """Per set, for BLEU and chrF: the published Spearman; upstream's computation on upstream's sample; ours
    (``bleu@none``/``chrf@none``) on that sample and on the whole set; and ours on ``samples`` random 100-pair
    samples (2.5, 50 and 97.5 percentiles)."""
    from scipy.stats import spearmanr

    out: dict[str, dict] = {}
    rng = np.random.default_rng(seed)
    for name in SETS:
        frame = frames[name]
        sample = upstream_sample(name)
        rows = sample.index.to_numpy()
        draws = [rng.choice(len(frame), 100, replace=False) for _ in range(samples)]
        human = frame["human_content"].to_numpy()
        out[name] = {}
        for metric, published in (("bleu", PUBLISHED["BLEU"]), ("chrf", PUBLISHED["chrF"])):
            ours = frame[f"{metric}@none"].to_numpy()
            spread = [spearmanr(ours[d], human[d]).statistic for d in draws]
            out[name][metric] = {
                "published": published[SETS.index(name)],
                "upstream_recomputed": spearmanr(upstream_scores(sample, metric), sample["human"]).statistic,
                "ours_upstream_sample": spearmanr(ours[rows], human[rows]).statistic,
                "ours_full": spearmanr(ours, human).statistic,
                "ours_100_p2.5": np.nanpercentile(spread, 2.5), "ours_100_p50": np.nanpercentile(spread, 50),
                "ours_100_p97.5": np.nanpercentile(spread, 97.5)}
        table = pd.DataFrame({"text1": frame["input"], "text2": frame["output"]})
        for label, metric, reverse, effective in VARIANTS:
            values = upstream_scores(table, metric, reverse, effective)
            out[name][metric][f"full_{label}"] = spearmanr(values, human).statistic
    return _plain(out)


def _check_order(name: str, frame: pd.DataFrame) -> None:
    """The scorecard rows are the CSV's rows in order (the comparisons index both by row)."""
    table = pd.read_csv(dataset_dir("mis_benchmark") / "datasets" / f"{name}.csv")
    if not (frame["input"].tolist() == table["text1"].tolist() and frame["output"].tolist() == table["text2"].tolist()):
        raise TstevalError(f"{name}: the cached scores in {SCORES} are not the CSV's rows in order; delete them and "
                           "rerun the full stage")


def lm_frames(full: dict[str, pd.DataFrame], stage: str) -> dict[str, pd.DataFrame]:
    """The cached LM (``lm``) or comparison (``compare``) scores of each set, with the set's non-LM columns of the
    same rows joined on."""
    out = {}
    for name, frame in full.items():
        path = SCORES / f"{name}.{stage}.parquet"
        if path.is_file():
            lm = pd.read_parquet(path)
            for kind, prefix in (("logprop", "logprop_content@"), ("cond_lp", "cond_lp@")):
                other = SCORES / f"{name}.{kind}.parquet"
                if stage == "lm" and other.is_file():
                    scored = pd.read_parquet(other)
                    lm = lm.merge(scored[["row", *(c for c in scored.columns if c.startswith(prefix))]], on="row",
                                  how="left", validate="1:1")
            extra = frame.iloc[lm["row"].to_numpy()][content_columns(frame)].reset_index(drop=True)
            out[name] = pd.concat([lm.reset_index(drop=True), extra], axis=1)
    return out


def build(seed: int = 0, resamples: int = N_RESAMPLES) -> dict:
    """The results from the cached scores (every set's full scores must be there; LM stages where done)."""
    full = {}
    for name in ALL_SETS:
        frame = pd.read_parquet(SCORES / f"{name}.parquet")
        _check_order(name, frame)
        full[name] = frame
    notes = {n: json.loads((SCORES / f"{n}.json").read_text())["note"] for n in ALL_SETS}
    table = correlation_table(full, seed, resamples)
    ranked = sorted((c for c in table if table[c]["sets"] == len(SETS)), key=lambda c: -table[c]["mean_spearman"])
    result = {"sets": list(SETS), "paraphrase_sets": list(PARAPHRASE), "pairs": {n: len(f) for n, f in full.items()},
              "resamples": resamples, "seed": seed, "aim": AIM, "style_materials": notes, "columns": table,
              "ranking": ranked, "best": {"column": ranked[0], "mean_spearman": table[ranked[0]]["mean_spearman"]},
              "recommended": recommended_entry(table),
              "published": {"sets": PUBLISHED, "paraphrase": PUBLISHED_PARA,
                            "means": PUBLISHED_MEANS},
              "samples_100": SAMPLES_100, "published_comparison": published_comparison(full, seed)}
    for stage, size in (("lm", LM_PAIRS), ("compare", COMPARE_PAIRS)):
        frames = lm_frames(full, stage)
        if frames:
            result[stage] = {"pairs": {n: len(f) for n, f in frames.items()}, "target_pairs": size,
                             "models": [LANGUAGE_MODEL] if stage == "lm" else list(COMPARE_MODELS),
                             "columns": correlation_table(frames, seed, resamples)}
    return result


def recommended_entry(table: dict) -> dict:
    """The profile's content column and its mean Spearman over the six sets, read from ``table`` (``columns``)."""
    return {"column": RECOMMENDED, "mean_spearman": table[RECOMMENDED]["mean_spearman"]}


def with_cond_lp(report: dict, scores: pd.DataFrame, seed: int = 0) -> tuple[dict, pd.DataFrame]:
    """The committed results with cond_lp added from its cached scores on the LM samples, for when the other
    stages' scores are gone: cond_lp's row of the LM table computed as :func:`build` computes every row, on the
    committed per-pair rows (``scores``, ``content_benchmark_lm.csv``), after checking that those rows give the
    committed LM table's judge_content row again; ``scores`` with the cond_lp column added."""
    frames, column = {}, None
    for name in report["lm"]["pairs"]:
        scored = pd.read_parquet(SCORES / f"{name}.cond_lp.parquet")
        column = next(c for c in scored.columns if c.startswith("cond_lp@"))
        part = scores[scores["set"] == name].drop(columns=column, errors="ignore").merge(
            scored[["row", column]], on="row", how="left", validate="1:1")
        inputs = load_set(name).frame["input"].to_numpy()
        frames[name] = part.assign(input=inputs[part["row"].to_numpy()])
    judge = "judge_content@smollm2-t1"
    table = correlation_table({n: f.drop(columns=[c for c in f.columns if c not in (judge, column, "input",
                                                                                    "human_content")])
                               for n, f in frames.items()}, seed, report["resamples"])
    committed = report["lm"]["columns"][judge]["per_set"]
    if any(abs(table[judge]["per_set"][n][k] - committed[n][k]) > 1e-3 for n in committed
           for k in ("spearman", "pearson")):
        raise TstevalError("content_benchmark_lm.csv no longer gives the committed LM table: run every stage")
    report["lm"]["columns"][column] = table[column]
    merged = pd.concat(frames.values(), ignore_index=True).drop(columns="input")
    return report, merged[[*scores.columns.drop(column, errors="ignore"), column]]


def scores_csv() -> pd.DataFrame:
    """The LM sample's per-pair scores of every set (row of the set's CSV, human, LM and comparison columns,
    ``sbert@none``): what the test recomputes the LM tables from."""
    full = {n: pd.read_parquet(SCORES / f"{n}.parquet") for n in ALL_SETS}
    parts = []
    for name, frame in lm_frames(full, "lm").items():
        keep = ["row", "human_content", *(c for c in frame.columns if "@" in c and c.split("@")[1].startswith(
            ("smollm2", "gemma", "qwen"))), *dict.fromkeys((RECOMMENDED, "sbert@none"))]
        part = frame[keep].copy()
        compare = lm_frames({name: full[name]}, "compare").get(name)
        if compare is not None:
            judged = [c for c in compare.columns if c.startswith("judge_content@") and c not in part.columns]
            part = part.merge(compare[["row", *judged]], on="row", how="left")
        parts.append(part.assign(set=name))
    return pd.concat(parts, ignore_index=True)[["set", *parts[0].columns.drop("set")]] if parts else pd.DataFrame()


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=("full", "lm", "logprop", "cond_lp", "compare", "page", "recommended",
                                            "all"),
                        default="all",
                        help="full: the non-LM columns on every pair; lm: judge_content on the LM samples; logprop: "
                             "LogProp there; cond_lp: cond_lp there, added to the committed results when the other "
                             "stages' scores are not cached; compare: judge_content by each packaged LM; page: the "
                             "results from the cached scores; recommended: the committed results with the profile's "
                             "content column named again (after the profile changed; nothing is scored)")
    parser.add_argument("--dataset", choices=ALL_SETS, action="append", help="default: every set")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def write_page(report: dict, scores: pd.DataFrame, out: Path) -> None:
    """``content_benchmark.{json,md}`` and the LM samples' per-pair scores ``content_benchmark_lm.csv``."""
    from benchmarks.studies.content_benchmark_page import markdown

    (out / "content_benchmark.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "content_benchmark.md").write_text(markdown(report))
    if len(scores):
        scores.to_csv(out / "content_benchmark_lm.csv", index=False, float_format="%.6g")


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    for name in args.dataset or ALL_SETS:
        if args.stage in ("full", "all"):
            score_full(name, args.seed)
    for name in args.dataset or ALL_SETS:
        if args.stage in ("lm", "all"):
            score_lm(name, args.seed)
    for name in args.dataset or ALL_SETS:
        if args.stage in ("logprop", "all"):
            score_lm(name, args.seed, kind="logprop")
    for name in args.dataset or ALL_SETS:
        if args.stage in ("cond_lp", "all"):
            score_lm(name, args.seed, kind="cond_lp")
    for name in args.dataset or SETS:
        if args.stage in ("compare", "all"):
            score_compare(name, args.seed)
    if args.stage in ("page", "all"):
        write_page(build(args.seed), scores_csv(), RESULTS)
    if args.stage == "cond_lp" and not (SCORES / f"{ALL_SETS[0]}.parquet").is_file():
        report, scores = with_cond_lp(json.loads((RESULTS / "content_benchmark.json").read_text()),
                                      pd.read_csv(RESULTS / "content_benchmark_lm.csv"), args.seed)
        write_page(report, scores, RESULTS)
    if args.stage == "recommended":
        report = json.loads((RESULTS / "content_benchmark.json").read_text())
        write_page({**report, "recommended": recommended_entry(report["columns"])}, pd.DataFrame(), RESULTS)


if __name__ == "__main__":
    main()
