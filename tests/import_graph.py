"""What a module imports, read from its source (nothing is imported), and the circles of an import graph: shared by
the layout test (the package ``tsteval``) and the benchmarks' test (``benchmarks/``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path


def _at_import_time(tree: ast.Module) -> Iterator[ast.AST]:
    """The statements that run when the module is imported: the module's body, outside functions, classes and
    ``if TYPE_CHECKING:`` blocks."""
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for branch in node.orelse for n in ast.walk(branch))
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from ast.walk(node)


def imported_names(path: Path, *, at_import_time: bool = False) -> set[str]:
    """Every dotted name ``path`` imports: ``import M`` gives M, ``from M import N`` gives M and M.N (N may be a
    submodule); all of them, or only those imported when the module itself is (``at_import_time``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in (_at_import_time(tree) if at_import_time else ast.walk(tree)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each set of nodes that lie on one import circle of ``graph`` (node -> the nodes it imports), sorted."""
    found = set()
    for start in graph:
        stack = [(start, (start,))]
        while stack:
            node, path = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    found.add(frozenset(path))
                elif nxt not in path:
                    stack.append((nxt, (*path, nxt)))
    return sorted(map(sorted, found))
