"""Where the running interpreter and its packages live, so a sandbox can expose them.

Solutions import numpy, pandas and scikit-learn from the environment wmrl was installed
into: a venv (symlinked or ``--copies``), pyenv, a conda-style prefix, or the system
Python with a user site. A venv is recognised by the *path* its interpreter is started
from (``pyvenv.cfg`` beside it), so a sandbox must start the venv's own executable, not
the base interpreter it links to, and must make exactly these trees readable and
nothing else of the host.
"""

from __future__ import annotations

import functools
import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["collapse", "interpreter", "python_roots", "user_site", "user_site_env"]


def interpreter() -> Path:
    """The interpreter a sandbox starts: the running one as invoked, with only its folder's symlinks resolved.

    Resolving the executable itself would leave a venv (its ``bin/python`` links to the base interpreter)
    and start a Python that knows none of the venv's packages.
    """
    if not sys.executable:
        raise RuntimeError("sys.executable is empty: wmrl cannot tell which interpreter solutions should run on")
    exe = Path(sys.executable)
    return Path(os.path.realpath(exe.parent)) / exe.name


def collapse(paths: Iterable[Path]) -> list[Path]:
    """Existing paths with any path inside another one dropped, parents first."""
    kept: list[Path] = []
    for path in sorted({Path(os.path.realpath(p)) for p in paths if os.path.exists(p)}, key=lambda p: len(p.parts)):
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return kept


@functools.cache
def python_roots() -> tuple[Path, ...]:
    """Directories a child interpreter needs to start and import the installed packages (fixed for a process)."""
    exe = interpreter()
    candidates = [Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)]
    candidates += [exe.parent.parent, Path(os.path.realpath(exe)).parent.parent]
    candidates.extend(Path(p) for p in site.getsitepackages())
    if (user := user_site()) is not None:
        candidates.append(Path(user))
    return tuple(collapse(candidates))


def user_site() -> str | None:
    """The user site-packages this interpreter imports from (``pip install --user``), if it uses one."""
    if site.ENABLE_USER_SITE and site.USER_BASE and os.path.isdir(site.getusersitepackages()):
        return site.getusersitepackages()
    return None


def user_site_env() -> dict[str, str]:
    """``PYTHONUSERBASE`` for a child whose ``HOME`` differs from ours, so it finds our user site (if we use one)."""
    return {"PYTHONUSERBASE": str(site.USER_BASE)} if user_site() is not None else {}
