"""The rated-set reader (:mod:`tsteval.readers.rated`) and the built-in declarations, recomputed from the raw files
with pandas, the ``csv`` module and the ``krippendorff`` package; each malformed input is one line naming the file,
the row and the fix."""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tsteval.core.errors import InputError, TstevalError
from tsteval.readers.rated import Ratings, read_rated_set
from tsteval.readers.rated_sets import rated_set, rated_set_names
from tsteval.readers.rated_spec import INPUT_NUMBER, RATER_INDEX, ROW, Question, RatedSet, RatingFile

# sha256 of frame.to_csv(index=False) + the dtypes, computed from load_mir().frame and load_lai().frame of the
# per-set loaders this reader replaced (commit 7d61ec5, where the two frames were compared with assert_frame_equal).
OLD_LOADERS = {"mir": "3d226638e87ff794dbe0ccd20fe77d5bd728faf1cb786839a2fb76ea86f43f01",
               "lai": "cedef79dc841330ab62a56c6e51f59938c308a22e336edcb6a1fc7366d191b8f"}


@functools.cache
def _built_in(name: str) -> Ratings:
    """A built-in set, read once for the module's tests."""
    return read_rated_set(name)


def _fingerprint(frame: pd.DataFrame) -> str:
    return hashlib.sha256((frame.to_csv(index=False) + str(list(frame.dtypes.astype(str)))).encode()).hexdigest()


@pytest.mark.parametrize("name", ["mir", "lai"])
def test_mir_and_lai_frames_are_the_old_loaders(name: str, data_root: Path) -> None:
    assert _fingerprint(_built_in(name).frame) == OLD_LOADERS[name]


def test_mir_texts_are_the_released_outputs(data_root: Path) -> None:
    """The declaration reads the texts from human_ratings.csv; they are the released transfer files' lines."""
    frame = _built_in("mir").frame
    root = data_root / "mir2019"
    inputs = {s: (root / "data" / f"sentiment.test.{s}").read_text(encoding="utf-8").splitlines() for s in "01"}
    offset = {"0": 0, "1": len(inputs["0"])}
    for (system, setting, source), group in frame.groupby(["system", "setting", "source_style"]):
        directory = setting.replace("=", "_").replace(".", "_")
        tsf = (root / "transfer_model_outputs" / system / directory / f"sentiment.test.{source}.tsf")
        lines = tsf.read_text(encoding="utf-8").splitlines()
        index = group["item"] - offset[source]
        assert group["output"].tolist() == [lines[i].strip() for i in index]
        assert group["input"].tolist() == [inputs[source][i].strip() for i in index]


def test_lai_raters_average_to_the_frame(data_root: Path) -> None:
    rated = _built_in("lai")
    first = json.loads((data_root / "lai2022" / "fluency.json").read_text(encoding="utf-8").splitlines()[0])
    rows = rated.raters[(rated.raters["question"] == "fluency") & (rated.raters["item"] == 0)]
    assert dict(zip(rows["system"] + "/" + rows["rater"], rows["value"], strict=True)) == {
        f"{s}/{r}": float(v[r]) for s, v in first["sys"].items() for r in ("human_1", "human_2")}


# --- Tox600 -------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tox600(data_root: Path):
    return _built_in("tox600")


def test_tox600_means_equal_the_published_means(tox600, data_root: Path) -> None:
    published = pd.read_csv(data_root / "detox2021/manual_markup/emnlp_eval_mean.tsv", sep="\t", index_col=0)
    frame = tox600.frame.merge(published, left_on=["system", "item"], right_on=["source", "idx"], validate="1:1")
    assert len(tox600.frame) == len(frame) == 600 and frame["item"].nunique() == 200
    assert sorted(frame["system"].unique()) == ["condbert", "mask_infill", "paragedi"]
    for ours, theirs in (("human_meaning", "meaning"), ("human_style", "style"), ("human_fluency", "fluency")):
        assert np.allclose(frame[ours], frame[theirs], rtol=0, atol=1e-12)
    assert (frame["input"] == frame["original"]).all()


def test_tox600_three_labellers_and_joint_per_rater(tox600, data_root: Path) -> None:
    raw = pd.read_csv(data_root / "detox2021/manual_markup/emnlp_eval_long.tsv", sep="\t", index_col=0)
    assert len(raw) == 1800 and raw.groupby(["source", "idx"])["labeller"].nunique().eq(3).all()
    joint = tox600.raters[tox600.raters["question"] == "joint"].merge(
        raw, left_on=["system", "item", "rater"], right_on=["source", "idx", "labeller"], validate="1:1")
    product = joint["style"] * joint["meaning"] * joint["fluency"]
    assert np.allclose(joint["value"], product)
    # the released joint column is the product everywhere but one row (1.25 for 0.125: off the 0-1 scale)
    assert (~np.isclose(joint["joint"], product)).sum() == 1


def test_tox600_alpha_equals_the_krippendorff_package(tox600, data_root: Path) -> None:
    import krippendorff

    from tsteval.metaeval.rated.rater_agreement import rated_agreement

    raw = pd.read_csv(data_root / "detox2021/manual_markup/emnlp_eval_long.tsv", sep="\t", index_col=0)
    matrix = raw.pivot_table(index="labeller", columns=["source", "idx"], values="meaning").to_numpy()
    table = rated_agreement(tox600).set_index("question")
    assert table.loc["meaning", "raters"] == 5 and table.loc["meaning", "rated_twice"] == 600
    assert table.loc["meaning", "alpha_interval"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"), abs=1e-12)
    assert table.loc["meaning", "alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal",
                           value_domain=[0.0, 0.5, 1.0]), abs=1e-12)
    assert 0 < table.loc["meaning", "ceiling"] <= 1 and set(table.index) == {"style", "meaning", "fluency"}


# --- CAE-T5 -------------------------------------------------------------------------------------------------------

CONTENT_FIELD = "does_the_candidate_rephrasing_preserve_the_nontoxic_content_from_the_original_comment"


def test_cae_t5_counts_and_mean_content(data_root: Path) -> None:
    path = data_root / "mis_benchmark/source_data/cae_t5_figure_eight_ratings.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    golden = sum(r["_golden"] == "true" for r in rows)
    kept = [r for r in rows if r["_golden"] == "false"]
    assert golden == 7397 and len(kept) == 2500
    rated = _built_in("cae_t5")
    assert len(rated.frame) == 500 and rated.frame["item"].nunique() == 100 and rated.frame["system"].nunique() == 5
    per_output = rated.raters[rated.raters["question"] == "content"].groupby(["system", "item"])["rater"]
    assert per_output.nunique().eq(5).all() and len(rated.raters) == 2500 * 4
    by_output: dict[tuple[str, int], list[float]] = {}
    for r in kept:
        by_output.setdefault((r["variable"], int(r["id"])), []).append(float(r[CONTENT_FIELD]))
    frame = rated.frame.set_index(["system", "item"])
    assert all(frame.loc[key, "human_content"] == pytest.approx(np.mean(v)) for key, v in by_output.items())
    # the content-pair set CAE.csv holds the same mean for each (input, output) pair that occurs once, except the
    # 12 outputs that were also test questions: its mean counts every answer to them, ours the 5 workers' only
    cae = pd.read_csv(data_root / "mis_benchmark/datasets/CAE.csv").drop_duplicates(["text1", "text2"], keep=False)
    unique = rated.frame.drop_duplicates(["input", "output"], keep=False)
    both = unique.merge(cae, left_on=["input", "output"], right_on=["text1", "text2"])
    tests = {(r["original_toxic_comment"], r["value"]) for r in rows if r["_golden"] == "true"}
    differ = {(r.input, r.output) for r in both.itertuples() if not np.isclose(r.human_content, r.human)}
    pairs = set(zip(both["input"], both["output"], strict=True))
    assert len(both) == 488 and len(tests) == 12 and differ == tests & pairs


@pytest.mark.parametrize("name", ["tox600", "cae_t5"])
def test_the_detox_sets_style_corpus_leaves_out_every_rated_text(name: str, data_root: Path) -> None:
    from tsteval.metaeval.rated.datasets import STYLE_CORPORA

    rated = _built_in(name)
    corpus, notes = STYLE_CORPORA[rated.spec.style_corpus](rated)
    styles = (rated.frame["source_style"].iloc[0], rated.frame["target_style"].iloc[0])
    assert set(corpus.labels) == set(styles)  # toxic -> the set's source style, normal -> its target style
    # recounted from the released files: every line of the toxic files is the source style, of the normal the target
    lines = {style: [t for f in files for t in (data_root / "detox2021" / f).read_text(encoding="utf-8").splitlines()
                     if t.strip()]
             for style, files in zip(styles, (("dev/dev_toxic", "test/test_10k_toxic"),
                                              ("dev/dev_normal", "test/test_10k_normal")), strict=True)}
    assert len(corpus.texts) + notes["excluded_lines"] == sum(map(len, lines.values()))
    assert corpus.labels.count(styles[0]) <= len(lines[styles[0]])
    key = lambda text: "".join(ch for ch in text.lower() if ch.isalnum() or ch == "_")  # noqa: E731
    rated_keys = {key(t) for t in (*rated.frame["input"], *rated.frame["output"])}
    assert notes["excluded_lines"] > 0 and not rated_keys & {key(t) for t in corpus.texts}


# --- the content-pair sets ----------------------------------------------------------------------------------------

def test_content_set_rows_and_human_column(data_root: Path) -> None:
    raw = pd.read_csv(data_root / "mis_benchmark/datasets/yamsh_yelp.csv", keep_default_na=False)
    frame = _built_in("content_yamsh_yelp").frame
    assert len(frame) == len(raw) == 2000 and frame["item"].tolist() == list(range(2000))
    assert np.array_equal(frame["human_content"].to_numpy(), raw["human"].to_numpy(dtype=float))
    assert frame["input"].tolist() == raw["text1"].tolist() and frame["output"].tolist() == raw["text2"].tolist()


def test_every_built_in_is_listed_and_an_unknown_name_lists_them() -> None:
    names = rated_set_names()
    assert names[:4] == ["mir", "lai", "tox600", "cae_t5"] and len([n for n in names if n.startswith("content_")]) == 7
    with pytest.raises(TstevalError, match=r"unknown rated set 'nope'; choose from \['mir', 'lai', 'tox600'"):
        rated_set("nope")


def test_the_docs_table_holds_each_sets_counts() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "meta-evaluation.md").read_text(encoding="utf-8")
    table = page[page.index("## The built-in rated sets"):page.index("- `tox600`: Dale")]
    rows = {cells[1].strip("`"): cells for line in table.splitlines()
            if line.startswith("| `") and (cells := [c.strip() for c in line.split("|")])}
    assert list(rows) == rated_set_names()
    for name, cells in rows.items():
        rated = _built_in(name)
        frame, spec = rated.frame, rated.spec
        counts = [f"{len(frame):,}", f"{frame['input'].nunique():,}", str(frame["system"].nunique())]
        assert cells[6:9] == counts and cells[2] == spec.task, name
        assert cells[4] == f"{spec.scale[0]:g}–{spec.scale[1]:g}", name
        first = rated.raters[rated.raters["question"] == spec.judged[0].name]
        per_output = first.groupby(["system", "setting", "item"])["rater"].nunique()
        spread = f"{per_output.min()}" + ("" if per_output.min() == per_output.max() else f"–{per_output.max()}")
        expected = f"{spread} of {first['rater'].nunique()}" if spec.has_raters else "mean only"
        assert cells[5] == expected, name


def test_cli_lists_the_sets_and_refuses_an_unknown_one(capsys: pytest.CaptureFixture) -> None:
    from tsteval.cli.main import main

    with pytest.raises(SystemExit):
        main(["meta-eval", "--help"])
    assert "content_yamsh_para" in capsys.readouterr().out.replace("\n", "")
    with pytest.raises(SystemExit):
        main(["annotate", "plan", "--dataset", "nope", "--out", "x"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


# --- malformed files ----------------------------------------------------------------------------------------------

TOY = RatedSet(
    name="toy", title="a toy set", task="toxicity", folder="toy", scale=(0, 1),
    files=(RatingFile("long.tsv"),),
    fields={"input": "original", "output": "rewritten", "system": "source", "item": "idx", "rater": "labeller"},
    constants={"source_style": "toxic", "target_style": "non-toxic"}, systems=("a", "b"),
    questions=(Question("style", "style", values=(0.0, 0.5, 1.0)), Question("meaning", "content")))
HEADER = "idx\toriginal\trewritten\tsource\tstyle\tmeaning\tlabeller\n"
GOOD = ["1\tyou idiot\tyou\ta\t1.0\t0.5\tann\n", "1\tyou idiot\tyou\ta\t0.5\t1\tbob\n",
        "2\tshut up\tplease stop\tb\t1\t1\tann\n"]


def _read(tmp_path: Path, rows: list[str], spec: RatedSet = TOY):
    (tmp_path / "long.tsv").write_text(HEADER + "".join(rows), encoding="utf-8")
    return read_rated_set(spec, tmp_path)


def test_a_well_formed_toy_set(tmp_path: Path) -> None:
    rated = _read(tmp_path, GOOD)
    assert rated.frame[["system", "item", "human_style", "human_meaning"]].values.tolist() == [
        ["a", 1, 0.75, 0.75], ["b", 2, 1.0, 1.0]]
    assert rated.transfers.extra["rating_columns"] == {"human_style": "style", "human_meaning": "content"}


@pytest.mark.parametrize(("row", "message"), [
    ("1\tyou idiot\tyou\ta\t1.0\tbob\n", r"long.tsv:4: 6 fields but the header has 7 \(fix: quote a field"),
    ("1\tyou idiot\tyou\ta\t0.7\t1\tcat\n", r"long.tsv:4: style is 0.7, off the scale of style \(\[0.0, 0.5, 1.0\]\) "
                                             r"\(fix: correct the value"),
    ("1\tyou idiot\tyou\ta\t1\t3\tcat\n", r"long.tsv:4: meaning is 3, off the scale of meaning \(0 to 1\)"),
    ("1\tyou idiot\tyou\ta\t1\tgood\tcat\n", r"long.tsv:4: the rating 'meaning' is 'good', not a number "
                                              r"\(fix: write a number"),
    ("1\tyou idiot\tyou\ta\t1\t1\tbob\n", r"long.tsv:4: rater 'bob' rates system 'a' item 1 twice on style "
                                           r"\(first on line 3\) \(fix: keep one rating per rater and output"),
    ("1\tyou fool\tyou\ta\t1\t1\tcat\n", r"long.tsv:4: the input of system 'a' item 1 is 'you fool' here but "
                                          r"'you idiot' on line 2 \(fix: the rows of one output"),
    ("3\tyou idiot\t \ta\t1\t1\tcat\n", r"long.tsv:4: the output is empty \(fix: give every row its output"),
    ("1\tyou idiot\tyou\tz\t1\t1\tcat\n", r"long.tsv:4: unknown system 'z' \(fix: the declaration expects one of"),
    ("x\tyou idiot\tyou\ta\t1\t1\tcat\n", r"long.tsv:4: the item 'x' is not a whole number"),
])
def test_a_malformed_row_is_one_line_naming_file_row_and_fix(tmp_path: Path, row: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as caught:
        _read(tmp_path, [*GOOD[:2], row, GOOD[2]])
    assert "\n" not in str(caught.value)


def test_a_complete_design_is_checked(tmp_path: Path) -> None:
    complete = dataclasses.replace(TOY, complete=True)
    with pytest.raises(InputError, match=r"input 1 has 1 outputs, not one for each of the 2 systems \(fix: rate"):
        _read(tmp_path, GOOD, complete)
    rows = [*GOOD, "2\tshut up\tbe quiet\ta\t1\t\tann\n", "1\tyou idiot\tyou fool\tb\t1\t1\tann\n"]
    with pytest.raises(InputError, match=r"long.tsv:5: 1 outputs lack a meaning rating, e.g. system 'a' item 2"):
        _read(tmp_path, rows, complete)


def test_an_aggregated_set_names_a_repeated_output(tmp_path: Path) -> None:
    spec = RatedSet(name="pairs", title="pairs", task="content", folder="pairs", files=(RatingFile("p.csv"),),
                    fields={"input": "text1", "output": "text2", "item": "id"},
                    constants={"system": "pairs", "source_style": "s", "target_style": "t"},
                    questions=(Question("content", "content", field="human"),))
    (tmp_path / "p.csv").write_text("id,text1,text2,human\n0,a b,a c,4\n0,a b,a c,5\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"p.csv:3: system 'pairs' item 0 is rated twice on content \(first on "
                                         r"line 2\)"):
        read_rated_set(spec, tmp_path)
    rows = spec.fields | {"item": ROW}
    ok = dataclasses.replace(spec, fields=rows)
    assert read_rated_set(ok, tmp_path).frame["human_content"].tolist() == [4.0, 5.0]


def test_a_manifest_reads_any_rated_set(tmp_path: Path, data_root: Path) -> None:
    from tsteval.experiment.manifest.files import load_transfers
    from tsteval.experiment.manifest.loader import load_manifest

    path = tmp_path / "detox.yaml"
    path.write_text("transfers: {published: tox600, systems: [paragedi], sample: 5}\n"
                    "metrics: {content: {metrics: [bleu]}}\n")
    frame = load_transfers(load_manifest(path).transfers, seed=0).frame
    assert set(frame["system"]) == {"paragedi"} and frame["item"].nunique() == 5 and len(frame) == 5
    assert frame["human_meaning"].notna().all()


def test_crowd_answers_as_labels_choices_and_anonymous_raters(tmp_path: Path) -> None:
    """InFormal's layout: a JSON line per pair, a list of three anonymous annotations, the similarity written as text,
    the pairwise formality judgment a choice (its majority in the frame, its position in the raters table)."""
    similar = {"Same": 1.0, "Slight": 0.5, "Different": 0.0}
    spec = RatedSet(
        name="pairs_hi", title="pairs", task="formality", folder="x", language="hi", scale=(0, 1),
        files=(RatingFile("hi.jsonl", layout="jsonl", rater_list="annotations", published_tag="authors"),),
        fields={"input": "candidate_0", "output": "candidate_1", "item": ROW, "rater": RATER_INDEX},
        constants={"system": "pairs", "source_style": "c0", "target_style": "c1"},
        questions=(Question("similarity", "content", field="semantic", labels=similar),
                   Question("more_formal", field="formal", choices=("candidate_0", "Equal", "candidate_1"))))
    lines = [{"candidate_0": "आप कैसे हैं", "candidate_1": "तुम कैसे हो", "labse": 0.9,
              "annotations": [{"semantic": "Same", "formal": "candidate_0"}, {"semantic": "Slight", "formal": "Equal"},
                              {"semantic": "Same", "formal": "candidate_0"}]}]
    (tmp_path / "hi.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), "utf-8")
    rated = read_rated_set(spec, tmp_path)
    row = rated.frame.iloc[0]
    assert row["input"] == "आप कैसे हैं" and row["human_similarity"] == pytest.approx(2.5 / 3)
    assert row["human_more_formal"] == "candidate_0" and row["pairs_hi.labse@authors"] == 0.9
    formal = rated.raters[rated.raters["question"] == "more_formal"]
    assert formal["rater"].tolist() == ["0", "1", "2"] and formal["value"].tolist() == [0.0, 1.0, 0.0]
    lines[0]["annotations"][1]["semantic"] = "Unsure"
    (tmp_path / "hi.jsonl").write_text(json.dumps(lines[0]) + "\n", "utf-8")
    with pytest.raises(InputError, match=r"hi.jsonl:1: semantic is 'Unsure', not one of \['Same', 'Slight', "
                                         r"'Different'\] \(fix: write one of the answers"):
        read_rated_set(spec, tmp_path)


def test_outputs_without_input_ids_are_numbered_by_input(tmp_path: Path) -> None:
    """RUSSE's layout: one row per output, binary aggregated judgments, no input id, the authors' scores beside."""
    spec = RatedSet(
        name="ru", title="ru", task="toxicity", folder="x", language="ru", scale=(0, 1),
        files=(RatingFile("ru.csv", published_tag="authors", published_aspects={"chrf": "content", "cls_in": None}),),
        fields={"input": "original", "output": "method_output", "system": "participant", "item": INPUT_NUMBER},
        constants={"source_style": "toxic", "target_style": "neutral"},
        questions=(Question("content", "content", values=(0.0, 1.0)), Question("J", values=(0.0, 1.0))))
    (tmp_path / "ru.csv").write_text("original,method_output,participant,content,J,chrf,cls_in\n"
                                     "какой дебил,кто это,a,1,1,0.5,0.9\nну и бред,это странно,a,0,0,0.2,0.8\n"
                                     "какой дебил,какой человек,b,1,0,0.4,0.9\n", encoding="utf-8")
    frame = read_rated_set(spec, tmp_path).frame
    assert frame[["system", "item", "human_content", "human_J"]].values.tolist() == [
        ["a", 0, 1.0, 1.0], ["a", 1, 0.0, 0.0], ["b", 0, 1.0, 0.0]]
    assert [c for c in frame.columns if c.startswith("ru.")] == ["ru.chrf@authors"]
