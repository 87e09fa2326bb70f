"""`evaluate_policy`: K attempts per task, executed for real, summarised as avg@K and friends.

The one entry point that `wmrl bench`, `wmrl compare` and user scripts share, so a number
from any of them means the same thing: position scores of real sandboxed runs, an
attempt without a valid submission counting 0, tasks weighing equally.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata

from wmrl_agents.policy import Policy

from wmrl_envs.competition import Competition
from wmrl_envs.sandbox import make_executor
from wmrl_envs.sandbox.base import Executor, Limits

from .attempts import SAMPLING, AttemptRunner
from .results import BenchMeta, BenchResult
from .solutions import SolutionDirectory

__all__ = ["evaluate_policy", "split_of", "wmrl_version"]


def evaluate_policy(
    policy: Policy | SolutionDirectory,
    competitions: Sequence[Competition],
    *,
    k: int = 8,
    seed: int = 0,
    executor: str | Executor = "auto",
    limits: Limits | None = None,
    workers: int = 2,
    max_turns: int = 1,
    label: str | None = None,
) -> BenchResult:
    """Benchmark `policy` (or a directory of solution files) on `competitions` with `k` attempts per task.

    `label` names the policy in the result (default: its ``name``); `max_turns` > 1 feeds each
    turn's feedback back to the policy and keeps the best turn.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, got {max_turns}")
    if not competitions:
        raise ValueError("no competitions to benchmark on")
    ids = [c.id for c in competitions]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"each competition once, please; repeated: {', '.join(duplicated)}")
    is_directory = isinstance(policy, SolutionDirectory)
    if not is_directory and not isinstance(policy, Policy):
        raise TypeError(
            f"policy must be a wmrl_agents Policy or a SolutionDirectory, got {type(policy).__name__}; "
            "see wmrl_agents.bench.specs.resolve_policy for building one from a spec such as 'dir:PATH'"
        )
    if is_directory and max_turns > 1:
        raise ValueError("a directory of solution files cannot react to feedback: use max_turns=1")

    limits = limits if limits is not None else Limits()
    backend = make_executor(executor) if isinstance(executor, str) else executor
    runner = AttemptRunner(backend, limits, workers)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.perf_counter()
    if is_directory:
        tasks = runner.run_files(competitions, policy.attempt_files(competitions, k))
    else:
        tasks = runner.run_policy(policy, competitions, k, seed, max_turns)
    attempts = [a for t in tasks for a in t.attempts]
    meta = BenchMeta(
        policy=label if label is not None else policy.name,
        split=split_of(competitions),
        k=k,
        seed=seed,
        max_turns=max_turns,
        tasks=tuple(ids),
        executor=backend.name,
        workers=workers,
        limits={"wall_time_s": limits.wall_time_s, "memory_mb": limits.memory_mb, "cpus": limits.cpus},
        wmrl_version=wmrl_version(),
        date=date,
        sampling=None if is_directory else dict(SAMPLING),
        real_exec_s=sum(a.exec_s for a in attempts),
        generation_s=sum(a.generation_s for a in attempts),
        elapsed_s=time.perf_counter() - start,
        infra_errors=sum(a.infra_error for a in attempts),
    )
    return BenchResult(meta, tuple(tasks))


def split_of(competitions: Sequence[Competition]) -> str:
    """The split the competitions share ('train' or 'held-out'), or 'all' when they mix."""
    splits = {c.split.value for c in competitions}
    return splits.pop() if len(splits) == 1 else "all"


def wmrl_version() -> str:
    """The installed wmrl version, or 'unknown' when running from an uninstalled checkout."""
    try:
        return metadata.version("wmrl")
    except metadata.PackageNotFoundError:
        return "unknown"
