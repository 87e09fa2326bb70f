"""Connecting to Ray and sizing runs against its nodes, failing fast instead of waiting forever.

Ray's own behaviour on bad input is to wait: ``ray.init("10.0.0.9:6379")`` retries an
unreachable GCS for minutes, and an actor that asks for more CPUs, GPUs or memory than
any node has stays pending for ever. This module checks both up front: a plain TCP
connect to the address (seconds), and each run shape against every live node's total
resources, so the user gets an error that says what to change.

A local Ray started here listens on 127.0.0.1 only: left alone, Ray names the node by
the machine's outward IP and its servers listen on every interface, which opens an
unauthenticated cluster (that runs code it is sent) to the network.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from wmrl_envs.errors import WmrlError
from wmrl_envs.sandbox.base import SandboxUnavailable

__all__ = [
    "RayUnavailable",
    "ResourceRequestTooLarge",
    "RunShape",
    "connect",
    "first_line",
    "import_ray",
    "slots_per_node",
]

logger = logging.getLogger(__name__)

_INSTALL = 'pip install "wmrl[ray]"'


class RayUnavailable(SandboxUnavailable):
    """Ray is not installed, or no Ray cluster answers at the address given."""


class ResourceRequestTooLarge(WmrlError, ValueError):
    """A run asks for more CPUs, GPUs or memory than any node of the cluster has."""


def import_ray() -> ModuleType:
    """The ray module, or a `RayUnavailable` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(f"the ray executor needs Ray, which is not installed ({exc}): {_INSTALL}") from exc
    return ray


@dataclass(frozen=True)
class RunShape:
    """What one run reserves on a node: CPUs, GPUs, memory (MB, None: not reserved), a custom resource."""

    cpus: float
    gpus: float = 0.0
    memory_mb: int | None = None
    node_resource: str | None = None

    def request(self) -> dict[str, float]:
        """The run's needs in Ray's resource names (memory in bytes); zero amounts left out."""
        need = {"CPU": float(self.cpus), "GPU": float(self.gpus)}
        if self.memory_mb:
            need["memory"] = float(self.memory_mb) * (1 << 20)
        if self.node_resource:
            need[self.node_resource] = _MARKER_SHARE
        return {name: amount for name, amount in need.items() if amount > 0}

    def describe(self) -> str:
        """The request in words, for messages."""
        memory = f", {self.memory_mb} MB memory" if self.memory_mb else ""
        marker = f", on nodes with resource {self.node_resource!r}" if self.node_resource else ""
        return f"{self.cpus:g} CPU, {self.gpus:g} GPU{memory}{marker}"


_MARKER_SHARE = 0.001
"""How much of `node_resource` a run takes: only nodes that have it qualify, and a node never runs out of it."""


def slots_per_node(nodes: list[dict[str, Any]], shape: RunShape) -> dict[str, int]:
    """How many runs of `shape` each live node holds at once (by node address); raises when none holds one."""
    need = shape.request()
    slots: dict[str, int] = {}
    for node in nodes:
        if not node.get("Alive", True):
            continue
        have = node.get("Resources", {})
        fits = [math.floor(have.get(name, 0.0) / amount + 1e-9) for name, amount in need.items()]
        slots[node.get("NodeManagerAddress", node.get("NodeID", "?"))] = min(fits) if fits else 0
    if sum(slots.values()) == 0:
        raise ResourceRequestTooLarge(_too_large(nodes, shape))
    return slots


def _too_large(nodes: list[dict[str, Any]], shape: RunShape) -> str:
    alive = [n for n in nodes if n.get("Alive", True)]
    if not alive:
        return "the Ray cluster has no live node; start one (`ray start --head`) or check the cluster"
    shown = ", ".join(
        f"{n.get('NodeManagerAddress', '?')}: {_describe_node(n.get('Resources', {}))}" for n in alive[:8]
    )
    more = f" (and {len(alive) - 8} more)" if len(alive) > 8 else ""
    return (
        f"each run asks for {shape.describe()}, but no node of the Ray cluster has that much ({shown}{more}); "
        "lower Limits.cpus / Limits.memory_mb or num_gpus, pass request_memory=False, or add a node that has it"
    )


def _describe_node(resources: dict[str, float]) -> str:
    memory = resources.get("memory", 0.0) / (1 << 20)
    return f"{resources.get('CPU', 0):g} CPU, {resources.get('GPU', 0):g} GPU, {memory:.0f} MB memory"


def connect(address: str | None, connect_timeout_s: float = 10.0) -> bool:
    """Connect this process to Ray; returns True when it started a local Ray of its own.

    `address`: None (``$RAY_ADDRESS`` if set, else a local Ray with this machine's CPUs), "local",
    "auto" (the cluster already running on this machine), "host:port" (a GCS) or "ray://host:port"
    (Ray Client). An address that does not accept a TCP connection within `connect_timeout_s` is an
    error, never a wait. A process already connected keeps its connection.
    """
    if address is None:
        address = os.environ.get("RAY_ADDRESS") or "local"
    if address not in ("local", "auto"):
        _check_reachable(address, connect_timeout_s)
    ray = import_ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == "local":
        options.update(num_cpus=os.cpu_count() or 1, include_dashboard=False)
    try:
        with _on_loopback(address == "local"):
            ray.init(address=address, **options)
    except ConnectionError as exc:
        raise RayUnavailable(f"no Ray cluster found for address {address!r} ({exc}); start one with "
                             "`ray start --head` or pass its address") from exc  # fmt: skip
    except ValueError as exc:
        if "ray[client]" not in str(exc):
            raise
        raise RayUnavailable(f'ray:// addresses need the Ray Client: pip install "ray[client]" ({exc})') from exc
    return address == "local"


@contextlib.contextmanager
def _on_loopback(local: bool) -> Iterator[None]:
    """While a local Ray starts, make it take 127.0.0.1 as the node's address (its servers then listen there only).

    Ray uses the loopback address when its multi-node mode is off (its default on macOS and Windows); the switch is
    read when the node starts, so it is turned off for `ray.init` alone and a later connection to a real cluster
    from this process sees Ray's default again.
    """
    from ray._private import ray_constants

    if not local or not hasattr(ray_constants, "ENABLE_RAY_CLUSTER"):
        if local:
            logger.warning("this Ray version has no loopback switch: the local Ray may listen on every interface")
        yield
        return
    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _check_reachable(address: str, timeout_s: float) -> None:
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as exc:
        reason = str(exc) or type(exc).__name__
        raise RayUnavailable(
            f"no Ray cluster answers at {address} ({reason} after at most {timeout_s:g} s); check the address, "
            "that the head node runs (`ray start --head`) and that this machine can reach its port"
        ) from exc


def _host_port(address: str) -> tuple[str, int]:
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise RayUnavailable(
            f"cannot read a Ray address from {address!r}: expected 'host:port', 'ray://host:port', 'auto' or None"
        )
    return host.strip("[]"), int(port)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Ray's run to dozens of lines), for one-line reports."""
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
