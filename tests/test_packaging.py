"""Packaging: the wheel holds one import package, ``tsteval``, with every subpackage of the three source folders.

An editable install maps folders at import time and would hide a subpackage missing from ``pyproject.toml``'s
package list; so the wheel is built, installed into a throwaway venv, and every subpackage is imported from
there.  A user's own top-level ``classifiers`` package (common in ML projects) must not clash with tsteval.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"harness": "tsteval", "classifiers": "tsteval.classifiers", "lexicons": "tsteval.lexicons"}


def source_packages() -> list[str]:
    """Every package of the source tree under the name it is installed as."""
    names = []
    for folder, package in FOLDERS.items():
        for init in sorted((REPO / folder).rglob("__init__.py")):
            parts = init.parent.relative_to(REPO / folder).parts
            names.append(".".join((package, *parts)))
    return names


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, the python of a throwaway venv with only that wheel and, on its path, the dependencies)."""
    root = tmp_path_factory.mktemp("packaging")
    # Built from a clean copy: setuptools reuses a checkout's build/ folder, which can still hold a package that
    # the package list no longer names.
    source = root / "source"
    for name in (*FOLDERS, "pyproject.toml", "README.md", "setup.cfg"):
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy2
        copy(REPO / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (REPO / name).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(root / "dist"), str(source)], check=True, cwd=root)
    wheel = next((root / "dist").glob("tsteval-*.whl"))
    venv.create(root / "venv", with_pip=False)
    python = root / "venv" / "bin" / "python"
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    # The dependencies come from this environment's site-packages; a .pth line adds it to sys.path without
    # processing its own .pth files, so the editable install of tsteval there stays invisible.
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(wheel)], check=True, cwd=root)
    return wheel, python


def test_the_wheel_holds_only_tsteval(installed: tuple[Path, Path]) -> None:
    wheel, _ = installed
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist() if not name.startswith("tsteval-")}
    assert tops == {"tsteval"}, f"top-level entries besides tsteval: {tops - {'tsteval'}}"
    files = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in source_packages() if f"{p.replace('.', '/')}/__init__.py" not in files]
    assert not missing, f"packages missing from the wheel (add them to pyproject.toml): {missing}"
    from tsteval.experiment.report.explorer import ASSETS

    assets = [f"tsteval/experiment/report/assets/{name}" for name in (*ASSETS, "explorer.html", "LICENSE-tabulator")]
    assert not [a for a in assets if a not in files], "the explorer's assets are package data (pyproject.toml)"
    assert {"tsteval/annotate/template.yaml", "tsteval/annotate/assets/page.html"} <= files, "the rating page's files"
    assert "tsteval/metaeval/column_costs.json" in files, "the costs the profile rule's ties read (rule.COSTS)"


def test_every_subpackage_imports_from_the_installed_wheel(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, python = installed
    packages = source_packages()
    code = ("import importlib, sys\n"
            f"for name in {packages!r}:\n"
            "    module = importlib.import_module(name)\n"
            "    assert '/venv/' in module.__file__, (name, module.__file__)\n"
            "for name in ('harness', 'classifiers', 'lexicons'):\n"
            "    try:\n"
            "        importlib.import_module(name)\n"
            "    except ModuleNotFoundError:\n"
            "        continue\n"
            "    sys.exit(f'top-level {name} is importable')\n"
            "import tsteval\n"
            "print(sorted(tsteval.__all__))\n")
    result = subprocess.run([python, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    version = subprocess.run([python.parent / "tsteval", "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("tsteval "), version.stderr


def test_a_users_own_classifiers_package_does_not_clash(tmp_path: Path) -> None:
    """The reviewer's case: ``import harness.compliancy`` failed in a folder holding a ``classifiers/`` package."""
    (tmp_path / "classifiers").mkdir()
    (tmp_path / "classifiers" / "__init__.py").write_text("MINE = True\n")
    code = ("import classifiers\n"
            "import tsteval.metrics.compatibility.compliancy\n"
            "import tsteval.classifiers.base\n"
            "assert classifiers.MINE\n"
            "assert tsteval.classifiers.base.TextClassifier\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
