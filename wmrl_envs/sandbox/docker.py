"""Docker backend: one throwaway container per run, through the docker SDK.

The container has no network, a read-only root, memory/pids/CPU limits, an init
process, and every capability dropped but the three the launcher needs to start the
solution as an unprivileged uid and kill its leftovers. By default it runs the host's
own interpreter from read-only binds (``/usr``, ``/lib``, the Python prefix), because an
image with the right packages often cannot be pulled on an offline machine: any image
works as a base, even one imported from an empty tarball. Containers carry a label and
are removed in ``finally``; those left by a dead process are reaped when an executor
starts. `auto` never picks this backend: it needs a daemon and root-equivalent access.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.capture import BoundedLog
from wmrl_envs.sandbox.identity import fresh_uid
from wmrl_envs.sandbox.outcome import infra_error, outcome
from wmrl_envs.sandbox.programs import HOST_DIR, PROGRAM_FILES, SANDBOX_LIB
from wmrl_envs.sandbox.pythonpaths import interpreter, python_roots
from wmrl_envs.sandbox.rlimits import rlimits_for
from wmrl_envs.sandbox.rundir import prepare_dirs, run_dir
from wmrl_envs.sandbox.solution_env import solution_env

__all__ = ["DockerExecutor", "LABEL"]

LABEL = "wmrl.sandbox"
_DATA, _OUTPUT = PurePosixPath("/sandbox/data"), PurePosixPath("/sandbox/output")
_CODE, _REPORT = PurePosixPath("/sandbox/code"), PurePosixPath("/sandbox/report")
_HOST_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin")  # not /etc: docker mounts its own hosts/resolv.conf there
_FALLBACK_UID = 65534


class DockerExecutor:
    """Runs each solution in a fresh, labelled, network-less container."""

    name = "docker"

    def __init__(self, image: str = "wmrl-base:latest", bind_host_python: bool = True, client: Any = None) -> None:
        self.image = image
        self.bind_host_python = bind_host_python
        self._client = client
        self._reaped = False

    def client(self) -> Any:
        """The docker client; raises ``docker.errors.DockerException`` when no daemon answers."""
        if self._client is None:
            import docker

            self._client = docker.from_env(timeout=30)
        if not self._reaped:
            self._reaped = True
            self.reap()
        return self._client

    def probe(self) -> str | None:
        """Why this backend cannot run here, or None when the daemon answers and the image exists."""
        import docker

        try:
            self.client().ping()
            self.client().images.get(self.image)
        except docker.errors.ImageNotFound:
            return f"docker image {self.image!r} not found (build or `docker import` one, see the module docstring)"
        except docker.errors.DockerException as exc:
            return f"no docker daemon answers ({exc}); start dockerd or use the bwrap backend"
        return None

    def reap(self) -> int:
        """Remove labelled containers whose owning process on this host is gone; returns how many."""
        removed = 0
        for container in self._client.containers.list(all=True, filters={"label": LABEL}):
            labels = container.labels
            owner_alive = labels.get("wmrl.host") == socket.gethostname() and _alive(int(labels.get("wmrl.pid", 0)))
            if container.status != "running" or not owner_alive:
                container.remove(force=True)
                removed += 1
        return removed

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` in a new container with `public_data` read-only and `workdir` writable."""
        import docker

        started = time.monotonic()
        try:
            client = self.client()
        except docker.errors.DockerException as exc:
            return infra_error(self.name, f"no docker daemon answers ({exc}); start dockerd or use bwrap", started)
        uid = fresh_uid() or (os.getuid() or _FALLBACK_UID)
        prepared = prepare_dirs(workdir, public_data, uid if os.geteuid() == 0 else None)
        if isinstance(prepared, str):
            return infra_error(self.name, prepared)
        workdir, public_data = prepared
        with run_dir(code, uid if os.geteuid() == 0 else None, prefix="wmrl-docker-") as run:
            (run.root / "report").mkdir(mode=0o700)
            config = {
                "argv": [self._python(), str(_CODE / "solution.py")],
                "env": solution_env(
                    _DATA, _OUTPUT, PurePosixPath("/tmp"), PurePosixPath(self._python()).parent, limits
                ),
                "cwd": str(_OUTPUT),
                "rlimits": rlimits_for(limits),
                "uid": uid,
                "gid": uid,
                "report_path": str(_REPORT / "report.json"),
            }
            volumes = self._volumes(public_data, workdir, run.code, run.tmp, run.root / "report")
            container = None
            try:
                container = client.containers.create(
                    self.image,
                    command=[self._python(), "-I", "-S", str(SANDBOX_LIB / "_launcher.py"), json.dumps(config)],
                    labels={LABEL: "1", "wmrl.host": socket.gethostname(), "wmrl.pid": str(os.getpid())},
                    network_mode="none",
                    read_only=True,
                    mem_limit=limits.memory_mb * (1 << 20),
                    memswap_limit=limits.memory_mb * (1 << 20),
                    pids_limit=limits.max_processes + 8,
                    nano_cpus=int(limits.cpus * 1e9),
                    shm_size=limits.memory_mb * (1 << 20) // 4,
                    user="0:0",
                    init=True,
                    cap_drop=["ALL"],
                    cap_add=["SETUID", "SETGID", "KILL"],
                    security_opt=["no-new-privileges"],
                    working_dir=str(_OUTPUT),
                    volumes=volumes,
                    detach=True,
                )
                return self._supervise(container, workdir, run.root / "report" / "report.json", limits, started)
            except docker.errors.DockerException as exc:
                return infra_error(self.name, f"docker failed: {exc}", started)
            finally:
                if container is not None:
                    try:
                        container.remove(force=True)
                    except docker.errors.DockerException:
                        pass

    def _python(self) -> str:
        return str(interpreter()) if self.bind_host_python else "python3"

    def _volumes(self, data: Path, workdir: Path, code: Path, tmp: Path, report: Path) -> dict[str, dict[str, str]]:
        volumes = {
            str(data): {"bind": str(_DATA), "mode": "ro"},
            str(workdir): {"bind": str(_OUTPUT), "mode": "rw"},
            str(code): {"bind": str(_CODE), "mode": "ro"},
            str(tmp): {"bind": "/tmp", "mode": "rw"},
            str(report): {"bind": str(_REPORT), "mode": "rw"},
        }
        for name in PROGRAM_FILES:
            volumes[str(HOST_DIR / name)] = {"bind": str(SANDBOX_LIB / name), "mode": "ro"}
        if self.bind_host_python:
            for path in [*(Path(d) for d in _HOST_DIRS if os.path.isdir(d)), *python_roots()]:
                volumes.setdefault(str(path), {"bind": str(path), "mode": "ro"})
        return volumes

    def _supervise(
        self, container: Any, workdir: Path, report_file: Path, limits: Limits, started: float
    ) -> ExecutionResult:
        out, err = BoundedLog(limits.log_tail_bytes), BoundedLog(limits.log_tail_bytes)
        over_limit = threading.Event()
        stream = container.attach(stdout=True, stderr=True, stream=True, demux=True)
        reader = threading.Thread(target=_copy, args=(stream, out, err, limits.max_output_bytes, over_limit))
        reader.start()
        container.start()
        stopped = None
        while stopped is None:
            container.reload()
            if container.status not in ("created", "running"):
                break
            if over_limit.is_set():
                stopped = "output-limit"
            elif time.monotonic() - started > limits.wall_time_s:
                stopped = "timeout"
            else:
                over_limit.wait(0.1)
        if stopped is not None:
            container.kill()
        container.wait(timeout=30)
        reader.join(timeout=5)
        container.reload()
        state = container.attrs.get("State", {})
        try:
            report = json.loads(report_file.read_text())
        except (OSError, json.JSONDecodeError):
            report = {}
        return outcome(
            self.name, workdir, limits, report, stopped, out, err, time.monotonic() - started,
            sandbox_exit=state.get("ExitCode"), oom_event=bool(state.get("OOMKilled")),
            extra={"container": container.short_id, "image": self.image},
        )  # fmt: skip


def _copy(stream: Any, out: BoundedLog, err: BoundedLog, max_bytes: int, over_limit: threading.Event) -> None:
    """Drain the attach stream into the logs; flags the output limit instead of blocking on it."""
    try:
        for chunk_out, chunk_err in stream:
            if chunk_out:
                out.write(chunk_out)
            if chunk_err:
                err.write(chunk_err)
            if out.total + err.total > max_bytes:
                over_limit.set()
                return
    except Exception:  # noqa: BLE001 - the stream breaks when the container is killed; nothing to report
        return


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
