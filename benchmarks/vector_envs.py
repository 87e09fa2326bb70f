"""Sync vs async Gymnasium vector envs over both WMRL environments, with async's defaults and without shared memory.

Async vector envs are correct with their defaults now (text observations survive shared
memory; LIBERO forks safely), so the remaining question is what each mode costs. For
WMRL-MLEDojo-v0 a step here is a reset plus an unparsable submission (the env's own
overhead: prompt and feedback text, no sandbox run); for WMRL-LIBERO-v0 it is a simulator
step at 64 px with one camera. Prints a table and writes ``benchmarks/results/vector_envs.json``
with the load average, since other processes on a small machine skew every figure.

    MUJOCO_GL=osmesa python benchmarks/vector_envs.py --assets ../shared/libero-assets-lite --num-envs 2
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.console import table
from wmrl_envs.machine import machine_facts

RESULTS = Path(__file__).resolve().parent / "results" / "vector_envs.json"
MODES: dict[str, dict[str, Any]] = {  # sync last: async's forked workers must come from a process that never rendered
    "async (defaults)": {"vectorization_mode": "async"},
    "async, shared_memory=False": {"vectorization_mode": "async", "vector_kwargs": {"shared_memory": False}},
    "sync": {"vectorization_mode": "sync"},
}


def rate(make: Callable[[], gym.vector.VectorEnv], run: Callable[[gym.vector.VectorEnv], int]) -> float:
    """Sub-environment steps per second of `run` on a fresh vector env (its start-up not counted)."""
    envs = make()
    try:
        run(envs)  # warm up: first resets, numba compilation, worker start
        began = time.perf_counter()
        steps = run(envs)
        return round(steps / (time.perf_counter() - began), 1)
    finally:
        envs.close()


def mledojo_rounds(rounds: int) -> Callable[[gym.vector.VectorEnv], int]:
    """Reset and submit unparsable replies `rounds` times; counts sub-environment steps."""

    def run(envs: gym.vector.VectorEnv) -> int:
        for seed in range(rounds):
            envs.reset(seed=seed)
            envs.step(("```python\ndef broken(:\n```",) * envs.num_envs)
        return rounds * envs.num_envs

    return run


def libero_steps(steps: int) -> Callable[[gym.vector.VectorEnv], int]:
    """Reset once, then hold still for `steps` vector steps; counts sub-environment steps."""

    def run(envs: gym.vector.VectorEnv) -> int:
        envs.reset(seed=0)
        hold = np.tile(np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0]), (envs.num_envs, 1))
        for _ in range(steps):
            envs.step(hold)
        return steps * envs.num_envs

    return run


def main() -> None:
    """Measure every mode for both envs; print and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-envs", type=int, default=2, help="sub-environments per vector env (default: 2)")
    parser.add_argument("--rounds", type=int, default=20, help="MLEDojo reset+step rounds (default: 20)")
    parser.add_argument("--steps", type=int, default=40, help="LIBERO vector steps (default: 40)")
    parser.add_argument("--assets", default=None, help="LIBERO asset folder (skip LIBERO when not given)")
    args = parser.parse_args()

    rows = []
    for mode, options in MODES.items():
        make = lambda o=options: gym.make_vec("WMRL-MLEDojo-v0", num_envs=args.num_envs, max_turns=1, **o)
        rows.append({"env": "WMRL-MLEDojo-v0", "mode": mode, "steps_per_s": rate(make, mledojo_rounds(args.rounds))})
    if args.assets:
        libero = {"image_size": 64, "cameras": ("image",), "horizon": 10_000, "assets_dir": args.assets}
        for mode, options in MODES.items():
            make = lambda o=options: gym.make_vec("WMRL-LIBERO-v0", num_envs=args.num_envs, **libero, **o)
            rows.append({"env": "WMRL-LIBERO-v0", "mode": mode, "steps_per_s": rate(make, libero_steps(args.steps))})
    table(f"Vector env throughput ({args.num_envs} sub-environments, sub-env steps/s)", rows)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    report = {"num_envs": args.num_envs, "machine": machine_facts(libraries=("gymnasium", "numpy")), "rows": rows}
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
