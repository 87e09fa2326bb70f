"""Success rate of the scripted LIBERO expert per task, over the official initial states, without cameras.

The expert (`wmrl_tasks.libero.expert`) reads only the simulator's state, so it is
measured with rendering off (several times faster than with cameras); the episodes
are exactly those ``wmrl libero-demos --seed 0`` records, where episode k starts from
initial state k with env seed k. Tasks run in separate processes (``--workers``);
each task's entry records which initial states were covered, which failed, and the
steps of the successes. Results are merged by task into
``benchmarks/results/libero_expert.json``, so a run on more tasks adds to the file.

    MUJOCO_GL=osmesa WMRL_LIBERO_ASSETS=../shared/libero-assets-lite \\
        python benchmarks/libero_expert.py --suite libero_object --tasks 0,1 --init-states 50
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "libero_expert.json"


def measure_task(suite: str, task_id: int, init_states: int, assets: str | None) -> dict[str, Any]:
    """Run the expert once from each of the first `init_states` official initial states of one task."""
    import gymnasium as gym
    from wmrl_tasks.libero.expert import run_expert

    import wmrl_envs  # noqa: F401  (registers the environments)

    env = gym.make(
        "WMRL-LIBERO-v0", suite=suite, task_id=task_id, cameras=(), init_states="eval", assets_dir=assets
    ).unwrapped
    start = time.perf_counter()
    try:
        episodes = [run_expert(env, state, seed=state) for state in range(init_states)]
    finally:
        env.close()
    successes = [e for e in episodes if e.success]
    return {
        "task": f"{suite}/{task_id}",
        "instruction": env.task.instruction,
        "init_states": [e.init_state for e in episodes],
        "successes": len(successes),
        "success_rate": len(successes) / len(episodes),
        "failed_init_states": [e.init_state for e in episodes if not e.success],
        "median_steps_of_successes": statistics.median(e.steps for e in successes) if successes else None,
        "horizon": env.horizon,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main() -> None:
    """Measure the chosen tasks, print a table and merge them into the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="libero_object", help="LIBERO suite (libero_object, libero_spatial)")
    parser.add_argument("--tasks", default="0", help="task ids, comma-separated, or 'all'")
    parser.add_argument("--init-states", type=int, default=50, help="the first N official initial states (max 50)")
    parser.add_argument("--workers", type=int, default=1, help="tasks measured in parallel processes")
    parser.add_argument("--assets", default=os.environ.get("WMRL_LIBERO_ASSETS"), help="LIBERO asset folder")
    args = parser.parse_args()

    from wmrl_tasks.libero.suites import N_INIT_STATES, TASKS_PER_SUITE, check_suite, parse_task_ids

    check_suite(args.suite)
    if not 1 <= args.init_states <= N_INIT_STATES:
        raise SystemExit(f"--init-states must be in [1, {N_INIT_STATES}], got {args.init_states}")
    task_ids = parse_task_ids(args.tasks, TASKS_PER_SUITE[args.suite])
    jobs = [(args.suite, t, args.init_states, args.assets) for t in task_ids]
    rows = []
    with multiprocessing.get_context("spawn").Pool(max(1, args.workers)) as pool:
        for row in pool.imap_unordered(_measure_job, jobs):
            rows.append(row)
            _merge(row)  # each task is kept as soon as it is measured: a long run stopped early loses only the rest
    rows.sort(key=lambda row: row["task"])

    table = Table(title=f"scripted expert on {args.suite} (first {args.init_states} initial states, no cameras)")
    for column in ("task", "success rate", "failed initial states", "median steps", "seconds"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["task"],
            f"{row['successes']}/{len(row['init_states'])} = {row['success_rate']:.2f}",
            ",".join(map(str, row["failed_init_states"])) or "-",
            str(row["median_steps_of_successes"]),
            str(row["seconds"]),
        )
    Console().print(table)
    print(f"wrote {RESULTS}")


def _measure_job(job: tuple[str, int, int, str | None]) -> dict[str, Any]:
    return measure_task(*job)


def _merge(row: dict[str, Any]) -> None:
    """Add one task's result to the results file (replacing an earlier measurement of that task)."""
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"tasks": {}}
    results["tasks"][row["task"]] = row | {"load": list(os.getloadavg())}
    results["machine"] = machine_facts(libraries=("mujoco", "robosuite"))
    results["assets"] = "libero-assets-lite (reduced visuals; physics and initial states are LIBERO's)"
    results["command"] = "python benchmarks/libero_expert.py --suite SUITE --tasks IDS --init-states N"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
