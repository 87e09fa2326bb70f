"""``wmrl tasks``: list the competitions of the pool (or of a folder of prepared competitions)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wmrl_envs import console
from wmrl_envs.split_flag import add_split_flag

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl tasks`` to the ``wmrl`` command."""
    tasks = subparsers.add_parser("tasks", help="list the competitions of the pool (or of --data-root)")
    add_split_flag(tasks, default="all")
    tasks.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    tasks.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    tasks.set_defaults(func=_cmd_tasks)


def _cmd_tasks(args: argparse.Namespace) -> int:
    from wmrl_tasks.mledojo.catalog import load_competitions

    rows = [
        {
            "id": c.id,
            "category": c.category.value,
            "split": c.split.value,
            "metric": c.metric,
            "direction": c.direction,
        }
        for c in load_competitions(args.split, args.data_root)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        console.table("Competitions", rows)
    return 0
