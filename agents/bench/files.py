"""Leaderboard files: a benchmark result as JSON (everything), CSV (one row per scope) and Markdown.

Every file carries what makes two results comparable (policy, split, K, seed, wmrl
version, date): the CSV on each row, so the CSVs of several runs concatenate into one
table; the JSON keeps every attempt for auditing; the Markdown is fit to publish.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .results import BenchResult
from .specs import policy_slug
from .tables import summary_rows, task_rows

__all__ = ["CSV_COLUMNS", "default_name", "markdown_table", "write_file_set", "write_leaderboard"]

CSV_COLUMNS = (
    "policy",
    "split",
    "k",
    "seed",
    "max_turns",
    "wmrl_version",
    "date",
    "scope",
    "name",
    "category",
    "tasks",
    "avg_at_k",
    "valid_rate",
    "best_of_k",
    "medal_rate",
    "real_exec_s",
)
"""Columns of the CSV file; `scope` is 'task', 'category' or 'overall' and `name` the task id or category."""


def default_name(result: BenchResult) -> str:
    """``bench-<policy-slug>-<split>-k<K>``: one file set per policy, split and K."""
    meta = result.meta
    return f"bench-{policy_slug(meta.policy)}-{meta.split}-k{meta.k}"


def write_leaderboard(result: BenchResult, out_dir: Path, name: str | None = None) -> dict[str, Path]:
    """Write ``<name>.json``, ``.csv`` and ``.md`` under `out_dir` (created if missing); return their paths."""
    return write_file_set(
        out_dir,
        name if name is not None else default_name(result),
        result.to_dict(),
        _csv_rows(result),
        markdown(result),
    )


def write_file_set(
    out_dir: Path, name: str, data: dict[str, Any], rows: list[dict[str, Any]], page: str
) -> dict[str, Path]:
    """One leaderboard file set: ``<name>.json`` (`data`), ``.csv`` (`rows` in `CSV_COLUMNS`) and ``.md`` (`page`)."""
    if not name or Path(name).name != name:
        raise ValueError(
            f"--name must be a plain file name without folders, got {name!r}; use --out-dir for the folder"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {ext: out_dir / f"{name}.{ext}" for ext in ("json", "csv", "md")}
    paths["json"].write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    with paths["csv"].open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    paths["md"].write_text(page, encoding="utf-8")
    return paths


def markdown(result: BenchResult) -> str:
    """The result as a Markdown page: how it was run, the means per category and overall, and every task."""
    meta = result.meta
    sampling = (
        f"temperature {meta.sampling['temperature']}, top-p {meta.sampling['top_p']}, "
        "one seed per (seed, task, attempt, turn)"
        if meta.sampling
        else "solution files, in name order"
    )
    limits = f"{meta.limits['wall_time_s']:g} s, {meta.limits['memory_mb']} MB, {meta.limits['cpus']} CPU"
    other_time = f"generation: {meta.generation_s:.1f} s; elapsed: {meta.elapsed_s:.1f} s"
    lines = [
        f"# wmrl bench: `{meta.policy}` on the {meta.split} split, avg@{meta.k}",
        "",
        f"- Policy: `{meta.policy}`",
        f"- Split: {meta.split} ({len(meta.tasks)} tasks)",
        f"- Attempts per task (K): {meta.k}; turns per attempt: {meta.max_turns}; seed: {meta.seed}",
        f"- Sampling: {sampling}",
        f"- Executor: {meta.executor}, {meta.workers} workers; limits per run: {limits}",
        f"- Real execution: {meta.real_exec_s:.1f} s (held-out evaluation, not training compute); {other_time}",
        f"- Infrastructure failures: {meta.infra_errors}",
        f"- wmrl {meta.wmrl_version}, {meta.date}",
    ]
    if meta.command:
        lines.append(f"- Command: `{meta.command}`")
    lines += [
        "",
        "Position score: the fraction of a leaderboard's teams not strictly better, averaged over the public and",
        "private boards; an attempt without a valid submission scores 0. Categories and overall are means over",
        "tasks, each task weighing the same.",
        "",
        "## Summary",
        "",
        *markdown_table(summary_rows(result)),
        "",
        "## Tasks",
        "",
        *markdown_table(task_rows(result)),
        "",
    ]
    return "\n".join(lines)


def _csv_rows(result: BenchResult) -> list[dict[str, Any]]:
    meta = result.meta
    common = {
        "policy": meta.policy,
        "split": meta.split,
        "k": meta.k,
        "seed": meta.seed,
        "max_turns": meta.max_turns,
        "wmrl_version": meta.wmrl_version,
        "date": meta.date,
    }
    rows: list[dict[str, Any]] = []
    for task in result.tasks:
        rows.append(
            {**common, "scope": "task", "name": task.task, "category": task.category, "tasks": 1}
            | task.scores.numbers()
            | {"real_exec_s": round(task.exec_s, 3)}
        )
    for scope, scores in result.summary.items():
        kind = "overall" if scope == "overall" else "category"
        exec_s = sum(t.exec_s for t in result.tasks if kind == "overall" or t.category == scope)
        rows.append(
            {**common, "scope": kind, "name": scope, "category": "" if kind == "overall" else scope}
            | {"tasks": scores.tasks}
            | scores.numbers()
            | {"real_exec_s": round(exec_s, 3)}
        )
    rows.sort(key=lambda r: ("task", "category", "overall").index(r["scope"]))
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> list[str]:
    """Rows of dicts (same keys) as the lines of a Markdown table."""
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row[key]) for key in header) + " |")
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|")
