"""Rules every module of ``benchmarks/`` keeps (issue 55): no Markdown table built by hand (every table goes
through :func:`tsteval.core.markdown.table`, which escapes headers and cells), no correlation from scipy (the
meta-evaluation's own kernels, tested against scipy in tests/, compute them), and the package's size under a ceiling.
Every module keeps both rules (the last study scripts that broke them went through the renderer and the kernels)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "benchmarks"
RULES = {
    # a string that starts a table row or separator ("| ", "|---", f"| {x}"), ends one (' |"'), or joins its cells
    "table": re.compile(r"""["']\|[ :-]| \|["']|["'] \| ["']\.join"""),
    "scipy": re.compile(r"\bscipy\.stats\b|from scipy import stats|\b(?:pearsonr|spearmanr|kendalltau)\b"),
}
# Python lines under benchmarks/ after the speed and reproduction pages went through the one renderer and the column
# cost benchmark and the evidence package came in; issue 55
# asks for 8,000.  Lower it as modules shrink, never raise it.
CEILING = 9_621
MODULES = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py"))


def broken(text: str) -> set[str]:
    """The rules that a module's source ``text`` breaks."""
    return {rule for rule, pattern in RULES.items() if pattern.search(text)}


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_builds_no_table_by_hand_and_takes_no_correlation_from_scipy(name: str) -> None:
    assert broken((ROOT / name).read_text(encoding="utf-8")) == set()


def test_the_rules_find_what_they_forbid() -> None:
    assert broken('lines = ["| metric | r |", "|---|---|"]') == {"table"}
    assert broken("""lines += [f"| {m} | {r:.3f} |" for m, r in rows]""") == {"table"}
    assert broken('row = "| " + " | ".join(cells)') == {"table"}
    assert broken("from scipy.stats import pearsonr") == broken("from scipy import stats") == {"scipy"}
    assert broken('md.table(pd.DataFrame(rows))\nf"largest |1 - cos|: {gap:.1e}"\n"max |diff| = 0"') == set()


def test_benchmarks_stay_under_the_line_ceiling() -> None:
    lines = sum(len((ROOT / name).read_text(encoding="utf-8").splitlines()) for name in MODULES)
    assert lines <= CEILING, f"benchmarks/ has {lines:,} Python lines, over the ceiling of {CEILING:,}"
