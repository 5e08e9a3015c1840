"""Every kind of column a rating study can choose is scorable through ``profile:FILE`` (issue 59 item 3): a profile
file with one column of each kind (a reference column, a modification, a style classifier's, a pair classifier's,
a causal LM's, an LM judge's template) scored through the command line, a manifest and ``tsteval.evaluate`` gives
the column with the values and the signature of the same column asked for directly; and ``--references`` puts the
reference in the scorecard, where a table's ``reference`` column is scored the same way (item 5)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import read_slice

import tsteval
from tsteval.cli.main import main
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import load_manifest
from tsteval.experiment.options import OPTIONS
from tsteval.experiment.plan.plan_of_manifest import plan_of_manifest
from tsteval.experiment.run.execute import execute
from tsteval.lexicons.lexicon import Lexicon
from tsteval.scorecard import Scorecard

INPUTS = ["the food was cold and the service was slow .", "worst pizza i have ever had .",
          "the staff were rude to us .", "i will never come back here ."]
OUTPUTS = ["the food was hot and the service was fast .", "best pizza i have ever had .",
           "the staff were kind to us .", "i will come back here again ."]
REFERENCES = ["the food was warm and the service quick .", "the best pizza i have had .",
              "the staff were lovely to us .", "i will surely come back here ."]
LEXICON = {"0": [["cold", 1.0], ["slow", 1.0], ["worst", 1.0], ["rude", 1.0], ["never", 1.0]],
           "1": [["hot", 1.0], ["fast", 1.0], ["best", 1.0], ["kind", 1.0], ["again", 1.0]]}


@dataclass(frozen=True)
class Kind:
    """One kind of column: the profile's ``column`` (of ``aspect``, with ``params``), the ``direct`` entry that
    scores it by name with the run options ``options``, and the resources both runs are given (``needs``)."""

    aspect: str
    column: str
    direct: str
    needs: tuple[str, ...] = ()
    params: dict[str, str] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)


KINDS = {
    "reference": Kind("content", "chrf@ref", "chrf", ("references",)),
    "modification": Kind("content", "chrf@mask", "chrf", ("lexicon",), options={"modifications": "none,mask"}),
    "classifier": Kind("style", "style_strength@ft", "style_strength", ("classifier",)),
    "pair classifier": Kind("content", "hh_content@pc", "hh_content", ("pairs",)),
    "model": Kind("naturalness", "lp_mean@gemma3-270m", "lp_mean@gemma3-270m",
                  options={"language_model": "gemma3-270m"}),
    "template": Kind("naturalness", "judge_fluency@smollm2", "judge_fluency:template=2", params={"template": "2"}),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, data_root: Path) -> dict[str, Path]:
    """The transfers as a table, the references, a lexicon, a style corpus, a classifier trained on it and a pair
    classifier."""
    root = tmp_path_factory.mktemp("profile-columns")
    pd.DataFrame({"input": INPUTS, "output": OUTPUTS, "source_style": "0", "target_style": "1"}).to_csv(
        root / "table.csv", index=False)
    (root / "refs.txt").write_text("\n".join(REFERENCES) + "\n")
    (root / "lexicon.json").write_text(json.dumps(LEXICON))
    for style in ("0", "1"):
        (root / f"train.{style}").write_text("\n".join(read_slice(data_root / "yelp" / f"sentiment.dev.{style}",
                                                                  300)) + "\n")
    assert main(["train-classifier", "tfidf-lr", "--style", f"0={root / 'train.0'}", "--style",
                 f"1={root / 'train.1'}", "--out", str(root / "clf"), "--quiet"]) == 0
    assert main(["train-pairs", "features", "--left", str(root / "train.0"), "--right", str(root / "train.1"),
                 "--out", str(root / "pc"), "--quiet"]) == 0
    return {"root": root, "pc": root / "pc", "table": root / "table.csv", "refs": root / "refs.txt",
            "lexicon": root / "lexicon.json", "clf": root / "clf", "train.0": root / "train.0",
            "train.1": root / "train.1"}


def _profile(path: Path, kind: Kind) -> str:
    """Write the profile file of ``kind``'s column; its ``--metrics`` entry."""
    path.write_text(json.dumps({"kind": "tsteval-profile", "profile": {kind.aspect: kind.column},
                                "params": {kind.aspect: kind.params} if kind.params else {}}))
    return f"profile:{path}"


def _cli(files: dict[str, Path], out: Path, metric: str, kind: Kind, options: dict[str, str]) -> Scorecard:
    args = ["score", "--table", str(files["table"]), "--metrics", metric, "--threads", "1", "--out", str(out),
            "--quiet"]
    args += ["--references", str(files["refs"])] if "references" in kind.needs else []
    args += ["--lexicon", str(files["lexicon"])] if "lexicon" in kind.needs else []
    args += ["--classifier", f"ft={files['clf']}"] if "classifier" in kind.needs else []
    args += ["--hh", f"pc={files['pc']}"] if "pairs" in kind.needs else []
    for name, value in options.items():
        args += [OPTIONS[name].flag, value]
    assert main(args) == 0
    return Scorecard.load(out)


def _manifest(files: dict[str, Path], out: Path, metric: str, kind: Kind, options: dict[str, str]) -> Scorecard:
    d: dict = {"transfers": {"table": str(files["table"])}, "metrics": {"names": [metric]}, "threads": 1}
    if "references" in kind.needs:
        d["metrics"]["content"] = {"references": [str(files["refs"])]}
    if "lexicon" in kind.needs:
        d["lexicon"] = {"file": str(files["lexicon"])}
    if "classifier" in kind.needs:
        d["classifiers"] = {"ft": {"backend": "tfidf-lr", "heldout": 0.0}}
        d["corpus"] = {"style": {"0": str(files["train.0"]), "1": str(files["train.1"])}}
    if "pairs" in kind.needs:
        d["metrics"]["compatibility"] = {"hh": {"pc": str(files["pc"])}}
    for name, value in options.items():
        *parents, last = OPTIONS[name].manifest.split(".")
        node = d
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value.split(",") if name == "modifications" else value
    out.mkdir()
    (out / "m.yaml").write_text(yaml.safe_dump(d))
    return execute(plan_of_manifest(load_manifest(out / "m.yaml"))).card


def _api(files: dict[str, Path], out: Path, metric: str, kind: Kind, options: dict[str, str]) -> Scorecard:
    given: dict = {"threads": 1, **options}
    if "references" in kind.needs:
        given["references"] = [files["refs"]]
    if "lexicon" in kind.needs:
        given["lexicon"] = Lexicon.load(files["lexicon"])
    if "classifier" in kind.needs:
        given["classifier"] = {"ft": "tfidf-lr"}
        given["corpus"] = {s: files[f"train.{s}"].read_text().splitlines() for s in ("0", "1")}
    if "pairs" in kind.needs:
        given["hh"] = {"pc": files["pc"]}
    return tsteval.evaluate(table=files["table"], metrics=[metric], **given)


FRONTS = {"cli": _cli, "manifest": _manifest, "api": _api}


@pytest.mark.parametrize("front", list(FRONTS))
@pytest.mark.parametrize("name", list(KINDS))
def test_each_kind_of_profile_column_scores_as_the_column_asked_for_directly(files: dict[str, Path], tmp_path: Path,
                                                                             name: str, front: str) -> None:
    kind, score = KINDS[name], FRONTS[front]
    profiled = score(files, tmp_path / "profiled", _profile(tmp_path / "p.json", kind), kind, {})
    direct = score(files, tmp_path / "direct", kind.direct, kind, kind.options)
    assert kind.column in profiled.metrics, profiled.metrics
    np.testing.assert_allclose(profiled.frame[kind.column].to_numpy(float), direct.frame[kind.column].to_numpy(float),
                               rtol=1e-9)
    assert profiled.signatures[kind.column] == direct.signatures[kind.column]


def test_a_profile_names_what_its_column_lacks_in_one_line(files: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    reference = _profile(tmp_path / "ref.json", KINDS["reference"])
    assert main(["score", "--table", str(files["table"]), "--metrics", reference, "--out", str(tmp_path / "a")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"tsteval: error: {tmp_path / 'ref.json'}: the column chrf@ref is scored against human "
                            "references, and the run has none") and "--references FILE" in error, error
    style = _profile(tmp_path / "style.json", KINDS["classifier"])
    assert main(["score", "--table", str(files["table"]), "--metrics", style, "--classifier",
                 f"other={files['clf']}", "--out", str(tmp_path / "b")]) == 2
    error = capsys.readouterr().err.strip()
    assert "the column style_strength@ft is the style classifier 'ft''s" in error and "--classifier ft=DIR" in error
    assert len(error.splitlines()) == 1
    with pytest.raises(TstevalError, match="the profile scores lp_mean@gemma3-270m, so the run's language model is "
                                           "gemma3-270m, not 'smollm2'"):
        tsteval.evaluate(INPUTS, OUTPUTS, source_style="0", target_style="1", metrics=[
            "cond_lp", _profile(tmp_path / "lm.json", KINDS["model"])])
    for bad, message in (({"params": []}, '"params" is'), ({"params": {"style": {"template": "2"}}},
                                                          "the style column 'style_strength@ft' takes no parameters")):
        (tmp_path / "bad.json").write_text(json.dumps({**json.loads((tmp_path / "style.json").read_text()), **bad}))
        with pytest.raises(TstevalError, match=message):
            tsteval.evaluate(INPUTS, OUTPUTS, source_style="0", target_style="1",
                             metrics=[f"profile:{tmp_path / 'bad.json'}"])
    (tmp_path / "m.yaml").write_text(yaml.safe_dump({"transfers": {"table": str(files["table"])},
                                                     "metrics": {"names": [reference]}}))
    with pytest.raises(TstevalError, match="the column chrf@ref is scored against human references"):
        plan_of_manifest(load_manifest(tmp_path / "m.yaml"))


def test_references_become_the_scorecards_reference_column_and_plan_reference_pairs(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``score --references`` writes the reference beside each row; ``annotate plan`` plans a reference pair per
    input from it and says how many; a table's ``reference`` column is scored as ``--references`` scores the file,
    through the command line, a manifest and the API."""
    run = tmp_path / "run"
    assert main(["score", "--table", str(files["table"]), "--metrics", "chrf,bleu", "--references",
                 str(files["refs"]), "--out", str(run), "--quiet"]) == 0
    card = Scorecard.load(run)
    assert card.frame["reference"].tolist() == REFERENCES
    capsys.readouterr()
    assert main(["annotate", "plan", str(run), "--out", str(tmp_path / "study"), "--items", "4"]) == 0
    assert "4 reference pairs" in capsys.readouterr().out
    assert json.loads((tmp_path / "study" / "study.json").read_text())["references"] == 4
    pairs = pd.read_csv(tmp_path / "study" / "pairs.csv")
    assert sorted(pairs.loc[pairs["kind"] == "reference", "output"]) == sorted(REFERENCES)
    table = tmp_path / "with-refs.csv"
    pd.read_csv(files["table"]).assign(reference=REFERENCES).to_csv(table, index=False)
    assert main(["score", "--table", str(table), "--metrics", "chrf,bleu", "--out", str(tmp_path / "own"),
                 "--quiet"]) == 0
    (tmp_path / "m.yaml").write_text(yaml.safe_dump({"transfers": {"table": str(table)},
                                                     "metrics": {"names": ["chrf", "bleu"]}}))
    for own in (Scorecard.load(tmp_path / "own"), execute(plan_of_manifest(load_manifest(tmp_path / "m.yaml"))).card,
                tsteval.evaluate(table=table, metrics=["chrf", "bleu"])):
        for column in ("chrf@ref", "bleu@ref"):
            np.testing.assert_allclose(own.frame[column], card.frame[column], rtol=1e-12)
            assert own.signatures[column] == card.signatures[column]
    assert "chrf@ref" not in tsteval.evaluate(table=table, metrics=["chrf"], references=()).metrics  # none at all
    both = tmp_path / "both"
    assert main(["score", "--table", str(table), "--metrics", "chrf", "--references", str(files["refs"]), "--out",
                 str(both), "--quiet"]) == 0
    assert Scorecard.load(both).signatures["chrf@ref"] == card.signatures["chrf@ref"]  # one set, counted once


def test_a_chosen_profile_keeps_the_parameters_its_column_was_scored_with(tmp_path: Path) -> None:
    """Raters who follow chrF++ (``chrf:word_order=2``, column ``chrf@none``) choose it; the profile file keeps the
    parameter from the run's signature, and scoring the profile gives chrF++, not chrF."""
    from annotate_study import scorecard

    from tsteval.annotate.study import Study

    card, quality = scorecard(inputs=12)
    rng = np.random.default_rng(4)
    card.frame["chrf@none"] = 50 + 10 * quality
    card.frame["sbert@none"] = 0.5 + 0.1 * quality + rng.normal(scale=0.3, size=len(quality))
    card.signatures["chrf@none"] = "metric:chrf|char_order:6|word_order:2|beta:2|modification:none"
    card.save(tmp_path / "run")
    assert main(["annotate", "plan", str(tmp_path / "run"), "--out", str(tmp_path / "study"), "--items", "16",
                 "--aspects", "content"]) == 0
    assert main(["annotate", "invite", str(tmp_path / "study"), "--annotators", "3"]) == 0
    study = Study.open(tmp_path / "study")
    keyed = card.frame.assign(q=quality).astype({"item": str}).set_index(["system", "item", "source_style"])["q"]
    by_pair = {p.pair_id: keyed[(p.system, p.item, p.source_style)] for p in study.pairs.itertuples()
               if p.kind != "check"}
    store = study.store()
    for name in store.progress(3)["annotator"]:
        who = store.find(name)
        for pair in store.assignment(who):
            value = 5 if pair.startswith("c:") else 3 + 1.2 * by_pair[pair] + rng.normal(scale=0.5)
            store.submit(who, pair, {"content": int(np.clip(round(value), 1, 5))}, "web")
    store.close()
    assert main(["meta-eval", str(tmp_path / "run"), "--ratings", str(tmp_path / "study"), "--resamples", "200",
                 "--choose-profile", str(tmp_path / "p.json"), "--quiet"]) == 0
    profile = json.loads((tmp_path / "p.json").read_text())
    assert profile["profile"] == {"content": "chrf@none"} and profile["params"] == {"content": {"word_order": "2"}}
    table = tmp_path / "t.csv"
    pd.DataFrame({"input": INPUTS, "output": OUTPUTS, "source_style": "0", "target_style": "1"}).to_csv(table,
                                                                                                    index=False)
    for metrics, out in ((f"profile:{tmp_path / 'p.json'}", "profiled"), ("chrf:word_order=2", "direct")):
        assert main(["score", "--table", str(table), "--metrics", metrics, "--out", str(tmp_path / out),
                     "--quiet"]) == 0
    profiled, direct = Scorecard.load(tmp_path / "profiled"), Scorecard.load(tmp_path / "direct")
    assert "word_order:2" in profiled.signatures["chrf@none"]
    np.testing.assert_allclose(profiled.frame["chrf@none"], direct.frame["chrf@none"], rtol=1e-12)
