"""Ray backend: run each solution in a sandbox on some node of a Ray cluster.

Real execution does not batch: at the paper's scale a training step makes up to 256 runs
of up to 1200 s, each on its own GPU, so the sandboxes live on many machines. This backend
puts them there with Ray rather than a home-made scheduler. Each run goes to a pool of Ray
actors (`SandboxWorker`, see `ray_worker`), one per sandbox slot, holding the run's CPUs,
GPUs and memory on its node and running the solution with that node's local backend
(bubblewrap, local or docker): isolation, limits, statuses and logs are the local
backends'. The task's public data travels once per node (`data_shipping`): packed once
into the object store under its content digest and unpacked into a node-local cache.

Nothing waits forever. An unreachable address or a run larger than every node fails at
once with what to change; a node without the backend is reported when the slots start;
a lost slot (node died, worker killed) is replaced and the run retried up to `retries`
times; a run that gives no answer by its budget plus `margin_s` ends as ``INFRA_ERROR``
(could not score, never a 0) and its slot is replaced.

Example:
    >>> from wmrl_envs.sandbox import Limits, make_executor
    >>> executor = make_executor("ray", address="ray://head:10001", num_gpus=1)  # doctest: +SKIP
    >>> executor.run(code, workdir, competition.public_dir, Limits(wall_time_s=1200)).status  # doctest: +SKIP
    <Status.OK: 'ok'>
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Self

from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Limits, SandboxUnavailable
from wmrl_envs.sandbox.data_shipping import content_digest, pack_dir, tree_signature
from wmrl_envs.sandbox.outcome import infra_error, submission_in
from wmrl_envs.sandbox.ray_cluster import RunShape, connect, first_line, import_ray, slots_per_node
from wmrl_envs.sandbox.ray_pool import SlotOptions, SlotPool
from wmrl_envs.sandbox.ray_worker import OutputFiles

__all__ = ["RayExecutor"]

logger = logging.getLogger(__name__)


class RayExecutor:
    """Runs solutions on a pool of Ray actors, each a sandbox slot using its node's local backend.

    Args:
        address: None ($RAY_ADDRESS, else a local Ray with this machine's CPUs), "auto", "host:port" or
            "ray://host:port".
        backend: the sandbox backend on each node ("auto", "bwrap", "local", "docker").
        workers: slots per run shape; None: as many as the cluster's nodes hold.
        num_gpus: GPUs each run reserves (the run's CPUs and memory come from its `Limits`).
        request_memory: reserve `Limits.memory_mb` per run with Ray's memory resource.
        node_resource: a custom resource (``ray start --resources='{"sandbox": 64}'``) that marks the nodes
            allowed to run sandboxes; None: any node.
        retries: how many times a run whose slot was lost is tried again on a fresh slot.
        margin_s: seconds past `Limits.wall_time_s` after which a run that gave no answer is abandoned.
        ship_data: pack the public data into the object store (True), or use its path as is on every node
            (False: a shared filesystem).
        node_cache_dir: where nodes keep unpacked public data (default: ``$WMRL_CACHE_DIR/ray-data`` on the node).
        max_return_mb: most bytes of the run's output folder brought back to the caller's `workdir`.
        start_timeout_s: how long slots may take to start before the pool gives up on them.
        connect_timeout_s: how long the address may take to accept a connection.
        runtime_env: Ray runtime environment for the slots (e.g. ``{"pip": ["wmrl==0.1.0"]}``).
        backend_kwargs: passed to the node's `make_executor` (e.g. ``{"warm": True}`` with bwrap).
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        backend: str = "auto",
        workers: int | None = None,
        num_gpus: float = 0.0,
        request_memory: bool = True,
        node_resource: str | None = None,
        retries: int = 2,
        margin_s: float = 60.0,
        ship_data: bool = True,
        node_cache_dir: str | None = None,
        max_return_mb: int = 1024,
        start_timeout_s: float = 120.0,
        connect_timeout_s: float = 10.0,
        runtime_env: dict[str, Any] | None = None,
        backend_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if backend == "ray":
            raise ValueError("backend= is the sandbox each Ray node uses: 'auto', 'bwrap', 'local' or 'docker'")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1 (or None for as many as fit), got {workers}")
        for label, value in (("num_gpus", num_gpus), ("retries", retries), ("margin_s", margin_s)):
            if value < 0:
                raise ValueError(f"{label} must not be negative, got {value}")
        if max_return_mb < 1 or start_timeout_s <= 0 or connect_timeout_s <= 0:
            raise ValueError("max_return_mb, start_timeout_s and connect_timeout_s must be positive")
        self.backend = backend
        self.workers = workers
        self.num_gpus = num_gpus
        self.request_memory = request_memory
        self.node_resource = node_resource
        self.retries = retries
        self.margin_s = margin_s
        self.ship_data = ship_data
        self.max_return_bytes = max_return_mb << 20
        self._options = SlotOptions(
            backend=backend,
            backend_kwargs=tuple(sorted((backend_kwargs or {}).items())),
            cache_dir=node_cache_dir,
            runtime_env=runtime_env,
            start_timeout_s=start_timeout_s,
        )
        self._ray = import_ray()
        self._started_ray = connect(address, connect_timeout_s)
        self._pools: dict[RunShape, SlotPool] = {}
        self._pools_lock = threading.Lock()
        self._data_lock = threading.Lock()
        self._digests: dict[str, tuple[tuple, str]] = {}
        self._refs: dict[str, Any] = {}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill every sandbox slot and drop the shipped data; stop Ray if this executor started it."""
        with self._pools_lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
        with self._data_lock:
            self._refs.clear()
            self._digests.clear()
        if self._started_ray and self._ray.is_initialized():
            self._ray.shutdown()
            self._started_ray = False

    def shape(self, limits: Limits) -> RunShape:
        """What a run with `limits` reserves on its node."""
        memory = limits.memory_mb if self.request_memory else None
        return RunShape(float(limits.cpus), float(self.num_gpus), memory, self.node_resource)

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` on a sandbox slot of the cluster; its output folder comes back into `workdir`.

        Raises `ResourceRequestTooLarge` when no node can hold the run and `SandboxUnavailable` when no
        slot can start; solution faults and lost slots end as a status, as in every backend.
        """
        started = time.monotonic()
        pool = self._pool(self.shape(limits))
        workdir = Path(workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / SUBMISSION_FILENAME).unlink(missing_ok=True)
        budget = limits.wall_time_s + self.margin_s
        lost: list[str] = []
        for attempt in range(1, self.retries + 2):
            data = self._data(Path(public_data))
            if isinstance(data, ExecutionResult):
                return data
            handle = pool.acquire()
            if handle is None:
                return self._failed(f"no sandbox slot is left in the pool ({'; '.join(lost) or 'all lost'})", started)
            node = pool.node(handle)
            ref = handle.run.remote(code, data, limits, self.max_return_bytes)
            try:
                result, outputs = self._ray.get(ref, timeout=budget)
            except self._ray.exceptions.GetTimeoutError:
                pool.discard(handle)
                return self._failed(
                    f"no answer from the sandbox on node {node['ip']} within {budget:g} s (the run's "
                    f"{limits.wall_time_s:g} s budget plus a {self.margin_s:g} s margin): the node or its sandbox "
                    "stopped responding; the slot was killed and replaced",
                    started,
                    attempts=attempt,
                )
            except _lost_slot_errors(self._ray) as exc:
                pool.discard(handle)
                lost.append(f"attempt {attempt} on node {node['ip']}: {type(exc).__name__}: {first_line(exc)}")
                logger.warning("ray executor: lost a sandbox slot (%s); %s", lost[-1], _retrying(attempt, self))
                continue
            except self._ray.exceptions.ObjectLostError as exc:
                pool.release(handle)
                self._forget(Path(public_data))
                lost.append(f"attempt {attempt}: the shipped public data was lost ({first_line(exc)})")
                continue
            except self._ray.exceptions.RayTaskError as exc:
                pool.release(handle)
                return self._failed(f"the sandbox slot on node {node['ip']} failed: {first_line(exc)}", started)
            pool.release(handle)
            return self._deliver(result, outputs, workdir, started, attempt, lost)
        return self._failed(f"lost the sandbox slot {len(lost)} times, giving up: {'; '.join(lost)}", started, attempt)

    def _pool(self, shape: RunShape) -> SlotPool:
        with self._pools_lock:
            pool = self._pools.get(shape)
            if pool is None or pool.size == 0:
                slots = slots_per_node(self._ray.nodes(), shape)
                fit = sum(slots.values())
                size = fit if self.workers is None else min(self.workers, fit)
                if self.workers is not None and self.workers > fit:
                    logger.warning("ray executor: %d workers asked, the cluster holds %d of %s; using %d",
                                   self.workers, fit, shape.describe(), fit)  # fmt: skip
                pool = self._pools[shape] = SlotPool(shape, size, self._options)
            return pool

    def _data(self, public_data: Path) -> tuple[str, list[Any]] | str | ExecutionResult:
        """How the slot finds the public data: (digest, [ref]) in the object store, or a shared path."""
        public = public_data.resolve()
        if not public.is_dir():
            return infra_error(self.name, f"public data dir {public} does not exist")
        if not self.ship_data:
            return str(public)
        with self._data_lock:
            signature = tree_signature(public)
            known = self._digests.get(str(public))
            if known is not None and known[0] == signature:
                digest = known[1]
            else:
                digest = content_digest(public)
                self._digests[str(public)] = (signature, digest)
            if digest not in self._refs:
                try:
                    self._refs[digest] = self._ray.put(pack_dir(public))
                except self._ray.exceptions.ObjectStoreFullError as exc:
                    raise SandboxUnavailable(
                        f"the public data in {public} does not fit Ray's object store ({first_line(exc)}); put it on "
                        "a filesystem every node mounts and pass ship_data=False"
                    ) from exc
            return digest, [self._refs[digest]]

    def _forget(self, public_data: Path) -> None:
        with self._data_lock:
            known = self._digests.pop(str(public_data.resolve()), None)
            if known is not None:
                self._refs.pop(known[1], None)

    def _deliver(
        self, result: ExecutionResult, outputs: OutputFiles, workdir: Path, started: float, attempt: int, lost: list
    ) -> ExecutionResult:
        """Write the run's output files into the caller's `workdir` and point the result at its submission."""
        for relative, content in outputs.files:
            target = (workdir / relative).resolve()
            if workdir not in target.parents:
                continue  # the node's walk never yields such a path; refuse one rather than write outside
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        result.submission_path, note = submission_in(workdir)
        if any(name.startswith(f"{SUBMISSION_FILENAME} (") for name in outputs.left_out):
            note = f"{SUBMISSION_FILENAME} was larger than max_return_mb and was not brought back"
        if note:
            result.message = f"{result.message}; {note}" if result.message else note
        result.extra.update(
            node_backend=result.backend,
            attempts=attempt,
            lost=lost,
            ray_wall_s=time.monotonic() - started,
            outputs_left_out=outputs.left_out,
        )
        result.backend = f"{self.name}/{result.backend}"
        return result

    def _failed(self, message: str, started: float, attempts: int = 0) -> ExecutionResult:
        result = infra_error(self.name, message, started)
        result.extra.update(attempts=attempts)
        return result


def _lost_slot_errors(ray: Any) -> tuple[type[BaseException], ...]:
    """Errors that mean the slot (its process or node) is gone, not that the run failed."""
    names = ("RayActorError", "WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OutOfMemoryError")
    return tuple(getattr(ray.exceptions, name) for name in names if hasattr(ray.exceptions, name))


def _retrying(attempt: int, executor: RayExecutor) -> str:
    return f"retrying ({attempt} of {executor.retries})" if attempt <= executor.retries else "giving up"
