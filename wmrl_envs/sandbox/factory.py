"""Choose a sandbox backend by name: ``make_executor("auto")`` is what callers want.

"auto" takes bubblewrap when a real sandboxed probe run succeeds (the probe catches
missing binaries, disabled user namespaces and unreadable interpreters alike), and
otherwise falls back to the local subprocess backend, logging why. It never picks
docker, which needs a daemon and is opt-in. ``warm=True`` with "bwrap" asks for the
warm pool (`WarmBwrapExecutor`), which needs root. "ray" spreads runs over a Ray cluster
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


def make_executor(name: str = "auto", **kwargs: Any) -> Executor:
    """An executor for backend `name` ("auto" | "bwrap" | "local" | "docker" | "ray"); kwargs go to its class.

    ``make_executor("bwrap", warm=True)`` returns the warm pool, ``make_executor("ray", address=...)`` the Ray
    pool (address None starts a local Ray); close them (or use them as context managers).
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
        logger.warning("sandbox auto: bubblewrap unavailable (%s); falling back to the local backend", problem)
        return LocalExecutor()
    if name == "local":
        return LocalExecutor(**kwargs)
    executor = DockerExecutor(**kwargs)
    problem = executor.probe()
    if problem is not None:
        raise SandboxUnavailable(f"docker backend unavailable: {problem}")
    return executor
