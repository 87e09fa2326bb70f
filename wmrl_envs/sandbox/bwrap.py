"""Bubblewrap backend: the default sandbox where unprivileged namespaces work.

The solution sees a fresh root built from read-only binds of the system and of the
running interpreter's prefix, the public data read-only at ``/sandbox/data``, its own
output dir at ``/sandbox/output``, a private ``/tmp``, and a network namespace holding
only ``lo``. Nothing else of the host exists inside, so a competition's private answers
are not merely unreadable but absent. The pid namespace dies with bubblewrap, which
takes every ``setsid``/double-forked grandchild with it.

As root, bubblewrap would map the sandbox to uid 0, where ``RLIMIT_NPROC`` is ignored;
so a root host skips the user namespace, drops every capability but SETUID/SETGID/KILL, and
the launcher switches the solution to a fresh uid of its own (see `identity`).

Example:
    >>> from pathlib import Path
    >>> from wmrl_envs.sandbox import BwrapExecutor, Limits
    >>> result = BwrapExecutor().run("print(1)", Path("/tmp/out"), Path("/tmp/data"), Limits(wall_time_s=10))
    >>> result.status.value
    'ok'
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.cgroups import RunCgroup
from wmrl_envs.sandbox.identity import fresh_uid
from wmrl_envs.sandbox.outcome import infra_error
from wmrl_envs.sandbox.probe import probe_problem
from wmrl_envs.sandbox.proctree import pids_of_uid
from wmrl_envs.sandbox.programs import SANDBOX_LIB, bind_args
from wmrl_envs.sandbox.pythonpaths import interpreter, python_roots
from wmrl_envs.sandbox.rlimits import rlimits_for
from wmrl_envs.sandbox.rundir import RunDir, open_tmp_to, prepare_dirs, run_dir
from wmrl_envs.sandbox.solution_env import solution_env
from wmrl_envs.sandbox.supervise import Launch, supervise

__all__ = ["SANDBOX_CODE", "SANDBOX_DATA", "SANDBOX_OUTPUT", "BwrapExecutor", "filesystem_args"]

SANDBOX_DATA = PurePosixPath("/sandbox/data")
SANDBOX_OUTPUT = PurePosixPath("/sandbox/output")
SANDBOX_CODE = PurePosixPath("/sandbox/code")
SYSTEM_DIRS = ("/usr", "/etc", "/lib", "/lib64", "/lib32", "/bin", "/sbin")


class BwrapExecutor:
    """Runs solutions under bubblewrap with no network and only the public data visible."""

    name = "bwrap"

    def __init__(self, bwrap: str | None = None) -> None:
        self.bwrap = bwrap or shutil.which("bwrap") or "/usr/bin/bwrap"

    def probe(self) -> str | None:
        """Why this backend cannot run solutions here, or None when a sandboxed run imports the stack."""
        if not os.access(self.bwrap, os.X_OK):
            return f"bubblewrap not found at {self.bwrap} (apt-get install bubblewrap)"
        return probe_problem(self)

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` in a fresh bubblewrap sandbox; see the module docstring for what it sees."""
        uid = fresh_uid()
        prepared = prepare_dirs(workdir, public_data, uid)
        if isinstance(prepared, str):
            return infra_error(self.name, prepared)
        workdir, public_data = prepared
        with run_dir(code, uid, prefix="wmrl-bwrap-") as run:
            if uid is not None:
                open_tmp_to(run, python_roots())
            cgroup = RunCgroup.create(limits) if uid is not None else None
            launch = Launch(
                config=self._config(limits, uid),
                command=lambda argument: self._command(argument, workdir, public_data, run, limits, uid, cgroup),
                backend=self.name,
                workdir=workdir,
                scratch=run.tmp,
                solution_processes=(lambda _pid: pids_of_uid(uid)) if uid is not None else None,
                memory_events=cgroup.oom_killed if cgroup is not None else (lambda: False),
                extra={
                    "uid": uid,
                    "cgroup": cgroup.kind if cgroup else None,
                    "cpu_bound": bool(cgroup and cgroup.cpu_bound),
                },
            )
            try:
                return supervise(launch, limits)
            finally:
                if cgroup is not None:
                    cgroup.remove()

    @staticmethod
    def _config(limits: Limits, uid: int | None) -> dict:
        python = interpreter()
        return {
            "argv": [str(python), str(SANDBOX_CODE / "solution.py")],
            "env": solution_env(SANDBOX_DATA, SANDBOX_OUTPUT, PurePosixPath("/tmp"), python.parent, limits),
            "cwd": str(SANDBOX_OUTPUT),
            "rlimits": rlimits_for(limits),
            "uid": uid,
            "gid": uid,
        }

    def _command(
        self,
        argument: str,
        workdir: Path,
        public_data: Path,
        run: RunDir,
        limits: Limits,
        uid: int | None,
        cgroup: RunCgroup | None,
    ) -> list[str]:
        command = [
            self.bwrap,
            *_namespace_args(as_root=uid is not None),
            *filesystem_args(run.tmp, limits),
            "--ro-bind", str(public_data), str(SANDBOX_DATA),
            "--bind", str(workdir), str(SANDBOX_OUTPUT),
            "--ro-bind", str(run.code), str(SANDBOX_CODE),
            "--chdir", str(SANDBOX_OUTPUT),
            "--",
            str(interpreter()), "-I", "-S", str(SANDBOX_LIB / "_launcher.py"), argument,
        ]  # fmt: skip
        return cgroup.joined(command) if cgroup is not None else command


def _namespace_args(as_root: bool) -> list[str]:
    common = ["--die-with-parent", "--new-session", "--clearenv", "--hostname", "sandbox"]
    if not as_root:
        return ["--unshare-all", *common]
    return [
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL",
        *common,
    ]  # fmt: skip


def filesystem_args(scratch: Path, limits: Limits) -> list[str]:
    """bubblewrap arguments for the sandbox's root: system and Python read-only, `scratch` as /tmp."""
    # /tmp first: a mount made after the python binds would hide any of them living under /tmp.
    # It is disk-backed on purpose: tmpfs pages are not charged to RLIMIT_AS and could fill the VM's RAM.
    args = ["--bind", str(scratch), "/tmp"]
    bound: list[Path] = []
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
            bound.append(Path(name))
    for root in python_roots():
        if any(b == root or b in root.parents for b in bound):
            continue
        # bubblewrap copies the mode of the host's parents (/root is 0700): recreate them traversable.
        for parent in reversed(root.parents[:-1]):
            if parent == Path("/tmp"):
                continue
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(root), str(root)]
    shm_bytes = str(limits.memory_mb * (1 << 20) // 4)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", shm_bytes, "--tmpfs", "/dev/shm"]
    args += ["--perms", "0755", "--dir", "/sandbox", *bind_args()]
    return args
