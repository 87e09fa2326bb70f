"""What pyproject ships is what the tree holds, and each module has one import name.

`agents/` and `tasks/` install as ``wmrl_agents`` and ``wmrl_tasks`` (``package-dir``), which
setuptools' package discovery cannot map, so the package list is written out: these tests
keep it from drifting from the folders, and keep the folder names from being importable.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _package_folders() -> dict[str, Path]:
    """Every folder with an ``__init__.py`` under the mapped roots, by the import name it installs as."""
    found = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        root = REPO_ROOT / folder
        for init in sorted(root.rglob("__init__.py")):
            parts = init.parent.relative_to(root).parts
            found[".".join((name, *parts))] = init.parent
    return found


def _package_data_globs() -> list[str]:
    """The package-data patterns given per package, as paths relative to the repository root."""
    globs = []
    for package, patterns in SETUPTOOLS["package-data"].items():
        if package == "*":
            continue
        root, *rest = package.split(".")
        folder = Path(SETUPTOOLS["package-dir"][root], *rest)
        globs += [str(folder / pattern) for pattern in patterns]
    return globs


def test_the_package_list_is_every_package_folder() -> None:
    """A new subpackage missing from pyproject would be left out of the wheel; a stale entry breaks the build."""
    listed, on_disk = set(SETUPTOOLS["packages"]), set(_package_folders())
    assert listed == on_disk, (
        f"pyproject [tool.setuptools] packages lacks {sorted(on_disk - listed)} and lists {sorted(listed - on_disk)} "
        "that are not package folders; make the list match the folders with an __init__.py"
    )


def test_every_folder_of_python_files_is_a_package_or_shipped_as_data() -> None:
    """A folder of modules without ``__init__.py`` would silently not install (solutions ship as package data)."""
    data = _package_data_globs()
    orphans = []
    for folder in SETUPTOOLS["package-dir"].values():
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts or (path.parent / "__init__.py").is_file():
                continue
            relative = path.relative_to(REPO_ROOT)
            if not any(relative.match(pattern) for pattern in data):
                orphans.append(str(relative))
    assert not orphans, f"Python files that no package or package-data pattern ships: {orphans}"


@pytest.mark.parametrize(("folder", "name"), [("agents", "wmrl_agents"), ("tasks", "wmrl_tasks")])
def test_the_folder_name_is_not_a_second_import_name(folder: str, name: str) -> None:
    """From the repository root ``import agents`` would load every module twice; it fails saying what to import."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {folder}"], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0
    assert f"import {name} (not '{folder}')" in done.stderr


def test_the_installed_name_imports_from_the_repository_root() -> None:
    """The guard refuses the folder name only: the installed names still import where the folders are visible."""
    done = subprocess.run(
        [sys.executable, "-c", "import wmrl_agents.cli, wmrl_tasks.mledojo, wmrl_envs"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
