"""Who a solution runs as when the host runs as root.

Root ignores ``RLIMIT_NPROC`` and file permissions, so a root host hands each run a
fresh unprivileged uid of its own. A dedicated uid makes three things exact: the process
limit counts only this run's tasks (two concurrent runs do not share one budget, as
they would under a shared ``nobody``), every leftover process is found by its uid, and
the private answers (root-owned, mode 0700) are unreadable.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from wmrl_envs.sandbox.proctree import pids_of_uid

__all__ = ["UID_BASE", "UID_SPAN", "fresh_uid", "give_to"]

UID_BASE = 2_100_000_000
"""Start of the uid range handed to runs: far above any real account."""
UID_SPAN = 1 << 20


def fresh_uid() -> int | None:
    """An unused uid for one run when we are root, else None (runs keep the caller's uid).

    Drawn from the OS's randomness, never from `random`: trainers seed that generator, and two
    processes with the same seed would hand their runs the same uids, so each run's end would
    sweep up the other's processes.
    """
    if os.geteuid() != 0:
        return None
    for _ in range(32):
        uid = UID_BASE + secrets.randbelow(UID_SPAN)
        if not pids_of_uid(uid):
            return uid
    raise RuntimeError(f"no free sandbox uid found in [{UID_BASE}, {UID_BASE + UID_SPAN})")


def give_to(path: Path, uid: int) -> None:
    """Make `path` (recursively) owned by `uid`, so the run can write there and only there."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
