"""Find, measure and kill a run's processes through /proc.

Killing a process group is not enough: a solution can ``setsid`` or double-fork out of
it, and a fork bomb keeps making new pids while we kill. So a run is killed by sweeping
every process we can attribute to it (its launcher's descendants, its dedicated uid, its
environment marker), stopping them first so none can fork, then killing, until a sweep
finds nothing.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable

__all__ = ["alive", "children", "descendants", "kill_sweep", "pids_of_uid", "pids_with_marker", "usage"]

_TICK = os.sysconf("SC_CLK_TCK")


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def children(pid: int) -> set[int]:
    """The direct children of `pid` (of any of its threads)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return set()
    kids: set[int] = set()
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.update(int(p) for p in f.read().split())
        except OSError:
            continue
    return kids


def descendants(pid: int) -> set[int]:
    """Every live descendant of `pid` (not `pid` itself)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        kids = children(todo.pop()) - found
        found |= kids
        todo.extend(kids)
    return found


def pids_of_uid(uid: int) -> set[int]:
    """Processes owned by `uid` (the owner of ``/proc/<pid>``)."""
    pids = set()
    for pid in _all_pids():
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                pids.add(pid)
        except OSError:
            continue
    return pids


def pids_with_marker(marker: str) -> set[int]:
    """Our own processes whose environment contains the ``NAME=value`` string `marker`."""
    needle = marker.encode() + b"\0"
    me, pids = os.getuid(), set()
    for pid in _all_pids():
        try:
            if os.stat(f"/proc/{pid}").st_uid != me:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read() + b"\0":
                    pids.add(pid)
        except OSError:
            continue
    return pids


def usage(pids: Iterable[int]) -> tuple[float, float]:
    """CPU seconds (own + reaped children) summed over `pids`, and the largest peak RSS in MB."""
    cpu_ticks, peak_kb = 0, 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu_ticks += sum(int(x) for x in fields[11:15])
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak_kb = max(peak_kb, int(line.split()[1]))
        except (OSError, IndexError, ValueError):
            continue
    return cpu_ticks / _TICK, peak_kb / 1024


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_sweep(find: Callable[[], set[int]], timeout_s: float = 5.0) -> set[int]:
    """Stop then kill whatever `find` returns, until it returns nothing; returns survivors."""
    deadline = time.monotonic() + timeout_s
    pids = find()
    while pids and time.monotonic() < deadline:
        _signal_all(pids, signal.SIGSTOP)
        _signal_all(pids, signal.SIGKILL)
        time.sleep(0.005)
        pids = {pid for pid in find() if alive(pid)}
    return pids


def alive(pid: int) -> bool:
    """False for pids that are gone or zombies (a zombie holds nothing but its pid)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
