"""``wmrl demo``: run the pool's baseline solutions through the sandbox and grader, one table row per task."""

from __future__ import annotations

import argparse
import json

from wmrl_envs import console
from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags
from wmrl_envs.sandbox.rundir import scratch_dir
from wmrl_envs.split_flag import add_split_flag

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl demo`` to the ``wmrl`` command."""
    demo = subparsers.add_parser("demo", help="run the pool's baseline solutions through the sandbox and grader")
    add_split_flag(demo, default="held-out")
    add_executor_flags(demo)
    demo.add_argument("--workers", type=int, default=2, help="runs in parallel (default: 2)")
    demo.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    demo.set_defaults(func=_cmd_demo)


def _cmd_demo(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from wmrl_tasks.mledojo.catalog import load_competitions
    from wmrl_tasks.mledojo.pool.baselines import baseline_code

    from wmrl_envs.outcome import execute_and_grade
    from wmrl_envs.sandbox.base import Limits

    competitions = load_competitions(args.split)
    executor, limits = executor_from_flags(args, Limits(wall_time_s=600))

    def run_one(competition):
        with scratch_dir("wmrl-demo-") as workdir:
            code = baseline_code(competition.id)
            return competition, execute_and_grade(competition, code, executor, limits, workdir)

    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        results = list(console.track(pool.map(run_one, competitions), len(competitions), "baseline runs"))
    rows = [
        {
            "task": c.id,
            "category": c.category.value,
            "metric": c.metric,
            "status": o.execution.status.value,
            "valid": o.grade.valid,
            "score": o.grade.score,
            "position": round(o.position, 4),
            "wall_s": round(o.execution.wall_s, 2),
            "reason": "" if o.grade.valid else o.grade.reason,
        }
        for c, o in results
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        console.table(f"Baseline solutions on the {args.split} split", rows)
        mean = sum(r["position"] for r in rows) / len(rows)
        console.note(f"mean position score: {mean:.3f} over {len(rows)} tasks (backend: {executor.name})")
    return 0
