"""``wmrl libero-eval``: success rate of a VLA over LIBERO's official initial states, written as leaderboard files."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_command"]

_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90")


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl libero-eval`` to the ``wmrl`` command."""
    cmd = subparsers.add_parser(
        "libero-eval",
        help="evaluate a VLA on LIBERO: success rate over the 50 official initial states per task (avg@K)",
        description="Run a VLA K times from every initial state of the chosen tasks and write "
        "<name>.json, .csv and .md leaderboard files (the code benchmark's columns).",
    )
    cmd.add_argument(
        "--policy", default="tiny-vla", help="tiny-vla | minivla:PATH | checkpoint:DIR (default: tiny-vla)"
    )
    cmd.add_argument(
        "--suite", default="libero_spatial", choices=_SUITES, help="LIBERO suite (default: libero_spatial)"
    )
    cmd.add_argument("--tasks", default="0", help="task ids, comma-separated, or 'all' (default: 0)")
    cmd.add_argument("--k", type=int, default=1, help="attempts per initial state (default: 1, greedy)")
    cmd.add_argument(
        "--temperature", type=float, default=None, help="sampling temperature (default: 0 for K=1, else 1)"
    )
    cmd.add_argument(
        "--init-states",
        default="eval",
        help="'eval' (all 50), 'train' (first 16) or indices and ranges: 0,3,7 or 40-47",
    )
    cmd.add_argument("--seed", type=int, default=0, help="base seed of every episode's env seed and sampler")
    cmd.add_argument("--horizon", type=int, default=None, help="steps per episode (default: the suite's limit)")
    cmd.add_argument("--image-size", type=int, default=128, help="camera size in pixels (default: 128)")
    cmd.add_argument("--parallel-envs", type=int, default=8, help="simulators stepped in lockstep (default: 8)")
    cmd.add_argument("--assets-dir", default=None, help="LIBERO's asset folder (default: $WMRL_LIBERO_ASSETS)")
    cmd.add_argument("--out-dir", type=Path, default=Path("leaderboards"), help="where the files go")
    cmd.add_argument("--name", default=None, help="file name stem (default: libero-<policy>-<suite>-k<K>)")
    cmd.add_argument(
        "--progress",
        default=None,
        help="also score every episode with this progress model (a `wmrl libero-progress` file, or a "
        "tiny-progress:/progress-http: spec) and report its ranking quality: AUC of success, Spearman",
    )
    cmd.add_argument("--json", action="store_true", help="print the result as JSON instead of a table")
    cmd.set_defaults(func=run_libero_eval)


def run_libero_eval(args: argparse.Namespace) -> int:
    """Build the policy, evaluate it, print the table and write the leaderboard files."""
    from wmrl_agents.libero.evaluate import evaluate_vla
    from wmrl_agents.libero.leaderboard import write_libero_leaderboard
    from wmrl_agents.libero.sources import build_progress_model
    from wmrl_tasks.libero.suites import TASKS_PER_SUITE, parse_init_states, parse_task_ids

    from wmrl_envs import console

    policy = _policy(args.policy, args.seed)
    progress = None if args.progress is None else build_progress_model(_progress_spec(args.progress))
    task_ids = parse_task_ids(args.tasks, TASKS_PER_SUITE[args.suite])
    result = evaluate_vla(
        policy,
        policy_spec=args.policy,
        suite=args.suite,
        task_ids=task_ids,
        k=args.k,
        seed=args.seed,
        init_states=parse_init_states(args.init_states),
        temperature=args.temperature,
        horizon=args.horizon,
        image_size=args.image_size,
        parallel_envs=args.parallel_envs,
        assets_dir=args.assets_dir,
        command=shlex.join(["wmrl", *sys.argv[1:]]),
        progress=progress,
    )
    paths = write_libero_leaderboard(result, args.out_dir, args.name)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    rows = [
        {"task": t.task, "episodes": t.episodes, "success rate": f"{t.avg_at_k:.3f}"}
        | {"95% Wilson": "[{:.2f}, {:.2f}]".format(*t.success_interval), "best of K": f"{t.best_of_k:.3f}"}
        for t in result.tasks
    ]
    console.table(f"{args.policy} on {args.suite}: success rate avg@{args.k} = {result.avg_at_k:.3f}", rows)
    ranking = result.progress_ranking()
    if ranking is not None:
        console.table(f"progress model {args.progress}: ranking of success over these episodes", [ranking])
    console.note("files: " + ", ".join(str(p) for p in paths.values()))
    return 0


def _progress_spec(text: str) -> str:
    """A world-model spec from --progress: specs pass through, a bare path is a tiny-progress file."""
    if text.startswith(("tiny-progress:", "progress-http:")):
        return text
    if not Path(text).expanduser().is_file():
        raise FileNotFoundError(f"--progress {text!r} is not a file; fit one with `wmrl libero-progress --out FILE`")
    return f"tiny-progress:{Path(text).expanduser()}"


def _policy(spec: str, seed: int) -> Any:
    kind, _, target = spec.partition(":")
    if kind == "checkpoint":
        from wmrl_agents.policies.factory import load_policy_from_checkpoint

        if not target or not Path(target).expanduser().exists():
            raise FileNotFoundError(f"checkpoint {target!r} does not exist; pass a folder written by `wmrl train`")
        return load_policy_from_checkpoint(Path(target).expanduser())
    from wmrl_agents.policies.factory import make_policy

    return make_policy(spec, seed=seed)
