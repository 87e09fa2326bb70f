"""Choose a sandbox backend by name: ``make_executor("auto")`` is what callers want.

Every backend is trusted only after a real sandboxed probe run imports what solutions are
promised (see `probe`): that catches missing binaries, disabled user namespaces,
unreadable interpreters and a sandbox that starts the wrong Python alike. "auto" takes
bubblewrap when its probe passes and otherwise the local subprocess backend, logging which
and why; when neither can run solutions it raises with both reasons. It never picks docker,
which needs a daemon and is opt-in. ``warm=True`` with "bwrap" asks for the warm pool
(`WarmBwrapExecutor`), which needs root. "ray" spreads runs over a Ray cluster
(`RayExecutor`, each node using one of the other backends); Ray is an optional extra,
imported only when asked for.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from wmrl_envs.errors import WmrlError
from wmrl_envs.sandbox.base import Executor
from wmrl_envs.sandbox.bwrap import BwrapExecutor
from wmrl_envs.sandbox.docker import DockerExecutor
from wmrl_envs.sandbox.local import LocalExecutor
from wmrl_envs.sandbox.warm import WarmBwrapExecutor

__all__ = ["BACKENDS", "SandboxUnavailable", "make_executor"]

logger = logging.getLogger(__name__)

BACKENDS = ("auto", "bwrap", "local", "docker", "ray")


class SandboxUnavailable(WmrlError, RuntimeError):
    """The requested backend cannot run on this machine; the message says why and what to do."""


@functools.cache
def _bwrap_problem(bwrap: str | None) -> str | None:
    return BwrapExecutor(bwrap).probe()


@functools.cache
def _local_problem(use_cgroups: bool) -> str | None:
    return LocalExecutor(use_cgroups).probe()


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
    if name == "bwrap" and kwargs.pop("warm", False):
        warm = WarmBwrapExecutor(**kwargs)
        problem = warm.probe()
        if problem is not None:
            warm.close()
            raise SandboxUnavailable(f"warm bubblewrap pool unavailable: {problem}")
        return warm
    if name in ("auto", "bwrap"):
        problem = _bwrap_problem(kwargs.get("bwrap"))
        if problem is None:
            return BwrapExecutor(**kwargs)
        if name == "bwrap":
            raise SandboxUnavailable(f"bubblewrap backend unavailable: {problem}")
        local_problem = _local_problem(True)
        if local_problem is not None:
            raise SandboxUnavailable(
                f"no sandbox backend can run solutions here. bubblewrap: {problem}. local: {local_problem}"
            )
        logger.warning("sandbox auto: using the local backend (not isolated): bubblewrap unavailable: %s", problem)
        return LocalExecutor()
    if name == "local":
        problem = _local_problem(kwargs.get("use_cgroups", True))
        if problem is not None:
            raise SandboxUnavailable(f"local backend unavailable: {problem}")
        return LocalExecutor(**kwargs)
    executor = DockerExecutor(**kwargs)
    problem = executor.probe()
    if problem is not None:
        raise SandboxUnavailable(f"docker backend unavailable: {problem}")
    return executor
