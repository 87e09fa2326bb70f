"""Supervise one launched run: budget, bounded logs, kill sweep, status.

Every process-based backend (bubblewrap, local) starts the same in-sandbox launcher and
differs only in the command that wraps it, so the parts that decide a run's fate live
here once: the wall-clock deadline, the output cap, killing everything the run started,
and reading the launcher's usage report (`outcome` turns it into a result).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wmrl_envs.sandbox.base import ExecutionResult, Limits
from wmrl_envs.sandbox.diskusage import disk_meter
from wmrl_envs.sandbox.outcome import infra_error, outcome
from wmrl_envs.sandbox.proctree import descendants, kill_sweep, usage
from wmrl_envs.sandbox.streams import RunStreams

__all__ = ["Launch", "supervise"]

_LAUNCHER_EXIT_S = 2.0


@dataclass
class Launch:
    """How to start one run: the launcher's config and the host command, given the launcher's argument."""

    config: dict
    """The launcher's config; `supervise` adds ``report_fd`` and hands it over in a memfd, never on a command line."""
    command: Callable[[str], list[str]]
    backend: str
    workdir: Path
    solution_processes: Callable[[int], set[int]] | None = None
    """Given the host pid of the launched command, the solution's processes (never the launcher itself),
    so a stopped run is killed while its launcher survives to reap it and report usage; None where
    they cannot be told apart (the whole sandbox is then killed at once)."""
    scratch: Path | None = None
    """The run's own temp folder, counted with `workdir` against ``Limits.max_disk_mb``."""
    memory_events: Callable[[], bool] = lambda: False
    """True when the kernel reports the run hit its memory limit (cgroup), where known."""
    extra: dict[str, object] = field(default_factory=dict)


def supervise(launch: Launch, limits: Limits) -> ExecutionResult:
    """Start `launch`, enforce `limits`, kill everything it left and classify the outcome."""
    started = time.monotonic()
    streams = RunStreams(limits)
    config_fd = _memfd(json.dumps(dict(launch.config, report_fd=streams.report_w)).encode())
    try:
        try:
            proc = subprocess.Popen(
                launch.command(f"fd:{config_fd}"),
                stdin=subprocess.DEVNULL,
                stdout=streams.stdout_w,
                stderr=streams.stderr_w,
                pass_fds=(streams.report_w, config_fd),
                start_new_session=True,
            )
        except OSError as exc:
            return infra_error(launch.backend, f"could not start the {launch.backend} sandbox: {exc}", started)
        finally:
            streams.close_child_ends()
            os.close(config_fd)
        stopped = streams.pump(started + limits.wall_time_s, disk_meter(limits, launch.workdir, launch.scratch))
        sampled = usage(descendants(proc.pid)) if stopped else None
        _kill_everything(proc, launch, stopped is not None)
        report = streams.report(timeout=_LAUNCHER_EXIT_S)
    finally:
        streams.close()
    return outcome(
        launch.backend, launch.workdir, limits, report, stopped, streams.out, streams.err, time.monotonic() - started,
        sandbox_exit=proc.returncode, sampled=sampled, oom_event=launch.memory_events(), extra=launch.extra,
    )  # fmt: skip


def _memfd(data: bytes) -> int:
    """An anonymous file holding `data`, readable only by this uid and root (the run's own uid cannot)."""
    fd = os.memfd_create("wmrl-launcher-config", os.MFD_CLOEXEC)
    os.write(fd, data)
    return fd


def _kill_everything(proc: subprocess.Popen, launch: Launch, stopped: bool) -> None:
    """Kill the solution first (its launcher reaps it and reports), then anything left."""
    solution = launch.solution_processes or (lambda _pid: set())
    if stopped and launch.solution_processes is not None:
        kill_sweep(lambda: solution(proc.pid))
    if not stopped or launch.solution_processes is not None:
        try:
            proc.wait(timeout=_LAUNCHER_EXIT_S)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    kill_sweep(lambda: descendants(proc.pid) | solution(proc.pid))
    proc.wait()
