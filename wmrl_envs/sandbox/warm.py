"""Warm bubblewrap pool: numpy, pandas and scikit-learn imported once, a fresh fork per run.

Importing the scientific stack costs 2-3 s of CPU per fresh interpreter, the largest
fixed cost of a run. Here one long-lived zygote (itself inside bubblewrap, seeing only
the system and the Python prefix) imports it once; each run is a fork of the zygote that
enters its own mount, pid, network, IPC and UTS namespaces, gets only its own folders
(sent by the host as detached mount trees, so the zygote never sees the host's other
paths), and runs the solution as its own fresh uid with no capabilities. A fork is
copy-on-write: nothing a run does reaches the zygote or a later run.

Differences from a cold run, all documented in the result: ``cpu_s`` excludes the shared
import; string hashing uses the zygote's seed (set and dict order is the same across
runs); modules the zygote imported are not re-read from disk. It needs root (it builds
namespaces and hands out uids) and Linux >= 5.2 (``open_tree``/``move_mount``).

Example:
    >>> from pathlib import Path
    >>> from wmrl_envs.sandbox import Limits, WarmBwrapExecutor
    >>> with WarmBwrapExecutor() as executor:
    ...     executor.run("import sklearn", Path("/tmp/out"), Path("/tmp/data"), Limits()).status.value
    'ok'
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Self

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.bwrap import SANDBOX_CODE, SANDBOX_DATA, SANDBOX_OUTPUT, filesystem_args
from wmrl_envs.sandbox.cgroups import RunCgroup
from wmrl_envs.sandbox.diskusage import disk_meter
from wmrl_envs.sandbox.identity import fresh_uid
from wmrl_envs.sandbox.outcome import infra_error, outcome
from wmrl_envs.sandbox.probe import probe_problem
from wmrl_envs.sandbox.proctree import kill_sweep, pids_of_uid, usage
from wmrl_envs.sandbox.programs import SANDBOX_LIB
from wmrl_envs.sandbox.pythonpaths import interpreter, python_roots, user_site
from wmrl_envs.sandbox.rlimits import rlimits_for
from wmrl_envs.sandbox.rundir import open_tmp_to, prepare_dirs, run_dir
from wmrl_envs.sandbox.solution_env import THREAD_VARS, solution_env
from wmrl_envs.sandbox.streams import RunStreams

__all__ = ["DEFAULT_PRELOAD", "WarmBwrapExecutor"]

DEFAULT_PRELOAD = ("numpy", "pandas", "scipy", "sklearn", "sklearn.ensemble", "sklearn.linear_model")
_ZYGOTE_CAPS = ("CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL")
_SYS_OPEN_TREE, _OPEN_TREE_CLONE, _AT_RECURSIVE = 428, 1, 0x8000
_START_TIMEOUT_S = 180.0
_REPORT_WAIT_S = 2.0
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def detached_tree(path: Path) -> int:
    """A detached copy of the mount tree at `path` (``open_tree(OPEN_TREE_CLONE)``), as an fd."""
    flags = _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC
    fd = _libc.syscall(_SYS_OPEN_TREE, -100, os.fsencode(path), flags)
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"open_tree({path}): {os.strerror(err)}")
    return int(fd)


class WarmBwrapExecutor:
    """Bubblewrap runs forked from a zygote that has the scientific stack imported."""

    name = "bwrap-warm"

    def __init__(self, preload: tuple[str, ...] = DEFAULT_PRELOAD, bwrap: str | None = None) -> None:
        self.preload = preload
        self.bwrap = bwrap or shutil.which("bwrap") or "/usr/bin/bwrap"
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._scratch: Path | None = None
        self._cgroup_parents: list[Path] = []
        self.preload_failed: list[str] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def probe(self) -> str | None:
        """Why this backend cannot run solutions here, or None when the zygote serves a run that imports the stack."""
        problem = self._start()
        if problem is not None:
            return problem
        return probe_problem(self)

    def close(self) -> None:
        """Stop the zygote (runs in flight are killed with it) and remove its scratch."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
        if self._proc is not None and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        self._proc = self._sock = self._scratch = None

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` in a fresh fork of the warm zygote, isolated as a cold bubblewrap run."""
        problem = self._start()
        if problem is not None:
            return infra_error(self.name, problem)
        uid = fresh_uid()
        prepared = prepare_dirs(workdir, public_data, uid)
        if isinstance(prepared, str):
            return infra_error(self.name, prepared)
        workdir, public_data = prepared
        with run_dir(code, uid, prefix="wmrl-warm-") as run:
            under_tmp = open_tmp_to(run, python_roots())
            cgroup = RunCgroup.create(limits) if self._cgroup_parents else None
            request = dict(
                self._request(uid, limits),
                cgroup_procs=cgroup.procs_files if cgroup else [],
                python_under_tmp=[str(p) for p in under_tmp],  # the zygote binds these back over the run's /tmp
            )
            started = time.monotonic()
            streams = RunStreams(limits)
            try:
                sent = self._send(request, streams, [public_data, workdir, run.code, run.tmp])
                if sent is not None:
                    return infra_error(self.name, sent, started)
                stopped = streams.pump(started + limits.wall_time_s, disk_meter(limits, workdir, run.tmp))
                sampled = usage(pids_of_uid(uid)) if stopped else None
                if stopped:
                    kill_sweep(lambda: pids_of_uid(uid))
                report = streams.report(timeout=_REPORT_WAIT_S)
                kill_sweep(lambda: pids_of_uid(uid))
                oom_event = cgroup is not None and cgroup.oom_killed()
            finally:
                streams.close()
                if cgroup is not None:
                    cgroup.remove()
            extra = {"uid": uid, "warm": True, "preload": list(self.preload), "cgroup": cgroup.kind if cgroup else None}
            return outcome(
                self.name, workdir, limits, report, stopped, streams.out, streams.err, time.monotonic() - started,
                sampled=sampled, oom_event=oom_event, extra=dict(extra, cpu_bound=bool(cgroup and cgroup.cpu_bound)),
            )  # fmt: skip

    def _request(self, uid: int, limits: Limits) -> dict:
        python = interpreter()
        return {
            "argv": [str(SANDBOX_CODE / "solution.py")],
            "env": solution_env(SANDBOX_DATA, SANDBOX_OUTPUT, PurePosixPath("/tmp"), python.parent, limits),
            "cwd": str(SANDBOX_OUTPUT),
            "rlimits": rlimits_for(limits),
            "uid": uid,
            "cpus": limits.cpus,
            "shm_bytes": limits.memory_mb * (1 << 20) // 4,
        }

    def _send(self, request: dict, streams: RunStreams, folders: list[Path]) -> str | None:
        """Hand the request, the run's pipes and its folders to the zygote; an error message on failure."""
        trees: list[int] = []
        try:
            trees = [detached_tree(folder) for folder in folders]
            socket.send_fds(self._sock, [json.dumps(request).encode()], [*streams.child_ends, *trees])
        except OSError as exc:
            return f"could not hand the run to the warm zygote ({exc}); {self._log_tail()}"
        finally:
            for fd in trees:
                os.close(fd)
            streams.close_child_ends()
        return None

    def _start(self) -> str | None:
        """Start the zygote unless it runs; an error message when it cannot."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return None
            self._stop()
            if os.geteuid() != 0:
                return "the warm pool needs root (it builds per-run namespaces and uids); use BwrapExecutor"
            if not os.access(self.bwrap, os.X_OK):
                return f"bubblewrap not found at {self.bwrap} (apt-get install bubblewrap)"
            self._cgroup_parents = RunCgroup.parents(Limits())
            self._scratch = Path(tempfile.mkdtemp(prefix="wmrl-zygote-"))
            (self._scratch / "tmp").mkdir()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            user = user_site()
            config = {"socket_fd": theirs.fileno(), "preload": list(self.preload), "site_dirs": [user] if user else []}
            self._sock = ours
            try:
                with open(self._scratch / "zygote.log", "wb") as log:
                    self._proc = subprocess.Popen(
                        self._command(config),
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                        pass_fds=(theirs.fileno(),),
                        start_new_session=True,
                    )
            except OSError as exc:
                self._stop()
                return f"could not start the warm zygote: {exc}"
            finally:
                theirs.close()
            ours.settimeout(_START_TIMEOUT_S)
            try:
                hello = json.loads(ours.recv(1 << 16) or b"{}")
            except (OSError, json.JSONDecodeError) as exc:
                hello = {"error": str(exc)}
            ours.settimeout(None)
            if not hello.get("ready"):
                problem = f"the warm zygote did not start ({hello}); {self._log_tail()}"
                self._stop()
                return problem
            self.preload_failed = hello.get("preload_failed", [])
            return None

    def _command(self, config: dict) -> list[str]:
        caps = [arg for cap in _ZYGOTE_CAPS for arg in ("--cap-add", cap)]
        env = [arg for var in THREAD_VARS for arg in ("--setenv", var, "1")]
        path = f"{interpreter().parent}:/usr/local/bin:/usr/bin:/bin"
        return [
            self.bwrap,
            "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL", *caps,
            *env, "--setenv", "PATH", path, "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
            *filesystem_args(self._scratch / "tmp", Limits()),
            "--dir", str(SANDBOX_DATA), "--dir", str(SANDBOX_OUTPUT), "--dir", str(SANDBOX_CODE),
            *[arg for parent in self._cgroup_parents for arg in ("--bind", str(parent), str(parent))],
            "--",
            str(interpreter()), "-s", "-E", str(SANDBOX_LIB / "_zygote.py"), json.dumps(config),
        ]  # fmt: skip

    def _log_tail(self) -> str:
        try:
            text = (self._scratch / "zygote.log").read_text(errors="replace")[-1500:]
        except (OSError, TypeError):
            return "no zygote log"
        return f"zygote log: {text}" if text else "zygote log empty"
