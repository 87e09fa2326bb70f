"""``wmrl run``: execute one solution in the sandbox and grade it, optionally appending it to an execution log."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wmrl_envs import console
from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags
from wmrl_envs.sandbox.rundir import scratch_dir

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl run`` to the ``wmrl`` command."""
    run = subparsers.add_parser("run", help="execute one solution in the sandbox and grade it")
    run.add_argument("--task", required=True, help="a task id, or the path of a competition folder")
    run.add_argument("solution", type=Path, help="the Python file to run")
    run.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    add_executor_flags(run)
    run.add_argument("--time-limit", type=float, default=1200.0, help="wall-clock budget in seconds")
    run.add_argument("--memory-mb", type=int, default=4096, help="memory limit in MB")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    run.add_argument("--log", type=Path, default=None, help="append the run to this execution log (JSONL)")
    run.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    from wmrl_tasks.mledojo.catalog import select_competition

    from wmrl_envs.outcome import execute_and_grade
    from wmrl_envs.sandbox.base import Limits

    if not args.solution.is_file():
        raise FileNotFoundError(f"solution file {args.solution} does not exist")
    code = args.solution.read_text(encoding="utf-8", errors="replace")
    competition = select_competition(args.task, args.data_root)
    executor, limits = executor_from_flags(args, Limits(wall_time_s=args.time_limit, memory_mb=args.memory_mb))
    with scratch_dir("wmrl-run-") as workdir:
        outcome = execute_and_grade(competition, code, executor, limits, workdir)
    if args.log is not None:
        from wmrl_envs.execution_log import ExecutionLog

        ExecutionLog(args.log).append(competition, code, outcome)
    report = {"task": competition.id, "metric": competition.metric, "direction": competition.direction}
    report.update(outcome.to_dict())
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        console.run_report(report, outcome.execution.stdout, outcome.execution.stderr)
    return 0
