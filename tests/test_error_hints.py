"""Errors that guess right (issue 56 item 5): an unknown metric, style, backend, classifier folder or manifest key
names the nearest known ones (one helper, :func:`tsteval.core.errors.did_you_mean`), a missing classifier folder
is told from a folder that is not one, and an option a backend ignores is accepted and said in one line.  Each
through the command line, and through a manifest and the Python API where the path exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from badinput import expect_error, run_cli
from test_outputs import argv, data  # noqa: F401  (data is a fixture)

import tsteval
from tsteval.core.errors import TstevalError
from tsteval.experiment.manifest.loader import ManifestError, load_manifest

BERTSCORE = "did you mean 'bertscore_p', 'bertscore_r' or 'bertscore_f1'?"
CASE = "(only the case differs)"


def score(data: Path, out: Path, *extra: str, target: str = "neg") -> list[str]:  # noqa: F811
    command = argv("score", data, out) + list(extra)
    command[command.index("--target-style") + 1] = target
    return command


def manifest(tmp_path: Path, data: Path, body: str, backend: str = "tfidf-lr",  # noqa: F811
             target: str = "neg") -> Path:
    """A manifest scoring five pos -> ``target`` transfers with a classifier ``lr`` of ``backend`` trained on the
    fixture's files."""
    pos, neg = (Path(data / f"{style}.txt").read_text().splitlines()[:5] for style in ("pos", "neg"))
    table = tmp_path / "t.csv"
    table.write_text("input,output,source_style,target_style\n" + "".join(f"{a},{b},pos,{target}\n"
                                                                          for a, b in zip(pos, neg, strict=True)))
    path = tmp_path / "m.yaml"
    path.write_text(f"transfers: {{table: {table}}}\n"
                    f"corpus: {{style: {{pos: {data / 'pos.txt'}, neg: {data / 'neg.txt'}}}, exclude_inputs: false}}\n"
                    f"classifiers: {{lr: {{backend: {backend}}}}}\n{body}")
    return path


def test_an_unknown_metric_names_the_nearest(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    outcome = expect_error(score(data, tmp_path / "run", "--metrics", "bertscore,chrF"), capsys,
                           f"unknown metric 'bertscore'; {BERTSCORE}")
    assert "choose from" not in outcome.error  # the suggestion, not the 35 names
    expect_error(score(data, tmp_path / "run", "--metrics", "bertscore_f1,chrF"), capsys,
                 f"unknown metric 'chrF'; did you mean 'chrf'? {CASE}")
    expect_error(score(data, tmp_path / "run", "--content", "chrF"), capsys,
                 f"unknown content metric 'chrF'; did you mean 'chrf'? {CASE}")
    outcome = expect_error(score(data, tmp_path / "run", "--metrics", "zzz"), capsys, "unknown metric 'zzz'; choose")
    assert "did you mean" not in outcome.error
    with pytest.raises(ManifestError, match=r"metrics\.names: unknown metric 'chrF'; did you mean 'chrf'\? \(only"):
        load_manifest(manifest(tmp_path, data, "metrics: {names: [sti, chrF]}\n"))
    with pytest.raises(TstevalError, match=f"unknown metric 'bertscore'; {BERTSCORE.replace('?', '[?]')}"):
        tsteval.evaluate(["a"], ["b"], source_style="pos", target_style="neg", metrics=["bertscore"])


def test_a_style_that_differs_in_case_or_spelling_is_named_as_such(data: Path, tmp_path: Path,  # noqa: F811
                                                                   capsys) -> None:
    known = "which the style classifier was not trained on (it knows ['neg', 'pos'])"
    expect_error(score(data, tmp_path / "run", target="Neg"), capsys,
                 f"target_style has the styles ['Neg'], {known}; write each style as the classifier names it; "
                 f"'Neg': did you mean 'neg'? {CASE}")
    outcome = expect_error(score(data, tmp_path / "run", target="nge"), capsys, "'nge': did you mean 'neg'?")
    assert "train it" not in outcome.error and CASE not in outcome.error
    outcome = expect_error(score(data, tmp_path / "run", target="formal"), capsys,
                           f"{known}; train it on a corpus with these styles")
    assert "did you mean" not in outcome.error
    path = manifest(tmp_path, data, "metrics: {names: [sti]}\n", target="Neg")
    outcome = run_cli(["run", path, "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 2 and f"'Neg': did you mean 'neg'? {CASE}" in outcome.error
    with pytest.raises(TstevalError, match=r"'Neg': did you mean 'neg'\? \(only the case differs\)"):
        tsteval.evaluate(["good x"], ["bad x"], source_style="pos", target_style="Neg", classifier=data / "style")


def test_a_missing_classifier_folder_is_not_a_folder_without_a_classifier(data: Path, tmp_path: Path,  # noqa: F811
                                                                          capsys) -> None:
    what = "is not a saved tsteval style classifier (no tsteval-classifier.json)"
    missing = data / "styl"
    outcome = expect_error(score(data, tmp_path / "run", "--classifier", f"b={missing}"), capsys,
                           f"the style classifier folder {missing} does not exist; did you mean 'style'?")
    assert what not in outcome.error
    expect_error(score(data, tmp_path / "run", "--classifier", f"b={data / 'pos.txt'}"), capsys,
                 f"{data / 'pos.txt'} is a file; a saved tsteval style classifier is a folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    outcome = expect_error(score(data, tmp_path / "run", "--classifier", f"b={empty}"), capsys, f"{empty} {what}")
    assert outcome.error.endswith(what)
    expect_error(score(data, tmp_path / "run", "--classifier", f"b={data}"), capsys,  # hh/ is a pair classifier
                 f"{data} {what}, but it holds 1: {data / 'style'}; give one of them")
    with pytest.raises(TstevalError, match="does not exist; did you mean 'style'"):
        tsteval.evaluate(["good x"], ["bad x"], source_style="pos", target_style="neg", classifier=missing)
    with pytest.raises(TstevalError, match="is neither a saved classifier folder .* did you mean 'tfidf-lr'"):
        tsteval.evaluate(["good x"], ["bad x"], source_style="pos", target_style="neg", classifier="tfidf_lr",
                         corpus={"pos": ["good x"] * 4, "neg": ["bad x"] * 4})


def test_a_pair_classifier_folder_is_told_the_same_way(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    expect_error(score(data, tmp_path / "run", "--hh", f"h={data / 'h'}"), capsys,
                 f"the pair classifier folder {data / 'h'} does not exist; did you mean 'hh'?")


def test_a_backend_name_is_suggested(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    command = argv("train-classifier", data, tmp_path / "m")
    command[1] = "tfidf_lr"
    outcome = run_cli(command, capsys)
    assert outcome.code == 2 and outcome.err.rstrip().endswith("; did you mean 'tfidf-lr'?")
    with pytest.raises(ManifestError, match=r"classifiers\.lr\.backend: unknown backend 'tfidf_lr'; did you mean "
                                            r"'tfidf-lr'\?"):
        load_manifest(manifest(tmp_path, data, "metrics: {names: [sti]}\n", backend="tfidf_lr"))


@pytest.mark.parametrize(("body", "fragment"), [
    ("metrics: {names: [sti]}\ntradof: {style: sti@lr}\n", "tradof: unknown key; did you mean 'tradeoff'?"),
    ("metrics: {names: [sti], contnet: {metrics: [bleu]}}\n", "metrics.contnet: unknown key; did you mean 'content'?"),
    ("metrics: {names: [sti]}\ntradeoff: {style: sti@lrr}\n",
     "tradeoff.style: unknown style column 'sti@lrr'; did you mean 'sti@lr'?"),
    ("metrics: {style: {classifiers: [LR]}}\n",
     f"metrics.style.classifiers[0]: unknown classifier 'LR'; did you mean 'lr'? {CASE}"),
])
def test_a_manifest_key_or_name_suggests_the_nearest(body: str, fragment: str, data: Path, tmp_path: Path,  # noqa: F811
                                                     capsys) -> None:
    path = manifest(tmp_path, data, body)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert fragment in str(info.value)
    outcome = run_cli(["run", path, "--out", tmp_path / "run", "--quiet"], capsys)
    assert outcome.code == 2 and fragment in outcome.error
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("options", [["--threads", "1"], ["--device", "cpu", "--threads", "1"]])
def test_an_option_the_backend_ignores_is_accepted_and_said_once(options: list[str], data: Path, tmp_path: Path,  # noqa: F811
                                                                 capsys) -> None:
    outcome = run_cli(argv("train-classifier", data, tmp_path / "m") + options, capsys)
    assert outcome.code == 0, outcome.err
    given = ", ".join(f"{options[i]} {options[i + 1]}" for i in range(0, len(options), 2))
    assert outcome.err.splitlines() == [
        f"tsteval: warning: {given}: backend 'tfidf-lr' has no such setting and ignores it (fastText and the "
        "ensemble's fastText member take --threads; the neural backends --device)"]
    assert (tmp_path / "m" / "tsteval-classifier.json").is_file()


@pytest.mark.parametrize(("option", "fragment"), [
    (["--content", "bleu", "--baselines", "cpy"], "unknown baselines ['cpy']; choose from ['copy', 'delete-lexicon', "
                                                  "'retrieve-nearest']; 'cpy': did you mean 'copy'?"),
    (["--content", "bleu", "--engine", "rya"],
     "engine must be one of ['local', 'ray'], not 'rya'; did you mean 'ray'?"),
    (["--content", "bleu", "--modification", "none,maks"], "'maks': did you mean 'mask'?"),
    (["--naturalness", "kn4"], "unknown naturalness scorers ['kn4']; choose from"),
    (["--metrics", "recommended:sentimnt"], "no such task family; choose from ['sentiment', 'formality', 'toxicity'] "
                                            "(or recommended alone, the profile pooled over them); did you mean "
                                            "'sentiment'?"),
    (["--naturalness", "smollm2", "--language-model", "gema3-270m"], "did you mean 'gemma3-270m'?"),
])
def test_every_other_unknown_name_suggests_the_nearest(option: list[str], fragment: str, data: Path,  # noqa: F811
                                                       tmp_path: Path, capsys) -> None:
    outcome = expect_error(["score", "--pairs", data / "pos.txt", data / "neg.txt", "--source-style", "pos",
                            "--target-style", "neg", *option, "--out", tmp_path / "run", "--quiet"], capsys, fragment)
    assert outcome.error.endswith("?") and not (tmp_path / "run").exists()


def test_a_classifier_name_referred_to_suggests_the_nearest(data: Path, tmp_path: Path, capsys) -> None:  # noqa: F811
    command = argv("score", data, tmp_path / "run")
    command[command.index("--classifier") + 1] = f"lr={data / 'style'}"
    expect_error([*command, "--content", "bleu", "--modification", "attribution-mask", "--attribution", "lrr"],
                 capsys, "--attribution 'lrr' is not a --classifier NAME (['lr']); did you mean 'lr'?")
    transfers = tsteval.Transfers.from_pairs(["good x"], ["bad x"], source_style="pos", target_style="neg")
    with pytest.raises(TstevalError, match=r"style classifiers \['LR'\] .*'LR': did you mean 'lr'\? \(only the case"):
        tsteval.Plan(transfers, classifiers={"lr": data / "style"}, style=["LR"])
