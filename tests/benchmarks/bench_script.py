"""Runs a script of `benchmarks/` as a user would and returns the report it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_benchmark(script: str, args: list[str], out: Path, timeout: float) -> dict[str, Any]:
    """Run ``benchmarks/<script> <args> --out <out>`` from the repository root; the JSON it wrote at `out`."""
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / script), *args, "--out", str(out)],
        check=False,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())
