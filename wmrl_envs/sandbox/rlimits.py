"""Kernel resource limits (setrlimit) applied to the solution process by the launcher.

``RLIMIT_AS`` is what makes a 30 GB allocation fail with ``MemoryError`` instead of
pushing an overcommitting VM into its OOM killer. ``RLIMIT_NPROC`` counts tasks
(threads included) per real uid, which is why root hosts give each run its own uid.
``RLIMIT_CPU`` is only a backstop behind the supervisor's wall clock.
"""

from __future__ import annotations

import math
import os

from wmrl_envs.sandbox.base import Limits

__all__ = ["rlimits_for"]

_MB = 1 << 20


def rlimits_for(limits: Limits, tasks_already_running: int = 0) -> dict[str, int]:
    """``RLIMIT_*`` names (without prefix) to values; `tasks_already_running` share the uid's NPROC count."""
    return {
        "AS": limits.memory_mb * _MB,
        "CPU": math.ceil(limits.wall_time_s * (os.cpu_count() or 1)) + 5,
        "FSIZE": limits.max_file_mb * _MB,
        "NOFILE": limits.max_open_files,
        "NPROC": limits.max_processes + tasks_already_running,
        "CORE": 0,
    }
