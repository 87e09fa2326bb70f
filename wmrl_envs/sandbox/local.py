"""Local backend: a plain subprocess with rlimits, for development and bwrap-less hosts.

This is NOT a security boundary: the solution sees the host's filesystem, guarded only
by file permissions, and the host's processes in /proc. What it does bound: wall time,
address space, file size, open files and tasks; leftovers (the launcher is a child subreaper
and every process of the run is swept at the end); the supervisor's death (the launcher sits
behind a shim, so the run dies with the supervisor even when its direct children are
SIGKILLed along with it, as Ray does to a dead worker's); and the network (a namespace holding
only loopback; when unprivileged this needs user namespaces, and ``extra["network"]`` says
when it was not possible). As root, each run gets a fresh unprivileged uid (see `identity`),
so the private answers (root-owned, mode 0700, as the task layer keeps them) are unreadable
and ``RLIMIT_NPROC`` applies; it also gets a private mount and IPC namespace: empty /tmp and
/var/tmp, its own /dev/shm and SysV IPC, and paths that uid cannot traverse, such as an
interpreter under ``/root``, re-exposed one by one (see `exposure`). Setuid programs cannot
raise its privileges. Where a writable cgroup hierarchy exists, the run also gets memory,
pids and CPU cgroup limits.

Example:
    >>> from pathlib import Path
    >>> from wmrl_envs.sandbox import LocalExecutor, Limits
    >>> LocalExecutor().run("print(1)", Path("/tmp/out"), Path("/tmp/data"), Limits(wall_time_s=10)).stdout
    '1\\n'
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.cgroups import RunCgroup
from wmrl_envs.sandbox.exposure import PRIVATE_DIRS, plan_exposure
from wmrl_envs.sandbox.identity import fresh_uid
from wmrl_envs.sandbox.outcome import infra_error
from wmrl_envs.sandbox.probe import probe_problem
from wmrl_envs.sandbox.proctree import children, descendants, pids_of_uid, pids_with_marker
from wmrl_envs.sandbox.programs import HOST_DIR
from wmrl_envs.sandbox.pythonpaths import interpreter, python_roots
from wmrl_envs.sandbox.rlimits import rlimits_for
from wmrl_envs.sandbox.rundir import RunDir, prepare_dirs, run_dir
from wmrl_envs.sandbox.solution_env import solution_env
from wmrl_envs.sandbox.supervise import Launch, supervise

__all__ = ["LocalExecutor"]

logger = logging.getLogger(__name__)
_warned = False


def _warn_once() -> None:
    global _warned
    if not _warned:
        _warned = True
        logger.warning(
            "LocalExecutor is not a security boundary: solutions see this machine's filesystem, guarded only by "
            "file permissions; use the bwrap or docker backend for untrusted code"
        )


class LocalExecutor:
    """Runs solutions as a bounded local subprocess (not isolated; see the module docstring)."""

    name = "local"

    def __init__(self, use_cgroups: bool = True) -> None:
        self.use_cgroups = use_cgroups

    def probe(self) -> str | None:
        """Why this backend cannot run solutions here, or None when a run imports the stack."""
        return probe_problem(self)

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` with ``DATA_DIR=public_data`` and ``OUTPUT_DIR=workdir``, bounded by `limits`."""
        _warn_once()
        uid = fresh_uid()
        prepared = prepare_dirs(workdir, public_data, uid)
        if isinstance(prepared, str):
            return infra_error(self.name, prepared)
        workdir, public_data = prepared
        marker = f"WMRL_RUN={secrets.token_hex(8)}"
        with run_dir(code, uid, prefix="wmrl-local-") as run:
            config = self._config(run, workdir, public_data, limits, uid, marker)
            if isinstance(config, str):
                return infra_error(self.name, config)
            cgroup = RunCgroup.create(limits) if self.use_cgroups and uid is not None else None
            if cgroup is not None:
                config["cgroup_procs"] = cgroup.procs_files
            solution = _solution_finder(uid, marker, cgroup)
            launch = Launch(
                config=config,
                command=_launcher_command,
                backend=self.name,
                workdir=workdir,
                scratch=run.tmp,
                solution_processes=solution,
                memory_events=cgroup.oom_killed if cgroup is not None else (lambda: False),
                extra={
                    "cgroup": cgroup.kind if cgroup else None,
                    "cpu_bound": bool(cgroup and cgroup.cpu_bound),
                    "uid": uid,
                },
            )
            try:
                return supervise(launch, limits)
            finally:
                if cgroup is not None:
                    cgroup.remove()

    def _config(
        self, run: RunDir, workdir: Path, public_data: Path, limits: Limits, uid: int | None, marker: str
    ) -> dict | str:
        python = interpreter()
        env = solution_env(public_data, workdir, run.tmp, python.parent, limits)
        env.update([marker.split("=", 1)])
        config: dict = {
            # No pid namespace ends this run if its supervisor dies, so the launcher runs behind a shim (see _launcher).
            "shim": True,
            "supervisor_pid": os.getpid(),
            "argv": [str(python), str(run.solution)],
            "env": env,
            "cwd": str(workdir),
            "rlimits": rlimits_for(limits, 0 if uid is not None else _tasks_of_this_uid()),
            "uid": uid,
            "gid": uid,
            "isolate_network": True,
        }
        if uid is not None:
            read = [*python_roots(), public_data, run.code]
            plan = plan_exposure(read=read, write=[workdir, run.tmp], private=PRIVATE_DIRS)
            if isinstance(plan, str):
                return f"the sandbox uid cannot use a path it needs: {plan}"
            config["expose"] = dict(plan, shm_bytes=limits.memory_mb * (1 << 20) // 4)
        return config


def _launcher_command(argument: str) -> list[str]:
    return [str(interpreter()), "-I", "-S", str(HOST_DIR / "_launcher.py"), argument]


def _solution_finder(uid: int | None, marker: str, cgroup: RunCgroup | None) -> Callable[[int], set[int]]:
    """The run's processes other than its shim and launcher: by uid and cgroup as root, else by tree and marker."""
    if uid is None:
        return lambda shim: descendants(shim) - children(shim) | pids_with_marker(marker)
    if cgroup is None:
        return lambda shim: pids_of_uid(uid)
    return lambda shim: (pids_of_uid(uid) | cgroup.pids()) - {shim} - children(shim)


def _tasks_of_this_uid() -> int:
    """Tasks (threads included) already counted against this uid's RLIMIT_NPROC."""
    me, count = os.getuid(), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == me:
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count
