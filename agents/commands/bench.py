"""``wmrl bench``: benchmark a policy on a split with K attempts per task and write leaderboard files."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any

from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags, ray_flag_args
from wmrl_envs.split_flag import add_split_flag

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl bench`` to the ``wmrl`` command."""
    bench = subparsers.add_parser(
        "bench",
        help="evaluate a policy with K attempts per task (avg@K, valid rate, best-of-K, medal rate)",
        description="Run K attempts per task for real in the sandbox, grade them, and write "
        "<name>.json, .csv and .md leaderboard files.",
    )
    bench.add_argument(
        "--policy",
        required=True,
        help="program | checkpoint:DIR | hf:PATH | dir:PATH (solution files <task_id>/*.py or <task_id>.py)",
    )
    bench.add_argument(
        "--policy-options",
        type=Path,
        default=None,
        help="YAML/JSON of an hf:PATH policy's settings, e.g. generation: server (docs/vllm.md)",
    )
    add_split_flag(bench, default="held-out")
    bench.add_argument("--k", type=int, default=8, help="attempts per task (default: 8)")
    bench.add_argument("--seed", type=int, default=0, help="base seed of every attempt's generation seed")
    bench.add_argument("--ids", nargs="+", default=None, help="only these competition ids of the split")
    add_executor_flags(bench)
    bench.add_argument("--workers", type=int, default=2, help="runs in parallel (default: 2)")
    bench.add_argument("--max-turns", type=int, default=1, help="turns per attempt, feedback in between (default: 1)")
    bench.add_argument("--time-limit", type=float, default=1200.0, help="wall-clock budget of one run in seconds")
    bench.add_argument("--memory-mb", type=int, default=4096, help="memory limit of one run in MB")
    bench.add_argument("--out-dir", type=Path, default=Path("leaderboards"), help="where the files go")
    bench.add_argument("--name", default=None, help="file name stem (default: bench-<policy>-<split>-k<K>)")
    bench.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    bench.add_argument("--json", action="store_true", help="print the result as JSON instead of tables")
    bench.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    """Resolve the policy and tasks, run the benchmark, print it and write the leaderboard files."""
    import dataclasses

    from wmrl_agents.bench.evaluate import evaluate_policy
    from wmrl_agents.bench.files import write_leaderboard
    from wmrl_agents.bench.specs import resolve_policy
    from wmrl_agents.bench.tables import summary_rows, task_rows
    from wmrl_tasks.mledojo.catalog import load_competitions

    from wmrl_envs import console
    from wmrl_envs.sandbox.base import Limits

    for flag, value in (("--k", args.k), ("--workers", args.workers), ("--max-turns", args.max_turns)):
        if value < 1:
            raise ValueError(f"{flag} must be at least 1, got {value}")
    competitions = load_competitions(args.split, args.data_root, args.ids)
    policy = resolve_policy(args.policy, seed=args.seed) if args.policy_options is None else _configured_policy(args)
    executor, limits = executor_from_flags(args, Limits(wall_time_s=args.time_limit, memory_mb=args.memory_mb))
    result = evaluate_policy(
        policy,
        competitions,
        k=args.k,
        seed=args.seed,
        executor=executor,
        limits=limits,
        workers=args.workers,
        max_turns=args.max_turns,
        label=args.policy,
    )
    result = dataclasses.replace(result, meta=dataclasses.replace(result.meta, command=command_line(args)))
    paths = write_leaderboard(result, args.out_dir, args.name)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    meta = result.meta
    console.table(f"{meta.policy} on {meta.split}: {len(meta.tasks)} tasks x {meta.k} attempts", task_rows(result))
    console.table(f"Means over tasks (avg@{meta.k})", summary_rows(result))
    console.note(
        f"real execution {meta.real_exec_s:.1f} s (held-out evaluation, not training compute), "
        f"generation {meta.generation_s:.1f} s, elapsed {meta.elapsed_s:.1f} s, backend {meta.executor}"
    )
    if meta.infra_errors:
        console.note(
            f"warning: {meta.infra_errors} attempt(s) lost to sandbox failures scored 0; rerun to replace them"
        )
    console.note("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


def command_line(args: argparse.Namespace) -> str:
    """The ``wmrl bench`` command that reproduces this run (every option spelled out)."""
    parts = ["wmrl", "bench", "--policy", args.policy, "--split", args.split, "--k", str(args.k)]
    parts += ["--seed", str(args.seed), "--executor", args.executor, "--workers", str(args.workers)]
    parts += ["--max-turns", str(args.max_turns), "--time-limit", f"{args.time_limit:g}"]
    parts += ["--memory-mb", str(args.memory_mb)]
    parts += ray_flag_args(args)
    if args.ids:
        parts += ["--ids", *args.ids]
    if args.data_root is not None:
        parts += ["--data-root", str(args.data_root)]
    if args.policy_options is not None:
        parts += ["--policy-options", str(args.policy_options)]
    return shlex.join(parts)


def _configured_policy(args: argparse.Namespace) -> Any:
    """The ``hf:PATH`` policy built with the settings of ``--policy-options``."""
    from wmrl_agents.policies.factory import make_policy
    from wmrl_agents.policies.options_file import read_options_file

    from wmrl_envs.errors import WmrlError

    if not args.policy.startswith("hf:"):
        raise WmrlError(f"--policy-options applies to hf:PATH policies, not {args.policy!r}")
    return make_policy(args.policy, seed=args.seed, options=read_options_file(args.policy_options, "--policy-options"))
