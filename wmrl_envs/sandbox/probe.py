"""The health check every backend runs before it is trusted: a real sandboxed run that imports the stack.

A probe that only prints proves that a process starts, not that solutions can run: a sandbox
that starts the wrong interpreter (say, a venv's base Python) passes it and then fails every
solution with ``ModuleNotFoundError``, silently scored 0. So the probe imports what every
solution is promised (numpy, pandas, scikit-learn) inside the sandbox, and names the
interpreter, the failure and the fix when that does not work.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from wmrl_envs.sandbox.base import Executor, Limits, Status
from wmrl_envs.sandbox.pythonpaths import interpreter

__all__ = ["CONTRACT_MODULES", "probe_problem"]

CONTRACT_MODULES = ("numpy", "pandas", "sklearn")
"""Modules every solution may import; their absence inside a sandbox is a fault of the sandbox."""

_MARKER = "wmrl-probe:"
_PROBE_CODE = f"""
import importlib, json, sys
failed = {{}}
for name in {CONTRACT_MODULES!r}:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{{type(exc).__name__}}: {{exc}}"
print({_MARKER!r} + json.dumps({{"executable": sys.executable, "prefix": sys.prefix, "failed": failed}}))
"""


def probe_problem(executor: Executor, limits: Limits | None = None) -> str | None:
    """Why `executor` cannot run solutions here (what failed, and what to do), or None when it can."""
    limits = limits or Limits(wall_time_s=120, memory_mb=2048)
    with tempfile.TemporaryDirectory(prefix="wmrl-probe-") as tmp:
        data, out = Path(tmp, "data"), Path(tmp, "out")
        data.mkdir(mode=0o755)
        result = executor.run(_PROBE_CODE, out, data, limits)
    lines = [line for line in result.stdout.splitlines() if line.startswith(_MARKER)]
    if result.status is not Status.OK or not lines:
        tail = result.stderr.strip()[-500:]
        return f"a probe run ended {result.status.value}: {result.message} {tail}".strip()
    seen = json.loads(lines[-1][len(_MARKER) :])
    if not seen["failed"]:
        return None
    failures = "; ".join(f"{name}: {why}" for name, why in seen["failed"].items())
    return (
        f"solutions cannot import {', '.join(seen['failed'])} inside the sandbox ({failures}); the sandbox ran "
        f"{seen['executable']} (prefix {seen['prefix']}) for wmrl's interpreter {interpreter()} "
        f"(prefix {sys.prefix}). Install wmrl's dependencies into the environment you run wmrl from "
        f"(`python -m pip install -e .` inside its venv), or run wmrl from the environment that has them"
    )
