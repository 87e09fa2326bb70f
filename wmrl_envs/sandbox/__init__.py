"""Sandboxed execution of solution code: one Executor protocol, several backends.

``make_executor("auto")`` returns the bubblewrap backend where it works, else the local
one; ``make_executor("bwrap", warm=True)`` the warm pool that skips the 2-3 s import of
the scientific stack; ``make_executor("ray")`` spreads runs over a Ray cluster (Ray is
imported only then). Every backend returns the same `ExecutionResult` for the same
behaviour.
"""

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Executor, Limits, SandboxUnavailable, Status
from wmrl_envs.sandbox.bwrap import BwrapExecutor
from wmrl_envs.sandbox.docker import DockerExecutor
from wmrl_envs.sandbox.factory import BACKENDS, make_executor
from wmrl_envs.sandbox.local import LocalExecutor
from wmrl_envs.sandbox.ray_executor import RayExecutor
from wmrl_envs.sandbox.warm import WarmBwrapExecutor

__all__ = [
    "BACKENDS",
    "SUBMISSION_FILENAME",
    "BwrapExecutor",
    "DockerExecutor",
    "ExecutionResult",
    "Executor",
    "Limits",
    "LocalExecutor",
    "RayExecutor",
    "SandboxUnavailable",
    "Status",
    "WarmBwrapExecutor",
    "make_executor",
]
