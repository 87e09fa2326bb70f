"""Steps per second of WMRL-LIBERO-v0, with and without cameras, in one process.

Rendering dominates LIBERO's cost on a CPU machine (Mesa's llvmpipe), so the env
renders only the cameras a policy uses; this measures what that buys. For each
camera setting it builds the task once, times resets (in place, including the
settle steps) and a run of random actions, and reports steps per second. Prints a
table and writes ``benchmarks/results/libero_speed.json``; the load average is
recorded because other processes on a small machine skew every figure.

    MUJOCO_GL=osmesa python benchmarks/libero_speed.py --assets ../shared/libero-assets-lite --steps 100
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from rich.console import Console
from rich.table import Table

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "libero_speed.json"
SETTINGS = {
    "no cameras": (),
    "third-person": ("image",),
    "third-person + wrist": ("image", "wrist_image"),
}


def measure(suite: str, task_id: int, cameras: tuple[str, ...], image_size: int, steps: int, resets: int, assets: str):
    """Build, reset and step one environment; the timings of each phase."""
    start = time.perf_counter()
    env = gym.make(
        "WMRL-LIBERO-v0", suite=suite, task_id=task_id, cameras=cameras, image_size=image_size, assets_dir=assets
    )
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)  # the simulator is built here, at the first reset
        build_s = time.perf_counter() - start
        env.step(rng.uniform(-1, 1, 7))  # the first step pays robosuite's numba compilation
        reset_times = []
        for seed in range(resets):
            start = time.perf_counter()
            env.reset(seed=seed)
            reset_times.append(time.perf_counter() - start)
        done, start = 0, time.perf_counter()
        while done < steps:
            _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, 7))
            done += 1
            if terminated or truncated:
                env.reset()
        step_s = time.perf_counter() - start
    finally:
        env.close()
    return {
        "build_s": round(build_s, 2),
        "reset_s_median": round(statistics.median(reset_times), 3),
        "steps": steps,
        "steps_per_s": round(steps / step_s, 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run every camera setting and write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", default=os.environ.get("WMRL_LIBERO_ASSETS"), help="LIBERO asset folder")
    parser.add_argument("--suite", default="libero_spatial")
    parser.add_argument("--task-id", type=int, default=0)
    parser.add_argument("--image-size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=100, help="random actions timed per setting")
    parser.add_argument("--resets", type=int, default=5, help="resets timed per setting")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    rows = {}
    for name, cameras in SETTINGS.items():
        rows[name] = measure(args.suite, args.task_id, cameras, args.image_size, args.steps, args.resets, args.assets)
    result = {
        "task": f"{args.suite}/{args.task_id}",
        "image_size": args.image_size,
        "mujoco_gl": os.environ.get("MUJOCO_GL", "egl"),
        "machine": machine_facts(libraries=("mujoco", "robosuite")),
        "settings": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")

    table = Table(title=f"WMRL-LIBERO-v0 {result['task']}, {args.image_size} px, MUJOCO_GL={result['mujoco_gl']}")
    for column in ("cameras", "steps/s", "reset (median s)", "build (s)"):
        table.add_column(column, justify="left" if column == "cameras" else "right")
    for name, row in rows.items():
        table.add_row(name, str(row["steps_per_s"]), str(row["reset_s_median"]), str(row["build_s"]))
    Console().print(table)
    Console().print(f"written to {args.out}")
    return result


if __name__ == "__main__":
    main()
