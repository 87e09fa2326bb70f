"""One machine's sandbox backend by name (bwrap, local, docker or "auto"), for `make_executor` and each Ray node.

Every backend is trusted only after a real sandboxed probe run imports what solutions are
promised (see `probe`): that catches missing binaries, disabled user namespaces,
unreadable interpreters and a sandbox that starts the wrong Python alike. "auto" takes
bubblewrap when its probe passes and otherwise the local subprocess backend, logging which
and why; when neither can run solutions it raises with both reasons. It never picks docker,
which needs a daemon and is opt-in. ``warm=True`` with "bwrap" asks for the warm pool
(`WarmBwrapExecutor`), which needs root. Ray's workers build their node's executor here,
so this module imports nothing of Ray's and the Ray executor can import it.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from wmrl_envs.sandbox.base import Executor, SandboxUnavailable
from wmrl_envs.sandbox.bwrap import BwrapExecutor
from wmrl_envs.sandbox.docker import DockerExecutor
from wmrl_envs.sandbox.local import LocalExecutor
from wmrl_envs.sandbox.warm import WarmBwrapExecutor

__all__ = ["NODE_BACKENDS", "make_node_executor"]

logger = logging.getLogger(__name__)

NODE_BACKENDS = ("auto", "bwrap", "local", "docker")


@functools.cache
def _bwrap_problem(bwrap: str | None) -> str | None:
    return BwrapExecutor(bwrap).probe()


@functools.cache
def _local_problem(use_cgroups: bool) -> str | None:
    return LocalExecutor(use_cgroups).probe()


def make_node_executor(name: str = "auto", **kwargs: Any) -> Executor:
    """An executor on this machine for backend `name` ("auto" | "bwrap" | "local" | "docker"); kwargs go to its class.

    ``make_node_executor("bwrap", warm=True)`` returns the warm pool (close it, or use it as a context manager).
    Raises `SandboxUnavailable` (why, and the fix) when the backend cannot run solutions here.
    """
    if name not in NODE_BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r} for one machine; choose one of {', '.join(NODE_BACKENDS)}")
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
