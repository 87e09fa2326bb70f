"""The executor contract: run untrusted solution code against public data, bounded.

Every backend (bubblewrap, local subprocess, docker, ...) returns the same
`ExecutionResult`, so reward sources and environments never care which one ran.
The contract a solution sees is the paper's: ``DATA_DIR`` (read-only public data),
``OUTPUT_DIR`` (writable scratch) and ``SUBMISSION_PATH`` (where to write the CSV).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol, runtime_checkable

from wmrl_envs.errors import WmrlError

__all__ = ["SUBMISSION_FILENAME", "ExecutionResult", "Executor", "Limits", "SandboxUnavailable", "Status"]

SUBMISSION_FILENAME = "submission.csv"


class SandboxUnavailable(WmrlError, RuntimeError):
    """The requested backend cannot run on this machine; the message says why and what to do."""


class Status(str, Enum):
    """How a run ended."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out-of-memory"
    OUTPUT_LIMIT = "output-limit"
    KILLED = "killed"
    INFRA_ERROR = "infra-error"


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run; defaults follow the paper's 1200 s budget."""

    wall_time_s: float = 1200.0
    memory_mb: int = 4096
    cpus: int = 1
    max_processes: int = 64
    max_file_mb: int = 1024
    max_disk_mb: int = 4096
    """Everything a run may have on disk at once (its output and temp folders), all files together."""
    max_open_files: int = 1024
    max_output_bytes: int = 64 * 1024 * 1024
    log_tail_bytes: int = 8 * 1024

    def __post_init__(self) -> None:
        for name in (
            "wall_time_s",
            "memory_mb",
            "cpus",
            "max_processes",
            "max_file_mb",
            "max_disk_mb",
            "max_open_files",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {getattr(self, name)!r}")


@dataclass
class ExecutionResult:
    """What a run produced and what it cost. Logs are bounded: head and tail kept."""

    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    backend: str
    submission_path: Path | None = None
    message: str = ""
    timed_out: bool = False
    killed: bool = False
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


@runtime_checkable
class Executor(Protocol):
    """Runs solution code in a sandbox. `workdir` becomes ``OUTPUT_DIR``."""

    name: str

    def run(self, code: str, workdir: Path, public_data: Path, limits: Limits) -> ExecutionResult:
        """Run `code` with `public_data` read-only and `workdir` writable; never raises for solution faults."""
        ...
