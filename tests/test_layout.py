"""The architecture as a test: ``tsteval.core`` imports nothing else of tsteval, ``tsteval.classifiers`` imports only
``core``, and ``tsteval.lexicons`` only ``core`` and ``classifiers`` (attribution masking uses a fine-tuned
classifier): the folders form a chain core <- classifiers <- lexicons <- the rest.  Every other package says in its
``__init__`` docstring what it holds and what it may import, and is held to it; no folder grows past
:data:`MAX_MODULES` modules; and no module of the package takes part in an import circle when it is imported."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.import_graph import circles, imported_names

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"harness": "tsteval", "classifiers": "tsteval.classifiers", "lexicons": "tsteval.lexicons"}
MAX_MODULES = 15  # a folder with more is split into subfolders by role
ANY, NOTHING = "every tsteval package", "nothing else of tsteval"
ALLOWED = {
    "harness/core": ("tsteval.core",),
    "classifiers": ("tsteval.core", "tsteval.classifiers"),
    "lexicons": ("tsteval.core", "tsteval.classifiers", "tsteval.lexicons"),
}


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            found[".".join((package, *parts[:-1 if parts[-1] == "__init__" else None]))] = path
    return found


MODULES = modules()
PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py" and name != "tsteval")


def tsteval_imports(path: Path) -> set[str]:
    """Every ``tsteval`` module that ``path`` imports, at module level or inside functions."""
    return {n for n in imported_names(path) if n in MODULES or n == "tsteval" or n.startswith("tsteval.")}


def may_import(package: str) -> tuple[str, ...] | None:
    """What the second line of ``package``'s docstring allows, as ``tsteval.*`` prefixes (``None``: anything):
    ``May import: core, metrics (why), experiment.options; what else.``"""
    lines = (MODULES[package].read_text(encoding="utf-8").split('"""')[1]).splitlines()
    assert len(lines) == 2 and lines[1].startswith("May import: "), \
        f"{package}: the docstring is two lines, what it holds and 'May import: ...'"
    allowed = re.sub(r"\([^)]*\)", "", lines[1].removeprefix("May import: ").split(";")[0]).rstrip(".").strip()
    if allowed == ANY:
        return None
    return () if allowed == NOTHING else tuple(f"tsteval.{name.strip()}" for name in allowed.split(","))


@pytest.mark.parametrize("package", PACKAGES)
def test_a_package_imports_only_what_its_docstring_allows(package: str) -> None:
    allowed = may_import(package)
    own = [(name, path) for name, path in MODULES.items()
           if name.rpartition(".")[0] == package and path.name != "__init__.py" or name == package]
    assert own, f"{package} holds no module"
    if allowed is None:
        return
    bad = {f"{name} imports {target}" for name, path in own for target in tsteval_imports(path)
           if not any(target == a or target.startswith(a + ".") for a in (package, *allowed))}
    assert not bad, sorted(bad)


def test_the_line_is_read_as_written() -> None:
    assert may_import("tsteval.core") == ()
    assert may_import("tsteval.cli") is None
    assert may_import("tsteval.metrics")[:2] == ("tsteval.core", "tsteval.lexicons")  # "(resources)" is a comment


def test_no_folder_holds_more_than_about_fifteen_modules() -> None:
    crowded = {f"{folder.relative_to(REPO)}: {n}" for root in FOLDERS for folder in (REPO / root).rglob("*")
               if folder.is_dir() and (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"]))
               > MAX_MODULES}
    assert not crowded, sorted(crowded)


def test_the_package_imports_itself_without_circles() -> None:
    """Imports inside functions may go either way (a plan reads its manifest, a manifest run builds a plan); what
    runs when a module is imported never comes back to a module still being imported."""
    graph = {name: imported_names(path, at_import_time=True) & set(MODULES) - {name}
             for name, path in MODULES.items()}
    assert not circles(graph)


def test_an_import_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


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
