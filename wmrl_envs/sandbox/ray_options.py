"""What a run asks of a Ray cluster: the cluster's address and the resources each run reserves.

`RayExecutor` reserves a run's CPUs and memory from the run's `Limits` (a run may use what
it reserves, and its node must hold what it may use) and its GPUs from ``num_gpus``. These
options are the user's side of that: one typed value that the command line (``--ray-*``,
see `wmrl_envs.executor_flags`) and training configs (the ``ray`` section) fill in the same
way, turned into the executor's arguments and the run's limits in one place.

Example:
    >>> from wmrl_envs.sandbox import Limits
    >>> options = RayOptions(address="ray://head:10001", cpus=4, gpus=1)
    >>> options.limits(Limits(memory_mb=8192)).cpus, options.executor_kwargs()["num_gpus"]
    (4, 1.0)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from wmrl_envs.sandbox.base import Limits

__all__ = ["RayOptions"]


@dataclass(frozen=True)
class RayOptions:
    """The Ray cluster runs go to and what each run reserves on its node."""

    address: str | None = None
    """"host:port", "ray://host:port" or "auto"; None: $RAY_ADDRESS, else a local Ray started on demand."""
    cpus: int | None = None
    """CPUs each run reserves on its node and may use (its `Limits.cpus`); None: the run's own limit."""
    gpus: float = 0.0
    """GPUs each run reserves on its node (fractions share a GPU)."""
    memory_mb: int | None = None
    """Memory each run reserves on its node and may use (its `Limits.memory_mb`); None: the run's own limit;
    0: reserve none (for clusters whose nodes declare little memory to Ray; the limit still applies)."""

    def __post_init__(self) -> None:
        if self.address is not None and (not isinstance(self.address, str) or not self.address.strip()):
            raise ValueError(
                f"address (of the Ray cluster) must be 'host:port', 'ray://host:port' or 'auto', got {self.address!r}"
            )
        if self.cpus is not None and (not _is_int(self.cpus) or self.cpus < 1):
            raise ValueError(
                f"cpus (CPUs each run reserves on a Ray node) must be a whole number >= 1, got {self.cpus!r}"
            )
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, (int, float)) or not 0 <= self.gpus < math.inf:
            raise ValueError(f"gpus (GPUs each run reserves on a Ray node) must be a number >= 0, got {self.gpus!r}")
        if self.memory_mb is not None and (not _is_int(self.memory_mb) or self.memory_mb < 0):
            raise ValueError(
                "memory_mb (memory each run reserves on a Ray node) must be a whole number of MB >= 0 "
                f"(0: reserve none), got {self.memory_mb!r}"
            )
        object.__setattr__(self, "gpus", float(self.gpus))

    def limits(self, base: Limits) -> Limits:
        """`base` with the CPUs and memory each run reserves (and so may use) set where these options set them."""
        changes: dict[str, int] = {}
        if self.cpus is not None:
            changes["cpus"] = self.cpus
        if self.memory_mb:
            changes["memory_mb"] = self.memory_mb
        return dataclasses.replace(base, **changes)

    def executor_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of `RayExecutor` (``make_executor("ray", **kwargs)``)."""
        return {"address": self.address, "num_gpus": self.gpus, "request_memory": self.memory_mb != 0}

    def flags(self) -> list[str]:
        """The ``--ray-*`` command-line flags that give these options (those left at their defaults omitted)."""
        parts: list[str] = []
        if self.address is not None:
            parts += ["--ray-address", self.address]
        if self.cpus is not None:
            parts += ["--ray-cpus", str(self.cpus)]
        if self.gpus:
            parts += ["--ray-gpus", str(self.gpus)]
        if self.memory_mb is not None:
            parts += ["--ray-memory-mb", str(self.memory_mb)]
        return parts


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
