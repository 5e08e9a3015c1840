"""A rated check where the answer is known: do content metrics rank style rewrites that keep the content above
edits that change it?  Built from the Bible's parallel versions, where verse identity is content.

For 300 verses of the held-out books of ``bible_compliancy`` (seeded), KJV verse x is paired with
(:func:`tsteval.readers.bible.known_answer_pairs`)

* ``rewrite``: the same verse in BBE, WEB or YLT (in turn): another style, the same content;
* ``word_swap``: x with one content word replaced by a content word of another verse: the same style, one fact
  changed;
* ``adjacent``: the next verse of the chapter in the same target version: another style and other content.

Each metric's score of (x, output), oriented by its declared direction, should be higher for ``rewrite`` than for
the other two.  Per verse, *pairwise accuracy* is 1 when the rewrite scores higher than the edit, 0.5 on a tie;
the AUC (``sklearn.metrics.roc_auc_score``) pools every rewrite against every content-changing output.  95%
intervals resample the verses (1,000 resamples).  The lexicon (``mask``), the LEACE erasers (``erase``) and the
HH pair classifier (``hh_content``) are trained on the other books only, with the version as the style.

Run: ``python -m benchmarks.studies.content_known_answer`` (several minutes on 2 CPU cores).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from benchmarks.reproductions.bible_compliancy import HELDOUT_BOOKS
from tsteval.aggregate import N_RESAMPLES
from tsteval.classifiers.pairs import MATCH, NO_MATCH, FeaturePairClassifier
from tsteval.core import markdown as md
from tsteval.core.records import Corpus, Transfers
from tsteval.experiment.plan.plan import Plan
from tsteval.experiment.run.execute import execute
from tsteval.lexicons.builder import build_lexicon
from tsteval.metaeval.statistics import clustered_bootstrap
from tsteval.metrics.registry import metric_of
from tsteval.readers.bible import known_answer_pairs, parallel_verses

RESULTS = Path(__file__).resolve().parents[1] / "results"
SOURCE = "KJV"
TARGETS = ("BBE", "WEB", "YLT")
N_VERSES = 300
N_HH_TRAIN = 3000
TRAIN_PER_STYLE = 5000
SEED = 0
METRICS = ("bleu", "chrf", "meteor", "wmd", "sbert", "hh_content")
MODIFICATIONS = ("none", "mask", "erase")


def training_corpus(train: pd.DataFrame, rng: np.random.Generator) -> Corpus:
    """A seeded sample of the training books' verses of every version, labelled by version."""
    texts, labels = [], []
    for version in (SOURCE, *TARGETS):
        rows = np.sort(rng.choice(len(train), min(TRAIN_PER_STYLE, len(train)), replace=False))
        texts += train[version].iloc[rows].tolist()
        labels += [version] * len(rows)
    return Corpus(texts, labels, "bible training books")


def hh_classifier(train: pd.DataFrame, rng: np.random.Generator) -> FeaturePairClassifier:
    """The feature pair classifier on training-book pairs: (KJV verse, the same verse in another version) match,
    (KJV verse, a random verse of the same book in another version) do not."""
    rows = rng.choice(len(train), N_HH_TRAIN, replace=False)
    pairs, labels = [], []
    books = train["book"].to_numpy()
    for k, row in enumerate(rows):
        target = TARGETS[k % len(TARGETS)]
        other = rng.choice(np.flatnonzero((books == books[row]) & (np.arange(len(train)) != row)))
        pairs += [(train[SOURCE].iat[row], train[target].iat[row]), (train[SOURCE].iat[row], train[target].iat[other])]
        labels += [MATCH, NO_MATCH]
    return FeaturePairClassifier(seed=SEED).fit(pairs, labels)


def paired_accuracy(score: np.ndarray, items: np.ndarray, kinds: np.ndarray, kind: str):
    """The statistic: share of verses (of the given rows) whose rewrite outscores their ``kind`` edit."""
    keep = {i: s for i, s, k in zip(items, score, kinds, strict=True) if k == "rewrite"}
    change = {i: s for i, s, k in zip(items, score, kinds, strict=True) if k == kind}
    order = sorted(keep)
    a, b = np.array([keep[i] for i in order]), np.array([change[i] for i in order])
    wins = (a > b) + 0.5 * (a == b)

    def statistic(rows: np.ndarray) -> float:
        return float(wins[rows].mean())

    return statistic


def main() -> None:
    import torch

    torch.set_num_threads(2)
    start = time.time()
    rng = np.random.default_rng(SEED)
    verses = parallel_verses((SOURCE, *TARGETS))
    heldout = verses["book"].isin(HELDOUT_BOOKS)
    pairs = known_answer_pairs(verses[heldout], SOURCE, TARGETS, N_VERSES, seed=SEED)
    train = verses[~heldout].reset_index(drop=True)
    corpus = training_corpus(train, rng)
    lexicon = build_lexicon(corpus, penalty="l1", C=3.0, D=2.0, seed=SEED)
    hh = hh_classifier(train, rng)
    transfers = Transfers.from_pairs(pairs["input"].tolist(), pairs["output"].tolist(), source_style=SOURCE,
                                     target_style=pairs["target_version"].tolist(), system="bible",
                                     setting="known-answer")
    plan = Plan(transfers, content=METRICS, modifications=MODIFICATIONS, lexicon=lexicon, corpus=corpus,
                hh={"bible": hh}, seed=SEED, quiet=False, precision="fp32")
    card = execute(plan, log=lambda m: print(m, flush=True)).card
    columns = [c for c in card.metrics if c.split("@")[0] in METRICS]
    items = pairs["item"].to_numpy()
    kinds = pairs["kind"].to_numpy()
    keeps = pairs["keeps_content"].to_numpy(bool)
    verse_rows = np.arange(N_VERSES)
    by_item = {i: np.flatnonzero(items == i) for i in range(N_VERSES)}
    rows = []
    for column in columns:
        metric = metric_of(column, card.signatures[column])
        value = card.frame[column].to_numpy(float)
        score = value if metric.higher_is_better else -value

        def auc(selected: np.ndarray, score: np.ndarray = score) -> float:
            rows_ = np.concatenate([by_item[i] for i in selected])
            return float(roc_auc_score(keeps[rows_], score[rows_]))

        statistics = {"word_swap": paired_accuracy(score, items, kinds, "word_swap"),
                      "adjacent": paired_accuracy(score, items, kinds, "adjacent"), "auc": auc}
        intervals = clustered_bootstrap(verse_rows, statistics, N_RESAMPLES, SEED)
        means = {k: float(value[kinds == k].mean()) for k in ("rewrite", "word_swap", "adjacent")}
        rows.append({"column": column, "higher_is_better": metric.higher_is_better,
                     **{f"mean_{k}": v for k, v in means.items()},
                     **{f"{name}{suffix}": intervals[name][j] for name in statistics
                        for j, suffix in enumerate(("", "_low", "_high"))}})
    table = pd.DataFrame(rows)
    table.to_csv(RESULTS / "content_known_answer.csv", index=False)  # full precision: the page rounds once
    meta = {"verses": N_VERSES, "source": SOURCE, "targets": TARGETS, "heldout_books": HELDOUT_BOOKS,
            "training_texts": len(corpus), "lexicon_words": len(lexicon.words), "hh_training_pairs": 2 * N_HH_TRAIN,
            "n_resamples": N_RESAMPLES, "seed": SEED, "seconds": round(time.time() - start),
            "examples": pairs.head(6).to_dict("records"),
            "signatures": {c: card.signatures[c] for c in columns}}
    (RESULTS / "content_known_answer.json").write_text(json.dumps(meta, indent=1, default=str))
    write_markdown(table, meta)
    print(table.to_string(index=False))


def _cell(row: object, name: str) -> str:
    return f"{getattr(row, name):.3f} [{getattr(row, name + '_low'):.3f}, {getattr(row, name + '_high'):.3f}]"


def write_markdown(table: pd.DataFrame, meta: dict) -> None:
    """The table, sorted by AUC, with the examples (escaped: they are data)."""
    lines = [
        "# Content metrics where the answer is known (Bible verses)",
        "",
        f"{meta['verses']} {meta['source']} verses of the held-out books ({', '.join(meta['heldout_books'])}), "
        f"each paired with a style rewrite that keeps its content (the same verse in {', '.join(meta['targets'])}, "
        "in turn) and with two outputs that change it: `word_swap` (one content word replaced by a content word of "
        "another verse, same style) and `adjacent` (the next verse, in the rewrite's version).  Pairwise accuracy: "
        "share of verses whose rewrite scores better (by the metric's declared direction) than the edit, ties 0.5; "
        "AUC: every rewrite against every content-changing output (`sklearn.metrics.roc_auc_score`).  95% intervals "
        f"from {meta['n_resamples']} resamples of the verses.  Lexicon ({meta['lexicon_words']} words, L1 C=3 D=2), "
        f"LEACE erasers and the HH feature pair classifier ({meta['hh_training_pairs']:,} pairs) are trained on "
        f"{meta['training_texts']:,} verses of the other books, style = version.  0.5 = chance.",
        "",
        md.table(pd.DataFrame([{"column": r.column, "rewrite > word_swap": _cell(r, "word_swap"),
                                "rewrite > adjacent": _cell(r, "adjacent"), "AUC": _cell(r, "auc"),
                                **{f"mean {k}": f"{getattr(r, f'mean_{k}'):.3f}"
                                   for k in ("rewrite", "word_swap", "adjacent")}}
                               for r in table.sort_values("auc", ascending=False).itertuples()])),
    ]
    lines += ["", "Examples (first verse):", ""]
    for example in meta["examples"][:3]:
        lines.append(f"- `{example['kind']}`: {md.escape(example['input'])} → {md.escape(example['output'])}")
    lines += ["", f"Runtime {meta['seconds']} s on 2 CPU cores."]
    (RESULTS / "content_known_answer.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
