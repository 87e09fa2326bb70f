"""Held-out evaluation that runs each distinct program once: the curves' cost, not their meaning.

A comparison evaluates every method every few steps, on every seed, with the same attempts (avg@8 on the
held-out tasks); the program policy renders one of a few recipes per task, so most of those attempts are
programs already run. The solutions are meant to be deterministic (fixed random states, fixed data), so running
one again returns the same submission: `MemoizedExecutor` runs a (program, data, limits) once, keeps its result
and submission, and hands a copy to every later attempt with that program, marked ``extra["memoized"]``. Only
evaluation goes through it; training runs are always executed, since they are what the methods are charged.
A run that failed for infrastructure reasons is never kept.

Determinism is checked, not assumed: `audit` runs a seeded sample of the replayed programs again and compares
their submissions byte for byte; the comparison's report carries the result.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Executor, Limits, Status

__all__ = ["MemoAudit", "MemoizedExecutor"]


@dataclass(frozen=True)
class MemoAudit:
    """Replayed programs run once more: how many, how many gave the same outcome, the keys of those that did not."""

    audited: int
    identical: int
    differing: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        """JSON-able, for the report."""
        return {"audited": self.audited, "identical": self.identical, "differing": list(self.differing)}


class MemoizedExecutor:
    """Runs each distinct (code, public data, limits) through `inner` once; `store` keeps the submissions."""

    def __init__(self, inner: Executor, store: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.store = store
        self.hits = 0
        self.misses = 0
        self._results: dict[str, ExecutionResult] = {}
        self._programs: dict[str, tuple[str, Path, Limits]] = {}
        self._replayed: set[str] = set()
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
                    self._programs[key] = (code, public_data, limits)
                return result
        with self._guard:
            self.hits += 1
            self._replayed.add(key)
        return self._replay(kept, workdir)

    def audit(self, n: int, seed: int = 0) -> MemoAudit:
        """Run up to `n` replayed programs (a seeded sample) again: identical = same status and submission bytes."""
        sample = random.Random(seed).sample(sorted(self._replayed), min(n, len(self._replayed)))
        audited, differing = 0, []
        with tempfile.TemporaryDirectory(prefix="wmrl-memo-audit-") as scratch:
            for index, key in enumerate(sample):
                code, public_data, limits = self._programs[key]
                again = self.inner.run(code, Path(scratch) / str(index), public_data, limits)
                if again.status is Status.INFRA_ERROR:
                    continue
                audited += 1
                if not _same_outcome(self._results[key], again):
                    differing.append(key[:12])
        return MemoAudit(audited=audited, identical=audited - len(differing), differing=tuple(differing))

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


def _same_outcome(kept: ExecutionResult, again: ExecutionResult) -> bool:
    """Same status and, when either wrote one, byte-identical submissions."""
    if kept.status is not again.status:
        return False
    files = [
        Path(p) if p is not None and Path(p).is_file() else None for p in (kept.submission_path, again.submission_path)
    ]
    if None in files:
        return files[0] is None and files[1] is None
    return files[0].read_bytes() == files[1].read_bytes()
