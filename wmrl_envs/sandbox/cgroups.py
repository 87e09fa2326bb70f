"""Best-effort memory, pids and CPU cgroup for one run (v1 or v2), never required.

rlimits bound each process; a cgroup bounds the run as a whole (resident memory of all
its processes, tmpfs pages included, its task count and, where the cpu controller is
writable, its CPU time to ``Limits.cpus`` cores) and tells us when the kernel OOM-killed
inside it. Many hosts (containers, unprivileged users) have no writable hierarchy: then
`RunCgroup.create` returns None and the rlimits stand alone; `RunCgroup.cpu_bound` says
whether the CPU share is enforced.
"""

from __future__ import annotations

import os
import secrets
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from wmrl_envs.sandbox.base import Limits

__all__ = ["RunCgroup"]

ROOT = Path("/sys/fs/cgroup")
_MB = 1 << 20
_CPU_PERIOD_US = 100_000


def _memory_bytes(limits: Limits) -> int:
    # Headroom above the per-process RLIMIT_AS: one process hitting its limit should fail with a
    # clean MemoryError, not thrash the cgroup's page cache; the cgroup bounds the run as a whole.
    return (limits.memory_mb + max(256, limits.memory_mb // 4)) * _MB


@dataclass
class RunCgroup:
    """The cgroup directories of one run and how to read them."""

    kind: str
    dirs: list[Path]
    cpu_bound: bool = False

    @classmethod
    def create(cls, limits: Limits) -> RunCgroup | None:
        """A fresh cgroup limited to `limits`, or None where none can be made."""
        name = f"run-{os.getpid()}-{secrets.token_hex(4)}"
        for make in (cls._v2, cls._v1):
            try:
                group = make(name, limits)
            except OSError:
                continue
            if group is not None:
                return group
        return None

    @classmethod
    def parents(cls, limits: Limits) -> list[Path]:
        """The folders runs' cgroups are made in (created now), for a sandbox that must bind them in; [] if none."""
        group = cls.create(limits)
        if group is None:
            return []
        group.remove()
        return [d.parent for d in group.dirs]

    @classmethod
    def _v2(cls, name: str, limits: Limits) -> RunCgroup | None:
        if not {"memory", "pids"} <= set((ROOT / "cgroup.controllers").read_text().split()):
            return None
        parent = ROOT / "wmrl"
        parent.mkdir(exist_ok=True)
        (ROOT / "cgroup.subtree_control").write_text("+memory +pids")
        (parent / "cgroup.subtree_control").write_text("+memory +pids")
        group = cls("v2", [parent / name])
        group.dirs[0].mkdir()
        (group.dirs[0] / "memory.max").write_text(str(_memory_bytes(limits)))
        (group.dirs[0] / "memory.swap.max").write_text("0")
        (group.dirs[0] / "pids.max").write_text(str(limits.max_processes + 1))
        try:
            (ROOT / "cgroup.subtree_control").write_text("+cpu")
            (parent / "cgroup.subtree_control").write_text("+cpu")
            (group.dirs[0] / "cpu.max").write_text(f"{limits.cpus * _CPU_PERIOD_US} {_CPU_PERIOD_US}")
            group.cpu_bound = True
        except OSError:
            pass  # no cpu controller to delegate: the thread variables are the only CPU bound
        return group

    @classmethod
    def _v1(cls, name: str, limits: Limits) -> RunCgroup | None:
        memory, pids = ROOT / "memory" / "wmrl" / name, ROOT / "pids" / "wmrl" / name
        if not (ROOT / "memory" / "memory.limit_in_bytes").exists() or not (ROOT / "pids").is_dir():
            return None
        group = cls("v1", [])
        try:
            for path in (memory, pids):
                path.mkdir(parents=True)
                group.dirs.append(path)
            (memory / "memory.limit_in_bytes").write_text(str(_memory_bytes(limits)))
            (pids / "pids.max").write_text(str(limits.max_processes + 1))
        except OSError:
            group.remove()
            raise
        cpu = ROOT / "cpu" / "wmrl" / name
        try:
            cpu.mkdir(parents=True)
            group.dirs.append(cpu)
            (cpu / "cpu.cfs_period_us").write_text(str(_CPU_PERIOD_US))
            (cpu / "cpu.cfs_quota_us").write_text(str(limits.cpus * _CPU_PERIOD_US))
            group.cpu_bound = True
        except OSError:
            pass  # no writable cpu controller: the thread variables are the only CPU bound
        return group

    @property
    def procs_files(self) -> list[str]:
        """Files the launcher writes its pid to, to join the cgroup before starting the solution."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    def joined(self, command: list[str]) -> list[str]:
        """`command` started inside this cgroup (a shell joins it, then execs it), for sandboxes that hide /sys."""
        files = " ".join(shlex.quote(path) for path in self.procs_files)
        script = f'for f in {files}; do echo $$ > "$f" || exit 125; done; exec "$@"'
        return ["/bin/sh", "-c", script, "wmrl-cgroup", *command]

    def pids(self) -> set[int]:
        """Processes currently in the run's cgroup."""
        found: set[int] = set()
        for d in self.dirs:
            try:
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except OSError:
                continue
        return found

    def oom_killed(self) -> bool:
        """True when the kernel OOM-killed a process of the run."""
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        for d in self.dirs:
            try:
                fields = dict(line.split() for line in (d / name).read_text().splitlines())
            except (OSError, ValueError):
                continue
            if int(fields.get("oom_kill", 0)) > 0:
                return True
        return False

    def remove(self) -> None:
        """Delete the cgroup directories once their processes are gone."""
        for d in reversed(self.dirs):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
