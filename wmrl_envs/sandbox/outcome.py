"""Turn what a run did into an auditable `ExecutionResult`.

Every backend reports the same statuses for the same behaviour, so the rules that map
"stopped by us", exit codes, signals, memory evidence and the submission file onto a
status and a message live here once.
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

from wmrl_envs.nofollow import EntryError, entry_kind
from wmrl_envs.sandbox.base import SUBMISSION_FILENAME, ExecutionResult, Limits, Status
from wmrl_envs.sandbox.capture import BoundedLog
from wmrl_envs.sandbox.diskusage import MAX_ENTRIES

__all__ = ["infra_error", "outcome", "submission_in"]

_OOM_PATTERN = re.compile(rb"MemoryError|std::bad_alloc|Cannot allocate memory|out of memory", re.IGNORECASE)


def infra_error(backend: str, message: str, started: float | None = None) -> ExecutionResult:
    """A result for a fault of the sandbox itself, never of the solution."""
    wall = time.monotonic() - started if started is not None else 0.0
    return ExecutionResult(Status.INFRA_ERROR, None, "", "", wall, 0.0, 0.0, backend, message=message)


def submission_in(workdir: Path) -> tuple[Path | None, str]:
    """The submission file if it is a regular file, else None and what was there instead.

    Nothing is followed: a link (to the answers, or another run's output) is reported as a link.
    """
    try:
        found = entry_kind(workdir, SUBMISSION_FILENAME)
    except EntryError as err:
        return None, f"{SUBMISSION_FILENAME} was not looked for: {err}"
    except OSError as err:
        return None, f"the output folder {workdir} cannot be read: {err.strerror or err}"
    if found is None:
        return None, ""
    if found == "a regular file":
        return workdir / SUBMISSION_FILENAME, ""
    return None, f"{SUBMISSION_FILENAME} is {found}, not a regular file: ignored (write the CSV itself there)"


def outcome(
    backend: str,
    workdir: Path,
    limits: Limits,
    report: dict,
    stopped: str | None,
    out: BoundedLog,
    err: BoundedLog,
    wall: float,
    *,
    sandbox_exit: int | None = None,
    sampled: tuple[float, float] | None = None,
    oom_event: bool = False,
    extra: dict[str, object] | None = None,
) -> ExecutionResult:
    """The result of a run from the launcher's `report` and what the supervisor saw.

    `stopped` is "timeout", "output-limit" or "disk-limit" when the supervisor ended the run; `sampled` is the
    (cpu_s, peak_mb) read from /proc before a kill, used when the launcher could not report.
    """
    code = report.get("returncode")
    if "cpu_s" in report:
        cpu_s, peak_mb = float(report["cpu_s"]), float(report["maxrss_kb"]) / 1024
    else:
        cpu_s, peak_mb = sampled if sampled is not None else (0.0, 0.0)
    status, message = _classify(limits, code, report, stopped, err, oom_event)
    if status is Status.INFRA_ERROR and "infra_error" not in report:
        message = f"{message} (sandbox exit code {sandbox_exit}: {_last_line(err)})"
    submission, note = submission_in(workdir)
    if note:
        message = f"{message}; {note}" if message else note
    elif status is Status.OK and submission is None:
        message = f"exited 0 but wrote no {SUBMISSION_FILENAME} at $SUBMISSION_PATH"
    extra = dict(extra or {}, stdout_bytes=out.total, stderr_bytes=err.total, usage_measured="cpu_s" in report)
    if "network" in report:
        extra["network"] = report["network"]
    return ExecutionResult(
        status=status,
        exit_code=code,
        stdout=out.text(),
        stderr=err.text(),
        wall_s=wall,
        cpu_s=cpu_s,
        peak_mb=peak_mb,
        backend=backend,
        submission_path=submission,
        message=message,
        timed_out=status is Status.TIMEOUT,
        killed=stopped is not None or (code is not None and code < 0),
        extra=extra,
    )


def _classify(
    limits: Limits, code: int | None, report: dict, stopped: str | None, err: BoundedLog, oom_event: bool
) -> tuple[Status, str]:
    if "infra_error" in report:
        return Status.INFRA_ERROR, f"{report['infra_error']} (check the interpreter and paths the sandbox exposes)"
    if stopped == "output-limit":
        return Status.OUTPUT_LIMIT, f"stopped: output passed {limits.max_output_bytes} bytes (Limits.max_output_bytes)"
    if stopped == "disk-limit":
        return Status.OUTPUT_LIMIT, (
            f"stopped: its files passed {limits.max_disk_mb} MB or {MAX_ENTRIES} entries on disk (Limits.max_disk_mb)"
        )
    if stopped == "timeout":
        return Status.TIMEOUT, f"killed after the {limits.wall_time_s:g} s wall-clock budget"
    if code is None:
        return Status.INFRA_ERROR, "the sandbox ended without reporting the solution's exit status"
    if code == -signal.SIGXCPU:
        return Status.TIMEOUT, "killed by the CPU-time limit (SIGXCPU)"
    if oom_event or (code != 0 and _OOM_PATTERN.search(bytes(err.head) + bytes(err.tail))):
        return Status.OUT_OF_MEMORY, f"ran out of memory (limit {limits.memory_mb} MB)"
    if code < 0:
        return Status.KILLED, f"killed by {_signal_name(-code)}"
    if code != 0:
        return Status.ERROR, f"exited with code {code}: {_last_line(err)}"
    return Status.OK, ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _last_line(err: BoundedLog) -> str:
    lines = bytes(err.tail or err.head).decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1][:300] if lines else "(no stderr)"
