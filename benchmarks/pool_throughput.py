"""Throughput of the local sandbox pool and of the Ray pool on the same batch of real runs.

Real execution is the bottleneck of a training step, and the Ray executor exists to
spread it over machines; on one machine it can only add cost. This measures that cost:
the same batch of real sandboxed executions (an embedded pool competition's shipped
baseline, run and graded as `RealExecution` does) goes through (a) the local pool, the
node backend with `workers` runs at once (what ``RealExecution(workers=2)`` does), and
(b) the Ray pool, a local Ray with ``--local-ray-cpus`` CPUs whose `workers` slots each wrap the
same backend. The one-time Ray start is reported on its own: ``ray.init``, and the slots'
start (a first batch of trivial runs, one per slot, on the fresh Ray pool less the same on
the local pool). These trivial runs also report the niceness the solutions run at: Ray
starts its workers at nice 15 and the sandboxes inherit it, which costs the Ray pool CPU
wherever other work competes for the cores. Each pool then runs one warm-up run per slot,
not counted. Batches alternate between the pools, so drifting load hits both. Reports
runs/s, wall, per-run latency (p50/p95, from the call to the graded score) and its part
outside the sandbox (latency less the sandbox's own wall time: grading, and for Ray the
hop to the slot and back), the overhead of Ray over the local pool, and whether every run
ended valid; writes ``benchmarks/results/pool_throughput.json``.

    python benchmarks/pool_throughput.py --runs 16 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from wmrl_tasks.mledojo.pool import POOL_IDS, build_pool
from wmrl_tasks.mledojo.pool.baselines import baseline_code
from wmrl_tasks.mledojo.readers import read_competition

from wmrl_envs.console import note, table
from wmrl_envs.machine import machine_facts
from wmrl_envs.rewards import RealExecution, Rollout
from wmrl_envs.sandbox import Executor, Limits, Status, make_executor

RESULTS = Path(__file__).resolve().parent / "results" / "pool_throughput.json"
POOLS = ("local", "ray")
PROBE = "import os\nprint(os.nice(0))\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The benchmark's size and setup."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=16, help="runs per batch (the batch both pools run)")
    parser.add_argument("--repeats", type=int, default=3, help="batches per pool, alternating between the pools")
    parser.add_argument("--tasks", nargs="+", default=["telco-customer-churn"], choices=POOL_IDS, metavar="TASK",
                        help="pool competitions whose baselines make up the batch, in turn")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="runs at once: local threads and Ray slots")
    parser.add_argument("--backend", default="bwrap", choices=("bwrap", "local"), help="the sandbox of both pools")
    parser.add_argument("--local-ray-cpus", type=int, default=2, help="CPUs of the local Ray started here")
    parser.add_argument("--ray-address", default=None, help="use this Ray cluster instead of starting a local one")
    parser.add_argument("--time-limit", type=float, default=300.0, help="wall-clock budget of each run (s)")
    parser.add_argument("--memory-mb", type=int, default=2048, help="memory limit (and Ray reservation) of each run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    for name in ("runs", "repeats", "workers", "local_ray_cpus"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def run_batch(source: RealExecution, batch: list[Rollout], workers: int) -> dict[str, Any]:
    """Score `batch` `workers` at a time, as `RealExecution.score` does, timing each run from call to score."""

    def timed(rollout: Rollout) -> dict[str, Any]:
        started = time.perf_counter()
        score = source.score_one(rollout)
        latency = time.perf_counter() - started
        if score is None:
            return {"task": rollout.competition.id, "status": "infra_error", "valid": False, "latency_s": latency}
        execution = score.outcome.execution
        return {
            "task": rollout.competition.id,
            "status": execution.status.value,
            "valid": bool(score.outcome.grade.valid),
            "position": score.value,
            "backend": execution.backend,
            "latency_s": latency,
            "exec_wall_s": execution.wall_s,
        }

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=min(workers, len(batch))) as pool:
        runs = list(pool.map(timed, batch))
    wall = time.perf_counter() - started
    return {"wall_s": wall, "runs_per_s": len(batch) / wall, "runs": runs}


def probe_batch(executor: Executor, public: Path, limits: Limits, workers: int) -> dict[str, Any]:
    """`workers` trivial runs side by side (on a fresh Ray pool: mostly its slots' start) and their solutions' nice."""

    def probe(_: int) -> int | None:
        with tempfile.TemporaryDirectory(prefix="wmrl-probe-") as tmp:
            result = executor.run(PROBE, Path(tmp), public, limits)
        return int(result.stdout.strip()) if result.status is Status.OK else None

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        nice = list(pool.map(probe, range(workers)))
    return {"wall_s": time.perf_counter() - started, "nice": nice}


def _percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)),
            "mean": float(np.mean(values))}  # fmt: skip


def summarize(batches: list[dict[str, Any]]) -> dict[str, Any]:
    """One pool's figures over its batches: median wall and runs/s, latency percentiles over every run."""
    runs = [run for batch in batches for run in batch["runs"]]
    wall = statistics.median(b["wall_s"] for b in batches)
    return {
        "wall_s": wall,
        "runs_per_s": len(batches[0]["runs"]) / wall,
        "latency_s": _percentiles([r["latency_s"] for r in runs]),
        "exec_wall_s": _percentiles([r.get("exec_wall_s", r["latency_s"]) for r in runs]),
        "outside_sandbox_s": _percentiles([r["latency_s"] - r.get("exec_wall_s", r["latency_s"]) for r in runs]),
        "all_valid": all(r["valid"] for r in runs),
        "batches": batches,
    }


def overhead(local: dict[str, Any], ray: dict[str, Any], runs: int) -> dict[str, float]:
    """What the Ray pool costs over the local pool, per batch and per run."""
    return {
        "wall_ratio": ray["wall_s"] / local["wall_s"],
        "runs_per_s_ratio": ray["runs_per_s"] / local["runs_per_s"],
        "per_run_s": (ray["wall_s"] - local["wall_s"]) / runs,
        "latency_p50_s": ray["latency_s"]["p50"] - local["latency_s"]["p50"],
        "latency_p95_s": ray["latency_s"]["p95"] - local["latency_s"]["p95"],
        "outside_sandbox_p50_s": ray["outside_sandbox_s"]["p50"] - local["outside_sandbox_s"]["p50"],
    }


def _start_ray(args: argparse.Namespace) -> tuple[Any, float]:
    """A Ray executor over the chosen cluster (a local Ray of ``--local-ray-cpus`` CPUs by default), and the init time."""
    import ray

    started = time.perf_counter()
    if args.ray_address is None:
        ray.init(num_cpus=args.local_ray_cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    executor = make_executor("ray", address=args.ray_address, backend=args.backend, workers=args.workers)
    return executor, time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark, print its table, write the json; return the report."""
    args = parse_args(argv)
    root = build_pool(ids=args.tasks)
    competitions = [read_competition(root / task) for task in args.tasks]
    batch = [Rollout(c, baseline_code(c.id)) for c in (competitions * args.runs)[: args.runs]]
    warm_up = batch[: args.workers]
    limits = Limits(wall_time_s=args.time_limit, memory_mb=args.memory_mb, cpus=1)
    sources = {"local": RealExecution(make_executor(args.backend), limits, workers=args.workers)}
    probes: dict[str, dict[str, Any]] = {}
    batches: dict[str, list[dict[str, Any]]] = {pool: [] for pool in POOLS}
    ray_executor, init_s = None, 0.0
    try:
        probes["local"] = probe_batch(sources["local"].executor, competitions[0].public_dir, limits, args.workers)
        ray_executor, init_s = _start_ray(args)
        sources["ray"] = RealExecution(ray_executor, limits, workers=args.workers)
        probes["ray"] = probe_batch(ray_executor, competitions[0].public_dir, limits, args.workers)
        for pool in POOLS:
            run_batch(sources[pool], warm_up, args.workers)
        for repeat in range(args.repeats):
            for pool in POOLS if repeat % 2 == 0 else POOLS[::-1]:
                note(f"batch {repeat + 1}/{args.repeats}: {args.runs} runs through the {pool} pool")
                batches[pool].append(run_batch(sources[pool], batch, args.workers))
    finally:
        if ray_executor is not None:
            ray_executor.close()
        import ray

        if ray.is_initialized():
            ray.shutdown()
    pools = {pool: summarize(batches[pool]) for pool in POOLS}
    report = {
        "benchmark": "pool_throughput",
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {**machine_facts(), "euid": os.geteuid()},
        "config": {"runs": args.runs, "repeats": args.repeats, "tasks": args.tasks, "workers": args.workers,
                   "backend": args.backend, "local_ray_cpus": args.local_ray_cpus if args.ray_address is None else None,
                   "ray_address": args.ray_address, "limits": asdict(limits)},
        "ray_start": {"init_s": init_s, "slot_start_s": max(0.0, probes["ray"]["wall_s"] - probes["local"]["wall_s"]),
                      "probe_wall_s": {pool: probes[pool]["wall_s"] for pool in POOLS}},
        "solution_nice": {pool: probes[pool]["nice"] for pool in POOLS},
        "pools": pools,
        "overhead": overhead(pools["local"], pools["ray"], args.runs),
        "all_valid": all(p["all_valid"] for p in pools.values()),
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    _print(report, args.out)
    return report


def _print(report: dict[str, Any], out: Path) -> None:
    config, start, cost = report["config"], report["ray_start"], report["overhead"]
    rows = [
        {"pool": f"{pool} ({config['workers']} x {config['backend']})", "runs/s": f"{p['runs_per_s']:.3f}",
         "wall s": f"{p['wall_s']:.2f}", "p50 s": f"{p['latency_s']['p50']:.2f}",
         "p95 s": f"{p['latency_s']['p95']:.2f}", "outside sandbox p50 s": f"{p['outside_sandbox_s']['p50']:.3f}",
         "all valid": p["all_valid"]}
        for pool, p in report["pools"].items()
    ]  # fmt: skip
    table(f"{config['runs']} real runs of {', '.join(config['tasks'])} (median of {config['repeats']} batches)", rows)
    note(f"ray over local: x{cost['wall_ratio']:.3f} wall, {cost['per_run_s']:+.3f} s per run, "
         f"{cost['latency_p50_s']:+.3f} s p50 latency")  # fmt: skip
    note(f"one-time ray start: {start['init_s']:.2f} s init + {start['slot_start_s']:.2f} s slot start")
    nice = report["solution_nice"]
    note(f"solutions ran at nice {nice['local']} through the local pool, {nice['ray']} through the ray pool")
    note(f"wrote {out}")


if __name__ == "__main__":
    main()
