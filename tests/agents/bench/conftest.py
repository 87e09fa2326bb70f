"""A benchmark result built by hand, with numbers that can be checked on paper."""

from __future__ import annotations

import pytest
from wmrl_agents.bench.results import AttemptResult, BenchMeta, BenchResult, TaskResult


def _attempt(i: int, position: float, medal: str | None = None) -> AttemptResult:
    valid = position > 0
    return AttemptResult(
        attempt=i,
        position=position,
        valid=valid,
        medal=medal,
        status="ok" if valid else "error",
        reason="" if valid else "the run ended with status error",
        score=0.9 if valid else None,
        seed=100 + i,
        exec_s=2.0,
    )


@pytest.fixture
def hand_result() -> BenchResult:
    """Three tasks, K=2: binary (0.8, 0.6 gold), binary (0.4, crash), regression (0.3, 0.3)."""
    tasks = (
        TaskResult("churn", "binary", "roc_auc", (_attempt(0, 0.8), _attempt(1, 0.6, "gold"))),
        TaskResult("fraud", "binary", "f1", (_attempt(0, 0.4), _attempt(1, 0.0))),
        TaskResult("houses", "regression", "rmse", (_attempt(0, 0.3), _attempt(1, 0.3))),
    )
    meta = BenchMeta(
        policy="dir:my solutions|v2",
        split="held-out",
        k=2,
        seed=7,
        max_turns=1,
        tasks=("churn", "fraud", "houses"),
        executor="bwrap",
        workers=2,
        limits={"wall_time_s": 600.0, "memory_mb": 4096, "cpus": 1},
        wmrl_version="0.1.0",
        date="2026-12-03T00:00:00+00:00",
        sampling=None,
        real_exec_s=12.0,
        elapsed_s=7.5,
        command="wmrl bench --policy 'dir:my solutions|v2' --k 2",
    )
    return BenchResult(meta, tasks)
