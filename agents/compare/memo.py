"""Held-out evaluation that runs each distinct program once: the curves' cost, not their meaning.

A comparison evaluates every method every few steps, on every seed, with the same attempts (avg@8 on the
held-out tasks); the program policy renders one of a few recipes per task, so most of those attempts are
programs already run. The solutions are deterministic (fixed random states, fixed data), so running one again
returns the same submission: `MemoizedExecutor` runs a (program, data, limits) once, keeps its result and
submission, and hands a copy to every later attempt with that program, marked ``extra["memoized"]``. Only
evaluation goes through it; training runs are always executed, since they are what the methods are charged.
A run that failed for infrastructure reasons is never kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import threading
from pathlib import Path

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Executor, Limits, Status

__all__ = ["MemoizedExecutor"]


class MemoizedExecutor:
    """Runs each distinct (code, public data, limits) through `inner` once; `store` keeps the submissions."""

    def __init__(self, inner: Executor, store: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.store = store
        self.hits = 0
        self.misses = 0
        self._results: dict[str, ExecutionResult] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """The result of running `code`, executed now if no equal program ran before (thread-safe)."""
        key = hashlib.sha256(f"{public_data}\0{limits!r}\0{code}".encode()).hexdigest()
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # two attempts with one program at once: the second waits for the first's result
            kept = self._results.get(key)
            if kept is None:
                result = self.inner.run(code, workdir, public_data, limits)
                with self._guard:
                    self.misses += 1
                if result.status is not Status.INFRA_ERROR:
                    self._results[key] = self._keep(key, result)
                return result
        with self._guard:
            self.hits += 1
        return self._replay(kept, workdir)

    def _keep(self, key: str, result: ExecutionResult) -> ExecutionResult:
        kept = None
        if result.submission_path is not None and Path(result.submission_path).is_file():
            kept = self.store / key / SUBMISSION_FILENAME
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(result.submission_path, kept)
        return dataclasses.replace(result, submission_path=kept, extra=dict(result.extra))

    @staticmethod
    def _replay(kept: ExecutionResult, workdir: Path) -> ExecutionResult:
        submission = None
        if kept.submission_path is not None:
            workdir.mkdir(parents=True, exist_ok=True)
            submission = workdir / SUBMISSION_FILENAME
            shutil.copyfile(kept.submission_path, submission)
        return dataclasses.replace(kept, submission_path=submission, extra={**kept.extra, "memoized": True})
