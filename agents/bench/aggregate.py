"""The benchmark's numbers: per task over its K attempts, then means over tasks.

Every number is a mean over tasks that weigh equally, so a category with many tasks
does not drown one with few, and the overall figure is comparable across task pools of
the same split. A category with no task is absent, never a 0: a 0 would read as "the
policy failed there" when it was simply not measured.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "CATEGORY_ORDER",
    "Scores",
    "avg_at_k",
    "best_of_k",
    "category_means",
    "mean_scores",
    "medal_rate",
    "task_scores",
    "valid_rate",
]

CATEGORY_ORDER = ("binary", "multiclass", "regression", "other")
"""How categories are listed in tables and files; unknown ones follow, sorted."""


@dataclass(frozen=True)
class Scores:
    """The four benchmark numbers, for one task (over its K attempts) or as a mean over `tasks` tasks."""

    avg_at_k: float
    """Mean position score of the K attempts (an attempt without a valid submission counts 0)."""
    valid_rate: float
    """Fraction of attempts that produced a valid submission."""
    best_of_k: float
    """Best position score among the K attempts."""
    medal_rate: float
    """Fraction of attempts that won an MLE-bench medal (gold, silver or bronze)."""
    tasks: int = 1
    """How many tasks these numbers are a mean over."""

    def numbers(self, digits: int = 6) -> dict[str, float]:
        """The four numbers by name, rounded (for files)."""
        return {
            "avg_at_k": round(self.avg_at_k, digits),
            "valid_rate": round(self.valid_rate, digits),
            "best_of_k": round(self.best_of_k, digits),
            "medal_rate": round(self.medal_rate, digits),
        }


def avg_at_k(positions: Sequence[float]) -> float:
    """avg@K: the mean position score over the K attempts of one task."""
    checked = _positions(positions)
    # Clamped: the rounded mean of K equal floats can exceed them by one ulp, and avg@K <= best-of-K must hold.
    return min(max(math.fsum(checked) / len(checked), min(checked)), max(checked))


def best_of_k(positions: Sequence[float]) -> float:
    """best-of-K: the highest position score among the K attempts of one task."""
    return max(_positions(positions))


def valid_rate(valid: Sequence[bool]) -> float:
    """The fraction of attempts whose submission was valid."""
    return _fraction(valid, "valid flags")


def medal_rate(medals: Sequence[bool]) -> float:
    """The fraction of attempts that won any MLE-bench medal."""
    return _fraction(medals, "medal flags")


def task_scores(positions: Sequence[float], valid: Sequence[bool], medals: Sequence[bool]) -> Scores:
    """The four numbers of one task from its attempts (three sequences of the same length K)."""
    if not len(positions) == len(valid) == len(medals):
        raise ValueError(
            f"one position, valid flag and medal flag per attempt, got {len(positions)}, {len(valid)}, {len(medals)}"
        )
    return Scores(avg_at_k(positions), valid_rate(valid), best_of_k(positions), medal_rate(medals), tasks=1)


def mean_scores(per_task: Sequence[Scores]) -> Scores:
    """The mean of each number over tasks, each task weighing the same."""
    if not per_task:
        raise ValueError("no tasks to average over")
    if any(s.tasks != 1 for s in per_task):
        raise ValueError("mean_scores takes one Scores per task, not means over several tasks")
    n = len(per_task)
    return Scores(
        avg_at_k=math.fsum(s.avg_at_k for s in per_task) / n,
        valid_rate=math.fsum(s.valid_rate for s in per_task) / n,
        best_of_k=math.fsum(s.best_of_k for s in per_task) / n,
        medal_rate=math.fsum(s.medal_rate for s in per_task) / n,
        tasks=n,
    )


def category_means(per_task: Iterable[tuple[str, Scores]]) -> dict[str, Scores]:
    """Per category, the mean over its tasks; only categories that have a task appear, in `CATEGORY_ORDER`."""
    groups: dict[str, list[Scores]] = {}
    for category, scores in per_task:
        groups.setdefault(category, []).append(scores)
    known = [c for c in CATEGORY_ORDER if c in groups]
    return {c: mean_scores(groups[c]) for c in known + sorted(set(groups) - set(CATEGORY_ORDER))}


def _positions(positions: Sequence[float]) -> list[float]:
    if len(positions) == 0:
        raise ValueError("no attempts: K must be at least 1")
    checked = [float(p) for p in positions]
    bad = [p for p in checked if not (0.0 <= p <= 1.0)]
    if bad:
        raise ValueError(f"position scores lie in [0, 1]; got {bad[:3]} (score failed attempts 0, never NaN)")
    return checked


def _fraction(flags: Sequence[bool], what: str) -> float:
    if len(flags) == 0:
        raise ValueError(f"no {what}: K must be at least 1")
    return sum(bool(f) for f in flags) / len(flags)
