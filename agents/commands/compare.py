"""``wmrl compare``: the paper's experiment on the embedded pool, printed as a table and written to leaderboards/."""

from __future__ import annotations

import argparse
from pathlib import Path

from wmrl_envs.executor_flags import add_executor_flags, ray_flag_args, ray_flags_given, ray_options

__all__ = ["add_command"]

_PRESETS = ("smoke", "quick", "full")
_METHODS = ("real", "world_model", "wmrl")
_ABLATIONS = ("debias_only", "denoise_only", "ppi", "adaptive")


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl compare`` to the ``wmrl`` command."""
    compare = subparsers.add_parser(
        "compare",
        help="train real-execution GRPO, world-model GRPO and WMRL from one seed; compare compute and held-out avg@8",
        description="Train the CPU program policy under each reward source from the same seed, evaluate each on "
        "the held-out split, and write compare-<preset>.json and .png.",
    )
    compare.add_argument("--preset", default="quick", choices=_PRESETS, help="run size (default: quick, ~8 min on 2 cores)")
    compare.add_argument(
        "--ablation",
        action="store_true",
        help="also train Online-Debiasing-only, IVD-only, the prediction-powered estimator (ppi) and the adaptive "
        "anchor fraction (adaptive)",
    )
    compare.add_argument("--methods", nargs="+", default=None, choices=_METHODS + _ABLATIONS, help="a subset")
    compare.add_argument(
        "--world-model",
        default="surrogate",
        choices=["surrogate", "proxy"],
        help="world model of the world-model and WMRL methods: the learned surrogate (fit on real runs of the "
        "train split, counted in every method's compute) or the cheap execution proxy (each solution run on a "
        "slice of the data) (default: surrogate)",
    )
    compare.add_argument(
        "--seed", type=int, default=0, help="one seed for every method: tasks, generation and anchors (default: 0)"
    )
    add_executor_flags(compare, default=None, shown="auto")
    compare.add_argument("--workers", type=int, default=None, help="runs in parallel (default: 2)")
    compare.add_argument("--out-dir", type=Path, default=Path("leaderboards"), help="where the JSON and PNG go")
    compare.add_argument("--run-dir", type=Path, default=None, help="training runs (default: runs/compare-<preset>)")
    compare.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    compare.set_defaults(func=run_compare_command)


def run_compare_command(args: argparse.Namespace) -> int:
    """Run the comparison, print the table, write the leaderboard files."""
    from wmrl_agents.compare import compare_preset, run_compare
    from wmrl_agents.compare.report import table_rows, write_report

    from wmrl_envs import console

    ray_options(args, args.executor or "auto")  # refuses --ray-* without --executor ray
    methods = args.methods or list(_METHODS + (_ABLATIONS if args.ablation else ()))
    preset = compare_preset(args.preset)
    run_dir = args.run_dir or Path("runs") / f"compare-{args.preset}"
    report = run_compare(
        preset,
        methods,
        run_dir,
        world_model=args.world_model,
        seed=args.seed,
        executor=args.executor,
        ray=ray_flags_given(args),
        workers=args.workers,
        data_root=None if args.data_root is None else str(args.data_root),
    )
    command = ["wmrl", "compare", "--preset", args.preset, "--world-model", args.world_model, "--seed", str(args.seed)]
    command += ["--ablation"] if args.ablation else []
    command += ["--methods", *args.methods] if args.methods else []
    command += ["--executor", args.executor] if args.executor else []
    command += ray_flag_args(args)
    report["command"] = " ".join(command)
    json_path, png_path = write_report(report, args.out_dir)
    console.table(f"wmrl compare --preset {args.preset} (seed {args.seed})", table_rows(report))
    console.note(f"wrote {json_path} and {png_path}")
    return 0
