"""Human-facing output goes through here (rich), so commands print tables and reports one way."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.progress import track as _rich_track
from rich.table import Table

__all__ = ["error", "note", "run_report", "table", "track"]

T = TypeVar("T")

# Off a terminal (pipes, CI logs) rich would wrap tables at 80 columns and cut every cell; be wider there.
_out = Console(width=None if sys.stdout.isatty() else 160)
_err = Console(stderr=True)


def table(title: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Print rows (dicts with the same keys) as a table."""
    grid = Table(title=title)
    for key in rows[0] if rows else []:
        grid.add_column(str(key))
    for row in rows:
        grid.add_row(*(_cell(v) for v in row.values()))
    _out.print(grid)


def run_report(report: Mapping[str, Any], stdout: str, stderr: str) -> None:
    """Print the report of one graded run: outcome, score, positions, medal, cost and log tails."""
    grid = Table(title=f"{report['task']} ({report['metric']}, {report['direction']})", show_header=False)
    grid.add_column("field")
    grid.add_column("value")
    position = report.get("position") or {}
    execution = report["exec"]
    medal = (report.get("medal") or {}).get("medal")
    for key, value in (
        ("status", report["status"]),
        ("valid", report["valid"]),
        ("reason", report.get("reason") or ""),
        ("score", report.get("score")),
        ("position (public / private / average)", _positions(position)),
        ("medal", medal or "none"),
        ("wall / CPU seconds", f"{execution['wall_s']:.2f} / {execution['cpu_s']:.2f}"),
        ("peak memory (MB)", f"{execution['peak_mb']:.0f}"),
        ("backend", execution["backend"]),
    ):
        grid.add_row(key, _cell(value))
    _out.print(grid)
    for name, text in (("stdout", stdout), ("stderr", stderr)):
        if text.strip():
            _out.rule(f"{name} (tail)")
            _out.print(text.rstrip(), markup=False, highlight=False)


def track(items: Iterable[T], total: int, description: str) -> Iterator[T]:
    """Iterate with a progress bar on stderr."""
    yield from _rich_track(items, total=total, description=description, console=_err, transient=True)


def note(message: str) -> None:
    """Print one line of plain information."""
    _out.print(message, markup=False, highlight=False)


def error(message: str) -> None:
    """Print an error for a person: what was wrong and what to do."""
    _err.print("[bold red]error:[/]", end=" ")
    _err.print(message, markup=False, highlight=False)


def _positions(position: Mapping[str, Any]) -> str:
    if not position:
        return "-"
    return " / ".join(f"{position[k]:.3f}" for k in ("public", "private", "average"))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else escape(str(value))
