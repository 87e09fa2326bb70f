"""What a benchmark run produced: every attempt, each task's numbers, the means, and how it was run.

The result keeps each attempt (its seed or source file, status, reason, position score,
medal and cost) beside the aggregates, so a published number can be traced back to the
runs behind it, as MLE-bench's reports allow.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .aggregate import Scores, category_means, mean_scores, task_scores

__all__ = ["AttemptResult", "BenchMeta", "BenchResult", "TaskResult"]


@dataclass(frozen=True)
class AttemptResult:
    """One attempt at a task: its best turn's outcome (the env's rule: an episode is worth its best turn)."""

    attempt: int
    """0-based index among the task's K attempts."""
    position: float
    """Average of the public and private position scores; 0 without a valid submission."""
    valid: bool
    medal: str | None
    """'gold', 'silver', 'bronze' or None."""
    status: str
    """How the best turn's run ended (`Status` values), or 'not-run' when there was no program to run."""
    reason: str
    """Why the submission was invalid ('' when valid)."""
    score: float | None = None
    """The raw metric of the best turn's submission."""
    code_sha: str | None = None
    """Fingerprint of the program the best turn ran (`attempts.code_digest`); None when nothing ran."""
    seed: int | None = None
    """The generation seed of the first turn (None for a directory of solution files)."""
    source: str | None = None
    """The path of the solution file an attempt ran (directory sources only)."""
    turn_positions: tuple[float, ...] = ()
    """Position score of every turn, in order."""
    best_turn: int = 1
    """1-based turn whose outcome this attempt reports."""
    exec_s: float = 0.0
    """Real-execution seconds (sandbox wall time) over all turns."""
    generation_s: float = 0.0
    """Generation seconds over all turns."""
    infra_error: bool = False
    """The sandbox itself failed (after one retry); counted as an invalid attempt and reported in the metadata."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        data = asdict(self)
        data["turn_positions"] = list(self.turn_positions)
        data["exec_s"], data["generation_s"] = round(self.exec_s, 3), round(self.generation_s, 3)
        return data


@dataclass(frozen=True)
class TaskResult:
    """One task's K attempts and its numbers."""

    task: str
    category: str
    metric: str
    attempts: tuple[AttemptResult, ...]

    @property
    def scores(self) -> Scores:
        """avg@K, valid rate, best-of-K and medal rate over this task's attempts."""
        return task_scores(
            [a.position for a in self.attempts],
            [a.valid for a in self.attempts],
            [a.medal is not None for a in self.attempts],
        )

    @property
    def exec_s(self) -> float:
        """Real-execution seconds spent on this task."""
        return sum(a.exec_s for a in self.attempts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields: the task, its numbers and its attempts."""
        return {
            "task": self.task,
            "category": self.category,
            "metric": self.metric,
            **self.scores.numbers(),
            "exec_s": round(self.exec_s, 3),
            "attempts": [a.to_dict() for a in self.attempts],
        }


@dataclass(frozen=True)
class BenchMeta:
    """How a benchmark run was made: enough to reproduce it and to judge whether two results compare."""

    policy: str
    split: str
    k: int
    seed: int
    max_turns: int
    tasks: tuple[str, ...]
    executor: str
    workers: int
    limits: dict[str, Any]
    wmrl_version: str
    date: str
    """Start of the run, ISO 8601 in UTC."""
    sampling: dict[str, float] | None
    """Temperature and top-p of generation; None for a directory of solution files."""
    real_exec_s: float = 0.0
    """Sandbox wall seconds over every run (held-out evaluation: not training compute)."""
    generation_s: float = 0.0
    elapsed_s: float = 0.0
    """Wall-clock seconds of the whole benchmark."""
    infra_errors: int = 0
    command: str | None = None
    """The command line that produced the result, when run from the CLI."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe fields."""
        data = asdict(self)
        data["tasks"] = list(self.tasks)
        for key in ("real_exec_s", "generation_s", "elapsed_s"):
            data[key] = round(data[key], 3)
        return data


@dataclass(frozen=True)
class BenchResult:
    """A whole benchmark run: per-task results, the means per category and overall, and the metadata."""

    meta: BenchMeta
    tasks: tuple[TaskResult, ...]
    summary: dict[str, Scores] = field(init=False)
    """Means over tasks: 'overall' first, then each category that has a task."""

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError("a benchmark result needs at least one task")
        per_task = [(t.category, t.scores) for t in self.tasks]
        summary = {"overall": mean_scores([s for _, s in per_task]), **category_means(per_task)}
        object.__setattr__(self, "summary", summary)

    @property
    def overall_avg_at_k(self) -> float:
        """avg@K averaged over all tasks (each task weighs the same)."""
        return self.summary["overall"].avg_at_k

    @property
    def by_category(self) -> dict[str, float]:
        """avg@K averaged over the tasks of each category that has one."""
        return {name: s.avg_at_k for name, s in self.summary.items() if name != "overall"}

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-safe: metadata, headline numbers, per-scope means and per-task attempts."""
        return {
            "meta": self.meta.to_dict(),
            "overall_avg_at_k": round(self.overall_avg_at_k, 6),
            "by_category": {name: round(value, 6) for name, value in self.by_category.items()},
            "summary": {name: {"tasks": s.tasks, **s.numbers()} for name, s in self.summary.items()},
            "tasks": [t.to_dict() for t in self.tasks],
        }
