"""How much a run has written, measured while it runs, so a total-bytes bound can stop it.

``RLIMIT_FSIZE`` bounds one file; a run writing many files could still fill the disk within its time
budget. The supervisor walks the run's writable folders every so often (iteratively, never following
symlinks, hard links counted once) and stops the run when they hold more than ``Limits.max_disk_mb``.
A walk costs time proportional to the number of files (about 3 ms per thousand here), so the interval is at
least `_COST_FACTOR` times the last walk's cost (the supervisor spends ~2% of a core on it) and at most
`_MAX_INTERVAL_S` (a run near `MAX_ENTRIES` costs more to watch, and is watched anyway), and a
run that makes more files than ``MAX_ENTRIES`` is stopped as well: counting them is the cost it imposes.

Polling bounds how far a run can overshoot (its write speed times one interval, tens of milliseconds
while it has few files), not whether it is caught: the supervisor measures once more when the run ends,
so a run that wrote past the bound faster than any poll still ends with status output-limit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from wmrl_envs.sandbox.base import Limits

__all__ = ["MAX_ENTRIES", "DiskMeter", "disk_meter", "measure"]

MAX_ENTRIES = 500_000
_MIN_INTERVAL_S = 0.02
_COST_FACTOR = 50
_MAX_INTERVAL_S = 5.0


class DiskMeter:
    """Bytes on disk under a run's writable folders, checked every `_MIN_INTERVAL_S` or `_COST_FACTOR` walks' cost."""

    def __init__(self, folders: Sequence[Path], limit_bytes: int) -> None:
        self.folders = list(folders)
        self.limit_bytes = limit_bytes
        self.used_bytes = 0
        self.entries = 0
        self._next = 0.0
        self._interval = _MIN_INTERVAL_S

    def over(self, now: bool = False) -> bool:
        """True when the folders hold more than the limit (or too many files to count); cheap between checks.

        `now` measures even when the next check is not due (the final check when a run ends).
        """
        started = time.monotonic()
        if not now and started < self._next:
            return False
        self.used_bytes, self.entries = measure(self.folders)
        spent = time.monotonic() - started
        self._interval = min(_MAX_INTERVAL_S, max(_MIN_INTERVAL_S, _COST_FACTOR * spent))
        self._next = time.monotonic() + self._interval
        return self.used_bytes > self.limit_bytes or self.entries > MAX_ENTRIES

    def wait_s(self) -> float:
        """Seconds until the next check is due (0 when it is), for a supervisor deciding how long to sleep."""
        return max(0.0, self._next - time.monotonic())


def disk_meter(limits: Limits, *folders: Path | None) -> DiskMeter:
    """The meter of a run whose writable folders are `folders` (None entries skipped)."""
    return DiskMeter([f for f in folders if f is not None], limits.max_disk_mb * (1 << 20))


def measure(folders: Sequence[Path]) -> tuple[int, int]:
    """(bytes allocated, entries) under `folders`, stopping early past `MAX_ENTRIES` entries."""
    used, entries, seen = 0, 0, set()
    stack = [str(f) for f in folders]
    while stack and entries <= MAX_ENTRIES:
        try:
            with os.scandir(stack.pop()) as listing:
                for entry in listing:
                    entries += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif (info.st_dev, info.st_ino) not in seen:
                        seen.add((info.st_dev, info.st_ino))
                        used += info.st_blocks * 512
        except OSError:
            continue
    return used, entries
