"""The architecture as a test: ``tsteval.core`` imports nothing else of tsteval, ``tsteval.classifiers`` imports only
``core``, and ``tsteval.lexicons`` only ``core`` and ``classifiers`` (attribution masking uses a fine-tuned
classifier): the folders form a chain core <- classifiers <- lexicons <- the rest, with no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ALLOWED = {
    "harness/core": ("tsteval.core",),
    "classifiers": ("tsteval.core", "tsteval.classifiers"),
    "lexicons": ("tsteval.core", "tsteval.classifiers", "tsteval.lexicons"),
}


def tsteval_imports(path: Path) -> set[str]:
    """Every ``tsteval`` module that ``path`` imports, at module level or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n == "tsteval" or n.startswith("tsteval.")}


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_foundations_import_only_what_they_may(folder: str) -> None:
    allowed = ALLOWED[folder]
    bad = {f"{p.relative_to(REPO)} imports {name}"
           for p in sorted((REPO / folder).rglob("*.py"))
           for name in tsteval_imports(p)
           if not any(name == a or name.startswith(a + ".") for a in allowed)}
    assert not bad, sorted(bad)


def test_no_top_level_names_of_the_old_layout() -> None:
    stale = {f"{p.relative_to(REPO)}: {name}"
             for folder in ("harness", "classifiers", "lexicons", "benchmarks", "tests")
             for p in (REPO / folder).rglob("*.py")
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, (ast.Import, ast.ImportFrom))
             for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
             if name.split(".")[0] in {"harness", "classifiers", "lexicons"}}
    assert not stale, sorted(stale)


MAX_MODULE_LINES = 600  # the plan, manifest and readers modules were split by concern below this


def test_modules_stay_small_enough_to_hold_one_concern() -> None:
    """No module grows back into several concerns in one file (the Plan, CLI parsing, manifest conversion and
    execution once shared 737 lines; the manifest reader 855; five published datasets one file)."""
    large = {f"{p.relative_to(REPO)}: {n} lines"
             for folder in ("harness", "classifiers", "lexicons")
             for p in (REPO / folder).rglob("*.py")
             if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not large, sorted(large)
    split = [REPO / "harness" / name for name in ("readers/published.py", "readers/loaders.py")]
    assert not [p for p in split if p.exists()]
