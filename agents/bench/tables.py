"""The rows a benchmark result is shown as, shared by the terminal table and the Markdown file.

One place decides the columns and their rounding, so what a user sees in the terminal is
what gets published.
"""

from __future__ import annotations

from typing import Any

from .results import BenchResult

__all__ = ["summary_rows", "task_rows"]


def summary_rows(result: BenchResult) -> list[dict[str, Any]]:
    """One row per category that has a task, then 'overall': means over tasks."""
    k = result.meta.k
    names = [n for n in result.summary if n != "overall"] + ["overall"]
    return [
        {
            "scope": name,
            "tasks": result.summary[name].tasks,
            f"avg@{k}": _r(result.summary[name].avg_at_k),
            "valid rate": _r(result.summary[name].valid_rate),
            f"best-of-{k}": _r(result.summary[name].best_of_k),
            "medal rate": _r(result.summary[name].medal_rate),
        }
        for name in names
    ]


def task_rows(result: BenchResult) -> list[dict[str, Any]]:
    """One row per task: its numbers, the position score of each attempt, and its real-execution seconds."""
    k = result.meta.k
    rows = []
    for task in result.tasks:
        scores = task.scores
        rows.append(
            {
                "task": task.task,
                "category": task.category,
                "metric": task.metric,
                f"avg@{k}": _r(scores.avg_at_k),
                "valid rate": _r(scores.valid_rate),
                f"best-of-{k}": _r(scores.best_of_k),
                "medal rate": _r(scores.medal_rate),
                "attempts": " ".join(f"{a.position:.3f}" for a in task.attempts),
                "exec s": round(task.exec_s, 1),
            }
        )
    return rows


def _r(value: float) -> float:
    return round(value, 4)
