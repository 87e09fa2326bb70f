"""A pool of sandbox actors of one run shape: hand out idle slots, replace lost ones, never wait blind.

Each actor (`SandboxWorker`) holds one run's resources on its node for as long as it
lives, so a pool of N actors is N sandboxes that are always ready, and Ray's scheduler,
not ours, decides where they live. Slots that cannot start yet (their resources are busy,
a node is still joining) stay pending and join the pool when they report ready, so a
partly busy cluster starts with what it has instead of stalling. A slot that is lost (its
node died, its process was killed, it stopped answering) is killed for good and a fresh
one is started in its place. Every wait is bounded: when no slot is ready and none
becomes ready within `start_timeout_s`, the caller is told so.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from wmrl_envs.sandbox.base import SandboxUnavailable
from wmrl_envs.sandbox.ray_cluster import RunShape, first_line, import_ray
from wmrl_envs.sandbox.ray_worker import SandboxWorker

__all__ = ["SlotOptions", "SlotPool"]

logger = logging.getLogger(__name__)

_FIRST_WAVE_S = 10.0
"""At start, how long to wait for all slots together (so every node's backend is checked) before going on."""
_POLL_S = 0.25


@dataclass(frozen=True)
class SlotOptions:
    """How each actor is made: the node-local backend and its kwargs, the data cache, the runtime env."""

    backend: str = "auto"
    backend_kwargs: tuple[tuple[str, Any], ...] = ()
    cache_dir: str | None = None
    runtime_env: dict[str, Any] | None = None
    start_timeout_s: float = 120.0


class SlotPool:
    """`size` sandbox actors of one `RunShape`; `acquire` an idle one, then `release` or `discard` it.

    Raises `SandboxUnavailable` at start when a node cannot run the backend, or when no slot starts
    within `start_timeout_s`.
    """

    def __init__(self, shape: RunShape, size: int, options: SlotOptions) -> None:
        self.shape = shape
        self.options = options
        self._prefix = f"wmrl-sandbox-{secrets.token_hex(4)}"
        self._count = 0
        self._cond = threading.Condition()
        self._idle: list[Any] = []
        self._ready: dict[Any, dict[str, Any]] = {}
        self._pending: dict[Any, Any] = {}
        self._launch(size)
        self._start_first_wave()

    @property
    def size(self) -> int:
        """Slots ready or starting."""
        with self._cond:
            return len(self._ready) + len(self._pending)

    def node(self, handle: Any) -> dict[str, Any]:
        """Where the slot runs (``ip``, ``node_id``, ``backend``)."""
        return self._ready.get(handle, {"ip": "?", "node_id": None, "backend": None})

    def acquire(self) -> Any | None:
        """An idle slot, waiting while all are busy or starting; None when none is left or none starts in time."""
        deadline = time.monotonic() + self.options.start_timeout_s
        while True:
            with self._cond:
                if self._idle:
                    return self._idle.pop()
                if not self._pending and not self._ready:
                    return None
                if not self._pending:
                    self._cond.wait()
                    continue
                if not self._ready and time.monotonic() > deadline:
                    return None
                waiting = list(self._pending)
            ray = import_ray()
            done, _ = ray.wait(waiting, num_returns=1, timeout=_POLL_S)
            self._adopt(done)

    def release(self, handle: Any) -> None:
        """Give a healthy slot back."""
        with self._cond:
            if handle in self._ready:
                self._idle.append(handle)
                self._cond.notify()

    def discard(self, handle: Any) -> None:
        """Kill a lost or unresponsive slot and start a replacement, which joins when ready."""
        import_ray().kill(handle, no_restart=True)
        with self._cond:
            self._ready.pop(handle, None)
        self._launch(1)
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """Kill every slot, idle, busy or starting (runs in flight end with an error), and wake any waiter."""
        ray = import_ray()
        with self._cond:
            handles = [*self._ready, *self._pending.values()]
            self._idle.clear()
            self._ready.clear()
            self._pending.clear()
            self._cond.notify_all()
        for handle in handles:
            ray.kill(handle, no_restart=True)

    def _launch(self, count: int) -> None:
        """Create `count` actors; they are pending until their ``ready()`` answers."""
        ray = import_ray()
        worker = ray.remote(SandboxWorker)
        need = self.shape.request()
        marker = {self.shape.node_resource: need[self.shape.node_resource]} if self.shape.node_resource else None
        for _ in range(count):
            self._count += 1
            handle = worker.options(
                name=f"{self._prefix}-{self._count}",
                num_cpus=need.get("CPU", 0.0),
                num_gpus=need.get("GPU", 0.0),
                memory=need.get("memory"),
                resources=marker,
                runtime_env=self.options.runtime_env,
                max_restarts=0,
                max_concurrency=1,
            ).remote(self.options.backend, dict(self.options.backend_kwargs), self.options.cache_dir)
            with self._cond:
                self._pending[handle.ready.remote()] = handle

    def _start_first_wave(self) -> None:
        """Wait for the first slots: all of them briefly, then at least one, up to `start_timeout_s`."""
        ray = import_ray()
        refs = list(self._pending)
        done, late = ray.wait(refs, num_returns=len(refs), timeout=min(_FIRST_WAVE_S, self.options.start_timeout_s))
        if not done:
            remaining = max(0.0, self.options.start_timeout_s - _FIRST_WAVE_S)
            done, late = ray.wait(late, num_returns=1, timeout=remaining)
        try:
            self._adopt(done)
        except SandboxUnavailable:
            self.close()
            raise
        if not self._ready:
            self.close()
            raise SandboxUnavailable(
                f"no sandbox slot ({self.shape.describe()}) started within {self.options.start_timeout_s:g} s: the "
                "cluster's resources are held by other work or its nodes are still starting; free them or raise "
                "start_timeout_s"
            )
        if late:
            logger.info("ray executor: %d sandbox slots ready, %d still starting", len(self._ready), len(late))

    def _adopt(self, done: list[Any]) -> None:
        """Move slots whose ``ready()`` answered into the pool; raise when one cannot run the backend."""
        ray = import_ray()
        problems = []
        for ref in done:
            with self._cond:
                handle = self._pending.pop(ref, None)
            if handle is None:
                continue  # another thread adopted it
            try:
                info = ray.get(ref)
            except ray.exceptions.RayError as exc:
                problems.append(f"a sandbox actor died while starting ({first_line(exc)}); is wmrl installed, the "
                                "same version, in every node's Python?")  # fmt: skip
                continue
            if info["problem"] is not None:
                problems.append(f"node {info['ip']} cannot run the {self.options.backend!r} sandbox backend: "
                                f"{info['problem']}")  # fmt: skip
                ray.kill(handle, no_restart=True)
                continue
            if self.options.backend == "auto" and info["backend"] == "local":
                logger.warning("ray executor: node %s has no working bubblewrap; its runs use the local backend, "
                               "which is not a security boundary", info["ip"])  # fmt: skip
            with self._cond:
                self._ready[handle] = info
                self._idle.append(handle)
                self._cond.notify()
        if problems:
            raise SandboxUnavailable(
                "; ".join(sorted(set(problems)))
                + ". Install the backend on those nodes, choose another backend=, or keep runs on sandbox nodes "
                "with node_resource="
            )
