"""``wmrl compare``: the paper's experiment on the embedded pool, printed as a table and written to leaderboards/."""

from __future__ import annotations

import argparse
from pathlib import Path

from wmrl_envs.executor_flags import add_executor_flags, ray_flag_args, ray_flags_given, ray_options

__all__ = ["add_command"]

_PRESETS = ("smoke", "quick", "full")
_METHODS = ("real", "world_model", "wmrl")
_ABLATIONS = ("debias_only", "denoise_only", "ppi", "adaptive", "centred_map")


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl compare`` to the ``wmrl`` command."""
    compare = subparsers.add_parser(
        "compare",
        help="train real-execution GRPO, world-model GRPO and WMRL from one seed; compare compute and held-out avg@8",
        description="Train the CPU program policy under each reward source from the same seed, evaluate each on "
        "the held-out split, and write compare-<preset>.json and .png.",
    )
    compare.add_argument(
        "--preset", default="quick", choices=_PRESETS, help="run size (default: quick, ~8 min on 2 cores)"
    )
    compare.add_argument(
        "--ablation",
        action="store_true",
        help="also train Online-Debiasing-only, IVD-only, the prediction-powered estimator (ppi), the adaptive "
        "anchor fraction (adaptive) and WMRL with the centred isotonic map (centred_map)",
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
        "--seed",
        type=int,
        default=0,
        help="the first seed; every method of a seed shares its policy initialisation, tasks, generation and "
        "anchors (default: 0)",
    )
    compare.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="how many seeds (SEED, SEED+1, ...): scores get 95%% intervals and paired per-seed differences from 2 "
        "on (default: the preset's, 5 for quick and full as the published tables, 1 for smoke; --seeds 1 for a first "
        "look)",
    )
    compare.add_argument(
        "--sweep",
        action="store_true",
        help="also run the world-model quality sweep: world-model-only, WMRL, debias-only and denoise-only on the "
        "surrogate made worse by a monotone bias, by per-solution noise, and by both, and on the cheap-execution proxy",
    )
    compare.add_argument(
        "--sweep-levels",
        nargs="+",
        choices=("surrogate", "proxy"),
        default=None,
        help="which of the sweep's world models to run: surrogate (its three worse levels), proxy (default: both); "
        "pool the reports to put levels run apart into one table",
    )
    compare.add_argument(
        "--sweep-seeds",
        type=int,
        default=None,
        help="how many of the seeds the sweep runs on (default: all of --seeds)",
    )
    add_executor_flags(compare, default=None, shown="auto")
    compare.add_argument("--workers", type=int, default=None, help="runs in parallel (default: 2)")
    compare.add_argument("--out-dir", type=Path, default=Path("leaderboards"), help="where the JSON and PNG go")
    compare.add_argument("--run-dir", type=Path, default=None, help="training runs (default: runs/compare-<preset>)")
    compare.add_argument(
        "--pool",
        type=Path,
        nargs="+",
        default=None,
        metavar="RUN_DIR_OR_JSON",
        help="train nothing: pool the seed reports of these run folders (seed-N/compare.json, e.g. seeds run in "
        "separate processes or machines) or of reports wmrl compare wrote (e.g. leaderboards/compare-quick.json), "
        "into one report with intervals; a seed found in several is merged and must reproduce",
    )
    compare.add_argument("--data-root", type=Path, default=None, help="a folder of prepared competitions")
    compare.set_defaults(func=run_compare_command)


def run_compare_command(args: argparse.Namespace) -> int:
    """Run the comparison, print the table, write the leaderboard files."""
    from wmrl_agents.compare import compare_preset, run_compare
    from wmrl_agents.compare.report import (
        difference_rows,
        sweep_difference_rows,
        sweep_rows,
        table_rows,
        write_report,
    )
    from wmrl_agents.compare.run import SWEEP_WORLD_MODELS, pool_runs

    from wmrl_envs import console

    ray_options(args, args.executor or "auto")  # refuses --ray-* without --executor ray
    if args.seeds is None:
        args.seeds = compare_preset(args.preset).seeds
    if args.seeds < 1:
        raise SystemExit(f"wmrl compare: --seeds must be at least 1, got {args.seeds}")
    sweep_seeds = (args.seeds if args.sweep_seeds is None else args.sweep_seeds) if args.sweep else 0
    if args.sweep_seeds is not None and not (args.sweep and 1 <= args.sweep_seeds <= args.seeds):
        raise SystemExit(f"wmrl compare: --sweep-seeds needs --sweep and a value in 1..--seeds ({args.seeds})")
    if args.sweep_levels is not None and not args.sweep:
        raise SystemExit("wmrl compare: --sweep-levels needs --sweep")
    sweep_levels = args.sweep_levels or SWEEP_WORLD_MODELS
    if args.sweep and "surrogate" in sweep_levels and args.world_model != "surrogate":
        raise SystemExit(
            "wmrl compare: the sweep's surrogate levels degrade the learned surrogate; drop --world-model proxy "
            "or pass --sweep-levels proxy"
        )
    methods = args.methods or list(_METHODS + (_ABLATIONS if args.ablation else ()))
    preset = compare_preset(args.preset)
    run_dir = args.run_dir or Path("runs") / f"compare-{args.preset}"
    report = (
        pool_runs(preset, args.pool)
        if args.pool
        else run_compare(
            preset,
            methods,
            run_dir,
            seeds=list(range(args.seed, args.seed + args.seeds)),
            world_model=args.world_model,
            executor=args.executor,
            ray=ray_flags_given(args),
            workers=args.workers,
            data_root=None if args.data_root is None else str(args.data_root),
            sweep_seeds=sweep_seeds,
            sweep_world_models=sweep_levels,
        )
    )
    report["command"] = " ".join(_command(args, sweep_seeds))
    json_path, png_path = write_report(report, args.out_dir)
    seeds = ", ".join(map(str, report["seeds"]))
    console.table(f"wmrl compare --preset {args.preset} (seeds {seeds}; real runs of training)", table_rows(report))
    if report["differences"]:
        console.table("paired per-seed differences of held-out scores", difference_rows(report))
    if report.get("sweep"):
        console.table("world-model quality sweep (held-out avg, ±95%)", sweep_rows(report))
        console.table("world-model quality sweep: paired differences (±95%)", sweep_difference_rows(report))
    console.note(f"wrote {json_path} and {png_path}")
    return 0


def _command(args: argparse.Namespace, sweep_seeds: int) -> list[str]:
    """The command line that reproduces this report."""
    if args.pool:
        return ["wmrl", "compare", "--preset", args.preset, "--pool", *map(str, args.pool)]
    command = ["wmrl", "compare", "--preset", args.preset, "--world-model", args.world_model]
    command += ["--seed", str(args.seed), "--seeds", str(args.seeds)]
    command += ["--ablation"] if args.ablation else []
    command += ["--sweep", "--sweep-seeds", str(sweep_seeds)] if args.sweep else []
    command += ["--sweep-levels", *args.sweep_levels] if args.sweep_levels else []
    command += ["--methods", *args.methods] if args.methods else []
    command += ["--executor", args.executor] if args.executor else []
    return command + ray_flag_args(args)
