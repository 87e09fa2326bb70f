"""Docker backend: one throwaway container per run, through the docker SDK.

The container has no network, a read-only root, memory/pids/CPU limits, the launcher as
PID 1, and every capability dropped but the three the launcher needs to start the
solution as an unprivileged uid and kill its leftovers. By default it runs the host's
own interpreter from read-only binds (``/usr``, ``/lib``, the Python prefix), because an
image with the right packages often cannot be pulled on an offline machine: any image
works as a base, even one imported from an empty tarball. Containers carry a label (and
their owner's host, pid and start time) and are removed in ``finally``; those whose
owner is gone, or that a ``finally`` missed, are reaped when an executor first talks to
the daemon. `auto` never picks this backend: it needs a daemon and root-equivalent access.

Setting it up on a machine that cannot pull images (Debian; ``.ci/run`` does the same)::

    apt-get install -y docker.io
    # ALWAYS --iptables=false --bridge=none: without them dockerd rewrites the host's network rules.
    dockerd --iptables=false --bridge=none --data-root /var/lib/wmrl-docker \\
        -H unix:///var/run/docker.sock >/var/log/wmrl-dockerd.log 2>&1 &
    python -m wmrl_envs.sandbox.docker_image    # imports wmrl-base:latest from an empty tarball

The launcher is the container's PID 1 (docker's ``--init`` cannot be used: its binary is
mounted at ``/sbin/docker-init``, which the host's ``/sbin`` bind hides). It is a child
subreaper that kills every leftover when the solution exits, and when PID 1 exits the
kernel kills the rest of the container's pid namespace. When the host has coreutils'
``timeout`` in ``/usr/bin``, PID 1 is ``timeout`` around the launcher, so a container
ends on its own shortly after its wall-clock budget even if the process that started it
died. Output reaches the caller only through ``attach`` (the log driver is ``none``:
nothing is written to the daemon's disk).

Peak memory and CPU seconds come from the launcher's report, as in the other backends:
when the run is stopped (timeout, output limit) the solution's processes are killed
first, by their uid (seen from the host: there is no user namespace), so the launcher
still reaps them and reports. Where that is not possible (not root, a remapped daemon)
they are read from the container's cgroup through the stats API just before the kill.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.capture import BoundedLog
from wmrl_envs.sandbox.cgroups import _memory_bytes
from wmrl_envs.sandbox.diskusage import DiskMeter, disk_meter
from wmrl_envs.sandbox.identity import fresh_uid
from wmrl_envs.sandbox.outcome import infra_error, outcome
from wmrl_envs.sandbox.probe import probe_problem
from wmrl_envs.sandbox.proctree import kill_sweep, pids_of_uid
from wmrl_envs.sandbox.programs import HOST_DIR, PROGRAM_FILES, SANDBOX_LIB
from wmrl_envs.sandbox.pythonpaths import interpreter, python_roots
from wmrl_envs.sandbox.rlimits import rlimits_for
from wmrl_envs.sandbox.rundir import open_tmp_to, prepare_dirs, run_dir
from wmrl_envs.sandbox.solution_env import solution_env

__all__ = ["BASE_IMAGE", "LABEL", "DockerExecutor"]

logger = logging.getLogger(__name__)

LABEL = "wmrl.sandbox"
BASE_IMAGE = "wmrl-base:latest"
"""The default image; ``python -m wmrl_envs.sandbox.docker_image`` builds it (see that module)."""
_DATA, _OUTPUT = PurePosixPath("/sandbox/data"), PurePosixPath("/sandbox/output")
_CODE, _REPORT = PurePosixPath("/sandbox/code"), PurePosixPath("/sandbox/report")
_HOST_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin")  # not /etc: docker mounts its own hosts/resolv.conf there
_TIMEOUT = "/usr/bin/timeout"
_FALLBACK_UID = 65534
_LAUNCHER_EXIT_S = 2.0
_GRACE_S = 30
"""Seconds past the wall-clock budget after which a container ends on its own (host ``timeout``)."""
_STALE_S = 600
"""A live owner's container that has not been running for this long was missed by its ``finally``: reaped."""


class DockerExecutor:
    """Runs each solution in a fresh, labelled, network-less container."""

    name = "docker"

    def __init__(self, image: str = BASE_IMAGE, bind_host_python: bool = True, client: Any = None) -> None:
        self.image = image
        self.bind_host_python = bind_host_python
        self._client = client
        self._reaped = False
        self._ncpu: float | None = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        """The docker client; raises ``docker.errors.DockerException`` when no daemon answers."""
        import docker

        with self._lock:
            if self._client is None:
                self._client = docker.from_env(timeout=30)
            if not self._reaped:
                try:
                    self.reap()
                    self._reaped = True
                except docker.errors.APIError as exc:  # the daemon answers: run anyway, reap on the next call
                    logger.warning("docker: could not reap leftover containers: %s", exc)
            return self._client

    def probe(self) -> str | None:
        """Why this backend cannot run solutions here, or None when a container run imports the stack."""
        import docker

        try:
            self.client().ping()
            self.client().images.get(self.image)
        except docker.errors.ImageNotFound:
            return f"docker image {self.image!r} not found: {self._missing_image_hint()}"
        except docker.errors.DockerException as exc:
            return f"no docker daemon answers ({exc}); start dockerd (see wmrl_envs/sandbox/docker.py) or use bwrap"
        return probe_problem(self)

    def reap(self) -> int:
        """Remove labelled containers whose owning process is gone, or that its ``finally`` missed; returns how many.

        A live owner's container is kept while it may still be in use (created, running, or just exited and
        about to be read), so two executors on one host never remove each other's runs. Uses the plain list
        endpoint (one request, no inspection of each container) because containers of concurrent runs come
        and go while it looks.
        """
        import docker

        api = self._client.api
        removed = 0
        for entry in api.containers(all=True, filters={"label": LABEL}):
            if _owner_alive(entry.get("Labels") or {}) and not _stale(api, entry):
                continue
            try:
                api.remove_container(entry["Id"], force=True)
                removed += 1
            except docker.errors.NotFound:
                pass  # removed meanwhile by its owner or another executor
        return removed

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` in a new container with `public_data` read-only and `workdir` writable."""
        import docker

        started = time.monotonic()
        try:
            client = self.client()
            ncpu = self._cpus(client)
        except docker.errors.DockerException as exc:
            return infra_error(self.name, f"no docker daemon answers ({exc}); start dockerd or use bwrap", started)
        fresh = fresh_uid()
        uid = fresh or (os.getuid() or _FALLBACK_UID)
        prepared = prepare_dirs(workdir, public_data, uid if os.geteuid() == 0 else None)
        if isinstance(prepared, str):
            return infra_error(self.name, prepared)
        workdir, public_data = prepared
        with run_dir(code, uid if os.geteuid() == 0 else None, prefix="wmrl-docker-") as run:
            (run.root / "report").mkdir(mode=0o700)
            if self.bind_host_python:
                open_tmp_to(run, python_roots())
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
            # The config travels in a root-only file, never on the command line every host process can read.
            config_file = run.root / "report" / "config.json"
            config_file.write_text(json.dumps(config))
            config_file.chmod(0o600)
            volumes = self._volumes(public_data, workdir, run.code, run.tmp, run.root / "report")
            container = None
            try:
                container = client.containers.create(
                    self.image,
                    command=[*self._deadline(limits), *self._launcher(f"file:{_REPORT / 'config.json'}")],
                    labels=_owner_labels(),
                    network_mode="none",
                    read_only=True,
                    mem_limit=_memory_bytes(limits),
                    memswap_limit=_memory_bytes(limits),
                    pids_limit=limits.max_processes + 8,
                    nano_cpus=int(min(limits.cpus, ncpu) * 1e9),
                    shm_size=limits.memory_mb * (1 << 20) // 4,
                    user="0:0",
                    cap_drop=["ALL"],
                    cap_add=["SETUID", "SETGID", "KILL"],
                    security_opt=["no-new-privileges"],
                    working_dir=str(_OUTPUT),
                    volumes=volumes,
                    log_config=docker.types.LogConfig(type="none"),  # output reaches us by attach only, never disk
                    detach=True,
                )
                extra = {"container": container.short_id, "image": self.image, "cpu_bound": True}
                if fresh is not None:
                    extra["uid"] = fresh
                disk = disk_meter(limits, workdir, run.tmp)
                return self._supervise(
                    container, workdir, run.root / "report" / "report.json", limits, started, extra, disk
                )
            except docker.errors.ImageNotFound:
                return infra_error(self.name, f"docker image {self.image!r} not found: {self._missing_image_hint()}")
            except docker.errors.DockerException as exc:
                return infra_error(self.name, f"docker failed: {exc}", started)
            finally:
                if container is not None:
                    try:
                        container.remove(force=True)
                    except docker.errors.DockerException:
                        pass  # the next executor's reap() removes it

    def _missing_image_hint(self) -> str:
        if self.image == BASE_IMAGE or self.bind_host_python:
            return (
                f"run `python -m wmrl_envs.sandbox.docker_image --image {self.image}` to build it from an empty tarball"
            )
        return "build it, or `docker load` / `docker import` it (images cannot be pulled on offline machines)"

    def _python(self) -> str:
        return str(interpreter()) if self.bind_host_python else "python3"

    def _launcher(self, argument: str) -> list[str]:
        return [self._python(), "-I", "-S", str(SANDBOX_LIB / "_launcher.py"), argument]

    def _deadline(self, limits: Limits) -> list[str]:
        """``timeout`` as PID 1 around the launcher, so an orphaned container cannot outlive its budget."""
        if not (self.bind_host_python and os.access(_TIMEOUT, os.X_OK)):
            return []
        return [_TIMEOUT, "--signal=KILL", f"{int(limits.wall_time_s) + _GRACE_S}s"]

    def _cpus(self, client: Any) -> float:
        """CPUs the daemon's machine has: docker refuses a CPU quota above that."""
        if self._ncpu is None:
            self._ncpu = float(client.info().get("NCPU") or os.cpu_count() or 1)
        return self._ncpu

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
        self,
        container: Any,
        workdir: Path,
        report_file: Path,
        limits: Limits,
        started: float,
        extra: dict,
        disk: DiskMeter,
    ) -> ExecutionResult:
        import docker

        out, err = BoundedLog(limits.log_tail_bytes), BoundedLog(limits.log_tail_bytes)
        over_limit, wake = threading.Event(), threading.Event()
        stream = container.attach(stdout=True, stderr=True, stream=True, demux=True)
        reader = threading.Thread(
            target=_copy, args=(stream, out, err, limits.max_output_bytes, over_limit, wake), daemon=True
        )
        reader.start()
        container.start()
        exited: dict[str, Any] = {}
        patience = limits.wall_time_s + _GRACE_S + 60
        waiter = threading.Thread(target=_wait, args=(container, patience, exited, wake), daemon=True)
        waiter.start()
        stopped, sampled = None, None
        while not exited:
            if over_limit.is_set():
                stopped = "output-limit"
            elif time.monotonic() - started > limits.wall_time_s:
                stopped = "timeout"
            elif disk.over():
                stopped = "disk-limit"
            if stopped is not None:
                sampled = _cgroup_usage(container)  # in case the launcher cannot report
                uid = extra.get("uid")
                if uid is not None and pids_of_uid(uid):
                    # As bwrap does: kill the solution first (its uid is seen from the host, there is no user
                    # namespace), so the launcher reaps it and reports the solution's own usage.
                    kill_sweep(lambda uid=uid: pids_of_uid(uid))
                    waiter.join(timeout=_LAUNCHER_EXIT_S)
                if not exited:
                    try:
                        container.kill()
                    except docker.errors.APIError:
                        pass  # it exited meanwhile
                break
            wake.wait(max(0.0, min(disk.wait_s(), limits.wall_time_s - (time.monotonic() - started))) + 0.001)
            wake.clear()
        if stopped is None and exited and disk.over(now=True):
            stopped = "disk-limit"  # it wrote past the bound faster than a poll and ended
        waiter.join(timeout=30)
        reader.join(timeout=5)
        if not exited:
            return infra_error(self.name, "docker did not report the container's exit within 30 s", started)
        if "error" in exited:
            return infra_error(self.name, f"docker failed while waiting for the container: {exited['error']}", started)
        container.reload()
        state = container.attrs.get("State", {})
        try:
            report = json.loads(report_file.read_text())
        except (OSError, json.JSONDecodeError):
            report = {}
        return outcome(
            self.name, workdir, limits, report, stopped, out, err, time.monotonic() - started,
            sandbox_exit=state.get("ExitCode"), sampled=sampled, oom_event=bool(state.get("OOMKilled")), extra=extra,
        )  # fmt: skip


def _copy(
    stream: Any, out: BoundedLog, err: BoundedLog, max_bytes: int, over_limit: threading.Event, wake: threading.Event
) -> None:
    """Drain the attach stream into the (bounded) logs, flagging the output limit, until the stream ends.

    It keeps draining past the limit: the daemon does not report a container's exit (nor finish a kill)
    while its output is still waiting to be copied to an attached client that stopped reading.
    """
    try:
        for chunk_out, chunk_err in stream:
            if chunk_out:
                out.write(chunk_out)
            if chunk_err:
                err.write(chunk_err)
            if not over_limit.is_set() and out.total + err.total > max_bytes:
                over_limit.set()
                wake.set()
    except Exception:  # noqa: BLE001 - the stream breaks when the container is killed; nothing to report
        return


def _wait(container: Any, patience: float, exited: dict[str, Any], wake: threading.Event) -> None:
    """Block until the container exits (the daemon pushes it: no polling), then wake the supervisor."""
    try:
        exited["status"] = container.wait(timeout=patience)
    except Exception as exc:  # noqa: BLE001 - reported to the caller as an infra error
        exited["error"] = exc
    wake.set()


def _cgroup_usage(container: Any) -> tuple[float, float] | None:
    """(cpu_s, peak_mb) of the whole container from its cgroup, read before a kill; None if unavailable."""
    try:
        stats = container.stats(stream=False, one_shot=True)
        cpu_ns = stats["cpu_stats"]["cpu_usage"]["total_usage"]
        memory = stats["memory_stats"]
        peak = memory.get("max_usage") or memory.get("usage") or 0  # max_usage: cgroup v1 only
    except Exception:  # noqa: BLE001 - best effort: a missing figure must not turn a timeout into an error
        return None
    return cpu_ns / 1e9, peak / (1 << 20)


def _owner_labels() -> dict[str, str]:
    pid = os.getpid()
    return {LABEL: "1", "wmrl.host": socket.gethostname(), "wmrl.pid": str(pid), "wmrl.started": _start_ticks(pid)}


def _owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that created a container still runs (same host, same pid, same start time)."""
    if labels.get("wmrl.host") != socket.gethostname():
        return False
    try:
        pid = int(labels.get("wmrl.pid", 0))
    except ValueError:
        return False
    if not _alive(pid):
        return False
    recorded = labels.get("wmrl.started")
    return not recorded or recorded == _start_ticks(pid)  # a different start time: the pid was reused


def _stale(api: Any, entry: dict[str, Any]) -> bool:
    """Not running, and created or finished longer than `_STALE_S` ago: nobody is going to read it."""
    import docker

    state = entry.get("State")
    if state == "running":
        return False
    if state == "created":
        when = float(entry.get("Created") or 0) or None
    else:
        try:
            when = _parse_time(api.inspect_container(entry["Id"])["State"].get("FinishedAt") or "")
        except docker.errors.NotFound:
            return False  # removed meanwhile
    return when is not None and time.time() - when > _STALE_S


def _parse_time(stamp: str) -> float | None:
    """Seconds since the epoch of docker's RFC 3339 timestamps (nanoseconds are cut); None for the zero time."""
    match = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)", stamp)
    if match is None or stamp.startswith("0001-"):
        return None
    return datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()


def _start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" if unknown): tells a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


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
