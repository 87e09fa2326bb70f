"""Choose a sandbox backend by name: ``make_executor("auto")`` is what callers want.

One machine's backends (bubblewrap, local, docker, "auto") come from `node_executor`, which
probes each before trusting it; "ray" spreads runs over a Ray cluster (`RayExecutor`, each
node building one of the others through `node_executor`). Ray is an optional extra,
imported only when asked for.
"""

from __future__ import annotations

from typing import Any

from wmrl_envs.sandbox.base import Executor
from wmrl_envs.sandbox.node_executor import NODE_BACKENDS, make_node_executor

__all__ = ["BACKENDS", "make_executor"]

BACKENDS = (*NODE_BACKENDS, "ray")


def make_executor(name: str = "auto", **kwargs: Any) -> Executor:
    """An executor for backend `name` ("auto" | "bwrap" | "local" | "docker" | "ray"); kwargs go to its class.

    ``make_executor("bwrap", warm=True)`` returns the warm pool, ``make_executor("ray", address=...)`` the Ray
    pool (address None starts a local Ray); close them (or use them as context managers). Raises
    `SandboxUnavailable` (why, and the fix) when the backend cannot run solutions here.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "ray":
        from wmrl_envs.sandbox.ray_executor import RayExecutor

        return RayExecutor(**kwargs)
    return make_node_executor(name, **kwargs)
