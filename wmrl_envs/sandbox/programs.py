"""The in-sandbox programs: where they live on the host and where a sandbox sees them.

The launcher and the zygote run inside the sandbox before any package is importable,
so they are plain stdlib scripts shipped beside this module and bound read-only into
each sandbox at `SANDBOX_LIB` (only these files, never the rest of the package).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

__all__ = ["HOST_DIR", "PROGRAM_FILES", "SANDBOX_LIB", "bind_args"]

HOST_DIR = Path(__file__).resolve().parent
PROGRAM_FILES = ("_launcher.py", "_nsutil.py", "_zygote.py")
SANDBOX_LIB = PurePosixPath("/sandbox/lib")


def bind_args() -> list[str]:
    """bubblewrap arguments binding the programs read-only at `SANDBOX_LIB`."""
    return [arg for name in PROGRAM_FILES for arg in ("--ro-bind", str(HOST_DIR / name), str(SANDBOX_LIB / name))]
