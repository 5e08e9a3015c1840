"""What a formality user can train on from the data root, what ``tsteval train-classifier`` reports on it, and how
well the result's style score tracks Lai et al.'s (2022) formality raters.

GYAFC's training split (Rao & Tetreault 2018, cased) is released on request and is not in the data root; what is
there is lower-cased, Penn-Treebank-tokenised GYAFC *test* text (Family & Relationships) with human rewrites:

* ``GYAFC``: DualRL's 1,000-item subset, ``dualrl/data/GYAFC/test.{0,1}`` (``0`` = formal, ``1`` = informal) and
  the four human references ``dualrl/references/GYAFC/reference{0..3}.{0,1}`` (``reference{k}.0`` rewrites the
  formal ``test.0`` informally, ``reference{k}.1`` rewrites ``test.1`` formally): 5 lines an item;
* ``GYAFC_Full``: the full test set behind it, 1,019 formal and 1,332 informal inputs with the same four human
  rewrites each (``dualrl/outputs/GYAFC_Full/Human{0..3}/test.{0-1,1-0}.tsf``, input TAB rewrite; a superset of
  ``GYAFC``, checked);
* ``GYAFC_Full`` without ``GYAFC``: what to train on before scoring DualRL's GYAFC systems (``--dualrl GYAFC``),
  whose inputs and references are ``GYAFC``'s texts.

The system outputs in ``dualrl/outputs`` are not training text (a system's output is not reliably of its target
style), and Lai's rated texts are what is evaluated.  Every Lai text (the 80 inputs, the 720 outputs, the 80
references; found again in DualRL's form by :func:`tsteval.core.text_form.match_key`) is left out of the training
text, and so is every other line of an item holding one (the other rewrites of a rated sentence): the benchmark
writes the formal and informal files of each corpus and those lines as ``--exclude`` files under
``runs/formality_training/``, runs ``tsteval train-classifier`` on them (fastText ``--threads 1``, tf-idf + logistic
regression, the text-CNN on one CPU thread) and keeps what it prints.  The saved classifiers whose training text
holds no Lai text score Lai's 720 outputs as written (each classifier puts a text into the form it was trained on),
and :func:`tsteval.metaeval.engine.meta_evaluate` correlates their
``target_prob`` and ``style_strength`` with the raters' mean style score (clustered bootstrap by input, 1,000
resamples) beside the authors' own style scores on the same rows (their PT16 regressor ``r-pt16``, PT16 and GYAFC
classifiers ``c-pt16`` / ``c-gyafc``, ChatGPT), with each difference from ``c-gyafc``.  The ``fullrated`` runs keep
the parallel rewrites (only the rated texts themselves are left out), to show what they are worth; the
``fullscored`` runs are the docs' recipe for ``--dualrl GYAFC`` (a few Lai texts stay in: not scored on Lai).

Run: ``python -m benchmarks.studies.formality_training`` (about 3 minutes of CPU, the text-CNNs most of it) ->
``benchmarks/results/formality_training.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tsteval.aggregate import N_RESAMPLES
from tsteval.core import markdown as md
from tsteval.core.datapaths import dataset_dir
from tsteval.core.errors import InputError, TstevalError
from tsteval.core.text_form import match_key
from tsteval.readers.lai import load_lai
from tsteval.readers.lines import load_style_files, read_lines

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
STYLE_PAGE = "evidence/style_classifiers"  # the fine-tuned MiniLM's figure on Lai (benchmarks/evidence/)
WORK = ROOT / "runs" / "formality_training"
STYLES = {"0": "formal", "1": "informal"}  # DualRL's GYAFC file suffixes
OTHER = {"0": "1", "1": "0"}
REWRITERS = range(4)
# fastText on one thread (reproducible for a seed), the text-CNN on the CPU with one thread (ENV).
BACKENDS = {"fasttext": ("fasttext", ["--threads", "1"]), "tfidflr": ("tfidf-lr", []),
            "textcnn": ("textcnn", ["--device", "cpu"])}
ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
# (name, corpus, exclusion rule, what it is): the rows of the page, in order.
RUNS = (("gyafc", "GYAFC", "parallel", "DualRL's GYAFC (1,000 items)"),
        ("full", "GYAFC_Full", "parallel", "GYAFC_Full (2,351 items)"),
        ("fullrest", "GYAFC_Full", "parallel+GYAFC", "GYAFC_Full without DualRL's GYAFC (for --dualrl GYAFC)"),
        ("fullrated", "GYAFC_Full", "rated", "GYAFC_Full, parallel rewrites kept"),
        ("fullscored", "GYAFC_Full", "GYAFC", "GYAFC_Full without DualRL's GYAFC (the docs' recipe)"))
# What each rule leaves out: the --exclude files of a corpus (prepare's keys), in order.
RULES = {"parallel": ("Lai's texts and their parallel rewrites", ("rated", "parallel")),
         "rated": ("Lai's texts only", ("rated",)),
         "parallel+GYAFC": ("Lai's texts, their parallel rewrites and every line of DualRL's GYAFC",
                            ("rated", "parallel", "gyafc")),
         "GYAFC": ("every line of DualRL's GYAFC (what `--dualrl GYAFC` scores)", ("gyafc",))}
HUMAN = "human_style"
PUBLISHED = ("lai.c-gyafc@style", "lai.c-pt16@style", "lai.r-pt16@style", "lai.chatgpt@style",
             "lai.chatgpt_multi@style")
REFERENCE_COLUMN = "lai.c-gyafc@style"  # the authors' GYAFC classifier: the published bar
COLUMNS = ("target_prob", "style_strength")
HELDOUT = 0.1
SCORES = "@scores@"  # the per-output scores are written on one line of the JSON
CLI = "import sys; from tsteval.cli import main; sys.exit(main(sys.argv[1:]))"  # what the tsteval script runs


@dataclass(frozen=True)
class Line:
    """One line of a formality corpus: its text, style and item (a source sentence and its rewrites)."""

    text: str
    style: str
    item: tuple[str, int]


def gyafc_lines() -> list[Line]:
    """DualRL's GYAFC subset: each test line and its four references, one item (``(side, line)``)."""
    root = dataset_dir("dualrl")
    out: list[Line] = []
    for side in STYLES:
        tests = read_lines(root / "data" / "GYAFC" / f"test.{side}")
        out += [Line(t, STYLES[side], (side, i)) for i, t in enumerate(tests)]
        for k in REWRITERS:
            path = root / "references" / "GYAFC" / f"reference{k}.{side}"
            refs = read_lines(path)
            if len(refs) != len(tests):
                raise InputError(f"{len(refs)} lines, but test.{side} has {len(tests)}", path=path,
                                 fix="restore DualRL's line-aligned release of the references")
            out += [Line(t, STYLES[OTHER[side]], (side, i)) for i, t in enumerate(refs)]
    return out


def gyafc_full_lines() -> list[Line]:
    """GYAFC_Full: each input (once) and its four human rewrites, one item (``(side, line)``); every ``Human{k}``
    file must hold the same inputs."""
    root = dataset_dir("dualrl") / "outputs" / "GYAFC_Full"
    out: list[Line] = []
    for side in STYLES:
        inputs: list[str] | None = None
        for k in REWRITERS:
            path = root / f"Human{k}" / f"test.{side}-{OTHER[side]}.tsf"
            pairs = [line.split("\t", 1) for line in read_lines(path)]
            bad = next((n for n, pair in enumerate(pairs, 1) if len(pair) != 2), None)
            if bad is not None:
                raise InputError("the line has no TAB", path=path, line=bad, fix="each line is input TAB rewrite")
            if inputs is None:
                inputs = [pair[0] for pair in pairs]
                out += [Line(t, STYLES[side], (side, i)) for i, t in enumerate(inputs)]
            elif [pair[0] for pair in pairs] != inputs:
                raise InputError("its inputs are not Human0's", path=path,
                                 fix="restore DualRL's release: the four Human files share their inputs")
            out += [Line(pair[1], STYLES[OTHER[side]], (side, i)) for i, pair in enumerate(pairs)]
    return out


def rated_texts(frame: pd.DataFrame) -> dict[str, set[str]]:
    """Lai's distinct inputs, outputs and references."""
    return {column: set(frame[column]) for column in ("input", "output", "reference")}


def exclusions(lines: Sequence[Line], rated: dict[str, set[str]]) -> tuple[list[str], list[str], dict[str, int]]:
    """The corpus lines that are a rated text (by :func:`match_key`), the other lines of the items holding one (the
    parallel rewrites), and the counts (how many of each kind of rated text, by its key, have a copy)."""
    keys = {kind: {match_key(t) for t in texts} for kind, texts in rated.items()}
    every = set().union(*keys.values())
    hits = [line for line in lines if match_key(line.text) in every]
    items = {line.item for line in hits}
    parallel = [line for line in lines if line.item in items and match_key(line.text) not in every]
    found = {match_key(line.text) for line in hits}
    return (sorted({line.text for line in hits}), sorted({line.text for line in parallel}),
            {"lines": len(lines), "rated_lines": len(hits), "rated_texts_found": len(found),
             **{f"{kind}_found": len(k & found) for kind, k in keys.items()},
             "rated_items": len(items), "parallel_lines": len(parallel)})


def _write(path: Path, texts: Sequence[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
    return path.relative_to(WORK).as_posix()


def prepare(frame: pd.DataFrame) -> dict[str, dict]:
    """Write each corpus's style files and ``--exclude`` files under :data:`WORK`; per corpus its files and counts."""
    texts = rated_texts(frame)
    rated = set().union(*texts.values())
    keys = {kind: len({match_key(t) for t in kind_texts}) for kind, kind_texts in texts.items()}
    corpora = {"GYAFC": gyafc_lines(), "GYAFC_Full": gyafc_full_lines()}
    full_text = {line.text for line in corpora["GYAFC_Full"]}
    missing = {line.text for line in corpora["GYAFC"]} - full_text
    if missing:
        raise TstevalError(f"{len(missing)} lines of DualRL's GYAFC are not in GYAFC_Full, e.g. {min(missing)!r}")
    out = {}
    for name, lines in corpora.items():
        rated_lines, parallel, counts = exclusions(lines, texts)
        files = {style: _write(WORK / name / f"{style}.txt", [x.text for x in lines if x.style == style])
                 for style in STYLES.values()}
        out[name] = {"counts": {**counts, **{f"{s}_lines": sum(x.style == s for x in lines) for s in STYLES.values()},
                                "items": len({x.item for x in lines})},
                     "files": files, "rated": _write(WORK / name / "lai_rated.txt", rated_lines),
                     "parallel": _write(WORK / name / "lai_parallel.txt", parallel)}
    out["GYAFC_Full"]["gyafc"] = _write(WORK / "GYAFC_Full" / "dualrl_gyafc.txt",
                                        sorted({x.text for x in corpora["GYAFC"]}))
    out["rated"] = {**{column: len(t) for column, t in texts.items()}, "distinct": len(rated),
                    "distinct_keys": len({match_key(t) for t in rated}), **{f"{k}_keys": n for k, n in keys.items()}}
    return out


def train_command(backend: str, corpus: dict, rule: str, out: str) -> list[str]:
    """The ``tsteval train-classifier`` arguments for ``backend`` on ``corpus`` (paths relative to :data:`WORK`)."""
    name, extra = BACKENDS[backend]
    excludes = [corpus[kind] for kind in RULES[rule][1]]
    styles = [part for style, path in corpus["files"].items() for part in ("--style", f"{style}={path}")]
    return ["train-classifier", name, *styles, *(part for path in excludes for part in ("--exclude", path)), *extra,
            "--seed", "0", "--heldout", str(HELDOUT), "--out", out, "--overwrite", "--quiet"]


def _relative(text: str) -> list[str]:
    """The lines of ``text`` with this checkout's folder written relative to it (no absolute path in the results)."""
    return text.replace(f"{WORK}", WORK.relative_to(ROOT).as_posix()).strip().splitlines()


def lai_left(corpus: dict, rule: str, rated: set[str]) -> int:
    """How many of the ``rated`` texts (by :func:`match_key`) are still in ``corpus``'s style files once the
    ``--exclude`` files of ``rule`` are taken out (as ``train-classifier`` takes them out: exact lines)."""
    texts = load_style_files({style: WORK / path for style, path in corpus["files"].items()})
    for kind in RULES[rule][1]:
        texts = texts.without(read_lines(WORK / corpus[kind]))
    return len({match_key(t) for t in texts.texts} & {match_key(t) for t in rated})


def train(prepared: dict, rated: set[str]) -> list[dict]:
    """Every run of :data:`RUNS` x :data:`BACKENDS` through the ``tsteval`` command line; what it printed, the
    saved model's ``report.json`` and how many ``rated`` texts its training text still holds."""
    runs = []
    for name, corpus, rule, title in RUNS:
        for backend in BACKENDS:
            out = f"models/{backend}_{name}"
            args = train_command(backend, prepared[corpus], rule, out)
            done = subprocess.run([sys.executable, "-c", CLI, *args], cwd=WORK, capture_output=True, text=True,
                                  check=False, env={**os.environ, **ENV})
            if done.returncode != 0:
                raise TstevalError(f"tsteval {' '.join(args)} failed: {done.stderr.strip()[-500:]}")
            report = json.loads((WORK / out / "report.json").read_text())
            runs.append({"name": f"{backend}_{name}", "corpus": corpus, "rule": rule, "title": title,
                         "lai_texts_left": lai_left(prepared[corpus], rule, rated),
                         "backend": BACKENDS[backend][0], "command": "tsteval " + " ".join(args[:-2]),
                         "printed": _relative(done.stdout), "warnings": _relative(done.stderr),
                         **{k: report[k] for k in ("n_train", "n_split", "n_heldout", "accuracy", "macro_f1",
                                                   "text_form")}})
            print(runs[-1]["printed"][-1], flush=True)
    return runs


def score(frame: pd.DataFrame, runs: Sequence[dict]) -> tuple[pd.DataFrame, dict[str, str]]:
    """Lai's 720 outputs scored by every saved classifier whose training text holds none of Lai's texts, as a user
    scores them (``tsteval.evaluate`` with the saved folder), the columns :data:`COLUMNS` of each, and their
    signatures."""
    import tsteval

    classifiers = {run["name"]: str(WORK / "models" / run["name"]) for run in runs if run["lai_texts_left"] == 0}
    card = tsteval.evaluate(list(frame["input"]), list(frame["output"]), source_style="informal",
                            target_style="formal", metrics=["target_prob"], classifier=classifiers)
    columns = [f"{c}@{name}" for name in classifiers for c in COLUMNS]
    return card.frame[columns], {c: card.signatures[c] for c in columns}


def correlate(frame: pd.DataFrame, scores: pd.DataFrame, signatures: dict[str, str]) -> list[dict]:
    """Our columns and the authors' style columns against ``human_style`` through :func:`meta_evaluate`: per column
    the sentence-level Pearson and Spearman and the system-level Pearson with intervals, and the sentence-level
    Pearson difference from :data:`REFERENCE_COLUMN`."""
    from tsteval.metaeval.engine import meta_evaluate
    from tsteval.metaeval.tables import MetricColumn
    from tsteval.scorecard import Scorecard

    card = Scorecard(pd.concat([frame.reset_index(drop=True), scores.reset_index(drop=True)], axis=1), signatures)
    published = [MetricColumn(c, "style", True, "Lai et al. 2022") for c in PUBLISHED]
    result = meta_evaluate(card, {HUMAN: "style"}, baselines={HUMAN: REFERENCE_COLUMN}, published=published,
                           n_resamples=N_RESAMPLES, seed=0)
    table, base = result.table, result.baseline
    rows = []
    for column in [*scores.columns, *PUBLISHED]:
        part = table[table["metric"] == column].set_index(["level", "method"])
        row = {"column": column, "source": part["source"].iloc[0], "n": int(part.loc[("sentence", "pearson"), "n"])}
        for level, method, key in (("sentence", "pearson", "r"), ("sentence", "spearman", "rho"),
                                   ("system", "pearson", "r_system")):
            cell = part.loc[(level, method)]
            row.update({key: float(cell["r"]), f"{key}_lo": float(cell["lo"]), f"{key}_hi": float(cell["hi"])})
        diff = base[(base["metric"] == column) & (base["level"] == "sentence") & (base["method"] == "pearson")]
        if len(diff):
            row.update({"diff": float(diff["diff"].iloc[0]), "diff_lo": float(diff["lo"].iloc[0]),
                        "diff_hi": float(diff["hi"].iloc[0])})
        rows.append(row)
    return rows


def markdown(report: dict) -> str:
    """The results page."""
    rated, prepared = report["rated"], report["corpora"]
    lines = ["# Formality: what to train on from the data root, and how weak it is", "",
             "Made by `python -m benchmarks.studies.formality_training`. GYAFC's cased training split (Rao & "
             "Tetreault 2018) is released on request and is **not** in the data root; the formality text there is "
             "GYAFC *test* text with human rewrites, lower-cased and tokenised (DualRL's copies). Lai et al.'s "
             f"rated texts ({rated['input']} inputs, {rated['output']} distinct outputs, {rated['reference']} "
             f"references: {rated['distinct']} distinct texts) are left out of every training corpus, found by "
             "`tsteval.core.text_form.match_key` (lower case, no punctuation or spaces), and with them the other "
             "lines of each item holding one (the parallel rewrites of a rated sentence).", "",
             "## The corpora and what was left out", ""]
    lines.append(md.table(pd.DataFrame([{
        "corpus": name, "items": f"{c['items']:,}", "formal lines": f"{c['formal_lines']:,}",
        "informal lines": f"{c['informal_lines']:,}",
        "Lai inputs / references / outputs with a copy": f"{c['input_found']} of {rated['input_keys']} / "
        f"{c['reference_found']} of {rated['reference_keys']} / {c['output_found']} of {rated['output_keys']}",
        "lines equal to a Lai text": f"{c['rated_lines']:,}", "items holding one": f"{c['rated_items']:,}",
        "their other lines (parallel)": f"{c['parallel_lines']:,}"}
        for name, c in ((name, corpus["counts"]) for name, corpus in prepared.items())])))
    lines += ["", "Counted by match key (distinct keys of each kind). The outputs without a copy are system rewrites "
              "no GYAFC file holds; an output with a copy is an input or a human rewrite written again.", "",
              "## What `tsteval train-classifier` reports", "",
              "Held-out accuracy and macro-F1 on a seeded 10% of the training lines, as the command prints them. "
              "The lines of one item (a sentence and its four rewrites) can fall on both sides of that split, so "
              "these figures are optimistic; they say nothing about Lai's cased outputs.", ""]
    lines.append(md.table(pd.DataFrame([{
        "classifier": f"{run['name']} ({run['backend']})", "corpus": run["title"], "left out": RULES[run["rule"]][0],
        "training texts": f"{run['n_split'] + run['n_heldout']:,}", "held-out accuracy": f"{run['accuracy']:.3f}",
        "macro-F1": f"{run['macro_f1']:.3f}", "Lai texts left in": run["lai_texts_left"]} for run in report["runs"]])))
    lines += ["", "A classifier whose training text still holds a Lai text (by match key) is not scored on Lai "
              "below: it would be evaluated on what it was trained on."]
    lines += ["", "What it printed (first run of each corpus):", ""]
    for run in report["runs"][::len(BACKENDS)]:
        lines += ["```text", f"$ {run['command']}", *run["printed"], *run["warnings"], "```", ""]
    lines += ["## Correlation with Lai et al.'s style raters", "",
              f"Each saved classifier scores Lai's {report['rows_rated']} rated outputs as written "
              "(`tsteval.evaluate(..., classifier={NAME: FOLDER})`; the classifier puts each text into its training "
              "form, lower case and Penn Treebank tokens); `tsteval.metaeval.engine.meta_evaluate` correlates each "
              "column with the mean of the two annotators' 0-100 formality score, beside the authors' own scores "
              "on the same rows. 95% intervals of a bootstrap clustered by input "
              f"({report['resamples']:,} resamples); the difference is from the authors' GYAFC classifier "
              f"`{REFERENCE_COLUMN}`, paired on the same resamples.", ""]
    lines.append(md.table(pd.DataFrame([{
        "column": row["column"], "source": row["source"],
        "Pearson r (sentence)": f"{row['r']:.3f} [{row['r_lo']:.3f}, {row['r_hi']:.3f}]",
        "Spearman rho (sentence)": f"{row['rho']:.3f} [{row['rho_lo']:.3f}, {row['rho_hi']:.3f}]",
        "Pearson r (9 system means)": f"{row['r_system']:.3f} [{row['r_system_lo']:.3f}, {row['r_system_hi']:.3f}]",
        f"r minus {REFERENCE_COLUMN}": f"{row['diff']:+.3f} [{row['diff_lo']:+.3f}, {row['diff_hi']:+.3f}]"
        if "diff" in row else "(the bar)"} for row in report["correlation"]])))
    lines += ["", "## What the numbers show", "", *report["reading"], ""]
    return "\n".join(lines)


def reading(report: dict) -> list[str]:
    """The plain reading of the numbers (computed from them, no threshold tuned on them)."""
    ours = [row for row in report["correlation"] if row["source"] == "tsteval"]
    r = {row["column"]: row["r"] for row in ours}
    best = max(ours, key=lambda row: row["r"])
    bar = next(row for row in report["correlation"] if row["column"] == REFERENCE_COLUMN)
    accuracy = [run["accuracy"] for run in report["runs"]]
    above = [row["column"] for row in ours if row["r_lo"] > 0]
    below = [row["column"] for row in ours if row["r_hi"] < 0]
    backend = {run["name"]: run["backend"] for run in report["runs"]}
    system = {name: [row["r_system"] for row in ours if backend[row["column"].split("@")[1]] == name]
              for name in dict.fromkeys(backend.values())}
    lines = {name: corpus["counts"]["lines"] for name, corpus in report["corpora"].items()}
    mini = report["transformer"]

    def change(new: str, old: str) -> str:
        return ", ".join(f"{b} {r[f'target_prob@{b}_{new}'] - r[f'target_prob@{b}_{old}']:+.3f}" for b in BACKENDS)

    def named(columns: list[str]) -> str:
        return f" ({', '.join(f'`{c}`' for c in columns)})" if columns else ""

    return [f"- Held-out accuracy {min(accuracy):.3f}-{max(accuracy):.3f} on the corpus's own lines does not carry "
            f"to Lai's outputs: the best of our columns, `{best['column']}`, reaches r = {best['r']:.3f} "
            f"[{best['r_lo']:.3f}, {best['r_hi']:.3f}] at sentence level, the authors' GYAFC classifier (trained on "
            f"GYAFC's own, cased training split) {bar['r']:.3f} [{bar['r_lo']:.3f}, {bar['r_hi']:.3f}] on the same "
            f"rows ({best['diff']:+.3f} [{best['diff_lo']:+.3f}, {best['diff_hi']:+.3f}]). Of our {len(ours)} "
            f"columns {len(above)} have a sentence-level interval above 0{named(above)} and {len(below)} below "
            f"0{named(below)}.",
            "- At system level (the 9 means, wide intervals) "
            + "; ".join(f"{name} r {min(v):.3f} to {max(v):.3f}" for name, v in system.items())
            + f", the authors' GYAFC classifier {bar['r_system']:.3f}.",
            f"- `target_prob`'s sentence-level r: with the parallel rewrites left out rather than kept (`full` - "
            f"`fullrated`) {change('full', 'fullrated')}; with {lines['GYAFC_Full'] / lines['GYAFC']:.1f} times the "
            f"lines (`full` - `gyafc`) {change('full', 'gyafc')}: neither brings it above 0. A fine-tuned MiniLM "
            "trained on DualRL's GYAFC does no better (`target_prob@transformer` "
            f"{mini['r']:.3f} [{mini['lo']:.3f}, {mini['hi']:.3f}] on the same rows, "
            "`evidence/style_classifiers/study.md`). "
            "Half of Lai's inputs, all labelled informal, are DualRL's formal `test.0` sentences, so scoring them "
            "warns that most inputs are already called formal (`lai_style_investigation.md` (f)).",
            "- So a classifier trained on this lower-cased text cannot score single outputs for formality as Lai's "
            "raters did (they mark down all-lower-case text, which a lower-cased corpus cannot show: "
            "`lai_style_investigation.md`); read its `target_prob` on formality as unvalidated. Train on a cased "
            "formal/informal corpus (GYAFC's training split, on request) with your evaluation texts left out by "
            "`--exclude`, and check it against ratings before reading style scores."]


def parser() -> argparse.ArgumentParser:
    """The command line: no options (every corpus and classifier is this study's)."""
    return argparse.ArgumentParser(description=__doc__.split("\n\n")[0])


def main(argv: list[str] | None = None) -> None:
    parser().parse_args(argv)
    frame = load_lai().frame
    prepared = prepare(frame)
    rated = prepared.pop("rated")
    runs = train(prepared, set().union(*rated_texts(frame).values()))
    scores, signatures = score(frame, runs)
    correlation = correlate(frame, scores, signatures)
    report = {"command": "python -m benchmarks.studies.formality_training", "rated": rated,
              "corpora": prepared, "runs": runs, "rows_rated": int(frame[HUMAN].notna().sum()),
              "resamples": N_RESAMPLES, "correlation": correlation,
              "signatures": signatures,
              "scores": {"item": frame["item"].astype(int).tolist(), "system": frame["system"].astype(str).tolist(),
                         **{c: [round(float(v), 6) for v in scores[c]] for c in scores.columns}}}
    save({**report, "transformer": transformer_figure()})


def transformer_figure() -> dict:
    """The fine-tuned MiniLM's sentence-level Pearson r on Lai, from the style classifiers' evidence page."""
    study = json.loads((RESULTS / STYLE_PAGE / "study.json").read_text())
    row = next(f for f in study["figures"] if f["set"] == "Lai" and f["column"] == "target_prob@transformer"
               and f["level"] == "sentence" and f["statistic"] == "pearson")
    return {"column": row["column"], "source": f"{STYLE_PAGE}/study.json", **{k: row[k] for k in ("r", "lo", "hi")}}


def save(report: dict) -> None:
    """The JSON (its reading computed again) and the page of ``report``."""
    report["reading"] = reading(report)
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**report, "scores": SCORES}, indent=1).replace(json.dumps(SCORES), json.dumps(report["scores"]))
    (RESULTS / "formality_training.json").write_text(text + "\n")
    (RESULTS / "formality_training.md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
