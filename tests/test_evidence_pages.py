"""One test over every evidence declaration (``benchmarks/evidence/``): it reads, its committed page is its JSON
rendered, and one figure per page is recomputed independently from the raw rated file (pandas and scipy on the
data root's file, not tsteval's readers or statistics)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsteval.metaeval.study.declaration import load_study, page_declarations
from tsteval.metaeval.study.page import render

ROOT = Path(__file__).resolve().parents[1]
EVIDENCE = ROOT / "benchmarks" / "evidence"
RESULTS = ROOT / "benchmarks" / "results" / "evidence"
DECLARATIONS = page_declarations(EVIDENCE)


def _figure(data: dict, **where: object) -> dict:
    rows = [r for r in data["figures"] if all(r.get(k) == v for k, v in where.items())]
    assert len(rows) == 1, where
    return rows[0]


def _difference(data: dict, set_: str, column: str, statistic: str) -> dict:
    """The page's sentence-level difference of ``column`` from the baseline on ``set_``."""
    return next(r for r in data["comparisons"] if r["set"] == set_ and r["column"] == column and r["level"] ==
                "sentence" and r["statistic"] == statistic and r["comparison"] == "baseline")


def _chrf(inputs: pd.Series, outputs: pd.Series) -> list[float]:
    """sacreBLEU's sentence chrF of each output against its input, both NFC-normalised and lower-cased as tsteval's
    tokenizer reads every text (chrF ignores whitespace, so the tokenisation itself does not matter)."""
    from sacrebleu.metrics import CHRF

    chrf = CHRF()
    fold = lambda text: unicodedata.normalize("NFC", text).lower()  # noqa: E731
    return [chrf.sentence_score(fold(b), [fold(a)]).score for a, b in zip(inputs, outputs, strict=True)]


def _content(folder: Path, data_root: Path) -> None:
    """chrF on PG_YELP from sacrebleu on the raw CSV, correlated with its human column by scipy."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "mis_benchmark" / "datasets" / "PG_YELP.csv")
    ours = _chrf(raw["text1"], raw["text2"])
    expected = stats.pearsonr(ours, raw["human"]).statistic
    figure = _figure(data, set="PG_YELP", column="chrf@none", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)


def _lai_fluency(folder: Path, data_root: Path, aspect: str = "fluency") -> pd.DataFrame:
    """The page's scores on Lai joined to the raw ``aspect`` file's mean of its two raters (``rating``)."""
    rows = []
    with open(data_root / "lai2022" / f"{aspect}.json", encoding="utf-8") as handle:
        for item, line in enumerate(handle):
            for system, out in json.loads(line)["sys"].items():
                rows.append({"item": item, "system": system, "rating": (out["human_1"] + out["human_2"]) / 2,
                             "out": out["out"]})
    raw = pd.DataFrame(rows)
    scores = pd.read_parquet(folder / "scores.parquet")
    lai = scores[scores["set"] == "Lai"].astype({"item": int}).merge(raw, on=["item", "system"])
    assert len(lai) == len(raw) == 720
    return lai


def _naturalness(folder: Path, data_root: Path) -> None:
    """The Kneser-Ney reference on Lai: the page's scores joined to the raw fluency file's mean of its two raters."""
    data, lai = json.loads((folder / "study.json").read_text()), _lai_fluency(folder, data_root)
    expected = stats.pearsonr(lai["lp_mean@kn3"], lai["rating"]).statistic
    figure = _figure(data, set="Lai", column="lp_mean@kn3", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    mean = [r for r in data["aggregates"] if r["set"] == "mean" and r["column"] == "lp_mean@kn3"
            and r["level"] == "sentence" and r["statistic"] == "pearson"][0]
    per_set = [_figure(data, set=s, column="lp_mean@kn3", level="sentence", statistic="pearson")["r"]
               for s in mean["sets"]]
    assert mean["r"] == pytest.approx(np.mean(per_set))


def _multilingual(folder: Path, data_root: Path) -> None:
    """chrF on RUSSE-2022 from sacrebleu on the raw CSV (output against its toxic input), Spearman with the content
    judgment by scipy; and the authors' published chrF column of the same file."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "russe2022" / "test_all_metrics_russe2022.csv")
    ours = _chrf(raw["original"], raw["method_output"])
    figure = _figure(data, set="RUSSE-2022", column="chrf@none", level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(stats.spearmanr(ours, raw["content"]).statistic, abs=1e-9)
    authors = _figure(data, set="RUSSE-2022", column="russe2022.chrf@authors", level="sentence", statistic="spearman")
    assert authors["r"] == pytest.approx(stats.spearmanr(raw["chrf"], raw["content"]).statistic, abs=1e-9)


def _style(folder: Path, data_root: Path) -> None:
    """fastText's target-style probability on Mir: the page's scores joined to the raw ratings file by system,
    setting and item, correlated with the raters' style intensity by scipy."""
    data = json.loads((folder / "study.json").read_text())
    mir = _mir_rows(folder, data_root)
    assert len(mir) == 1212
    expected = stats.pearsonr(mir["target_prob@fasttext"], mir["human_style_intensity"]).statistic
    figure = _figure(data, set="Mir", column="target_prob@fasttext", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)


def _style_classifiers(folder: Path, data_root: Path) -> None:
    """On Mir, fastText's ``style_strength`` is the log-odds of its ``target_prob`` (clipped at 1e-6) row by row, and
    scipy's Pearson of it with the raw style ratings is the page's; on Lai, the fine-tuned MiniLM's ``target_prob``
    against the raw style file's mean of its two raters, and its difference from the fastText baseline."""
    data = json.loads((folder / "study.json").read_text())
    mir = _mir_rows(folder, data_root)
    p = mir["target_prob@fasttext"].clip(1e-6, 1 - 1e-6)
    assert np.abs(mir["style_strength@fasttext"] - np.log(p / (1 - p))).max() < 1e-6
    expected = stats.pearsonr(mir["style_strength@fasttext"], mir["human_style_intensity"]).statistic
    figure = _figure(data, set="Mir", column="style_strength@fasttext", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    lai = _lai_fluency(folder, data_root, "style")
    mini, base = (stats.pearsonr(lai[c], lai["rating"]).statistic
                  for c in ("target_prob@transformer", "target_prob@fasttext"))
    figure = _figure(data, set="Lai", column="target_prob@transformer", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(mini, abs=1e-9)
    assert _difference(data, "Lai", "target_prob@transformer", "pearson")["diff"] == pytest.approx(mini - base,
                                                                                                   abs=1e-9)


def _lai_case(folder: Path, data_root: Path) -> None:
    """The all-lower-case indicator counted again on the raw style file with a regular expression, and numpy's
    Pearson of it with the mean of the two raters is the page's; the uncased MiniLM reads no case (its tokenizer gives
    the same ids lower-cased), so its two columns are equal, and fastText's differ."""
    from transformers import AutoTokenizer

    from tsteval.classifiers.transformer import default_model_path

    data = json.loads((folder / "study.json").read_text())
    lai = _lai_fluency(folder, data_root, "style")
    lower = np.array([float(not re.search(r"[A-Z]", t)) for t in lai["out"] if re.search(r"[A-Za-z]", t)])
    assert len(lower) == len(lai) == 720 and (lai["all_lowercase"].to_numpy() == lower).all()
    figure = _figure(data, set="Lai", column="all_lowercase", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(np.corrcoef(lower, lai["rating"])[0, 1], abs=1e-9)
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    assert tokenizer("Formal Text")["input_ids"] == tokenizer("formal text")["input_ids"]
    assert np.allclose(lai["p_formal@cds-transformer"], lai["p_formal@cds-transformer-lowercased"], atol=1e-9)
    assert not np.allclose(lai["p_formal@cds-fasttext"], lai["p_formal@cds-fasttext-lowercased"], atol=1e-9)


def _style_ensemble(folder: Path, data_root: Path) -> None:
    """Lai et al.'s own classifier (the bar) against the mean of the two annotators, read from the raw style file by
    scipy; the ensemble's ``sti`` on CAAE's rows, joined to the raw Mir ratings, by scipy, and the mean over the
    three systems the mean of theirs; no classifier trained here reaches r = .2 on Lai (what the page's text says)."""
    data = json.loads((folder / "study.json").read_text())
    outputs = [out for line in (data_root / "lai2022" / "style.json").read_text(encoding="utf-8").splitlines() if line
               for out in json.loads(line)["sys"].values()]
    bar = stats.pearsonr([o["c-gyafc"] for o in outputs], [(o["human_1"] + o["human_2"]) / 2 for o in outputs])
    assert _figure(data, set="Lai", column="lai.c-gyafc@style")["r"] == pytest.approx(bar.statistic, abs=1e-9)
    raw = pd.read_csv(data_root / "mir2019" / "human_ratings.csv").rename(columns={"model": "system"})
    raw["setting"] = raw["param"] + "=" + raw["value"].map("{:g}".format)
    scores = pd.read_parquet(folder / "scores.parquet")
    caae = scores[scores["set"] == "CAAE"].astype({"item": int}).merge(raw, on=["system", "setting", "item"],
                                                                       validate="1:1")
    assert len(caae) == 1220 and set(caae["system"]) == {"CAAE"}
    expected = stats.pearsonr(caae["sti@ensemble"], caae["human_style_intensity"]).statistic
    assert _figure(data, set="CAAE", column="sti@ensemble")["r"] == pytest.approx(expected, abs=1e-9)
    mean = next(r for r in data["aggregates"] if r["column"] == "sti@ensemble")
    assert mean["r"] == pytest.approx(np.mean([_figure(data, set=s, column="sti@ensemble")["r"]
                                               for s in ("CAAE", "ARAE", "DAR")]), abs=1e-12)
    assert max(r["r"] for r in data["figures"] if r["set"] == "Lai" and r["source"] == "tsteval") < 0.2


def _judge_language(folder: Path, data_root: Path) -> None:
    """The seeded RUSSE rows joined to the raw CSV (40 inputs, every output); chrF from sacreBLEU on them, Spearman
    with the content judgment by scipy; and the Qwen content judge's Pearson
    in each language and the Russian template's paired difference from the English one, by scipy on the page's
    scores and the raw judgments."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "russe2022" / "test_all_metrics_russe2022.csv")
    scores = pd.read_parquet(folder / "scores.parquet")
    rows = scores.merge(raw, left_on=["input", "system"], right_on=["original", "participant_name"], validate="1:1")
    assert len(rows) == len(scores) == 200 and rows["input"].nunique() == 40
    figure = _figure(data, set="RUSSE-2022", column="chrf@none", level="sentence", statistic="spearman")
    chrf = _chrf(rows["original"], rows["method_output"])
    assert figure["r"] == pytest.approx(stats.spearmanr(chrf, rows["content"]).statistic, abs=1e-9)
    r = {k: stats.pearsonr(rows[f"judge_content@qwen2.5-coder-1.5b-{k}"], rows["content"]).statistic
         for k in ("en", "ru")}
    for k, value in r.items():
        figure = _figure(data, set="RUSSE-2022", column=f"judge_content@qwen2.5-coder-1.5b-{k}", level="sentence",
                         statistic="pearson")
        assert figure["r"] == pytest.approx(value, abs=1e-9)
    diff = next(d for d in data["comparisons"] if d["comparison"] == "pairwise" and d["statistic"] == "pearson"
                and {d["column"], d["against"]} == {"judge_content@qwen2.5-coder-1.5b-en",
                                                     "judge_content@qwen2.5-coder-1.5b-ru"})
    sign = 1 if diff["column"].endswith("-ru") else -1
    assert diff["diff"] == pytest.approx(sign * (r["ru"] - r["en"]), abs=1e-9)
    shown = f"{sign * (r['ru'] - r['en']):+.3f} \\[{diff['lo']:+.3f}, {diff['hi']:+.3f}\\]"
    names = [f"judge\\_content@qwen2.5-coder-1.5b-{k}" for k in (("ru", "en") if sign == 1 else ("en", "ru"))]
    assert f"| {names[0]} | {names[1]} | {shown} |" in (folder / "study.md").read_text()  # the pairwise table


def _mir_rows(folder: Path, data_root: Path) -> pd.DataFrame:
    """The page's Mir scores joined to the raw ratings file by system, setting and item."""
    raw = pd.read_csv(data_root / "mir2019" / "human_ratings.csv")
    raw["setting"] = raw["param"] + "=" + raw["value"].map("{:g}".format)
    scores = pd.read_parquet(folder / "scores.parquet")
    mir = scores[scores["set"] == "Mir"].astype({"item": int}).merge(raw.rename(columns={"model": "system"}),
                                                                     on=["system", "setting", "item"])
    assert len(mir) == (scores["set"] == "Mir").sum()
    return mir


def _mask_placeholder(folder: Path, data_root: Path) -> None:
    """sentence-transformers' MiniLM cosine of 300 seeded raw pairs equals the page's sbert@none scores, and scipy's
    Pearson of those scores with the raw content ratings is the page's figure; the rows with a word of Mir's lexicon
    (split on spaces, as Mir's texts are tokenised) are the page's subset."""
    from sentence_transformers import SentenceTransformer

    from tsteval.metrics.content.sentence_embedding import default_model

    data, mir = json.loads((folder / "study.json").read_text()), _mir_rows(folder, data_root)
    sample = mir.sample(300, random_state=0)
    model = SentenceTransformer(default_model(), device="cpu")
    a, b = (model.encode(sample[c].tolist(), normalize_embeddings=True) for c in ("input_y", "output"))
    assert np.abs(np.sum(a * b, axis=1) - sample["sbert@none"]).max() < 1e-5
    expected = stats.pearsonr(mir["sbert@none"], mir["human_content_preservation"]).statistic
    figure = _figure(data, set="Mir", column="sbert@none", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    lexicon = json.loads((data_root / "mir2019" / "style_lexicon" / "style_words_and_weights.json").read_text())
    words = {word for word, _ in lexicon["binary sentiment"]}
    masked = sum(bool(words & {*x.split(), *y.split()}) for x, y in zip(mir["input_y"], mir["output"], strict=True))
    assert [s["rows"] for s in data["sets"]] == [len(mir), masked, len(mir) - masked] == [2928, 2465, 463]


def _lm_style_probe(folder: Path, data_root: Path) -> None:
    """The probe on Mir and its difference from the fastText baseline: scipy's Pearson on the page's scores joined
    to the raw ratings file."""
    data = json.loads((folder / "study.json").read_text())
    mir = _mir_rows(folder, data_root)
    assert len(mir) == 2928
    probe, base = (stats.pearsonr(mir[c], mir["human_style_intensity"]).statistic
                   for c in ("style_lp@smollm2-t3", "target_prob@fasttext"))
    figure = _figure(data, set="Mir", column="style_lp@smollm2-t3", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(probe, abs=1e-9)
    diff = _difference(data, "Mir", "style_lp@smollm2-t3", "pearson")
    assert diff["against"] == "target_prob@fasttext" and diff["diff"] == pytest.approx(probe - base, abs=1e-9)


def _learned_content(folder: Path, data_root: Path, column: str = "learned@bi-loso") -> None:
    """The out-of-set learned ``column`` on CAE: its scores joined to the raw CSV by row, scipy's Spearman with the
    human column; and the mean over the six sets is the mean of the six per-set figures."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "mis_benchmark" / "datasets" / "CAE.csv").reset_index(names="item")
    scores = pd.read_parquet(folder / "scores.parquet")
    cae = scores[scores["set"] == "CAE"].astype({"item": int}).merge(raw, on="item")
    assert len(cae) == len(raw) and (cae["input"] == cae["text1"]).all()
    expected = stats.spearmanr(cae[column], cae["human"]).statistic
    figure = _figure(data, set="CAE", column=column, level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    mean = next(r for r in data["aggregates"] if r["set"] == "mean" and r["column"] == column
                and r["statistic"] == "spearman")
    assert mean["r"] == pytest.approx(np.mean([_figure(data, set=s, column=column, level="sentence",
                                                       statistic="spearman")["r"] for s in mean["sets"]]))


def _learned_naturalness(folder: Path, data_root: Path) -> None:
    """The out-of-set learned column on Lai and its difference from Gemma's SLOR: scipy's Spearman on the page's
    scores joined to the raw fluency file."""
    data, lai = json.loads((folder / "study.json").read_text()), _lai_fluency(folder, data_root)
    learned, slor = (stats.spearmanr(lai[c], lai["rating"]).statistic
                     for c in ("learned@single-loso", "slor@gemma3-270m"))
    figure = _figure(data, set="Lai", column="learned@single-loso", level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(learned, abs=1e-9)
    diff = _difference(data, "Lai", "learned@single-loso", "spearman")
    assert diff["against"] == "slor@gemma3-270m" and diff["diff"] == pytest.approx(learned - slor, abs=1e-9)
    assert diff["diff"] < 0  # the page's verdict: it loses to SLOR on Lai


def _learned_multilingual(folder: Path, data_root: Path) -> None:
    """The out-of-set e5 map on RUSSE-2022: its scores beside the raw CSV row by row, scipy's Spearman with the
    content judgment, and its difference from e5's."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "russe2022" / "test_all_metrics_russe2022.csv")
    scores = pd.read_parquet(folder / "scores.parquet")
    russe = scores[scores["set"] == "RUSSE-2022"].reset_index(drop=True)
    assert len(russe) == len(raw) and (russe["input"] == raw["original"]).all()
    assert (russe["system"] == raw["participant_name"]).all()
    learned, e5 = (stats.spearmanr(russe[c], raw["content"]).statistic for c in ("learned@e5-head-loso", "e5@none"))
    figure = _figure(data, set="RUSSE-2022", column="learned@e5-head-loso", level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(learned, abs=1e-9)
    diff = _difference(data, "RUSSE-2022", "learned@e5-head-loso", "spearman")
    assert diff["against"] == "e5@none" and diff["diff"] == pytest.approx(learned - e5, abs=1e-9)


def _fluency_measures(folder: Path, data_root: Path) -> None:
    """The trigram's perplexity on Mir, signed (lower is better): minus scipy's Pearson of the page's scores joined
    to the raw ratings file; and at system level, the Pearson of the per-setting means (the 9 rated settings)."""
    data = json.loads((folder / "study.json").read_text())
    mir = _mir_rows(folder, data_root).dropna(subset=["human_naturalness_output"])
    assert len(mir) == 2196
    expected = -stats.pearsonr(mir["ppl@kn3"], mir["human_naturalness_output"]).statistic
    figure = _figure(data, set="Mir", column="ppl@kn3", level="sentence", statistic="pearson")
    assert figure["r"] == pytest.approx(expected, abs=1e-9)
    means = mir.groupby(["system", "setting"])[["slor@kn3", "human_naturalness_output"]].mean()
    system = _figure(data, set="Mir", column="slor@kn3", level="system", statistic="pearson")
    assert len(means) == 9 and system["r"] == pytest.approx(
        stats.pearsonr(means["slor@kn3"], means["human_naturalness_output"]).statistic, abs=1e-9)


def _babakov(data_root: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(data_root / "mis_benchmark" / "datasets" / f"{name}.csv")


def _content_benchmark(folder: Path, data_root: Path) -> None:
    """chrF on tox600 from sacrebleu on the raw CSV (tsteval's tokens are lower-cased), Spearman by scipy; the mean
    over the six style-transfer sets is the mean of their figures, and yamsh_para is in no mean."""
    data = json.loads((folder / "study.json").read_text())
    table = _babakov(data_root, "tox600")
    ours = _chrf(table["text1"], table["text2"])
    figure = _figure(data, set="tox600", column="chrf@none", level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(stats.spearmanr(ours, table["human"]).statistic, abs=1e-9)
    mean = next(r for r in data["aggregates"] if r["set"] == "mean over the six style-transfer sets"
                and r["column"] == "sbert@none" and r["statistic"] == "spearman")
    assert "yamsh_para" not in mean["sets"] and len(mean["sets"]) == 6
    assert mean["r"] == pytest.approx(np.mean([_figure(data, set=s, column="sbert@none", level="sentence",
                                                       statistic="spearman")["r"] for s in mean["sets"]]))


def _content_benchmark_lm(folder: Path, data_root: Path) -> None:
    """Qwen's content judge on the sampled yamsh_gyafc pairs: the page's scores joined to the raw CSV by row,
    Spearman by scipy with the human column."""
    data = json.loads((folder / "study.json").read_text())
    raw = _babakov(data_root, "yamsh_gyafc").reset_index(names="item")
    scores = pd.read_parquet(folder / "scores.parquet")
    part = scores[scores["set"] == "yamsh_gyafc"].astype({"item": int}).merge(raw, on="item")
    assert len(part) == (scores["set"] == "yamsh_gyafc").sum() and (part["input"] == part["text1"]).all()
    column = "judge_content@qwen2.5-coder-1.5b-t1"
    figure = _figure(data, set="yamsh_gyafc", column=column, level="sentence", statistic="spearman")
    assert figure["r"] == pytest.approx(stats.spearmanr(part[column], part["human"]).statistic, abs=1e-9)


def _quantization_cost(folder: Path, data_root: Path) -> None:
    """On CAE, the 4-bit variant's cosines joined to the raw CSV by row, Spearman by scipy with the human column, and
    its difference from fp32 the difference of the two; the mean over the six style-transfer sets leaves yamsh_para
    out (tests/test_quantization_cost.py checks the cosines themselves)."""
    data = json.loads((folder / "study.json").read_text())
    raw = _babakov(data_root, "CAE").reset_index(names="item")
    scores = pd.read_parquet(folder / "scores.parquet")
    cae = scores[scores["set"] == "CAE"].astype({"item": int}).merge(raw, on="item", validate="1:1")
    assert len(cae) == len(raw) == 500 and (cae["input"] == cae["text1"]).all()
    q4, fp32 = (stats.spearmanr(cae[c], cae["human"]).statistic for c in ("q4_0", "fp32"))
    assert _figure(data, set="CAE", column="q4_0", level="sentence", statistic="spearman")["r"] == pytest.approx(
        q4, abs=1e-9)
    assert _difference(data, "CAE", "q4_0", "spearman")["diff"] == pytest.approx(q4 - fp32, abs=1e-9)
    mean = next(r for r in data["aggregates"] if r["column"] == "q4_0" and r["statistic"] == "spearman")
    assert "yamsh_para" not in mean["sets"] and len(mean["sets"]) == 6


def _informal_hits(raw: list[dict], first: dict, second: dict) -> tuple[int, int]:
    """The pairs of ``raw`` (InFormal records, by line) a majority of raters decides, among the lines ``first`` and
    ``second`` score (each pair's two scores), and how many the higher score orders as that majority."""
    hits = pairs = 0
    for line, record in enumerate(raw):
        counts = pd.Series([a["formal_sent"] for a in record["annotations"]]).value_counts()
        if line not in first or counts.iloc[0] < 2 or counts.index[0] == "Equal":
            continue  # not scored, or no majority pick of one sentence
        pairs += 1
        hits += (first[line] > second[line]) if counts.index[0] == "candidate_0" else (second[line] > first[line])
    return hits, pairs


def _multilingual_lm(folder: Path, data_root: Path) -> None:
    """The RUSSE sample joined to the raw CSV (80 inputs, every output): chrF from sacreBLEU and Gemma's ``lp_mean``,
    Spearman with the content and fluency judgments by scipy; on Hindi, the longer-is-more-formal ordering of every
    pair and Gemma's formality judge on its sampled pairs counted again on the raw file; the mean over Gemma's five
    samples as the mean of the five."""
    data = json.loads((folder / "study.json").read_text())
    raw = pd.read_csv(data_root / "russe2022" / "test_all_metrics_russe2022.csv")
    scores = pd.read_parquet(folder / "scores.parquet")
    label, model = "RUSSE-2022, 80 inputs", "gemma3-270m"
    rows = scores[scores["set"] == label].merge(raw, left_on=["input", "system"],
                                                right_on=["original", "participant_name"], validate="1:1")
    assert len(rows) == 400 and rows["input"].nunique() == 80
    for column, values, rating in (("chrf@none", _chrf(rows["original"], rows["method_output"]), "content"),
                                   (f"lp_mean@{model}", rows[f"lp_mean@{model}"], "fluency")):
        figure = _figure(data, set=label, column=column, level="sentence", statistic="spearman")
        assert figure["r"] == pytest.approx(stats.spearmanr(values, rows[rating]).statistic, abs=1e-9), column
    hindi = [json.loads(line) for line in (data_root / "informal/hi_annotations.jsonl").read_text("utf-8").splitlines()]
    described = {(r["set"], r["column"]): r for r in data["describe"]}
    hits, pairs = _informal_hits(hindi, *({line: len(r[c]) for line, r in enumerate(hindi)}
                                          for c in ("candidate_0", "candidate_1")))
    row = described[("informal_hi, every pair", "longer sentence")]
    assert (row["pairs decided"], row["accuracy"]) == (pairs, pytest.approx(hits / pairs, abs=1e-12))
    assert row["low"] < row["accuracy"] < row["high"]
    sample = scores[scores["set"] == "InFormal-hi, 400 pairs"]  # item: the record's line of the raw file
    assert all(hindi[int(i)]["candidate_0"] == text for i, text in zip(sample["item"], sample["input"], strict=True))
    first, second = (dict(zip(sample["item"].astype(int), sample[f"formal_{k}@{model}"], strict=True))
                     for k in ("first", "second"))
    hits, pairs = _informal_hits(hindi, first, second)
    row = described[("InFormal-hi, 400 pairs", f"judge_style@{model}-t3 (formal)")]
    assert (row["pairs decided"], row["accuracy"]) == (pairs, pytest.approx(hits / pairs, abs=1e-12))
    mean = next(r for r in data["aggregates"] if r["column"] == f"lm_cos@{model}" and r["statistic"] == "spearman")
    per_set = [r["r"] for r in data["figures"] if r["column"] == f"lm_cos@{model}" and r["statistic"] == "spearman"]
    assert len(per_set) == 5 and mean["r"] == pytest.approx(np.mean(per_set), abs=1e-12)


INDEPENDENT: dict[str, Callable[[Path, Path], None]] = {"profile_content": _content,
                                                         "profile_naturalness": _naturalness, "profile_style": _style,
                                                         "style_classifiers": _style_classifiers,
                                                         "lai_case": _lai_case,
                                                         "style_ensemble": _style_ensemble,
                                                         "quantization_cost": _quantization_cost,
                                                         "multilingual": _multilingual,
                                                         "judge_language": _judge_language,
                                                         "multilingual_lm": _multilingual_lm,
                                                         "lm_style_probe": _lm_style_probe,
                                                         "mask_placeholder": _mask_placeholder,
                                                         "learned_content": _learned_content,
                                                         "learned_content_epochs":
                                                             partial(_learned_content, column="learned@cross-e3-loso"),
                                                         "learned_naturalness": _learned_naturalness,
                                                         "learned_multilingual": _learned_multilingual,
                                                         "fluency_measures": _fluency_measures,
                                                         "content_benchmark": _content_benchmark,
                                                         "content_benchmark_lm": _content_benchmark_lm}


def test_babakovs_computation_on_their_sample_gives_their_published_figures(data_root: Path) -> None:
    """Upstream's BLEU and chrF (the hook's ``@upstream`` columns) on ``df.sample(100, random_state=1)`` of each
    style-transfer set give the figures the content benchmark's declaration cites as published, to 3 decimals."""
    from benchmarks.evidence.babakov import upstream_scores

    study = load_study(ROOT / "benchmarks" / "evidence" / "content_benchmark.yaml")
    checked = 0
    for published in study.published:
        if published.column not in ("BLEU", "chrF") or published.set.startswith("mean") or \
                published.set == "yamsh_para":
            continue
        sample = _babakov(data_root, published.set).sample(100, random_state=1)
        values = upstream_scores(sample["text1"].tolist(), sample["text2"].tolist(), published.column.lower())
        assert round(stats.spearmanr(values, sample["human"]).statistic, 3) == published.value, published
        checked += 1
    assert checked == 12


@pytest.mark.parametrize("path", DECLARATIONS, ids=[p.stem for p in DECLARATIONS])
def test_the_declaration_reads_and_writes_under_the_evidence_results(path: Path) -> None:
    study = load_study(path)
    assert study.out == RESULTS / path.stem
    assert study.resamples == 1000 and study.cluster == "input"


@pytest.mark.parametrize("path", DECLARATIONS, ids=[p.stem for p in DECLARATIONS])
def test_the_page_is_its_json_rendered_and_one_figure_is_recomputed(path: Path, data_root: Path) -> None:
    folder = RESULTS / path.stem
    data = json.loads((folder / "study.json").read_text())
    assert render(data) == (folder / "study.md").read_text()
    assert data["signature"]["resamples"] == 1000
    INDEPENDENT[path.stem](folder, data_root)


def test_the_profile_beyond_english_is_the_multilingual_page_rule() -> None:
    """The content column the profile gives each language is rule v2's pick on that language's sets."""
    from tsteval.metaeval.recommended import LANGUAGE_CONTENT

    data = json.loads((RESULTS / "multilingual" / "study.json").read_text())
    picks = {g["group"].removeprefix("language "): g["picks"][0]["chosen"] for g in data["rule"]["groups"]
             if g["group"].startswith("language ")}
    assert picks == {lang: f"{r.metric}@{r.variant}" for lang, r in LANGUAGE_CONTENT.items()}
    assert picks["hi"] == "e5@none" and picks["ru"] == "chrf@none"


def _v2_picks(group: str = "all sets") -> dict[str, str]:
    """Rule v2's pick per aspect on the sets of ``group``, from the committed profile pages that have been run."""
    picks = {}
    for aspect in ("style", "content", "naturalness"):
        path = RESULTS / f"profile_{aspect}" / "study.json"
        if path.is_file():
            data = json.loads(path.read_text())
            found = next((g for g in data["rule"]["groups"] if g["group"] == group), None)
            if found is not None:
                picks[aspect] = next(p for p in found["picks"] if p["aspect"] == aspect)["chosen"]
    return picks


def test_the_profile_in_force_is_rule_v2_on_the_committed_pages() -> None:
    """``--metrics recommended`` scores rule v2's pick of every aspect whose page has been run, and each task
    family's own pick where it differs from that."""
    from tsteval.metaeval.recommended import RECOMMENDED, TASK_FAMILIES

    picks = _v2_picks()
    assert set(picks) == {"style", "content", "naturalness"}
    in_force = {r.aspect: r.evidence_column() for r in RECOMMENDED}
    for aspect, column in picks.items():
        assert in_force[aspect] == column, aspect
    for family, own in TASK_FAMILIES.items():
        family_picks = _v2_picks(f"task {family}")
        expected = {a: c for a, c in family_picks.items() if c != picks[a]}
        assert {a: r.evidence_column() for a, r in own.items() if a in picks} == expected, family


def test_the_rule_v2_pick_is_recomputed_from_the_page_figures() -> None:
    """The naturalness pick, by hand from the page's per-set figures and the committed costs: the candidates (mean
    gain >= .02, interval above 0, worse on no set) tied with the best go to the cheapest."""
    data = json.loads((RESULTS / "profile_naturalness" / "study.json").read_text())
    costs = {c: row["cpu_s_per_1000"] for c, row in json.loads(
        (ROOT / "harness" / "metaeval" / "column_costs.json").read_text())["columns"].items()}
    pick = next(p for p in data["rule"]["groups"][0]["picks"] if p["aspect"] == "naturalness")
    sets = pick["sets"]
    for row in pick["columns"]:
        per_set = [_figure(data, set=s, column=row["column"], level="sentence", statistic="pearson")["r"]
                   - _figure(data, set=s, column="lp_mean@kn3", level="sentence", statistic="pearson")["r"]
                   for s in sets]
        assert row["gain"] == pytest.approx(np.mean(per_set))
        assert row["candidate"] == (row["gain"] >= 0.02 and row["lo"] > 0 and not row["worse_on"])
    tied = [r for r in pick["columns"] if r["candidate"] and r["tied"]]
    cheapest = min(tied, key=lambda r: (costs[r["column"]], -r["gain"]))
    assert pick["chosen"] == cheapest["column"] == "lp_mean@gemma3-270m"


def test_the_readme_profile_table_is_generated_from_the_pages() -> None:
    from benchmarks.evidence.profile import profile_table

    table = profile_table(RESULTS)
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")
    data = json.loads((RESULTS / "profile_naturalness" / "study.json").read_text())
    lai = _figure(data, set="Lai", column="lp_mean@gemma3-270m", level="sentence", statistic="pearson")
    assert f"Lai {lai['r']:.3f} \\[{lai['lo']:.3f}, {lai['hi']:.3f}\\] (720)" in table
