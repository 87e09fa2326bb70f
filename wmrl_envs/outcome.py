"""Run one solution for a competition and grade it: the unit of real execution.

The environment, ``wmrl run`` and the RealExecution reward source all need the same
thing, so it lives here once. Grading happens outside the sandbox; only a run that
ended normally is graded, since a killed or timed-out run may have left a partial file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wmrl_envs.competition import Competition
from wmrl_envs.grading import Grade, Grader
from wmrl_envs.sandbox.base import ExecutionResult, Executor, Limits, Status
from wmrl_envs.sandbox.probe import confirm_infra_fault

__all__ = ["Outcome", "execute_and_grade", "execution_summary"]


@dataclass(frozen=True)
class Outcome:
    """A run and its grade; `position` is the average position score, 0 when invalid."""

    execution: ExecutionResult
    grade: Grade

    @property
    def position(self) -> float:
        if self.grade.valid and self.grade.position is not None:
            return float(self.grade.position.average)
        return 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe report: status, validity, score, positions, medal and execution cost."""
        report: dict[str, Any] = {"status": self.execution.status.value}
        report.update(self.grade.to_dict())
        report["exec"] = execution_summary(self.execution)
        return report


def execute_and_grade(
    competition: Competition,
    code: str,
    executor: Executor,
    limits: Limits,
    workdir: Path,
    grader: Grader | None = None,
) -> Outcome:
    """Run `code` in `executor` against the competition's public data, then grade what it wrote."""
    workdir.mkdir(parents=True, exist_ok=True)
    execution = confirm_infra_fault(executor, executor.run(code, workdir, competition.public_dir, limits))
    if execution.status is not Status.OK:
        detail = f": {execution.message}" if execution.message else ""
        grade = Grade(valid=False, reason=f"the run ended with status {execution.status.value}{detail}")
    elif execution.submission_path is None and execution.message:
        # The sandbox says what was at SUBMISSION_PATH instead (a link, a FIFO, a directory, nothing).
        grade = Grade(valid=False, reason=execution.message)
    else:
        grade = (grader or Grader()).grade(competition, execution.submission_path)
    return Outcome(execution=execution, grade=grade)


def execution_summary(execution: ExecutionResult) -> dict[str, Any]:
    """The cost and outcome of a run as plain JSON-safe values."""
    return {
        "status": execution.status.value,
        "exit_code": execution.exit_code,
        "wall_s": round(execution.wall_s, 3),
        "cpu_s": round(execution.cpu_s, 3),
        "peak_mb": round(execution.peak_mb, 1),
        "backend": execution.backend,
        "message": execution.message,
    }
