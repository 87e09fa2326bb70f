"""A directory of solution files benchmarked as if a policy had written them (`dir:PATH`).

Layout: ``<dir>/<task_id>/*.py`` (one file per attempt, taken in name order) and/or
``<dir>/<task_id>.py`` (one attempt, after the folder's). Each file is read as the
environment reads an agent's reply (`wmrl_envs.code_extraction`: a plain Python file runs
as it is; one that does not parse is an attempt scoring 0). A task needs at least K files: with fewer the
benchmark refuses rather than repeat files or shrink K for that task, because avg@K over
a different K, or over repeated runs of one file, would not compare with other results.
With more than K files, the first K in name order are the attempts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from wmrl_envs.competition import Competition
from wmrl_envs.errors import WmrlError

__all__ = ["SolutionDirectory"]


class SolutionDirectory:
    """Solution files per task, read from a directory.

    >>> source = SolutionDirectory("my-solutions")  # doctest: +SKIP
    >>> source.attempt_files(competitions, k=2)["telco-customer-churn"]  # doctest: +SKIP
    [PosixPath('my-solutions/telco-customer-churn/a.py'), PosixPath('my-solutions/telco-customer-churn/b.py')]
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if not self.path.is_dir():
            raise FileNotFoundError(
                f"solutions directory {self.path} does not exist; it should hold <task_id>/*.py or <task_id>.py files"
            )
        self.name = f"dir:{path}"

    def files(self, task_id: str) -> list[Path]:
        """Every solution file for `task_id`, in name order (none: an empty list)."""
        folder = self.path / task_id
        found = sorted(p for p in folder.glob("*.py") if p.is_file()) if folder.is_dir() else []
        single = self.path / f"{task_id}.py"
        return found + ([single] if single.is_file() else [])

    def attempt_files(self, competitions: Sequence[Competition], k: int) -> dict[str, list[Path]]:
        """The first `k` files of each competition; a clear error naming every task with fewer than `k`."""
        available = {c.id: self.files(c.id) for c in competitions}
        short = {task: len(files) for task, files in available.items() if len(files) < k}
        if short:
            listed = ", ".join(f"{task} ({n})" for task, n in sorted(short.items()))
            raise WmrlError(
                f"{self.name}: K={k} attempts need {k} solution files per task, but these tasks have fewer: {listed}. "
                f"Add files as {self.path}/<task_id>/*.py, lower --k, or leave those tasks out with --ids"
            )
        return {task: files[:k] for task, files in available.items()}
