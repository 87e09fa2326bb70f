"""A short text summary of a competition's public data folder: what an agent or an LLM world model reads about it.

Generic over task families (it only lists files, sizes and CSV shapes), so the library's
LLM world model and a task family's prompt share one summary without the library
importing the task family.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["data_summary"]

_MAX_FILES = 25
_MAX_COLUMNS = 40


def data_summary(public_dir: Path) -> str:
    """One line per public file with its size; CSV files also show rows and columns."""
    files = sorted(p for p in public_dir.rglob("*") if p.is_file())
    lines = []
    for path in files[:_MAX_FILES]:
        rel = path.relative_to(public_dir)
        line = f"- {rel} ({_size(path.stat().st_size)})"
        if path.suffix == ".csv":
            line += _csv_shape(path)
        lines.append(line)
    if len(files) > _MAX_FILES:
        lines.append(f"- ... and {len(files) - _MAX_FILES} more files")
    return "\n".join(lines) if lines else "- (no files)"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _csv_shape(path: Path) -> str:
    try:
        columns = list(pd.read_csv(path, nrows=0).columns)
        with path.open("rb") as fh:
            rows = max(sum(1 for _ in fh) - 1, 0)
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        return f": unreadable ({exc.__class__.__name__})"
    shown = ", ".join(map(str, columns[:_MAX_COLUMNS]))
    more = f", ... ({len(columns)} columns)" if len(columns) > _MAX_COLUMNS else ""
    return f": {rows} rows; columns: {shown}{more}"
