"""What a method spent, in units that reproduce: real runs and CPU seconds, with wall seconds beside them.

Wall seconds of a sandboxed run follow the machine's load (the same 96 runs took 1.3-4.2 s each on a busy
2-core machine), so a ratio of wall seconds does not reproduce. The number of real runs does, exactly, from
the seed; CPU seconds of the runs move far less with load than wall seconds. `MeteredExecutor` counts both at
the sandbox, so every run a method caused (its world model's build, its anchors, retries) is seen once.

>>> metered = MeteredExecutor(make_executor("local"))  # doctest: +SKIP
>>> _ = metered.run(code, workdir, data, Limits()); metered.spent()  # doctest: +SKIP
SandboxSpend(runs=1, cpu_s=0.81, wall_s=1.9)
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wmrl_envs.sandbox.base import ExecutionResult, Executor, Limits

__all__ = ["MeteredExecutor", "SandboxSpend", "cost_ratios"]


@dataclass(frozen=True)
class SandboxSpend:
    """Sandbox runs started, and the CPU and wall seconds they took (summed over runs)."""

    runs: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0

    def __add__(self, other: SandboxSpend) -> SandboxSpend:
        return SandboxSpend(self.runs + other.runs, self.cpu_s + other.cpu_s, self.wall_s + other.wall_s)

    def to_dict(self) -> dict[str, float | int]:
        """A JSON-able view (seconds to 3 decimals)."""
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(self).items()}


class MeteredExecutor:
    """An executor that counts every run it forwards to `inner` (thread-safe); `spent()` reads the counters."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.name = inner.name
        self._lock = threading.Lock()
        self._spend = SandboxSpend()

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run through `inner`, counting the run, its CPU and its wall seconds."""
        result = self.inner.run(code, workdir, public_data, limits)
        with self._lock:
            self._spend = self._spend + SandboxSpend(1, float(result.cpu_s or 0.0), float(result.wall_s or 0.0))
        return result

    def spent(self) -> SandboxSpend:
        """Everything counted so far."""
        with self._lock:
            return self._spend


def cost_ratios(base: dict[str, Any], row: dict[str, Any]) -> dict[str, float | None]:
    """How many times less `row` spent than `base` (real GRPO): real runs, CPU seconds, wall seconds, total."""
    keys = {"real_runs": "real_runs", "cpu_s": "real_cpu_s", "wall_s": "real_wall_s", "total_s": "total_s"}
    return {name: _ratio(base[key], row[key]) for name, key in keys.items()}


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 3) if denominator > 0 else None
