"""The health check every backend runs before it is trusted: a real sandboxed run that imports the stack.

A probe that only prints proves that a process starts, not that solutions can run: a sandbox
that starts the wrong interpreter (say, a venv's base Python) passes it and then fails every
solution with ``ModuleNotFoundError``, silently scored 0. So the probe imports what every
solution is promised (numpy, pandas, scikit-learn) inside the sandbox, and names the
interpreter, the failure and the fix when that does not work.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import replace
from pathlib import Path

from wmrl_envs.sandbox.base import ExecutionResult, Executor, Limits, Status
from wmrl_envs.sandbox.pythonpaths import interpreter

__all__ = ["CONTRACT_MODULES", "confirm_infra_fault", "probe_problem"]

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


_MISSING_CONTRACT = re.compile(r"ModuleNotFoundError: No module named '(?:" + "|".join(CONTRACT_MODULES) + r")[.']")
_RECHECK_S = 60.0
_passed_at: weakref.WeakKeyDictionary[object, float] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def confirm_infra_fault(executor: Executor, result: ExecutionResult) -> ExecutionResult:
    """`result` as an infra-error when the run died on a missing contract module and a fresh probe fails too.

    The probe, not the solution's own output, decides: a solution that prints such an error itself stays a
    solution failure (and is scored), so no solution can make itself unscored. A passing probe is trusted
    for a minute, so repeated failures cost one probe at most per minute.
    """
    if result.status is not Status.ERROR or not _MISSING_CONTRACT.search(result.stderr):
        return result
    with _lock:
        recent = time.monotonic() - _passed_at.get(executor, -_RECHECK_S) < _RECHECK_S
    if recent:
        return result
    problem = probe_problem(executor)
    if problem is None:
        with _lock:
            _passed_at[executor] = time.monotonic()
        return result
    return replace(result, status=Status.INFRA_ERROR, message=f"the sandbox cannot run solutions: {problem}")
