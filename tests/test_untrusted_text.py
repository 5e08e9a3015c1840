"""Untrusted text stays text: bounded, strict YAML manifests and escaped Markdown (bad-input catalogue).

Manifests and tables come from users; so do system names, setting labels and outputs.  A YAML alias bomb,
a huge value, a repeated key or a non-UTF-8 manifest must give one short error line; ``<script>`` in an
output must reach ``report.md`` and ``summary.md`` as text, and a ``|`` must not split a table cell.
"""

from __future__ import annotations

import re
import time
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest
from badinput import expect_error, run_cli

from tsteval.experiment.manifest.loader import ManifestError, load_manifest
from tsteval.experiment.manifest.safe_yaml import MAX_MANIFEST_BYTES

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
MANIFEST = """name: untrusted
transfers:
  table: transfers.csv
metrics:
  content:
    metrics: [chrf]
report:
  worst_examples: 2
  bootstrap_resamples: 20
"""


def _bomb(levels: int) -> str:
    """The "billion laughs": each level is a list of nine aliases of the level before (9**levels strings)."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join([*lines, f"transfers: *a{levels - 1}", "metrics: {}"]) + "\n"


def _run(path: Path, out: Path) -> list[str]:
    return ["run", path, "--out", out]


def test_alias_bomb_is_refused_at_once_in_little_memory(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(_bomb(9))
    assert path.stat().st_size < 1024
    outcome = expect_error(_run(path, tmp_path / "out"), capsys,
                           f"{path}:2: YAML aliases (*a0) are not accepted in a manifest",
                           "write the value out in full")
    assert len(outcome.err) < 400 and not (tmp_path / "out").exists()
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(ManifestError, match="YAML aliases"):
        load_manifest(path)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 0.5 and peak < 2 << 20, (seconds, peak)


def test_oversized_manifest_is_refused_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text("name: " + "x" * MAX_MANIFEST_BYTES + "\n")
    expect_error(_run(path, tmp_path / "out"), capsys,
                 f"{path}: the manifest is {MAX_MANIFEST_BYTES + 7} bytes, more than the {MAX_MANIFEST_BYTES}")


def test_repeated_key_is_an_error_naming_both_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text("name: x\nseed: 0\ntransfers: {published: mir}\nseed: 1\nmetrics: {}\n")
    expect_error(_run(path, tmp_path / "out"), capsys,
                 f"{path}:4: the key 'seed' repeats (first on line 2)", "give each key once")


def test_repeated_nested_key_too(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(MANIFEST.replace("    metrics: [chrf]\n", "    metrics: [chrf]\n    metrics: [bleu]\n"))
    expect_error(_run(path, tmp_path / "out"), capsys, f"{path}:7: the key 'metrics' repeats (first on line 6)")


def test_non_utf8_manifest_names_the_byte_and_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_bytes("# r\u00e9sum\u00e9\nname: caf\u00e9\n".encode("latin-1"))
    expect_error(_run(path, tmp_path / "out"), capsys,
                 f"{path}:1: byte 0xe9 at byte offset 3 is not valid UTF-8", "save the manifest as UTF-8")


def test_invalid_yaml_and_deep_nesting_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text("name: x\n  seed: 1\n")
    outcome = expect_error(_run(path, tmp_path / "out"), capsys,
                           f"{path}:2: invalid YAML: mapping values are not allowed here (column 7)")
    assert len(outcome.err.splitlines()) == 1
    path.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    expect_error(_run(path, tmp_path / "out"), capsys, f"{path}: the YAML nests too deeply to read")


@pytest.mark.parametrize(("yaml_line", "fragment"), [
    ('seed: "' + "y" * 100_000 + '"', "seed: seed must be an integer in [0, 2**32), not 'yyyy"),
    ("seed: " + "9" * 5000, "the integer '9999"),
    ("? " + "k" * 100_000 + "\n: 1", ": unknown key"),
])
def test_a_huge_value_gives_a_bounded_error_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                 yaml_line: str, fragment: str) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(MANIFEST + yaml_line + "\n")
    (tmp_path / "transfers.csv").write_text("input,output,source_style,target_style\na b,a c,0,1\n")
    outcome = expect_error(_run(path, tmp_path / "out"), capsys, fragment, "chars)")
    assert len(outcome.err) < 600, len(outcome.err)


def _hostile_table(path: Path) -> None:
    rows = []
    for system in (f"<b>sys|A</b>{IMG}", "B\nC"):
        for item in range(6):
            rows.append({"system": system, "setting": f"s{IMG}", "item": item,
                         "input": f"the food here was good and cheap number {item}",
                         "output": f"{SCRIPT} the {'food ' * item}| was bad {IMG} {'here ' * (item % 2)}",
                         "source_style": "0", "target_style": "1",
                         "human_content_preservation": 1 + (item * 7 + len(system)) % 5})
    pd.DataFrame(rows).to_csv(path, index=False)


def _tables_are_intact(markdown: str) -> None:
    """Every Markdown table keeps one column count: no cell was split by a ``|`` or a newline."""
    widths: list[int] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            widths.append(len(re.findall(r"(?<!\\)\|", line)))
        elif widths:
            assert len(set(widths)) == 1, widths
            widths = []


def _no_html(markdown: str) -> None:
    for tag in ("<script", "<img", "<b>"):
        assert tag not in markdown, tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown


def test_run_report_and_summary_escape_outputs_and_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "manifest.yaml").write_text(MANIFEST.replace("worst_examples: 2", "worst_examples: 6"))
    _hostile_table(tmp_path / "transfers.csv")
    outcome = run_cli(_run(tmp_path / "manifest.yaml", tmp_path / "out"), capsys)
    assert outcome.code == 0, outcome.err
    report = (tmp_path / "out" / "report.md").read_text()
    _no_html(report)
    assert "### content: `human_content_preservation` (n = 12 rated transfers)" in report
    assert "| undefined |" in report  # two systems of one setting each: no system-level correlation
    assert "&lt;img src=x onerror=alert(1)&gt;" in report and "&lt;b&gt;sys\\|A&lt;/b&gt;" in report
    _tables_are_intact(report)
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "&lt;b&gt;sys\\|A&lt;/b&gt;" in summary and "<img" not in summary
    _tables_are_intact(summary)
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<script" not in html and "<img src=x" not in html


def test_score_summary_escapes_system_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _hostile_table(tmp_path / "transfers.csv")
    outcome = run_cli(["score", "--table", tmp_path / "transfers.csv", "--content", "chrf", "--out",
                       tmp_path / "out", "--quiet"], capsys)
    assert outcome.code == 0, outcome.err
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "&lt;b&gt;sys\\|A&lt;/b&gt;&lt;img src=x onerror=alert(1)&gt;" in summary and "<img" not in summary
    assert "B C" in summary  # a newline in a name does not end the table row
    _tables_are_intact(summary)


def test_non_utf8_transfers_table_names_line_and_byte(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "manifest.yaml").write_text(MANIFEST)
    (tmp_path / "transfers.csv").write_bytes("input,output,source_style,target_style,human_content_preservation\n"
                                             "a b,a c,0,1,3\nthe caf\u00e9,a d,0,1,4\n".encode("latin-1"))
    expect_error(_run(tmp_path / "manifest.yaml", tmp_path / "out"), capsys,
                 f"{tmp_path / 'transfers.csv'}:3: byte 0xe9 at byte offset", "not valid UTF-8", "UTF-8")
