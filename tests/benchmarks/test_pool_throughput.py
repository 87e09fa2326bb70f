"""The pool throughput benchmark runs the same real batch through both pools and reports every figure."""

from __future__ import annotations

import math

import pytest
from bench_script import run_benchmark  # found by path, beside this file

from wmrl_envs.sandbox import BwrapExecutor

pytestmark = pytest.mark.slow


def test_a_tiny_run_reports_both_pools_and_every_run_ends_valid(tmp_path, pool_root) -> None:
    pytest.importorskip("ray")
    problem = BwrapExecutor().probe()
    if problem is not None:
        pytest.skip(f"bwrap backend unavailable: {problem}")
    out = tmp_path / "pool_throughput.json"
    report = run_benchmark("pool_throughput.py", ["--runs", "3", "--repeats", "1"], out, timeout=300)
    assert report["benchmark"] == "pool_throughput"
    assert (
        report["config"]["runs"] == 3 and report["config"]["workers"] == 2 and report["config"]["local_ray_cpus"] == 2
    )
    assert set(report["pools"]) == {"local", "ray"}
    for name, pool in report["pools"].items():
        (batch,) = pool["batches"]
        assert len(batch["runs"]) == 3
        assert all(run["status"] == "ok" and run["valid"] for run in batch["runs"]), batch["runs"]
        backends = {run["backend"] for run in batch["runs"]}
        assert backends == ({"bwrap"} if name == "local" else {"ray/bwrap"})
        for figure in ("wall_s", "runs_per_s"):
            assert pool[figure] > 0
        assert pool["latency_s"]["p50"] <= pool["latency_s"]["p95"]
    # The same deterministic baseline scores the same through either pool.
    positions = {run["position"] for pool in report["pools"].values() for run in pool["batches"][0]["runs"]}
    assert len(positions) == 1
    assert report["all_valid"] is True
    assert report["ray_start"]["init_s"] > 0 and report["ray_start"]["slot_start_s"] >= 0
    assert {pool: len(nice) for pool, nice in report["solution_nice"].items()} == {"local": 2, "ray": 2}
    assert all(isinstance(n, int) for nice in report["solution_nice"].values() for n in nice)
    assert set(report["overhead"]) == {
        "wall_ratio",
        "runs_per_s_ratio",
        "per_run_s",
        "latency_p50_s",
        "latency_p95_s",
        "outside_sandbox_p50_s",
    }
    assert all(math.isfinite(value) for value in report["overhead"].values())
