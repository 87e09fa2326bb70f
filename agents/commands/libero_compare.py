"""``wmrl libero-compare``: GRPO of a warm-started VLA with terminal success, a progress world model, and WMRL."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_command"]

_SUITES = ("libero_spatial", "libero_object", "libero_goal", "libero_10", "libero_90")
_METHODS = ("real", "world_model", "wmrl")


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl libero-compare`` to the ``wmrl`` command."""
    cmd = subparsers.add_parser(
        "libero-compare",
        help="GRPO on LIBERO from one warm start three ways (terminal success, progress world model, WMRL): "
        "success curves, success checks and simulation seconds",
        description="Train the warm-started tiny VLA with each reward source from the same seeds, evaluate each "
        "on held-out initial states, and write libero-compare-<name>.json and .png.",
    )
    cmd.add_argument("--warm-start", type=Path, required=True, help="a `wmrl sft --out` folder")
    cmd.add_argument("--progress-model", type=Path, required=True, help="a `wmrl libero-progress --out` file")
    cmd.add_argument("--suite", default="libero_object", choices=_SUITES, help="LIBERO suite (default: libero_object)")
    cmd.add_argument("--tasks", default="2", help="task ids, comma-separated (default: 2)")
    cmd.add_argument("--seeds", default="0,1", help="training seeds, comma-separated (default: 0,1)")
    cmd.add_argument("--methods", nargs="+", default=list(_METHODS), choices=_METHODS, help="a subset")
    cmd.add_argument("--steps", type=int, default=2, help="GRPO steps per run (default: 2)")
    cmd.add_argument("--groups", type=int, default=2, help="groups per step (default: 2)")
    cmd.add_argument("--group-size", type=int, default=4, help="episodes per group (default: 4)")
    cmd.add_argument("--lr", type=float, default=1e-4, help="learning rate (default: 1e-4)")
    cmd.add_argument("--anchor-fraction", type=float, default=0.5, help="WMRL's anchor-group share (default: 0.5)")
    cmd.add_argument("--horizon", type=int, default=None, help="steps per episode (default: the suite's limit)")
    cmd.add_argument("--image-size", type=int, default=32, help="camera size in pixels (default: 32)")
    cmd.add_argument("--eval-init-states", default="16-23", help="held-out initial states, 'A-B' or a list (16-49)")
    cmd.add_argument(
        "--eval-k", type=int, default=1, help="attempts per held-out state: 1 greedy, more sampled (default: 1)"
    )
    cmd.add_argument("--parallel-envs", type=int, default=4, help="simulators stepped in lockstep (default: 4)")
    cmd.add_argument("--workers", type=int, default=1, help="trainings run at once, in fresh processes (default: 1)")
    cmd.add_argument("--assets-dir", default=None, help="LIBERO's asset folder (default: $WMRL_LIBERO_ASSETS)")
    cmd.add_argument("--run-dir", type=Path, default=Path("runs/libero-compare"), help="training runs go here")
    cmd.add_argument(
        "--resume",
        action="store_true",
        help="read back the finished runs in --run-dir and continue the unfinished ones from their last step",
    )
    cmd.add_argument("--out-dir", type=Path, default=Path("leaderboards"), help="where the JSON and PNG go")
    cmd.add_argument("--name", default=None, help="file stem suffix (default: <suite>-t<tasks>)")
    cmd.set_defaults(func=run_libero_compare_command)


def run_libero_compare_command(args: argparse.Namespace) -> int:
    """Run the comparison, print its table, write the leaderboard files."""
    from wmrl_agents.libero.compare import LiberoCompareSettings, run_libero_compare
    from wmrl_agents.libero.compare_report import table_rows, write_libero_compare
    from wmrl_tasks.libero.suites import TASKS_PER_SUITE, parse_index_list, parse_task_ids

    from wmrl_envs import console

    task_ids = parse_task_ids(args.tasks, TASKS_PER_SUITE[args.suite])
    settings = LiberoCompareSettings(
        warm_start=str(args.warm_start),
        progress_model=str(args.progress_model),
        suite=args.suite,
        task_ids=tuple(task_ids),
        seeds=parse_index_list(args.seeds, "--seeds"),
        steps=args.steps,
        groups_per_step=args.groups,
        group_size=args.group_size,
        horizon=args.horizon,
        image_size=args.image_size,
        learning_rate=args.lr,
        anchor_fraction=args.anchor_fraction,
        eval_init_states=parse_index_list(args.eval_init_states, "--eval-init-states"),
        eval_k=args.eval_k,
        parallel_envs=args.parallel_envs,
        assets_dir=args.assets_dir,
        methods=tuple(args.methods),
    )

    def show(method: str, seed: int, point: dict) -> None:
        console.note(
            f"{method} seed {seed} step {point['step']}: train success {point['success_rate']:.3f}, "
            f"success checks {point['success_checks']}, sim {point['simulation_s']:.1f} s"
        )

    report = run_libero_compare(settings, args.run_dir, workers=args.workers, resume=args.resume, on_step=show)
    name = args.name or f"{args.suite}-t{'-'.join(map(str, task_ids))}"
    json_path, png_path = write_libero_compare(report, args.out_dir, name)
    console.table(f"GRPO on {args.suite} three ways (lite assets)", table_rows(report))
    console.note(f"wrote {json_path} and {png_path}")
    return 0
