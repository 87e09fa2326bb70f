"""What a measurement ran on: enough to tell, when a comparison seed or a benchmark figure does not reproduce
elsewhere, what differed (CPU, vector extensions, kernel, load, library versions)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["LIBRARIES", "library_versions", "machine_facts", "usable_cpus"]

LIBRARIES = ("numpy", "scipy", "scikit-learn", "pandas", "torch")
"""The libraries a comparison seed's numbers depend on (the policy, the surrogate's fit, the graders)."""
_SIMD = ("avx", "avx2", "fma", "avx512f")


def machine_facts(cpuinfo: Path = Path("/proc/cpuinfo"), libraries: Sequence[str] = LIBRARIES) -> dict[str, Any]:
    """CPUs, CPU model and vector extensions, kernel, load average now, Python, and the versions of `libraries`.

    A library that is not installed has version None; the load average is None where the platform has none.
    """
    model, flags = _cpu(cpuinfo)
    return {
        "cpus": usable_cpus(),
        "cpu": model or platform.processor() or None,
        "simd": [flag for flag in _SIMD if flag in flags],
        "kernel": platform.release(),
        "load_avg": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "libraries": library_versions(libraries),
    }


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the platform says, else the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _cpu(cpuinfo: Path) -> tuple[str | None, set[str]]:
    """The first CPU's model name and flags from a Linux ``/proc/cpuinfo`` (None and none elsewhere)."""
    try:
        lines = cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, set()
    fields: dict[str, str] = {}
    for line in lines:
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields.get("model name") or None, set(fields.get("flags", "").split())


def library_versions(names: Sequence[str]) -> dict[str, str | None]:
    """The installed version of each distribution in `names` (None: not installed)."""
    return {name: _version(name) for name in names}


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
