"""One ranking: the joint score J, the per-direction leaderboard, the baselines as systems and the significance
matrix, on a small two-direction Yelp run (TF-IDF + LR classifier trained on Yelp dev sentences)."""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import read_slice

import tsteval
from tsteval.cli.main import main
from tsteval.core.errors import TstevalError
from tsteval.core.records import Transfers
from tsteval.core.tokenize import tokenize
from tsteval.experiment.compare.significance import compare_runs, matrix_resamples, matrix_table, significance_matrix
from tsteval.experiment.plan.baselines import baseline_system, retrieve_nearest
from tsteval.lexicons.lexicon import Lexicon
from tsteval.metrics.joint.score import JointRecipe, leaderboard, score_joint, strap_recipe
from tsteval.scorecard import Scorecard

N = 8
LEXICON = Lexicon({"0": [["terrible", -2.0], ["rude", -1.5], ["bad", -1.0], ["worst", -1.0]],
                   "1": [["great", 2.0], ["delicious", 1.5], ["friendly", 1.2], ["best", 1.0]]})


@pytest.fixture(scope="module")
def yelp(data_root: Path) -> dict[str, list[str]]:
    return {label: read_slice(data_root / "yelp" / f"sentiment.dev.{label}", 300) for label in ("0", "1")}


@pytest.fixture(scope="module")
def corpus(yelp: dict[str, list[str]]) -> dict[str, list[str]]:
    """The training corpus: every dev sentence but the evaluated inputs (the first N of each style)."""
    return {label: texts[N:] for label, texts in yelp.items()}


@pytest.fixture(scope="module")
def transfers(yelp: dict[str, list[str]]) -> Transfers:
    """Two systems on both directions: ``swap`` answers with a sentence of the target style, ``echo`` with its
    input plus one word."""
    parts = []
    for source, target in (("0", "1"), ("1", "0")):
        inputs = yelp[source][:N]
        outputs = {"swap": yelp[target][100:100 + N], "echo": [f"{t} indeed" for t in inputs]}
        for system, texts in outputs.items():
            part = Transfers.from_pairs(inputs, texts, source_style=source, target_style=target, system=system).frame
            parts.append(part.assign(item=[f"{source}-{i}" for i in range(N)]))
    return Transfers(pd.concat(parts, ignore_index=True), "<toy>")


@pytest.fixture(scope="module")
def card(transfers: Transfers, corpus: dict[str, list[str]]) -> Scorecard:
    plan = tsteval.Plan(transfers, classifiers={"lr": _classifier(corpus)}, content=("bleu", "chrf"),
                        naturalness=("kn3",), human=[t for texts in corpus.values() for t in texts],
                        baselines=("copy", "delete-lexicon", "retrieve-nearest"), lexicon=LEXICON,
                        corpus=tsteval.Corpus([t for s in corpus for t in corpus[s]],
                                              [s for s in corpus for _ in corpus[s]]),
                        joint="toy=target_acc@lr,chrf@none,ppl@kn3<=400")
    return tsteval.run(plan)


def _classifier(corpus: dict[str, list[str]]) -> object:
    from tsteval.classifiers.base import make_classifier

    return make_classifier("tfidf-lr").fit([t for s in corpus for t in corpus[s]], [s for s in corpus for _ in
                                                                                     corpus[s]])


def test_joint_is_the_per_sentence_product_of_its_factors(card: Scorecard) -> None:
    frame = card.frame
    expected = frame["target_acc@lr"] * frame["chrf@none"] / 100 * (frame["ppl@kn3"] <= 400)
    np.testing.assert_allclose(frame["joint@toy"].to_numpy(), expected.to_numpy(), atol=1e-12)
    assert 0 < frame["joint@toy"].mean() < 1
    signature = card.signatures["joint@toy"]
    assert signature.startswith("metric:joint|product:per-sentence|style:target_acc@lr|content:chrf@none|"
                                "fluency:ppl@kn3<=400|parts:")


def test_strap_recipe_maps_acc_sim_fluency_onto_the_metrics() -> None:
    rows = pd.DataFrame({"system": "s", "setting": "d", "item": range(4), "input": list("abcd"),
                         "output": list("efgh"), "source_style": "0", "target_style": "1"})
    card = Scorecard.from_transfers(Transfers(rows))
    card.add("target_acc@ft", [1.0, 1.0, 0.0, 1.0], "metric:target_acc|clf:ft")
    card.add("sbert@none", [0.8, -0.2, 0.9, 0.5], "metric:sbert|mod:none")
    card.add("naturalness@unigram", [0.7, 0.9, 0.9, 0.2], "metric:adv_naturalness|clf:unigram")
    recipe = strap_recipe(card, ["ft"])
    assert str(recipe.fluency) == "naturalness@unigram>0.5" and recipe.column == "joint@strap"
    score_joint(card, recipe)
    # STRAP: ACC x SIM x FL per sentence (a negative cosine counts as no similarity), then the mean.
    assert card.frame["joint@strap"].tolist() == pytest.approx([0.8, 0.0, 0.0, 0.0])
    assert strap_recipe(card, []) is None


@pytest.mark.parametrize(("spec", "fragment"), [
    ("target_acc@lr,chrf@none", "three factors"),
    ("target_acc@lr,chrf@none,ppl@kn3>=4", "lower-is-better, so its indicator is ppl@kn3<=T"),
    ("target_acc@lr,chrf@none,ppl@kn3", "give a threshold"),
    ("target_acc@lr,nope@none,ppl@kn3<=4", "'nope' is not a metric"),
    ("target_acc@lr,bleu@mask,ppl@kn3<=4", "did not score"),
    ("chrf@none,target_acc@lr,ppl@kn3<=4", "the style factor of J must be a style metric"),
])
def test_bad_recipes_are_one_line_errors(card: Scorecard, spec: str, fragment: str) -> None:
    with pytest.raises(TstevalError, match=re.escape(fragment)):
        score_joint(card, JointRecipe.parse(spec))


def test_leaderboard_ranks_each_direction_apart(card: Scorecard) -> None:
    recipe = JointRecipe.parse("toy=target_acc@lr,chrf@none,ppl@kn3<=400")
    board = leaderboard(card, recipe, n_resamples=200)
    assert set(zip(board["source_style"], board["target_style"], strict=True)) == {("0", "1"), ("1", "0")}
    frame = card.frame
    for row in board.itertuples():
        rows = frame[(frame["source_style"] == row.source_style) & (frame["target_style"] == row.target_style)
                     & (frame["system"] == row.system)]
        assert row.n == len(rows) == N
        assert row.J == pytest.approx(rows["joint@toy"].mean())
        assert row.content == pytest.approx((rows["chrf@none"] / 100).mean())
        assert row.J_low <= row.J <= row.J_high
    for _, part in board.groupby(["source_style", "target_style"]):
        assert part["rank"].tolist() == list(range(1, len(part) + 1))
        assert part["J"].is_monotonic_decreasing
        assert len(part) == 5  # two systems and three baselines


def test_copy_scores_perfect_content_and_no_style(card: Scorecard) -> None:
    copy = card.frame[card.frame["system"] == baseline_system("copy")]
    assert len(copy) == 2 * N and (copy["output"] == copy["input"]).all()
    assert np.allclose(copy["bleu@none"], 100) and np.allclose(copy["chrf@none"], 100)
    assert np.allclose(copy["sti@lr"], 0.0, atol=1e-12)
    means = card.frame.groupby("system")[["bleu@none", "sti@lr"]].mean()
    assert means["bleu@none"].idxmax() == baseline_system("copy")
    assert means.loc[baseline_system("copy"), "sti@lr"] < means.loc["swap", "sti@lr"]


def test_delete_lexicon_keeps_no_lexicon_word(card: Scorecard) -> None:
    deleted = card.frame[card.frame["system"] == baseline_system("delete-lexicon")]
    assert len(deleted) == 2 * N
    for text, source in zip(deleted["output"], deleted["input"], strict=True):
        assert not set(tokenize(text)) & LEXICON.words
        assert [w for w in tokenize(source) if w not in LEXICON.words] == tokenize(text)


def _tfidf(texts: list[str], vocabulary_texts: list[str]) -> np.ndarray:
    """scikit-learn's default TF-IDF written out: raw counts of lower-cased 2+ character words, idf = ln((1 + n) /
    (1 + df)) + 1 over ``vocabulary_texts``, rows l2-normalised."""
    def words(text: str) -> list[str]:
        return re.findall(r"(?u)\b\w\w+\b", text.lower())

    vocabulary = sorted({w for t in vocabulary_texts for w in words(t)})
    index = {w: i for i, w in enumerate(vocabulary)}
    df = Counter(w for t in vocabulary_texts for w in set(words(t)))
    idf = np.array([math.log((1 + len(vocabulary_texts)) / (1 + df[w])) + 1 for w in vocabulary])
    matrix = np.zeros((len(texts), len(vocabulary)))
    for row, text in enumerate(texts):
        for word, count in Counter(words(text)).items():
            if word in index:
                matrix[row, index[word]] = count * idf[index[word]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def test_retrieve_nearest_is_the_argmax_of_tfidf_cosine(card: Scorecard, corpus: dict[str, list[str]]) -> None:
    texts = [t for s in corpus for t in corpus[s]]
    retrieved = card.frame[card.frame["system"] == baseline_system("retrieve-nearest")]
    for query, output, target in zip(retrieved["input"], retrieved["output"], retrieved["target_style"],
                                     strict=True):
        pool = [t for t in corpus[target] if t != query]
        cosine = _tfidf([query], texts) @ _tfidf(pool, texts).T
        assert output == pool[int(np.argmax(cosine[0]))] and output != query
    # the input itself is never retrieved, even when the corpus holds it
    withheld = tsteval.Corpus(["the food was great", "great food here"], ["1", "1"])
    assert retrieve_nearest(["the food was great"], ["1"], withheld) == ["great food here"]
    with pytest.raises(TstevalError, match="no sentence of the target styles"):
        retrieve_nearest(["x y"], ["2"], withheld)


def test_significance_matrix_equals_pairwise_compare_with_holm(card: Scorecard) -> None:
    column = "chrf@none"
    pairs = significance_matrix(card, [column], n_resamples=300, seed=7)
    systems = list(dict.fromkeys(card.frame["system"]))
    assert len(pairs) == len(systems) * (len(systems) - 1) // 2
    # one direction's matrix against compare_runs of the two systems' runs, in that direction
    row = pairs[(pairs["a"] == "swap") & (pairs["b"] == "echo")].iloc[0]
    forward = card.frame[card.frame["source_style"].astype(str) == "0"].reset_index(drop=True)
    one = significance_matrix(Scorecard(forward, card.signatures), [column], n_resamples=300, seed=7)
    one = one[(one["a"] == "swap") & (one["b"] == "echo")].iloc[0]
    single = {name: Scorecard(card.frame[card.frame["system"] == name].reset_index(drop=True), card.signatures)
              for name in ("swap", "echo")}
    table, counts = compare_runs(single["swap"], single["echo"], n_resamples=300, seed=7)
    assert counts["matched"].tolist() == [N, N]  # both directions, each on its own
    reference = table[table["source_style"].astype(str) == "0"].set_index("metric").loc[column]
    assert one.n == N and row.n == 2 * N  # the card's own matrix pools what it is given: direction_matrices splits
    assert one.difference == pytest.approx(reference["difference"])
    assert one.p_bootstrap == pytest.approx(reference["p_bootstrap"])
    # Holm by hand: sorted p times (m - rank), running maximum, capped at 1
    p = pairs["p_bootstrap"].to_numpy()
    order = np.argsort(p)
    adjusted = np.minimum(1, np.maximum.accumulate(p[order] * (len(p) - np.arange(len(p)))))
    np.testing.assert_allclose(pairs["p_holm"].to_numpy()[order], adjusted)
    square = matrix_table(pairs, column).set_index("system")
    assert square.loc["swap", "echo"].rstrip("*") == f"{-row.difference:+.3f}"
    assert square.loc["echo", "swap"].rstrip("*") == f"{row.difference:+.3f}"
    assert square.loc[baseline_system("copy"), baseline_system("copy")] == "—"
    assert square.loc["echo", baseline_system("copy")].endswith("*")  # copy's chrF (100) is far above echo's
    assert significance_matrix(card, [column])["resamples"].iloc[0] == 1000  # 10 pairs: 20 x 10 < 1000
    assert matrix_resamples(153) == 3060  # 18 systems: 1 / 3061 x 153 < 0.05


def test_compare_two_runs_gives_one_table_per_direction(card: Scorecard, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    import json

    for name in ("swap", "echo"):
        (tmp_path / name).mkdir()
        Scorecard(card.frame[card.frame["system"] == name].reset_index(drop=True), card.signatures).write(
            tmp_path / name)
    assert main(["compare", str(tmp_path / "swap"), str(tmp_path / "echo"), "--json", "--resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(d["source_style"], d["target_style"]) for d in document["directions"]] == [("0", "1"), ("1", "0")]
    assert document["matched"] == sum(d["matched"] for d in document["directions"]) == 2 * N
    for direction in document["directions"]:  # each direction's means from its own rows, never pooled
        rows = card.frame[card.frame["source_style"].astype(str) == direction["source_style"]]
        means = rows.groupby("system")["chrf@none"].mean()
        chrf = next(m for m in direction["metrics"] if m["metric"] == "chrf@none")
        assert (chrf["mean_a"], chrf["mean_b"]) == (pytest.approx(means["swap"]), pytest.approx(means["echo"]))
    assert main(["compare", str(tmp_path / "swap"), str(tmp_path / "echo"), "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "directions are not pooled" in text and "\n0 → 1: " in text and "\n1 → 0: " in text


def test_manifest_report_shows_leaderboard_baselines_and_matrix(tmp_path: Path, yelp: dict[str, list[str]],
                                                                corpus: dict[str, list[str]]) -> None:
    from tsteval.experiment.run.runner import run_experiment

    for label in ("0", "1"):
        (tmp_path / f"in.{label}").write_text("\n".join(yelp[label][:N]) + "\n")
        (tmp_path / f"train.{label}").write_text("\n".join(corpus[label]) + "\n")
        (tmp_path / f"out.{label}").write_text("\n".join(yelp["1" if label == "0" else "0"][:N]) + "\n")
    (tmp_path / "m.yaml").write_text(
        "transfers:\n  systems:\n    - name: '<b>evil</b>'\n      settings:\n        - files:\n"
        "            - {inputs: in.0, outputs: out.0, source_style: '0', target_style: '1'}\n"
        "            - {inputs: in.1, outputs: out.1, source_style: '1', target_style: '0'}\n"
        "corpus: {style: {'0': train.0, '1': train.1}}\n"
        "classifiers: {lr: {backend: tfidf-lr, heldout: 0}}\n"
        "metrics: {style: {classifiers: [lr]}, content: {metrics: [chrf]}, naturalness: [kn3]}\n"
        "baselines: [copy, retrieve-nearest]\n"
        "joint: {name: toy, style: target_acc@lr, content: chrf@none, fluency: ppl@kn3<=400}\n"
        "compare: {resamples: 50}\nreport: {bootstrap_resamples: 50}\n")
    run_experiment(tmp_path / "m.yaml", out=tmp_path / "run", quiet=True)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Leaderboard" in report and "### 0 → 1" in report and "### 1 → 0" in report
    assert "## Significance between systems" in report and "### 0 → 1: `sti@lr`" in report
    assert "### 1 → 0: `sti@lr`" in report  # one matrix per direction: directions are not pooled
    assert "smallest Holm-adjusted p of these 3 pairs is 0.059" in report  # 3 pairs x 1 / 51
    assert "### 0 → 1: `joint@toy`" in report and "baseline:retrieve-nearest" in report
    assert "<b>" not in report and "&lt;b&gt;evil&lt;/b&gt;" in report
    html = (tmp_path / "run" / "report.html").read_text()
    assert "<b>evil" not in html and "&lt;b&gt;evil" in html
    board = pd.read_csv(tmp_path / "run" / "leaderboard.csv", dtype={"source_style": str, "target_style": str})
    assert len(board) == 2 * 3
    assert "## Leaderboard" in (tmp_path / "run" / "summary.md").read_text()
    # the copy sanity check: copy (outputs = inputs, chrF 100) outranks the system in 0 -> 1 only; said, escaped,
    # in the report and leaderboard.md, and marked in leaderboard.csv
    line = ("sanity: 0 → 1: baseline:copy (the unchanged input) ranks 1 of 3 by J, above 1 system(s) (&lt;b&gt;evil"
            "&lt;/b&gt;): this J rewards not transferring")
    assert f"Warning: {line}" in report
    assert "1 → 0: baseline:copy" not in report
    assert "ranks 1 of 3 by J" in (tmp_path / "run" / "leaderboard.md").read_text()
    assert board.loc[board["copy_above"], ["source_style", "system"]].values.tolist() == [["0", "<b>evil</b>"]]
    pairs = pd.read_csv(tmp_path / "run" / "significance.csv", dtype={"source_style": str, "target_style": str})
    assert set(pairs["metric"]) == {"sti@lr", "chrf@none", "joint@toy"}
    assert set(pairs["direction"]) == {"0 → 1", "1 → 0"} and len(pairs) == 2 * 3 * 3  # directions x columns x pairs
    # one cell recomputed from the scorecard: chrF of the copy minus the system's, over 1 -> 0's inputs only
    scored = pd.read_parquet(tmp_path / "run" / "scorecard.parquet")
    one = scored[(scored["source_style"].astype(str) == "1") & (scored["target_style"].astype(str) == "0")]
    means = one.groupby("system")["chrf@none"].mean()
    cell = pairs[(pairs["metric"] == "chrf@none") & (pairs["direction"] == "1 → 0")
                 & (pairs["a"] == "<b>evil</b>") & (pairs["b"] == "baseline:copy")].iloc[0]
    assert cell["n"] == N and cell["difference"] == pytest.approx(means["baseline:copy"] - means["<b>evil</b>"])


def test_manifest_compare_without_two_systems_in_a_direction_is_one_line(tmp_path: Path,
                                                                          yelp: dict[str, list[str]]) -> None:
    from tsteval.experiment.run.runner import run_experiment

    (tmp_path / "in.0").write_text("\n".join(yelp["0"][:N]) + "\n")
    (tmp_path / "out.0").write_text("\n".join(yelp["1"][:N]) + "\n")
    (tmp_path / "m.yaml").write_text(
        "transfers:\n  systems:\n    - name: only\n      settings:\n        - files:\n"
        "            - {inputs: in.0, outputs: out.0, source_style: '0', target_style: '1'}\n"
        "metrics: {content: {metrics: [chrf]}}\ncompare: {metrics: [chrf@none]}\n")
    with pytest.raises(TstevalError, match="compare: no transfer direction has two systems"):
        run_experiment(tmp_path / "m.yaml", out=tmp_path / "run", quiet=True)
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_score_cli_baselines_and_leaderboard(tmp_path: Path, yelp: dict[str, list[str]],
                                             corpus: dict[str, list[str]], capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "in.txt").write_text("\n".join(yelp["0"][:N]) + "\n")
    (tmp_path / "out.txt").write_text("\n".join(yelp["1"][:N]) + "\n")
    (tmp_path / "pos.txt").write_text("\n".join(corpus["1"]) + "\n")
    LEXICON.save(tmp_path / "lexicon.json")
    _classifier(corpus).save(tmp_path / "clf")
    args = ["score", "--classifier", f"lr={tmp_path / 'clf'}", "--pairs", str(tmp_path / "in.txt"),
            str(tmp_path / "out.txt"), "--source-style", "0", "--target-style", "1", "--content", "bleu",
            "--naturalness", "kn3", "--lexicon", str(tmp_path / "lexicon.json"),
            "--baselines", "copy,delete-lexicon,retrieve-nearest", "--baseline-corpus",
            f"1={tmp_path / 'pos.txt'}",
            "--joint", "target_acc@lr,bleu@none,ppl@kn3<=500", "--out", str(tmp_path / "run")]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "Leaderboard: joint@custom per transfer direction" in printed and "baseline:delete-lexicon" in printed
    assert "\\" not in printed.split("Leaderboard:")[1]  # plain text on the terminal: no Markdown escapes
    board = pd.read_csv(tmp_path / "run" / "leaderboard.csv")
    copy = board.set_index("system").loc[baseline_system("copy")]
    assert copy["content"] == 1.0 and copy["style"] == board["style"].min()  # BLEU 100, least classified as target
    assert set(board["system"]) == {"system", *(baseline_system(b) for b in ("copy", "delete-lexicon",
                                                                            "retrieve-nearest"))}
    assert main([*args[:-2], "--baselines", "copy,nearest", "--out", str(tmp_path / "bad")]) == 2
    assert "unknown baselines ['nearest']" in capsys.readouterr().err


@pytest.mark.parametrize(("extra", "fragment"), [
    ("baselines: [copy, nearest]", "baselines: unknown baselines ['nearest']; choose from"),
    ("baselines: [delete-lexicon]", "baselines: delete-lexicon needs a style lexicon"),
    ("joint: best", "joint: joint must be auto, strap, none or a recipe STYLE,CONTENT,FLUENCY, not 'best'"),
    ("joint: {style: chrf@none, content: chrf@none, fluency: ppl@kn3<=9}", "the style factor of J must be a style"),
    ("compare: {metrics: [nope]}", "compare.metrics[0]: 'nope' is not a metric column"),
])
def test_manifest_ranking_keys_are_validated(tmp_path: Path, extra: str, fragment: str) -> None:
    from tsteval.experiment.manifest.loader import ManifestError, load_manifest

    (tmp_path / "t.csv").write_text("input,output,source_style,target_style\na b,c d,0,1\n")
    (tmp_path / "m.yaml").write_text(f"transfers: {{table: t.csv}}\nmetrics: {{content: {{metrics: [chrf]}}}}\n"
                                     f"{extra}\n")
    with pytest.raises(ManifestError, match=re.escape(fragment)):
        load_manifest(tmp_path / "m.yaml")
