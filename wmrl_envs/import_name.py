"""One import name per package: refuse a package folder imported under its folder name instead of its installed one.

`agents/` and `tasks/` install as ``wmrl_agents`` and ``wmrl_tasks`` (pyproject's ``package-dir``).
From the repository root the folders are also importable as ``agents`` and ``tasks``, and
every module would then load a second time as a separate copy, with its own registries and
classes that fail ``isinstance`` against the first. Each folder's ``__init__`` calls
`require_import_name` so that mistake fails at once, saying what to import.
"""

from __future__ import annotations

__all__ = ["require_import_name"]


def require_import_name(module_name: str, installed_as: str) -> None:
    """Raise ImportError unless the package was imported as `installed_as` (pass the package's ``__name__``)."""
    if module_name != installed_as:
        raise ImportError(
            f"this folder installs as `{installed_as}`; import {installed_as} (not {module_name!r}), "
            "after `pip install -e .` in the repository"
        )
