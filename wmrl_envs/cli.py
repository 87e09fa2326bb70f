"""The ``wmrl`` command: list tasks, run one solution through the sandbox and grader, fit world models.

Task families are imported inside the commands, so ``import wmrl_envs`` stays light and
the library never depends on a task family at import time.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

from wmrl_envs import __version__, console
from wmrl_envs.errors import WmrlError
from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags
from wmrl_envs.sandbox.rundir import scratch_dir
from wmrl_envs.split_flag import add_split_flag

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wmrl`` console command; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (WmrlError, FileNotFoundError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        console.error(f"{type(exc).__name__}: {message}")
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wmrl", description="World Model RL: environments, grading and benchmarks.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}", help="print the version")
    sub = parser.add_subparsers(dest="command", required=True)

    tasks = sub.add_parser("tasks", help="list the competitions of the pool (or of --data-root)")
    add_split_flag(tasks, default="all")
    tasks.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    tasks.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    tasks.set_defaults(func=_cmd_tasks)

    run = sub.add_parser("run", help="execute one solution in the sandbox and grade it")
    run.add_argument("--task", required=True, help="a task id, or the path of a competition folder")
    run.add_argument("solution", type=Path, help="the Python file to run")
    run.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    add_executor_flags(run)
    run.add_argument("--time-limit", type=float, default=1200.0, help="wall-clock budget in seconds")
    run.add_argument("--memory-mb", type=int, default=4096, help="memory limit in MB")
    run.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    run.add_argument("--log", type=Path, default=None, help="append the run to this execution log (JSONL)")
    run.set_defaults(func=_cmd_run)

    demo = sub.add_parser("demo", help="run the pool's baseline solutions through the sandbox and grader")
    add_split_flag(demo, default="held-out")
    add_executor_flags(demo)
    demo.add_argument("--workers", type=int, default=2, help="runs in parallel (default: 2)")
    demo.add_argument("--json", action="store_true", help="print one JSON list instead of a table")
    demo.set_defaults(func=_cmd_demo)

    world_model = sub.add_parser("world-model", help="build an execution log, fit and evaluate the learned surrogate")
    wm = world_model.add_subparsers(dest="wm_command", required=True)
    fit = wm.add_parser("fit", help="fit the learned surrogate on the train-split entries of an execution log")
    fit.add_argument("--log", type=Path, required=True, help="execution log (JSONL) to learn from")
    fit.add_argument("--out", type=Path, required=True, help="where to write the model file")
    fit.set_defaults(func=_cmd_wm_fit)
    evaluate = wm.add_parser("eval", help="compare the surrogate's predictions with the real outcomes of a log")
    evaluate.add_argument("--model", type=Path, required=True, help="a model file written by `world-model fit`")
    evaluate.add_argument("--log", type=Path, required=True, help="execution log (JSONL) of real runs")
    add_split_flag(evaluate, default="held-out")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    evaluate.set_defaults(func=_cmd_wm_eval)
    collect = wm.add_parser("collect", help="run the pool's baselines and degraded variants for real into a log")
    collect.add_argument("--out", type=Path, required=True, help="execution log (JSONL) to append to")
    add_split_flag(collect, default="train")
    collect.add_argument(
        "--variants",
        nargs="+",
        default=None,
        help="which solutions per task: baseline less_data shuffled_half prior crash (default: all)",
    )
    collect.add_argument("--ids", nargs="*", default=None, help="only these competition ids")
    collect.add_argument("--data-root", type=Path, default=None, help="a folder of prepared pool competitions")
    add_executor_flags(collect)
    collect.add_argument("--workers", type=int, default=2, help="runs in parallel (default: 2)")
    collect.add_argument("--time-limit", type=float, default=600.0, help="wall-clock budget of one run in seconds")
    collect.set_defaults(func=_cmd_wm_collect)

    _add_agent_commands(sub)
    return parser


def _add_agent_commands(sub: argparse._SubParsersAction) -> None:
    """Add the subcommands of `wmrl_agents.commands` (train, bench, compare): one module each, found by name."""
    from wmrl_agents import commands

    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{module.name}").add_command(sub)


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


def _cmd_wm_fit(args: argparse.Namespace) -> int:
    from wmrl_envs.execution_log import ExecutionLog
    from wmrl_envs.world_models.surrogate import LearnedSurrogate

    log = ExecutionLog(args.log)
    everything = log.read()
    train = [e for e in everything if e.split == "train"]
    if log.skipped:
        console.note(f"skipped {len(log.skipped)} corrupt line(s) of {log.path} (first: line {log.skipped[0][0]})")
    if len(train) < len(everything):
        console.note(f"left out {len(everything) - len(train)} held-out entries: world models never learn from them")
    surrogate = LearnedSurrogate().fit(train)
    surrogate.save(args.out)
    console.note(f"fit on {len(train)} runs of {len(surrogate.tasks_seen)} training tasks; wrote {args.out}")
    return 0


def _cmd_wm_eval(args: argparse.Namespace) -> int:
    from wmrl_envs.execution_log import ExecutionLog
    from wmrl_envs.world_models.surrogate import LearnedSurrogate, evaluate_surrogate

    surrogate = LearnedSurrogate.load(args.model)
    entries = ExecutionLog(args.log).read(split=args.split)
    if not entries:
        raise WmrlError(
            f"no {args.split} entries in {args.log}; collect some with `wmrl world-model collect --split {args.split}`"
        )
    report = {"model": str(args.model), "log": str(args.log), "split": args.split}
    report.update(evaluate_surrogate(surrogate, entries))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        rows = [{"measure": key, "value": value} for key, value in report.items()]
        console.table(f"Learned surrogate vs real execution ({args.split} split)", rows)
    return 0


def _cmd_wm_collect(args: argparse.Namespace) -> int:
    from wmrl_tasks.mledojo.catalog import load_competitions
    from wmrl_tasks.mledojo.pool.variants import VARIANTS, solution_variants

    from wmrl_envs.execution_log import ExecutionLog
    from wmrl_envs.rewards.base import Rollout
    from wmrl_envs.rewards.real import RealExecution
    from wmrl_envs.sandbox.base import Limits

    names = tuple(args.variants or VARIANTS)
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise ValueError(f"--variants: no variant {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    competitions = load_competitions(args.split, args.data_root, args.ids)
    items = [(c, name, code) for c in competitions for name, code in solution_variants(c, names).items()]
    log = ExecutionLog(args.out)
    executor, limits = executor_from_flags(args, Limits(wall_time_s=args.time_limit))
    source = RealExecution(executor, limits, workers=max(1, args.workers), log=log)
    scores = source.score([Rollout(c, code) for c, _, code in items])
    rows = [
        {
            "task": c.id,
            "variant": name,
            "status": "infra-error (not logged)" if s is None else s.outcome.execution.status.value,
            "valid": None if s is None else s.outcome.grade.valid,
            "position": None if s is None else round(s.value, 4),
            "wall_s": None if s is None else round(s.outcome.execution.wall_s, 2),
        }
        for (c, name, _), s in zip(items, scores, strict=True)
    ]
    console.table(f"Real runs appended to {args.out}", rows)
    console.note(f"{sum(s is not None for s in scores)} of {len(items)} runs logged to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
