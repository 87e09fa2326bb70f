"""Where the running interpreter and its packages live, so a sandbox can expose them.

Solutions import numpy, pandas and scikit-learn from the host's environment (a venv,
pyenv or conda prefix, often under ``/root`` or ``/home``), so every backend must make
exactly these trees readable, and nothing else of the host.
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["collapse", "interpreter", "python_roots"]


def interpreter() -> Path:
    """The running interpreter's real path (a sandbox runs the same one)."""
    return Path(os.path.realpath(sys.executable))


def collapse(paths: Iterable[Path]) -> list[Path]:
    """Existing paths with any path inside another one dropped, parents first."""
    kept: list[Path] = []
    for path in sorted({Path(os.path.realpath(p)) for p in paths if os.path.exists(p)}, key=lambda p: len(p.parts)):
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return kept


def python_roots() -> list[Path]:
    """Directories a child interpreter needs to start and import the installed packages."""
    exe = interpreter()
    candidates = [Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)]
    candidates.append(exe.parent.parent)
    candidates.extend(Path(p) for p in site.getsitepackages())
    if site.ENABLE_USER_SITE:
        candidates.append(Path(site.getusersitepackages()))
    return collapse(candidates)
