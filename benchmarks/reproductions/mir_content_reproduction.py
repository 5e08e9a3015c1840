"""Reproduce Mir et al. (2019) Tables 4.4 and 4.5: content-preservation metrics against human ratings.

On the 12 CAAE/ARAE/DAR settings, style words are removed from (Table 4.4) or masked in (Table 4.5) both
the input and the output with a style lexicon, then BLEU, METEOR, embedding average, greedy matching,
vector extrema and WMD are correlated (absolute Pearson r, settings of a model pooled) with
``human_content_preservation``.  Shown beside the paper: the same correlations from the authors' own
stored per-sentence scores, and ours with (a) Mir's published lexicon and (b) our lexicon built from Yelp
(L1 logistic regression, C=3, D=2, as Mir did).  Word vectors: word2vec trained on our Yelp corpus with
gensim as Mir did (a separate model on style-masked text for masking, as Mir did), plus GloVe 6B 50d rows.
New rows: chrF, ROUGE-L, MiniLM sentence cosine, no modification, and attribution masking (Reed & Beck:
integrated gradients of a fine-tuned MiniLM style classifier, words deleted or masked).  Each r carries Mir's ± and
the engine's interval clustered by input (:func:`benchmarks.common.by_model`); the page is its CSV and JSON rendered
(:func:`page`).

Run: ``python -m benchmarks.reproductions.mir_content_reproduction``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import FIELDS, MODELS, by_model, mir_and_yelp, publish, r_margin, yelp_transformer
from tsteval.core import markdown as md
from tsteval.core.datapaths import dataset_dir
from tsteval.core.records import Corpus
from tsteval.lexicons.attribution import AttributionMasker
from tsteval.lexicons.builder import build_lexicon
from tsteval.lexicons.lexicon import Lexicon
from tsteval.lexicons.modify import modify_texts
from tsteval.metrics.content.scorer import score_content
from tsteval.metrics.content.word_vectors import WordVectors, load_glove, train_word2vec
from tsteval.metrics.resources import ResourceOptions, Resources
from tsteval.readers.mir import MIR_SETTINGS
from tsteval.scorecard import Scorecard

RESULTS = Path(__file__).resolve().parents[1] / "results"
HUMAN = "human_content_preservation"
MODIFICATIONS = {"remove": "style_removed", "mask": "style_masked", "none": "unmasked"}
# Our metric name -> the key in Mir's stored per-sentence npz files.
MIR_KEYS = {"bleu_mir": "BLEU", "meteor": "METEOR", "embed_avg": "EmbedAvg", "greedy": "GreedyMatch",
            "extrema": "VectorExtrema", "wmd": "WMD"}
# Mir et al. (2019) Tables 4.4 (removal) and 4.5 (masking): |r| and the "±" (1.96 (1 - r^2) / sqrt(n)).
PAPER = {
    "remove": {"bleu_mir": (.458, .044, .337, .064, .440, .051, .412, .053),
               "meteor": (.498, .042, .387, .062, .455, .050, .447, .051),
               "embed_avg": (.370, .048, .313, .065, .379, .054, .354, .056),
               "greedy": (.488, .043, .419, .060, .472, .049, .460, .051),
               "extrema": (.496, .042, .423, .060, .472, .049, .464, .050),
               "wmd": (.496, .042, .445, .058, .484, .048, .475, .049)},
    "mask": {"bleu_mir": (.488, .043, .356, .063, .444, .050, .429, .052),
             "meteor": (.517, .041, .374, .062, .454, .050, .448, .051),
             "embed_avg": (.356, .049, .302, .066, .370, .054, .343, .056),
             "greedy": (.490, .043, .405, .061, .450, .050, .448, .051),
             "extrema": (.496, .042, .422, .060, .473, .049, .464, .050),
             "wmd": (.517, .041, .457, .057, .475, .049, .483, .049)},
}
VECTOR_METRICS = ("embed_avg", "greedy", "extrema", "wmd")
ATTRIBUTION_THRESHOLD = 0.2
TEXT_METRICS = ("bleu_mir", "meteor", "chrf", "rougeL", "sbert")
CHANGES = ("Changed since this page's previous version (commit 2ea74e3): every r of Mir's stored scores and of ours "
           "now has the engine's 95% interval clustered by input beside Mir's ±, per model 0.85 to 1.83 times as wide "
           "as the ±, for the Average 0.51 to 1.08 times (the paper's Average ± is the mean of the models' margins, "
           "not an interval of the mean). Rerun on an Intel Xeon (2 cores, about 4 minutes): removal, masking and no "
           "modification give back every r within .0012 (vector extrema with word2vec, which gensim does not train "
           "bit for bit alike on every machine; every other row to the third decimal). The attribution rows move by "
           "up to .037 (attribution masking's Average for sbert .455 -> .443), because the MiniLM classifier whose "
           "attributions pick the words follows the current transformer recipe in fp32 (held-out accuracy .930 -> "
           ".915). Every reading below still holds.")
READING = (
    "`Mir's stored scores` equals the paper in every cell (to ±0.001 rounding), so the correlation code is not a "
    "source of difference.",
    "BLEU: with Mir's lexicon our sentence BLEU is their definition (sacreBLEU `floor` smoothing, 0.01, no effective "
    "order, on the same tokens) and the correlations match; the remaining per-sentence differences come from "
    "tokenization of a few tokens (e.g. `9pm`).",
    "METEOR: Mir's stored METEOR is not NLTK's (no NLTK setting reproduces it; it is most likely the METEOR 1.5 jar "
    "with its paraphrase table). NLTK's METEOR (exact, stem and WordNet synonym matches) correlates more strongly "
    "with the human ratings here, notably on ARAE.",
    "Embedding metrics and WMD depend on the word2vec model: Mir's was trained on the full Yelp corpus (train split "
    "included, which we do not have) with an older gensim; ours on dev+test without the evaluation inputs, seed 0. "
    "Greedy, extrema and WMD land within a few hundredths of the paper; embedding average correlates more strongly "
    "with ours. GloVe 6B 50d (general-domain, lower-dimensional) is weaker than in-domain word2vec for every vector "
    "metric.",
    "Our lexicon and Mir's give nearly the same correlations although they share only part of their words (see "
    "`lexicon_quality.md`).",
    "Without modification the MiniLM sentence cosine (`sbert`) has the strongest average correlation in this run; "
    "lexicon masking lowers it (the `<masked>` token is foreign to the encoder). Masking raises BLEU slightly, as in "
    "the paper, but not METEOR or chrF here.",
    "Attribution masking or deletion (Reed & Beck's approach, top 20% of the integrated-gradient attribution) lowers "
    "the agreement of every metric below no modification in this run; with `<masked>` out of the word2vec/GloVe "
    "vocabulary, the vector metrics see masking as deletion, so those rows are equal.")


def mir_stored_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Mir's stored per-sentence content scores, one column ``metric@modification`` per (metric, setting)."""
    base = dataset_dir("mir2019") / "evaluations" / "automated" / "content_preservation" / "sentence_level"
    columns: dict[str, list[np.ndarray]] = {}
    for cfg in MIR_SETTINGS:
        stored = np.load(base / f"{cfg.model}_{cfg.directory}.npz", allow_pickle=True)  # their own release
        for modification, key in MODIFICATIONS.items():
            scores = stored[key].item()
            for metric, mir_key in MIR_KEYS.items():
                columns.setdefault(f"{metric}@{modification}", []).append(np.asarray(scores[mir_key], dtype=float))
    return pd.DataFrame({k: np.concatenate(v) for k, v in columns.items()}, index=frame.index)


def word2vec_for(texts: list[str], lexicon: Lexicon | None, mode: str, seed: int) -> WordVectors:
    """word2vec on the Yelp corpus as scored: plain for none/remove, style-masked for masking (as Mir did)."""
    return train_word2vec(modify_texts(texts, lexicon, mode) if mode == "mask" else texts, seed=seed)


def score_attribution_masked(card: Scorecard, corpus: Corpus, w2v: WordVectors, glove: WordVectors,
                             seed: int) -> dict[str, dict[str, int]]:
    """Every metric on text masked by integrated-gradient attributions of the Yelp MiniLM classifier.

    Attributions are computed once per distinct text and rendered twice: the words carrying the top
    ``ATTRIBUTION_THRESHOLD`` of the attribution deleted (``attribution-delete``) or replaced by ``<masked>``
    (``attribution-mask``).  The threshold is the best-agreeing masked setting of the Reed & Beck sweep.
    """
    classifier = yelp_transformer(corpus, seed=seed, verbose=False).model
    frame = card.frame
    texts = sorted(set(frame["input"]) | set(frame["output"]))
    results = AttributionMasker(classifier, threshold=ATTRIBUTION_THRESHOLD, n_steps=16).attributions(texts)
    counts = {}
    for mode in ("delete", "mask"):
        masker = AttributionMasker(classifier, threshold=ATTRIBUTION_THRESHOLD, mode=mode, n_steps=16)
        rendered = dict(zip(texts, masker.render(masker.remask(results)), strict=True))
        modified = ([rendered[t] for t in frame["input"]], [rendered[t] for t in frame["output"]])
        counts |= score_all(card, w2v, glove, None, modification=f"attribution-{mode}", modified=modified)
    return counts


def score_all(card: Scorecard, w2v: WordVectors, glove: WordVectors, tag: str | None,
              **options: object) -> dict[str, dict[str, int]]:
    """:data:`TEXT_METRICS`, and :data:`VECTOR_METRICS` over word2vec and over GloVe (tagged ``glove``), each scored
    with ``options`` (:func:`~tsteval.metrics.content.scorer.score_content`'s); the policy counts."""
    counts = score_content(card, TEXT_METRICS, tag=tag, **options)
    for name, words in ((tag, w2v), (f"{tag},glove" if tag else "glove", glove)):
        counts |= score_content(card, VECTOR_METRICS, tag=name, resources=Resources(ResourceOptions(vectors=words)),
                                **options)
    return counts


def parser() -> argparse.ArgumentParser:
    """This benchmark's command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    start = time.perf_counter()

    transfers, corpus = mir_and_yelp()
    lexicons = {"mir": Lexicon.load(dataset_dir("mir2019") / "style_lexicon" / "style_words_and_weights.json"),
                "ours": build_lexicon(corpus, penalty="l1", C=3.0, D=2.0, seed=args.seed)}
    print(f"lexicons: Mir's {len(lexicons['mir'].words)} words, ours {len(lexicons['ours'].words)} words")
    glove = load_glove()
    card = Scorecard.from_transfers(transfers)
    counts = {}
    plain_w2v = word2vec_for(corpus.texts, None, "none", args.seed)
    for modification in ("none", "remove", "mask"):
        for lex_name, lexicon in (lexicons.items() if modification != "none" else [("-", None)]):
            tag = lex_name if lexicon is not None else None
            w2v = word2vec_for(corpus.texts, lexicon, modification, args.seed) if modification == "mask" else plain_w2v
            counts |= score_all(card, w2v, glove, tag, modification=modification, lexicon=lexicon)
            print(f"scored {modification} with lexicon {lex_name} ({time.perf_counter() - start:.0f} s)")

    counts |= score_attribution_masked(card, corpus, plain_w2v, glove, args.seed)
    print(f"scored attribution masking ({time.perf_counter() - start:.0f} s)")

    frame = card.frame
    stored = mir_stored_scores(frame)
    frame = pd.concat([frame, stored.add_suffix("-mir")], axis=1)
    cells = []  # (modification, metric, source, column or None for the paper)
    for modification in ("remove", "mask", "none", "attribution-delete", "attribution-mask"):
        for metric in (*MIR_KEYS, "chrf", "rougeL", "sbert"):
            if modification in PAPER and metric in PAPER[modification]:
                cells.append((modification, metric, "paper", None))
            if f"{metric}@{modification}" in stored:
                cells.append((modification, metric, "Mir's stored scores", f"{metric}@{modification}-mir"))
            for lex_name in (("mir", "ours") if modification in ("remove", "mask") else ("-",)):
                lex_label = {"mir": "Mir's lexicon", "ours": "our lexicon", "-": ""}[lex_name]
                vector_sets = (("word2vec (Yelp)", ""), ("GloVe 6B 50d", "glove")) if metric in VECTOR_METRICS \
                    else (("", ""),)
                for vec_label, vec_tag in vector_sets:
                    tags = [t for t in (lex_name if lex_name != "-" else "", vec_tag) if t]
                    cells.append((modification, metric, ", ".join(t for t in ("ours", lex_label, vec_label) if t),
                                  f"{metric}@{modification}" + (f"[{','.join(tags)}]" if tags else "")))
    columns = [c for *_, c in cells if c is not None]
    figures = by_model(frame, columns, HUMAN, args.seed, [c for c in columns if frame[c].corr(frame[HUMAN]) < 0])
    rows = []
    for modification, metric, source, column in cells:
        p = PAPER.get(modification, {}).get(metric)
        row = {"modification": modification, "metric": metric, "source": source}
        for i, m in enumerate((*MODELS, "Average")):
            values = figures[column][m] if column else (*p[2 * i:2 * i + 2], None, None)
            row |= dict(zip((f"{m}_{k}" for k in FIELDS), values, strict=True))
        rows.append(row)
    args.out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(args.out / "mir_content_reproduction.csv", index=False)  # full precision
    publish(args.out, "mir_content_reproduction", {
        "rows": len(frame), "lexicon_words": {k: len(v.words) for k, v in lexicons.items()}, "seed": args.seed,
        "seconds": round(time.perf_counter() - start), "counts": counts}, lambda _: page(args.out))
    return 0


def page(folder: Path) -> str:
    """``mir_content_reproduction.md`` from its CSV and JSON in ``folder``."""
    table = pd.read_csv(folder / "mir_content_reproduction.csv")
    run = json.loads((folder / "mir_content_reproduction.json").read_text(encoding="utf-8"))

    md_lines = ["# Mir et al. (2019) Tables 4.4 / 4.5 reproduction: content preservation vs human ratings", "",
                f"{run['rows']} transfers (12 settings x 244 items); absolute Pearson r with `{HUMAN}`, settings of a "
                "model pooled; `±` is Mir's margin 1.96·(1−r²)/√n, which takes the rows as independent (what the "
                "paper prints); `[…]` is the engine's 95% interval (`tsteval.metaeval.engine.meta_evaluate_frame`: "
                f"1,000 bootstrap resamples clustered by input, seed {run['seed']}; the Average's as the "
                "within-system level with the models as the systems); Average = mean over the three models, as in "
                "the paper. `bleu_mir` is sentence BLEU with sacreBLEU's `floor` smoothing (0.01) and no effective "
                "order, the definition that reproduces Mir's stored BLEU; WMD is a distance (anti-correlated), hence "
                "|r|.", f"Lexicons: Mir's published one ({run['lexicon_words']['mir']} words) and ours "
                f"({run['lexicon_words']['ours']} words; L1 LR, C=3, D=2 on Yelp dev+test without the evaluation "
                "inputs). word2vec: gensim on that corpus (a separate model on style-masked text for masking).",
                f"Run time {run['seconds']} s.", "", CHANGES, ""]
    top = f"top {ATTRIBUTION_THRESHOLD:.0%} of the attribution"
    sections = (("remove", "Style removal (Table 4.4)"), ("mask", "Style masking (Table 4.5)"),
                ("none", "No modification (not in the paper)"),
                ("attribution-delete", f"Attribution deletion, {top} (not in the paper)"),
                ("attribution-mask", f"Attribution masking, {top} (not in the paper)"))
    for modification, title in sections:
        part = table[table["modification"] == modification]
        md_lines += [f"## {title}", "", md.table(pd.DataFrame([{"metric": r["metric"], "source": r["source"], **{
            m: r_margin(tuple(r[f"{m}_{k}"] for k in FIELDS)) for m in (*MODELS, "Average")}}
            for _, r in part.iterrows()])), ""]
    md_lines += ["## Reading the differences (this run)", "", *(f"- {line}" for line in READING), ""]
    empties = pd.DataFrame(run["counts"]).T.fillna(0).astype(int)
    if (empties := empties[(empties > 0).any(axis=1)]).size:
        md_lines += ["## Empty texts after modification and all-OOV texts (counted, scored by the documented policy)",
                     "", md.table(empties.rename_axis("column").reset_index()), ""]
    return "\n".join(md_lines)


if __name__ == "__main__":
    raise SystemExit(main())
