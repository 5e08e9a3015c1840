"""Every module of ``benchmarks/`` imports, every name it takes from tsteval or another benchmark exists (imported at
the top or inside a function, or read off an imported module), and every command line builds: a rename breaks
here instead of in a later (GPU) run.  A benchmark that parses arguments builds its parser in ``parser()``."""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import pkgutil
from pathlib import Path
from types import ModuleType

import pytest

import benchmarks
from tests.import_graph import circles, imported_names

MODULES = sorted(m.name.removeprefix("benchmarks.") for m in pkgutil.walk_packages(benchmarks.__path__, "benchmarks.")
                 if not m.ispkg)
OURS = ("tsteval", "benchmarks")


def _ours(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in OURS


def _missing_names(tree: ast.Module) -> list[str]:
    """``LINE: MODULE.NAME`` for each name a module takes from tsteval or benchmarks that is not there: ``from M
    import NAME`` anywhere in it, and ``ALIAS.NAME`` where ALIAS is such an imported module."""
    missing, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            source = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(source, alias.name, None)
                if value is None and hasattr(source, "__path__") and \
                        importlib.util.find_spec(f"{node.module}.{alias.name}") is not None:  # a submodule
                    value = importlib.import_module(f"{node.module}.{alias.name}")
                if value is None:
                    missing.append(f"{node.lineno}: {node.module}.{alias.name}")
                elif isinstance(value, ModuleType):
                    modules[alias.asname or alias.name] = value
        elif isinstance(node, ast.Import):
            modules |= {a.asname: importlib.import_module(a.name) for a in node.names if a.asname and _ours(a.name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules \
                and not hasattr(modules[node.value.id], node.attr):
            missing.append(f"{node.lineno}: {modules[node.value.id].__name__}.{node.attr}")
    return missing


def test_the_modules_are_found() -> None:
    assert {"speed.speed_encoder", "speed.speed_gpu", "studies.meta_eval", "reproductions.cds_multiclass",
            "common"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_imports_and_builds_its_command_line(name: str, capsys: pytest.CaptureFixture) -> None:
    module = importlib.import_module(f"benchmarks.{name}")
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    assert _missing_names(tree) == [], f"benchmarks.{name} imports names that do not exist"
    parses = any(isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names)
                 for node in ast.walk(tree))
    assert hasattr(module, "parser") == parses, "a benchmark that parses arguments builds its parser in parser()"
    if parses:
        command = module.parser()
        assert isinstance(command, argparse.ArgumentParser)
        with pytest.raises(SystemExit) as exit_:
            command.parse_args(["--help"])
        assert exit_.value.code == 0
        assert capsys.readouterr().out.startswith("usage:")


def test_a_missing_name_is_found() -> None:
    tree = ast.parse("from tsteval.metrics.content import sentence_embedding\n"
                     "def f():\n    from tsteval.metrics.content.sentence_embedding import loaded_encoder, _load\n"
                     "    return sentence_embedding._gone, sentence_embedding.loaded_encoder\n")
    assert _missing_names(tree) == ["3: tsteval.metrics.content.sentence_embedding._load",
                                    "4: tsteval.metrics.content.sentence_embedding._gone"]


def _imports(name: str) -> set[str]:
    """The benchmark modules that ``benchmarks.NAME`` imports, at the top or inside a function."""
    found = imported_names(Path(importlib.util.find_spec(f"benchmarks.{name}").origin))
    return {n.removeprefix("benchmarks.") for n in found if n.startswith("benchmarks.")} & set(MODULES)


def test_the_benchmarks_import_each_other_without_circles() -> None:
    assert not circles({name: _imports(name) for name in MODULES})
