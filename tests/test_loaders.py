"""Loaders: the generic ones on small tmp files (good and bad input), the published ones on the real data."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pytest

from tsteval.core.datapaths import data_root, dataset_dir
from tsteval.core.errors import DataNotFoundError, InputError, TstevalError
from tsteval.readers.cds import load_cds
from tsteval.readers.dualrl import load_dualrl, load_dualrl_references
from tsteval.readers.huggingface import load_hf_corpus, load_hf_transfers
from tsteval.readers.lines import (
    load_parallel_files,
    load_style_dir,
    load_style_files,
    load_tsv_transfers,
    read_lines,
    read_text_lines,
)
from tsteval.readers.mir import MIR_RATING_COLUMNS, MIR_SETTINGS, load_mir
from tsteval.readers.tables import load_table_corpus, load_table_transfers
from tsteval.readers.yelp import load_yelp_corpus

ROWS = [
    {"input": "the food was bad .", "output": "the food was great .", "source_style": 0, "target_style": 1},
    {"input": "NA", "output": "null", "source_style": 1, "target_style": 0},
]


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


# --- data root -------------------------------------------------------------------------------------------------

def test_data_root_from_env_and_missing_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TSTEVAL_DATA", str(tmp_path))
    assert data_root() == tmp_path
    with pytest.raises(DataNotFoundError, match="TSTEVAL_DATA") as err:
        dataset_dir("yelp")
    assert str(tmp_path / "yelp") in str(err.value)
    with pytest.raises(DataNotFoundError, match=str(tmp_path / "yelp")):
        load_yelp_corpus()
    monkeypatch.setenv("TSTEVAL_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(DataNotFoundError, match="nowhere"):
        data_root()


# --- lines -----------------------------------------------------------------------------------------------------

def test_read_lines_strips_only_the_newline(tmp_path: Path) -> None:
    path = write(tmp_path / "a.txt", "\ufeffone  two \r\n\tthree\nfour")
    assert read_lines(path) == ["one  two ", "\tthree", "four"]


@pytest.mark.parametrize(("data", "line", "words"), [
    (b"", None, "empty"),
    (b"one\n\ntwo\n", 2, "empty"),
    (b"one\ntwo\n \t\n", 3, "whitespace"),
    (b"ok\nd\xffcor\n", 2, "byte offset 4"),
])
def test_read_lines_refuses(tmp_path: Path, data: bytes, line: int | None, words: str) -> None:
    path = write(tmp_path / "bad.txt", data)
    with pytest.raises(InputError, match=words) as err:
        read_lines(path)
    where = f"{path}:{line}:" if line else f"{path}:"
    assert str(err.value).startswith(where)
    assert err.value.line == line


def test_undecodable_byte_suggests_reencoding_or_uses_fallback(tmp_path: Path) -> None:
    path = write(tmp_path / "gbk.txt", b"ok\n" + "décor\n".encode("gbk"))
    with pytest.raises(InputError, match="re-encode"):
        read_lines(path)
    decoded = read_text_lines(path, fallback_encoding="gb18030")
    assert decoded.lines == ["ok", "décor"] and decoded.reencoded == [2]


def test_style_files_and_dir(tmp_path: Path) -> None:
    write(tmp_path / "formal.txt", "good day .\nhow do you do ?\n")
    write(tmp_path / "casual.txt", "hey\n")
    write(tmp_path / "README.md", "not a style\n")
    corpus = load_style_dir(tmp_path)
    assert corpus.styles == ["casual", "formal"] and len(corpus) == 3
    assert corpus.texts[0] == "hey"
    three = load_style_files({"a": tmp_path / "formal.txt", "b": tmp_path / "casual.txt", 2: tmp_path / "README.md"})
    assert three.labels == ["a", "a", "b", "2"]
    bad = write(tmp_path / "bad.txt", "x\n\n")
    with pytest.raises(InputError, match=f"{bad}:2:"):
        load_style_files({"a": bad})


def test_parallel_files(tmp_path: Path) -> None:
    src = write(tmp_path / "in.txt", "a b\nc d\n")
    out = write(tmp_path / "out.txt", "b a\nd c\n")
    transfers = load_parallel_files(src, out, source_style="0", target_style="1", system="rev")
    assert transfers.frame[["item", "input", "output"]].values.tolist() == [[0, "a b", "b a"], [1, "c d", "d c"]]
    short = write(tmp_path / "short.txt", "b a\n")
    with pytest.raises(InputError, match=f"2 lines in {src} but 1 lines in {short}"):
        load_parallel_files(src, short, source_style="0", target_style="1")


def test_tsv_transfers(tmp_path: Path) -> None:
    good = write(tmp_path / "good.tsv", "a b\tb a\nc\td\n")
    transfers = load_tsv_transfers(good, source_style="0", target_style="1", hyperparameters={"beam": 4})
    assert transfers.frame["output"].tolist() == ["b a", "d"] and transfers.hyperparameters == ["beam"]
    for name, text in (("none.tsv", "a\tb\nno tab here\n"), ("two.tsv", "a\tb\nx\ty\tz\n")):
        path = write(tmp_path / name, text)
        with pytest.raises(InputError, match="TAB") as err:
            load_tsv_transfers(path, source_style="0", target_style="1")
        assert str(err.value).startswith(f"{path}:2:")
    empty_output = write(tmp_path / "empty_out.tsv", "a\tb\nc\t \n")  # a system's failure: kept, scored
    assert load_tsv_transfers(empty_output, source_style="0", target_style="1").frame["output"].tolist() == ["b", " "]
    empty_input = write(tmp_path / "empty_in.tsv", "a\tb\n \td\n")
    with pytest.raises(InputError, match=f"{empty_input}:2: input 2 is empty"):
        load_tsv_transfers(empty_input, source_style="0", target_style="1")


# --- tables ----------------------------------------------------------------------------------------------------

def _tables(tmp_path: Path) -> list[Path]:
    frame = pd.DataFrame(ROWS).assign(model="m", temp=["0.5", "0.5"])
    frame.to_csv(tmp_path / "t.csv", index=False)
    write(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    frame.to_parquet(tmp_path / "t.parquet")
    return [tmp_path / "t.csv", tmp_path / "t.jsonl", tmp_path / "t.parquet"]


def test_table_transfers_all_formats(tmp_path: Path) -> None:
    for path in _tables(tmp_path):
        transfers = load_table_transfers(path, system_col="model", hp_cols=["temp"])
        frame = transfers.frame
        assert frame["input"].tolist() == ["the food was bad .", "NA"], path  # "NA" stays text
        assert frame["output"].tolist() == ["the food was great .", "null"]
        assert frame["source_style"].tolist() == ["0", "1"] and frame["system"].tolist() == ["m", "m"]
        assert frame["item"].tolist() == [0, 1] and frame["setting"].tolist() == ["default"] * 2
        assert frame["hp.temp"].tolist() == [0.5, 0.5]


def test_table_corpus_all_formats(tmp_path: Path) -> None:
    for path in _tables(tmp_path):
        corpus = load_table_corpus(path, text_col="input", label_col="source_style")
        assert corpus.texts == ["the food was bad .", "NA"] and corpus.labels == ["0", "1"]


def test_table_errors(tmp_path: Path) -> None:
    csv_path, jsonl_path, parquet_path = _tables(tmp_path)
    for path in (csv_path, jsonl_path, parquet_path):
        with pytest.raises(InputError, match=r"no column 'text' .*'input', 'output'") as err:
            load_table_corpus(path)
        assert str(path) in str(err.value)
    with pytest.raises(InputError, match="source_style=") as err:
        load_table_transfers(csv_path, source_col="src")
    with pytest.raises(InputError, match="unknown table suffix '.xlsx'") as err:
        load_table_corpus(write(tmp_path / "t.xlsx", "x"))
    assert str(tmp_path / "t.xlsx") in str(err.value)
    pd.DataFrame({"text": ["a", None], "label": [0, 1]}).to_parquet(tmp_path / "nan.parquet")
    with pytest.raises(InputError, match="row 2: the text"):
        load_table_corpus(tmp_path / "nan.parquet")
    # A bad cell is named by file, line and row: (file, content, loader, what the message says after "file:line: ")
    cells = [("holes.csv", "text,label\nfine,0\n,1\n", load_table_corpus, "3: row 2: the text .* is missing"),
             ("nulls.jsonl", '{"text": "a", "label": 0}\n{"text": null, "label": 1}\n', load_table_corpus,
              "2: row 2: the text .* is missing"),
             ("broken.jsonl", '{"text": "a", "label": 0}\n{"text": \n', load_table_corpus, "2: invalid JSON"),
             ("no_label.csv", "text,label\nfine,0\ngood,\n", load_table_corpus, "3: row 2: the label .* is missing"),
             ("no_style.csv", "input,output,source_style,target_style\na,b,0,1\nc,d,1,\ne,f,0,1\n",
              load_table_transfers, "3: row 2: the target_style .* is missing"),
             ("numbers.jsonl", '{"text": "a", "label": 0}\n{"text": "a", "label": 1}\n{"text": 7, "label": 1}\n',
              load_table_corpus, "3: row 3: the text .* is a number 7, not text")]
    for name, content, loader, message in cells:
        path = write(tmp_path / name, content)
        with pytest.raises(InputError, match=f"{path}:{message}"):
            loader(path)


# --- Hugging Face datasets -------------------------------------------------------------------------------------

def _hf_dataset() -> datasets.Dataset:
    features = datasets.Features({"sentence": datasets.Value("string"),
                                  "label": datasets.ClassLabel(names=["negative", "positive"])})
    return datasets.Dataset.from_dict({"sentence": ["bad .", "good .", "fine ."], "label": [0, 1, 1]},
                                      features=features)


def test_hf_corpus_from_object_disk_and_file(tmp_path: Path) -> None:
    ds = _hf_dataset()
    corpus = load_hf_corpus(ds, "sentence", "label")
    assert corpus.texts == ["bad .", "good .", "fine ."] and corpus.labels == ["negative", "positive", "positive"]
    dsd = datasets.DatasetDict({"train": ds, "test": ds.select([0])})
    assert load_hf_corpus(dsd, "sentence", "label", split="test").labels == ["negative"]
    with pytest.raises(InputError, match=r"split None not found; the splits are \['test', 'train'\]"):
        load_hf_corpus(dsd, "sentence", "label")
    dsd.save_to_disk(str(tmp_path / "saved"))
    assert load_hf_corpus(tmp_path / "saved", "sentence", "label", split="train").labels[1] == "positive"
    data_file = write(tmp_path / "local.csv", "sentence,label\nbad .,0\ngood .,1\n")
    corpus = load_hf_corpus(str(data_file), "sentence", "label", cache_dir=tmp_path / "hf_cache")
    assert corpus.texts == ["bad .", "good ."] and corpus.labels == ["0", "1"]
    with pytest.raises(InputError, match="no column 'text'"):
        load_hf_corpus(ds, "text", "label")


def test_hf_transfers_and_hub_failure(tmp_path: Path) -> None:
    ds = datasets.Dataset.from_list([dict(r, input=str(r["input"])) for r in ROWS])
    transfers = load_hf_transfers(ds, system="hf")
    assert transfers.frame["output"].tolist() == ["the food was great .", "null"]
    assert set(transfers.frame["system"]) == {"hf"}
    with pytest.raises(TstevalError, match="cannot load the dataset 'no-such-user/no-such-dataset'"):
        load_hf_corpus("no-such-user/no-such-dataset", "text", "label", cache_dir=tmp_path / "hf_cache")


# --- published layouts: policies on small fake trees -----------------------------------------------------------

def _fake_dualrl(root: Path) -> Path:
    """Two systems on 2 + 1 inputs: B writes <unk>, a GBK line, and an empty output in GYAFC_Full style."""
    (root / "dualrl/data/toy").mkdir(parents=True)
    write(root / "dualrl/data/toy/test.0", "the gammage .\nok .\n")
    write(root / "dualrl/data/toy/test.1", "fine .\n")
    for system, lines01, out0 in (
        ("A", b"the gammage .\tthe good .\nok .\tgreat .\n", b"the good .\ngreat .\n"),
        ("B", b"the <unk> .\td\xa8\xa6cor .\nok .\n", "décor .\n\n".encode("gbk")),
    ):
        (root / f"dualrl/outputs/toy/{system}").mkdir(parents=True)
        write(root / f"dualrl/outputs/toy/{system}/test.0-1.tsf", lines01)
        write(root / f"dualrl/outputs/toy/{system}/test.0.tsf", out0)
        write(root / f"dualrl/outputs/toy/{system}/test.1-0.tsf", "fine .\tbad .\n")
    return root / "dualrl/outputs/toy/B/test.0-1.tsf"


def test_dualrl_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b_pairs = _fake_dualrl(tmp_path)
    monkeypatch.setenv("TSTEVAL_DATA", str(tmp_path))
    with pytest.raises(InputError, match=f"{b_pairs}:2: no TAB: the system's output for this input is empty"):
        load_dualrl("toy", on_empty_output="error")
    scored = load_dualrl("toy").frame.set_index(["system", "item"])  # the default: a failure kept and scored
    assert len(scored) == 6 and scored.loc[("B", 1), "output"] == ""
    transfers = load_dualrl("toy", on_empty_output="drop")
    frame = transfers.frame.set_index(["system", "item"])
    assert len(frame) == 5 and ("B", 1) not in frame.index
    assert frame.loc[("B", 0), "input"] == "the gammage ." and frame.loc[("B", 0), "output"] == "décor ."
    assert frame.loc[("A", 2), ["source_style", "target_style"]].tolist() == ["1", "0"]
    assert transfers.extra["restored_inputs"] == [(str(b_pairs), 1)]
    assert transfers.extra["empty_outputs"] == [(str(b_pairs), 2)]
    assert (str(b_pairs), 1) in transfers.extra["reencoded_lines"]
    with pytest.raises(InputError, match=r"the systems \['Z'\] are not among the systems \['A', 'B'\]$"):
        load_dualrl("toy", systems=["Z"])
    with pytest.raises(InputError, match=r"the systems \['b'\] .*'b': did you mean 'B'\? \(only the case"):
        load_dualrl("toy", systems=["A", "b"])
    write(tmp_path / "dualrl/outputs/toy/A/test.1-0.tsf", "fine .\n")  # no TAB, but test.1.tsf is absent
    with pytest.raises(InputError, match="test.1-0.tsf:1: expected input<TAB>output but found 0 TABs"):
        load_dualrl("toy", systems=["A"])
    write(tmp_path / "dualrl/outputs/toy/A/test.1-0.tsf", "other .\tbad .\n")
    with pytest.raises(InputError, match=r"test.1-0.tsf:1: the input 'other .' differs from the test input"):
        load_dualrl("toy", systems=["A"])


def test_mir_ratings_are_checked_while_read(data_root: Path, tmp_path: Path) -> None:
    """A damaged rating is one line naming the row (that the CSV's texts are the released transfer files' lines is
    tests/test_rated_sets.py's)."""
    mir = tmp_path / "mir2019"
    mir.mkdir()
    ratings = pd.read_csv(data_root / "mir2019" / "human_ratings.csv", keep_default_na=False, dtype=str)
    ratings.loc[5, "human_style_intensity"] = "7"
    ratings.to_csv(mir / "human_ratings.csv", index=False)
    with pytest.raises(InputError, match=r"human_ratings.csv:7: human_style_intensity is 7, off the scale of "
                                         r"style_intensity \(1 to 5\)"):
        load_mir(mir)


# --- published layouts on the real data ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mir(data_root: Path) -> pd.DataFrame:
    return load_mir().frame


def test_load_mir(mir: pd.DataFrame, data_root: Path) -> None:
    assert len(mir) == 2928 and len(MIR_SETTINGS) == 12
    per_setting = mir.groupby(["system", "setting"])
    assert per_setting.ngroups == 12 and set(per_setting.size()) == {244}
    assert set(per_setting["item"].apply(lambda s: tuple(sorted(s)))) == {tuple(range(244))}
    assert mir.groupby(["system", "setting", "source_style"]).size().eq(122).all()
    assert sorted(mir["setting"].unique())[:3] == ["gamma=0.1", "gamma=1", "gamma=15"]
    caae = mir[mir["system"] == "CAAE"]
    assert sorted(caae["hp.rho"].unique()) == [0.01, 0.1, 0.5, 1, 5] and caae["hp.gamma"].isna().all()
    assert set(MIR_RATING_COLUMNS) <= set(mir.columns) and mir["human_style_intensity"].notna().all()
    # naturalness ratings exist for 9 of the 12 settings (none for DAR gamma 0.1, 1, 500)
    assert mir["human_naturalness_output"].isna().sum() == 3 * 244
    # item i < 122 is line i of sentiment.test.0; item 122 + j is line j of sentiment.test.1
    pos = read_lines(data_root / "mir2019/data/sentiment.test.1")
    row = mir[(mir["system"] == "ARAE") & (mir["item"] == 122 + 7)].iloc[0]
    assert row["input"] == pos[7] and (row["source_style"], row["target_style"]) == ("1", "0")
    tsf = read_lines(data_root / "mir2019/transfer_model_outputs/ARAE/lambda_1/sentiment.test.1.tsf")
    assert mir[(mir["setting"] == "lambda=1") & (mir["item"] == 129)]["output"].item() == tsf[7]


def test_load_yelp_corpus_excludes_mir_inputs(mir: pd.DataFrame) -> None:
    inputs = set(mir["input"])
    assert len(inputs) == 243  # 244 inputs, one positive sentence appears twice
    corpus = load_yelp_corpus(exclude=inputs)
    # the inputs recur in Yelp: 998 lines of dev+test carry one of them, and all go
    assert corpus.removed == 998 and corpus.removed_texts == 243
    assert len(corpus) == 25278 + 38205 + 50278 + 76392 - 998
    assert not inputs & set(corpus.texts)
    assert corpus.styles == ["0", "1"]


def test_load_dualrl_yelp(data_root: Path) -> None:
    transfers = load_dualrl("yelp")
    frame = transfers.frame
    systems = sorted(frame["system"].unique())
    assert len(systems) == 15 and {"DualRL", "Human0", "Human3", "UnsuperMT_Zhang"} <= set(systems)
    assert len(frame) == 15 * 1000 and frame.groupby("system").size().eq(1000).all()
    assert frame.groupby(["system", "source_style"]).size().eq(500).all()
    assert frame.groupby("item")["input"].nunique().eq(1).all()  # one input per item across systems
    assert len(transfers.extra["restored_inputs"]) == 13 and not transfers.extra["empty_outputs"]
    assert [line for _, line in transfers.extra["reencoded_lines"]] == [29]
    assert "décor" in frame[(frame["system"] == "Human2") & (frame["item"] == 28)]["output"].item()
    refs = load_dualrl_references("yelp")
    assert len(refs) == 1000 and (refs["reference0"] == frame[frame["system"] == "Human0"]["output"].values).all()


def test_load_dualrl_gyafc_full_empty_outputs(data_root: Path) -> None:
    with pytest.raises(InputError, match="DeleteOnly_Li/test.0-1.tsf:3: no TAB"):
        load_dualrl("GYAFC_Full", systems=["DeleteOnly_Li"], on_empty_output="error")
    transfers = load_dualrl("GYAFC_Full", systems=["DeleteOnly_Li", "DualRL"])  # failures kept, to be scored
    assert len(transfers.extra["empty_outputs"]) == 38 + 43
    assert len(transfers) == 2 * (1019 + 1332) and (transfers.frame["output"] == "").sum() == 81
    dropped = load_dualrl("GYAFC_Full", systems=["DeleteOnly_Li", "DualRL"], on_empty_output="drop")
    assert len(dropped) == 2 * (1019 + 1332) - 81


def test_load_cds(data_root: Path) -> None:
    corpus = load_cds()
    assert len(corpus.styles) == 11 and "shakespeare" in corpus.styles
    assert pd.Series(corpus.labels).value_counts().eq(1000).all() and len(corpus) == 11000
