"""Every code block of README.md and docs/*.md runs: shell (``bash``, ``sh``) and ``python`` blocks are executed in
order, one temporary folder per page holding the small files the pages name (``train.neg.txt``, ``my_test_inputs.txt``,
...: real Yelp and DualRL lines), and a ``text`` block right after one is its expected output (each of its lines, in
order, ``...`` standing for any lines; prose may stand between the two). A block preceded by ``<!-- not-run: REASON
-->`` is not run; its reason names the test, make target or benchmark that covers it. The generated reference
pages (``docs/hooks.py``) are checked against the registries they are generated from."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^( *)```([a-z]*)\n(.*?)^\1```\n", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not-run: (.+?)-->\s*$", re.S)
RUN = ("bash", "sh", "python")
LINES = 100  # transfers in the fixture files


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    code: str
    not_run: str | None  # the reason, when the block is marked not-run
    output: str | None  # the text block right after it: what it prints


def blocks(page: Path) -> list[Block]:
    """The runnable blocks of ``page`` with their markers and expected output, in order."""
    text = page.read_text(encoding="utf-8")
    found = list(FENCE.finditer(text))
    result = []
    for i, match in enumerate(found):
        indent, language, body = match.groups()
        if language not in RUN:
            continue
        code = "\n".join(line.removeprefix(indent) for line in body.split("\n"))
        marker = NOT_RUN.search(text[found[i - 1].end() if i else 0:match.start()])
        following = found[i + 1] if i + 1 < len(found) else None
        output = following.group(3) if following and following.group(2) == "text" else None
        result.append(Block(page, text.count("\n", 0, match.start()) + 1, language, code,
                            " ".join(marker.group(1).split()) if marker else None, output))
    return result


def _fixtures(folder: Path, data: Path) -> None:
    """The files the pages' examples name, from real data: two styles' training sentences and a system's transfers."""
    def lines(path: Path, n: int) -> str:
        with open(path, encoding="utf-8") as handle:
            return "".join(next(handle) for _ in range(n))

    (folder / "train.neg.txt").write_text(lines(data / "yelp" / "sentiment.dev.0", 3000))
    (folder / "train.pos.txt").write_text(lines(data / "yelp" / "sentiment.dev.1", 3000))
    inputs = lines(data / "dualrl" / "data" / "yelp" / "test.0", LINES)
    outputs = lines(data / "dualrl" / "outputs" / "yelp" / "DualRL" / "test.0.tsf", LINES)
    for name, text in (("my_test_inputs.txt", inputs), ("my_system_outputs.txt", outputs), ("inputs.txt", inputs),
                       ("outputs.txt", outputs)):
        (folder / name).write_text(text)


def expect(output: str, printed: str, where: str) -> None:
    """Each line of ``output`` appears in ``printed`` in order (``...``: any lines between)."""
    got = printed.splitlines()
    at = 0
    for want in output.rstrip("\n").split("\n"):
        if want == "...":
            continue
        while at < len(got) and got[at].rstrip() != want.rstrip():
            at += 1
        assert at < len(got), f"{where}: the documented output line {want!r} is not printed:\n{printed}"
        at += 1


def _run(block: Block, folder: Path, env: dict[str, str]) -> str:
    where = f"{block.page.relative_to(ROOT)}:{block.line}"
    command = ([sys.executable, "-c", block.code] if block.language == "python"
               else ["bash", "-euo", "pipefail", "-c", block.code])
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{where} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


RUNNABLE = [page for page in PAGES if any(b.not_run is None for b in blocks(page))]


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_every_code_block_of_the_page_runs_and_prints_what_it_shows(page: Path, data_root: Path,
                                                                    tmp_path: Path) -> None:
    runnable = [b for b in blocks(page) if b.not_run is None]
    _fixtures(tmp_path, data_root)
    env = {**os.environ, "TSTEVAL_DATA": str(data_root), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for block in runnable:
        printed = _run(block, tmp_path, env)
        if block.output is not None:
            expect(block.output, printed, f"{page.relative_to(ROOT)}:{block.line}")


def test_every_block_runs_or_says_why_not() -> None:
    """Each shell and Python block is run, or marked not-run with a reason that names what covers it (a test, a
    make target or a benchmark), and the README's quick start is among those run."""
    marked = [b for page in PAGES for b in blocks(page) if b.not_run is not None]
    assert marked and all(re.search(r"tests/test_\w+\.py|make |benchmarks", b.not_run) for b in marked), marked
    readme = blocks(ROOT / "README.md")
    assert [b.language for b in readme if b.not_run is None and b.output is not None] == ["bash", "python"]


def test_the_readme_links_every_page_of_the_site() -> None:
    """A newcomer who reads only the README finds every hand-written page of the site's navigation in its
    documentation table (the model-server page too, so that ``--lm-endpoint`` is found)."""
    nav = re.findall(r"^\s+- [^:]+: ([\w-]+\.md)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", table))
    assert len(nav) >= 15 and "remote-models.md" in nav
    assert not set(nav) - {"index.md"} - linked, sorted(set(nav) - {"index.md"} - linked)
    assert all((ROOT / "docs" / page).is_file() for page in linked)
    row = next(line for line in table.splitlines() if "docs/remote-models.md" in line)
    assert "`--lm-endpoint" in row


def test_expect_matches_lines_in_order_with_ellipses() -> None:
    expect("a\n...\nc\n", "a\nb\nc\n", "here")
    with pytest.raises(AssertionError, match="'c'"):
        expect("c\na\n", "a\nb\nc\n", "here")


def _hooks() -> object:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_pages_hold_every_metric_option_command_and_benchmark() -> None:
    """The generated pages name every registered metric (with its parameters' choices), every run option with its
    flag and manifest key, every command and flag of the parser, and every benchmark module once."""
    import argparse

    import tsteval
    from benchmarks import HELPERS, KINDS
    from tsteval.cli.main import build_parser
    from tsteval.experiment.options import OPTIONS

    hooks = _hooks()
    metrics = hooks.metrics_page()
    for metric in tsteval.METRICS.values():
        assert f"## `{metric.name}` {{#{metric.name}}}" in metrics
        for key, choices in metric.choices.items():
            assert all(f"`{c}`" in metrics for c in choices), (metric.name, key)
    assert "| `sbert@none` | 0.506 [" in metrics  # its committed Mir r (docs/reproductions.md: 0.506 [0.479, 0.532])
    options = hooks.options_page()
    assert all(f"| `{o.name}` | `{o.flag} {o.metavar}` | `{o.manifest}` |" in options for o in OPTIONS.values())
    cli = hooks.cli_page()
    for name, sub in hooks._subcommands(build_parser()).items():
        assert f"## `tsteval {name}`" in cli
        flags = [s for a in sub._actions if not isinstance(a, argparse._HelpAction) for s in a.option_strings]
        assert all(f"`{flag}`" in cli for flag in flags), name
    listed = [m for _, modules in KINDS.values() for m in modules]
    files = {p.relative_to(ROOT / "benchmarks").with_suffix("").as_posix().replace("/", ".")
             for p in (ROOT / "benchmarks").rglob("*.py") if p.stem != "__init__"} - set(HELPERS)
    assert sorted(listed) == sorted(files) and len(set(listed)) == len(listed)
    page = hooks.benchmarks_page()
    assert all(f"`python -m benchmarks.{m}`" in page for m in listed)


def test_the_help_lists_what_the_registries_hold() -> None:
    """``tsteval score --help`` takes the packaged LMs from the registry that loads them (issue 36), and names every
    naturalness scorer, modification and baseline the code accepts."""
    from tsteval.cli.main import build_parser
    from tsteval.experiment.plan.baselines import BASELINES
    from tsteval.metrics.content.scorer import ATTRIBUTION_MODIFICATIONS, ERASE, MODIFICATION_MODES
    from tsteval.metrics.naturalness.causal_lm import PACKAGED_GGUF
    from tsteval.metrics.naturalness.packaged import PACKAGED_LMS
    from tsteval.metrics.naturalness.registry import NATURALNESS_METRICS

    assert list(PACKAGED_LMS) == list(PACKAGED_GGUF)
    score = " ".join(build_parser()._subparsers._group_actions[0].choices["score"].format_help().split())
    assert "qwen2.5-coder-1.5b" in score
    for name in (*PACKAGED_LMS, *NATURALNESS_METRICS, *MODIFICATION_MODES, *ATTRIBUTION_MODIFICATIONS, ERASE,
                 *BASELINES):
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", score), name


def test_every_quoted_results_table_exists_and_is_the_committed_one() -> None:
    """Each ``<!-- results-table: NAME.md N -->`` of the pages names a table that exists, and the hook puts that
    table in the page (one checked here by its committed numbers: Ray with two workers, speed_ray.md)."""
    hooks = _hooks()
    quoted = [m for page in PAGES for m in hooks.INCLUDE.finditer(page.read_text(encoding="utf-8"))]
    assert len(quoted) >= 3
    for match in quoted:
        assert hooks.results_table(match.group(2), int(match.group(3))).startswith("|")
    page = type("Page", (), {"file": type("File", (), {"src_uri": "scale-out.md"})()})()
    built = hooks.on_page_markdown("<!-- results-table: speed_ray.md 1 -->\n", page)
    assert "| ray | 2 | 33.2 | 452.1 | 1.15x |" in built and "](results/speed_ray.md)" in built
    with pytest.raises(ValueError, match="not a table 9"):
        hooks.results_table("speed_ray.md", 9)
