"""RealExecution: the ground-truth reward, from a sandboxed run and the grader.

This is what every other source approximates. Runs of a batch go through the executor
concurrently (bounded by `workers`), since sandboxes, not the caller, are the bottleneck.
A run that fails for infrastructure reasons is ``None`` (could not score); a solution that
crashes or writes an invalid submission is a real outcome scored 0.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from wmrl_envs.grading import Grader
from wmrl_envs.outcome import execute_and_grade
from wmrl_envs.rewards.base import Rollout, Score, code_rollouts
from wmrl_envs.sandbox import make_executor
from wmrl_envs.sandbox.base import Executor, Limits, Status
from wmrl_envs.sandbox.rundir import scratch_dir

if TYPE_CHECKING:
    from wmrl_envs.execution_log import ExecutionLog

__all__ = ["RealExecution"]

logger = logging.getLogger(__name__)


class RealExecution:
    """Scores rollouts by running them in a sandbox and placing the grade on the leaderboards.

    >>> source = RealExecution(executor="bwrap", limits=Limits(wall_time_s=600))  # doctest: +SKIP
    >>> [s.value for s in source.score([Rollout(competition, code)])]  # doctest: +SKIP
    [0.84]
    """

    name = "real"

    def __init__(
        self,
        executor: str | Executor = "auto",
        limits: Limits | None = None,
        workers: int = 2,
        grader: Grader | None = None,
        work_root: Path | None = None,
        log: ExecutionLog | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.executor = make_executor(executor) if isinstance(executor, str) else executor
        self.limits = limits if limits is not None else Limits()
        self.workers = workers
        self.grader = grader if grader is not None else Grader()
        self.work_root = work_root
        self.log = log
        """Where every scored run is appended (what world models learn from); None to keep no record."""

    def score(self, batch: Sequence[Rollout]) -> list[Score | None]:
        """Run and grade every rollout; `None` where the sandbox itself failed."""
        batch = code_rollouts(batch, type(self).__name__)
        with ThreadPoolExecutor(max_workers=min(self.workers, max(1, len(batch)))) as pool:
            return list(pool.map(self.score_one, batch))

    def score_one(self, rollout: Rollout, workdir: Path | None = None) -> Score | None:
        """Run and grade one rollout in `workdir` (kept), or in a temporary dir (removed)."""
        with scratch_dir("wmrl-real-", self.work_root) if workdir is None else nullcontext(workdir) as folder:
            outcome = execute_and_grade(
                rollout.competition, rollout.code, self.executor, self.limits, folder, self.grader
            )
        if outcome.execution.status is Status.INFRA_ERROR:
            logger.warning("could not score a rollout of %s: %s", rollout.competition.id, outcome.execution.message)
            return None
        if self.log is not None:
            self.log.append(rollout.competition, rollout.code, outcome)
        return Score(value=outcome.position, source=self.name, outcome=outcome, cost_s=outcome.execution.wall_s)
