"""``wmrl libero-demos``: scripted demonstrations of LIBERO tasks, written as LIBERO hdf5 files.

LIBERO's own demonstration files cannot be downloaded here, so this command makes
them: the scripted expert (`wmrl_tasks.libero.expert`) runs from the task's official
initial states (``--init-states``, all 50 by default, in order, wrapping with a new
seed) with both cameras on, and every successful episode becomes a ``demo_<i>`` of
``<out>/<task name>_demo.hdf5``, the file ``wmrl sft --demos`` and
``wmrl libero-progress --demos`` read. Failed episodes are counted and dropped.
Keep the states you evaluate on out of ``--init-states`` (e.g. demos on 0-39,
``wmrl libero-eval --init-states 40-47``). ``--action-noise`` records DART-style
demonstrations: noisy execution, the expert's corrective actions as labels.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from wmrl_tasks.libero import SUITES

from wmrl_envs import console
from wmrl_envs.errors import WmrlError

__all__ = ["add_command"]


def add_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``wmrl libero-demos`` to the ``wmrl`` parser."""
    cmd = subparsers.add_parser(
        "libero-demos",
        help="record scripted-expert demonstrations of LIBERO tasks as LIBERO hdf5 files (for sft, libero-progress)",
        description="Run the privileged-state scripted expert from official initial states and write the "
        "successful episodes to <out>/<task>_demo.hdf5 in LIBERO's layout (libero_object, libero_spatial).",
    )
    cmd.add_argument(
        "--suite", required=True, choices=SUITES, help="LIBERO suite (scripted: libero_object, libero_spatial)"
    )
    cmd.add_argument("--tasks", default="0", help="task ids, comma-separated, or 'all' (default: 0)")
    cmd.add_argument("--episodes", type=int, default=10, help="expert episodes per task (default: 10)")
    cmd.add_argument("--image-size", type=int, default=128, help="camera size in pixels (default: 128, LIBERO's)")
    cmd.add_argument(
        "--init-states",
        default="eval",
        help="official initial states the episodes cycle through: 'eval' (all 50), 'train' (first 16), or indices "
        "and ranges such as 0-39 (default: eval)",
    )
    cmd.add_argument(
        "--action-noise",
        type=float,
        default=0.0,
        help="standard deviation of Gaussian noise added to the executed arm actions while the expert's own "
        "actions are recorded (DART; e.g. 0.1); default 0, none",
    )
    cmd.add_argument("--seed", type=int, default=0, help="base seed of the episodes' env seeds (default: 0)")
    cmd.add_argument("--assets-dir", default=None, help="LIBERO's asset folder (default: $WMRL_LIBERO_ASSETS)")
    cmd.add_argument("--out", type=Path, required=True, help="folder for the hdf5 files (created if missing)")
    cmd.add_argument("--json", action="store_true", help="print the summary as JSON")
    cmd.set_defaults(func=run_libero_demos)


def run_libero_demos(args: argparse.Namespace) -> int:
    """Record the demonstrations of each task, write one file per task and report successes and failures."""
    import gymnasium as gym
    from wmrl_tasks.libero.demo_files import record_expert_episode, write_demo_file
    from wmrl_tasks.libero.suites import (
        N_INIT_STATES,
        TASKS_PER_SUITE,
        parse_init_states,
        parse_task_ids,
        select_init_states,
    )

    import wmrl_envs  # noqa: F401  (registers WMRL-LIBERO-v0)

    if isinstance(args.episodes, bool) or args.episodes < 1:
        raise ValueError(f"--episodes must be a positive int (expert episodes per task), got {args.episodes}")
    if not 0.0 <= args.action_noise <= 1.0:
        raise ValueError(f"--action-noise must be in [0, 1] (action units), got {args.action_noise}")
    task_ids = parse_task_ids(args.tasks, TASKS_PER_SUITE[args.suite])
    states = select_init_states(parse_init_states(args.init_states), N_INIT_STATES)
    out = _writable_folder(args.out)
    summary = []
    for task_id in task_ids:
        env = gym.make(
            "WMRL-LIBERO-v0",
            suite=args.suite,
            task_id=task_id,
            image_size=args.image_size,
            init_states="eval",
            assets_dir=args.assets_dir,
        ).unwrapped
        try:
            demos, failed = [], []
            for episode in console.track(range(args.episodes), args.episodes, f"{env.task.id} expert episodes"):
                init_state = states[episode % len(states)]
                demo = record_expert_episode(env, init_state, args.seed + episode, args.action_noise)
                (demos if demo.success else failed).append(demo)
            row = {
                "task": env.task.id,
                "instruction": env.task.instruction,
                "episodes": args.episodes,
                "action_noise": args.action_noise,
                "succeeded": len(demos),
                "failed": len(failed),
                "failed_init_states": [demo.init_state for demo in failed],
                "file": None,
            }
            if demos:
                env_args = {
                    "suite": args.suite,
                    "task_id": task_id,
                    "image_size": args.image_size,
                    "control_freq": 20,
                    "controller": "OSC_POSE",
                    "seed": args.seed,
                    "action_noise": args.action_noise,
                }
                row["file"] = str(write_demo_file(out / f"{env.task.name}_demo.hdf5", env.task, demos, env_args))
            summary.append(row)
        finally:
            env.close()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        console.table(
            f"scripted demonstrations ({args.suite})",
            [{k: row[k] for k in ("task", "episodes", "succeeded", "failed", "file")} for row in summary],
        )
    return 0


def _writable_folder(path: Path) -> Path:
    """`path`, created if missing; WmrlError naming the problem when it cannot hold the files."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise WmrlError(f"--out {path} is not a folder wmrl can write to ({err.strerror}); choose another") from err
    return path
