"""The node side of the Ray executor: one sandbox slot that runs solutions with a local backend.

`RayExecutor` starts this class as Ray actors, each holding one run's resources (CPUs,
GPUs, memory) on its node for its lifetime and running one solution at a time there with
that node's own backend (bubblewrap, local or docker), so isolation, limits and statuses
are exactly the local backends'. The actor checks its backend when it starts, so a node
without bubblewrap or docker is reported before any run is sent to it. Public data comes
from the node's cache (see `data_shipping`); the run's output folder is read back into the
result, since the caller's folder is on another machine. A slot killed mid-run (a lost
worker) cannot remove its output folder; the next slot started on that node does.

Ray is imported only inside the calls Ray makes, so this module imports (and its
helpers test) where Ray is not installed.
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wmrl_envs.errors import WmrlError
from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Executor, Limits
from wmrl_envs.sandbox.data_shipping import NodeDataCache
from wmrl_envs.sandbox.node_executor import make_node_executor
from wmrl_envs.sandbox.outcome import infra_error
from wmrl_envs.sandbox.proctree import alive
from wmrl_envs.sandbox.rundir import remove_tree, scratch_dir

__all__ = ["OutputFiles", "SandboxWorker", "default_node_cache", "read_outputs", "sweep_orphan_outputs"]

_OUTPUT_PREFIX = "wmrl-ray-out-"
"""Output folders are ``<tmp>/wmrl-ray-out-<slot pid>-<random>``: the pid tells whose slot is gone."""


def default_node_cache() -> Path:
    """Where a node keeps unpacked public data: ``$WMRL_CACHE_DIR/ray-data``, else ``~/.cache/wmrl/ray-data``."""
    base = os.environ.get("WMRL_CACHE_DIR")
    cache = Path(base).expanduser() if base else Path.home() / ".cache" / "wmrl"
    return cache / "ray-data"


@dataclass
class OutputFiles:
    """The regular files a run left in its output folder, as (relative path, bytes), within a byte budget."""

    files: list[tuple[str, bytes]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def read_outputs(workdir: Path, max_bytes: int) -> OutputFiles:
    """The run's output files, the submission first; symlinks and special files are never followed."""
    found: list[tuple[str, int]] = []
    for directory, _dirs, files in os.walk(workdir):
        for name in files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode):
                found.append((os.path.relpath(path, workdir), info.st_size))
    found.sort(key=lambda item: (item[0] != SUBMISSION_FILENAME, item[0]))
    outputs, budget = OutputFiles(), max_bytes
    for relative, size in found:
        if size > budget:
            outputs.left_out.append(f"{relative} ({size} bytes)")
            continue
        outputs.files.append((relative, Path(workdir, relative).read_bytes()))
        budget -= size
    return outputs


class SandboxWorker:
    """One sandbox slot on a Ray node; `RayExecutor` creates it with ``ray.remote`` and the run's resources."""

    def __init__(
        self,
        backend: str,
        backend_kwargs: dict[str, Any],
        cache_dir: str | None,
    ) -> None:
        self.node = _node_identity()
        sweep_orphan_outputs()
        self.cache = NodeDataCache(Path(cache_dir) if cache_dir else default_node_cache())
        self.executor: Executor | None = None
        self.problem: str | None = None
        try:
            self.executor = make_node_executor(backend, **backend_kwargs)
        except (WmrlError, OSError, ValueError, TypeError) as exc:
            self.problem = f"{type(exc).__name__}: {exc}"

    def ready(self) -> dict[str, Any]:
        """Where this slot runs and which backend it got; `problem` says why it cannot run, else None."""
        backend = self.executor.name if self.executor is not None else None
        return dict(self.node, backend=backend, problem=self.problem)

    def run(
        self,
        code: str,
        data: tuple[str, list[Any]] | str,
        limits: Limits,
        max_return_bytes: int,
    ) -> tuple[ExecutionResult, OutputFiles]:
        """Run `code` against the public data and return the result with the output folder's files.

        `data` is (digest, [object ref of the packed folder]), unpacked into the node cache when absent (the
        ref is wrapped in a list so Ray does not fetch it for runs that find the data cached), or a path that
        exists on every node (a shared filesystem).
        """
        if self.executor is None:
            return infra_error("ray", f"node {self.node['ip']} cannot run its sandbox: {self.problem}"), OutputFiles()
        fetched, digest = False, None
        if isinstance(data, str):
            public = Path(data)
        else:
            import ray

            digest, box = data
            public, fetched = self.cache.get(digest, lambda: ray.get(box[0]))
        with scratch_dir(f"{_OUTPUT_PREFIX}{os.getpid()}-") as workdir:
            result = self.executor.run(code, workdir, public, limits)
            outputs = read_outputs(workdir, max_return_bytes)
        result.submission_path = None  # a path on this node; the caller points it at its own copy
        result.extra.update(
            node_ip=self.node["ip"], node_id=self.node["node_id"], data_digest=digest, data_fetched=fetched
        )
        return result, outputs


def sweep_orphan_outputs() -> list[Path]:
    """Remove the output folders of slots on this node that died mid-run (their pid is gone); returns them."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{_OUTPUT_PREFIX}*-*"):
        owner = folder.name[len(_OUTPUT_PREFIX) :].split("-", 1)[0]
        if owner.isdigit() and not alive(int(owner)):
            remove_tree(folder)
            removed.append(folder)
    return removed


def _node_identity() -> dict[str, Any]:
    """This process's node address and Ray node id (None outside a Ray worker; Ray is never started here)."""
    try:
        import ray
    except ImportError:
        ray = None
    if ray is None or not ray.is_initialized():
        return {"ip": socket.gethostname(), "node_id": None, "pid": os.getpid()}
    node_id = ray.get_runtime_context().get_node_id()
    return {"ip": ray.util.get_node_ip_address(), "node_id": node_id, "pid": os.getpid()}
