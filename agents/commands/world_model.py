"""``wmrl world-model collect | fit | eval``: build an execution log for real, fit the learned surrogate, score it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from wmrl_envs import console
from wmrl_envs.errors import WmrlError
from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags
from wmrl_envs.split_flag import add_split_flag

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl world-model`` and its three subcommands to the ``wmrl`` command."""
    world_model = subparsers.add_parser(
        "world-model", help="build an execution log, fit and evaluate the learned surrogate"
    )
    wm = world_model.add_subparsers(dest="wm_command", required=True)
    fit = wm.add_parser("fit", help="fit the learned surrogate on the train-split entries of an execution log")
    fit.add_argument("--log", type=Path, required=True, help="execution log (JSONL) to learn from")
    fit.add_argument("--out", type=Path, required=True, help="where to write the model file")
    fit.set_defaults(func=_cmd_fit)
    evaluate = wm.add_parser("eval", help="compare the surrogate's predictions with the real outcomes of a log")
    evaluate.add_argument("--model", type=Path, required=True, help="a model file written by `world-model fit`")
    evaluate.add_argument("--log", type=Path, required=True, help="execution log (JSONL) of real runs")
    add_split_flag(evaluate, default="held-out")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    evaluate.set_defaults(func=_cmd_eval)
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
    collect.set_defaults(func=_cmd_collect)


def _cmd_fit(args: argparse.Namespace) -> int:
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


def _cmd_eval(args: argparse.Namespace) -> int:
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


def _cmd_collect(args: argparse.Namespace) -> int:
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
