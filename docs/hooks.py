"""MkDocs hook: the reference pages generated from the code at build time (never edited by hand), and the committed
results of ``benchmarks/results/`` served under ``results/`` so that the pages link to the measurements themselves.

- ``reference/metrics.md``: every metric of :data:`tsteval.METRICS` with its committed meta-evaluation evidence;
- ``reference/cli.md``: every command and flag of ``tsteval``, from its argparse parser;
- ``reference/options.md``: the manifest schema and every run option of :data:`tsteval.experiment.options.OPTIONS`;
- ``reference/benchmarks.md``: every benchmark module by kind, from :data:`benchmarks.KINDS`, linking to its results.

A hand-written page quotes a measurement as ``<!-- results-table: NAME.md N -->`` on a line of its own (indented
inside a list item): the hook
puts there the N-th table of ``benchmarks/results/NAME.md`` (:func:`results_table`), so the page cannot drift from
the committed results.  ``python docs/hooks.py PAGE`` prints one generated page (what ``tests/test_docs.py`` reads).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SERVED = (".md", ".png", ".svg")  # what of benchmarks/results/ the site serves (not the data files)
EVIDENCE = ("mir", "lai")  # the full meta-evaluation tables, benchmarks/results/meta_eval/{mir,lai}
INCLUDE = re.compile(r"^( *)<!-- results-table: (\S+\.md) (\d+) -->$", re.M)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _reads(metric: object) -> str:
    """What text the metric reads, from what it needs (the rule of docs/measures.md, "What each metric reads")."""
    needs = set(metric.needs)
    if "language_model" in needs:
        return "the transfer in its written form (`--text-form`), through the LM's tokenizer"
    if "sentence_encoder" in needs:
        return "the text as written, through the encoder's own tokenizer (at `@mask`/`@remove`: the modified text)"
    if "style_classifier" in needs:
        return "the output (and, for STI, the input) as the style classifier was trained on it"
    if "pair_classifier" in needs:
        return "the input and output pair (HH) or output and source document (AH), as the pair classifier reads them"
    if "human_corpus" in needs or metric.aspect == "naturalness":
        return "the output as tokens, beside the human-written text of the domain"
    if metric.aspect == "joint":
        return "no text: the scorecard columns of its factors"
    return "tsteval's tokens (`tsteval.core.tokenize`: NFC, lower-cased, whole words of every script)"


def _evidence(name: str, aspect: str) -> list[str]:
    """The committed sentence-level Pearson r of every column of metric ``name`` with its aspect's rating."""
    import pandas as pd

    from tsteval.metaeval.rated.datasets import LAI_RATINGS, MIR_RATINGS

    rating = {"mir": {r.aspect: r.column for r in MIR_RATINGS}, "lai": {r.aspect: r.column for r in LAI_RATINGS}}
    by_column: dict[str, dict[str, str]] = {}
    for dataset in EVIDENCE:
        table = pd.read_csv(RESULTS / "meta_eval" / dataset / "metaeval.csv")
        rows = table[(table["level"] == "sentence") & (table["method"] == "pearson") & (table["source"] == "tsteval")
                     & (table["rating"] == rating[dataset].get(aspect, "")) & (table["metric"].str.split("@").str[0]
                                                                            == name)]
        for row in rows.itertuples():
            by_column.setdefault(row.metric, {})[dataset] = f"{row.r:.3f} [{row.lo:.3f}, {row.hi:.3f}]"
    if not by_column:
        return ["No committed meta-evaluation evidence (not judged on the rated datasets)."]
    lines = ["| column | Mir r [95%] | Lai r [95%] |", "|---|---|---|"]
    lines += [f"| `{column}` | {cells.get('mir', '—')} | {cells.get('lai', '—')} |"
              for column, cells in sorted(by_column.items())]
    return lines


def metrics_page() -> str:
    """Every registered metric: its declaration, what it reads and needs, its signature and its evidence."""
    import tsteval
    from tsteval.metrics.resources import RESOURCES

    lines = ["# Metrics", "", "Generated from `tsteval.METRICS` (each metric's `Metric(...)` declaration) and the "
             "committed meta-evaluation tables ([`meta_eval/mir`](../results/meta_eval/mir/metaeval.md), "
             "[`meta_eval/lai`](../results/meta_eval/lai/metaeval.md)): sentence-level Pearson r with the rating of "
             "the metric's aspect, 95% intervals clustered by input. How the profile is chosen from them: "
             "[Meta-evaluation](../meta-evaluation.md).", "",
             "| metric | aspect | better | range |", "|---|---|---|---|"]
    metrics = sorted(tsteval.METRICS.values(), key=lambda m: (m.aspect, m.name))
    lines += [f"| [`{m.name}`](#{m.name}) | {m.aspect} | {'higher' if m.higher_is_better else 'lower'} | "
              f"[{m.range[0]:g}, {m.range[1]:g}] |" for m in metrics]
    for m in metrics:
        params = ", ".join(f"`{k}={v}`" + (f" (one of {', '.join(f'`{c}`' for c in m.choices[k])})"
                                          if k in m.choices else "") for k, v in m.params.items()) or "none"
        needs = "; ".join(f"`{n}`: {RESOURCES[n].description}" for n in sorted(m.needs)) or "nothing"
        fields = ", ".join(f"`{f.split(':')[0]}`" for f in str(m.signature()).split("|"))
        lines += ["", f"## `{m.name}` {{#{m.name}}}", "", _cell(m.description), "",
                  f"- **aspect**: {m.aspect}; **better**: {'higher' if m.higher_is_better else 'lower'}; "
                  f"**range**: [{m.range[0]:g}, {m.range[1]:g}]",
                  f"- **parameters** (`{m.name}:KEY=VALUE`): {params}",
                  f"- **reads**: {_reads(m)}",
                  f"- **needs**: {needs}",
                  f"- **libraries**: {', '.join(m.libraries)}",
                  f"- **signature fields**: {fields}, then the identities of the models and data used",
                  "", *_evidence(m.name, m.aspect)]
    return "\n".join(lines) + "\n"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _flag_rows(parser: argparse.ArgumentParser) -> list[str]:
    lines = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if not isinstance(a, (argparse._HelpAction,
                                                                          argparse._SubParsersAction))]
        if not actions:
            continue
        lines += ["", f"**{group.title}**", "", "| flag | value | default | help |", "|---|---|---|---|"]
        for a in actions:
            name = ", ".join(f"`{s}`" for s in a.option_strings) or f"`{a.dest}`"
            value = "" if a.nargs == 0 else f"`{a.metavar or a.dest.upper()}`" + (
                f" (one of {', '.join(f'`{c}`' for c in a.choices)})" if a.choices else "")
            default = "" if a.default in (None, "", [], False, argparse.SUPPRESS) else f"`{a.default}`"
            lines.append(f"| {name} | {_cell(value)} | {_cell(default)} | {_cell((a.help or '') % vars(a))} |")
    return lines


def cli_page() -> str:
    """Every command and flag of ``tsteval``, from :func:`tsteval.cli.main.build_parser`."""
    from tsteval.cli.main import build_parser

    parser = build_parser()
    lines = ["# Command line", "", "Generated from the argparse parser (`tsteval.cli.main.build_parser`); "
             "`tsteval COMMAND --help` prints the same.", "", _cell(parser.description), ""]
    commands = _subcommands(parser)
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    lines += [f"- [`tsteval {name}`](#{name}): {_cell(helps.get(name, ''))}" for name in commands]
    for name, sub in commands.items():
        lines += ["", f"## `tsteval {name}` {{#{name}}}", "", _cell(sub.description or helps.get(name, "")), "",
                  "```text", sub.format_usage().strip(), "```", *_flag_rows(sub)]
        if sub.epilog:
            lines += ["", "```text", sub.epilog.strip("\n"), "```"]
    return "\n".join(lines) + "\n"


def options_page() -> str:
    """The manifest schema (from :mod:`tsteval.experiment.manifest.loader`) and every run option of ``OPTIONS``."""
    from tsteval.experiment.manifest import loader as manifest
    from tsteval.experiment.options import OPTIONS

    code = []
    for line in manifest.__doc__.split("::\n", 1)[1].split("\n")[1:]:
        if line and not line.startswith("    "):
            break  # the schema is the indented block after "Schema (...)::"
        code.append(line[4:])
    lines = ["# Manifest and run options", "", "Generated from `tsteval.experiment.manifest.loader` (the schema, "
             "`?` = optional) and `tsteval.experiment.options.OPTIONS` (every run option: the same value and the "
             "same one-line error from the command line, a manifest and `tsteval.evaluate`).", "",
             "## Manifest schema", "", "```yaml", *[c for c in code if c.strip()], "```", "",
             "## Run options", "", "| option (`evaluate`, `Plan`) | `tsteval score` flag | manifest key | default "
             "| meaning |", "|---|---|---|---|---|"]
    for o in OPTIONS.values():
        default = (",".join(o.default) if isinstance(o.default, tuple) else dict(o.default)
                   if hasattr(o.default, "keys") else o.default)
        default = "none" if default in ("", None, {}) else default
        lines.append(f"| `{o.name}` | `{o.flag} {o.metavar}` | `{o.manifest}` | `{default}` | {_cell(o.help)} |")
    lines += ["", "## What a manifest holds", "", "::: tsteval.experiment.manifest.specs", "    options:",
              "      show_root_heading: false", "      members_order: source"]
    return "\n".join(lines) + "\n"


def benchmarks_page() -> str:
    """Every benchmark module by kind (:data:`benchmarks.KINDS`) with its docstring's first line and results."""
    from benchmarks import KINDS

    lines = ["# Benchmarks", "", "Generated from `benchmarks.KINDS`: every benchmark module, grouped by kind, with its "
             "first docstring line and the committed results it writes (`benchmarks/results/`).", ""]
    for kind, (title, modules) in KINDS.items():
        lines += [f"## {title} {{#{kind}}}", "", "| command | what | results |", "|---|---|---|"]
        for name in modules:
            tree = ast.parse((ROOT / "benchmarks" / f"{name.replace('.', '/')}.py").read_text(encoding="utf-8"))
            first = (ast.get_docstring(tree) or "").split("\n\n")[0].replace("\n", " ")
            stem = name.rsplit(".", 1)[-1]  # the results are named by the module
            pages = sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.glob(f"{stem}*.md"))
            pages += sorted(p.relative_to(RESULTS).as_posix() for p in RESULTS.glob(f"{stem}/**/*.md"))
            links = ", ".join(f"[`{p}`](../results/{p})" for p in pages) or "—"
            lines.append(f"| `python -m benchmarks.{name}` | {_cell(first)} | {links} |")
        lines.append("")
    return "\n".join(lines)


def results_table(name: str, number: int) -> str:
    """The ``number``-th (from 1) Markdown table of ``benchmarks/results/NAME``, with a line naming its source."""
    text = (RESULTS / name).read_text(encoding="utf-8")
    tables = re.findall(r"(?:^\|.*\|\n)+", text, re.M)
    if not 1 <= number <= len(tables):
        raise ValueError(f"benchmarks/results/{name} has {len(tables)} tables, not a table {number}")
    return f"{tables[number - 1]}\n*Table {number} of [`benchmarks/results/{name}`](results/{name}).*\n"


def on_page_markdown(markdown: str, page: object, **_: object) -> str:
    """Each ``<!-- results-table: NAME.md N -->`` line replaced by that table (links relative to the page)."""
    depth = page.file.src_uri.count("/")

    def table(match: re.Match) -> str:
        text = results_table(match.group(2), int(match.group(3))).replace("](results/", f"]({'../' * depth}results/")
        return "\n".join(match.group(1) + line if line else line for line in text.split("\n"))
    return INCLUDE.sub(table, markdown)


PAGES = {"reference/metrics.md": metrics_page, "reference/cli.md": cli_page, "reference/options.md": options_page,
         "reference/benchmarks.md": benchmarks_page}


def on_files(files: object, config: object) -> object:
    """Add the generated pages and the served results to the site."""
    from mkdocs.structure.files import File

    sys.path.insert(0, str(ROOT))  # benchmarks/ is a folder of the checkout, not of the installed package
    for uri, page in PAGES.items():
        files.append(File.generated(config, uri, content=page()))
    for path in sorted(RESULTS.rglob("*")):
        if path.suffix in SERVED and path.is_file():
            files.append(File.generated(config, f"results/{path.relative_to(RESULTS).as_posix()}",
                                        abs_src_path=str(path)))
    return files


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    print(PAGES[sys.argv[1]](), end="")
