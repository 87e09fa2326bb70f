"""The three pipes of a run: stdout, stderr, and the launcher's usage report.

The run is over when the report pipe closes (its launcher has reaped every process it
started and written its usage), not when stdout closes: a solution may close its own
output and keep computing. Reading all three in one loop also enforces the deadline
and the output cap without threads.
"""

from __future__ import annotations

import json
import os
import selectors
import time

from wmrl_envs.sandbox.base import Limits
from wmrl_envs.sandbox.capture import BoundedLog
from wmrl_envs.sandbox.diskusage import DiskMeter

__all__ = ["RunStreams"]

_DRAIN_GRACE_S = 0.5


class RunStreams:
    """Pipes whose write ends go to the sandbox and whose read ends the supervisor pumps."""

    def __init__(self, limits: Limits) -> None:
        self.out, self.err = BoundedLog(limits.log_tail_bytes), BoundedLog(limits.log_tail_bytes)
        self.max_output_bytes = limits.max_output_bytes
        self.stdout_r, self.stdout_w = os.pipe()
        self.stderr_r, self.stderr_w = os.pipe()
        self.report_r, self.report_w = os.pipe()
        self._report = bytearray()
        self._report_open = True
        self._sel = selectors.DefaultSelector()
        for fd, log in ((self.stdout_r, self.out), (self.stderr_r, self.err), (self.report_r, None)):
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ, log)

    @property
    def child_ends(self) -> tuple[int, int, int]:
        """Write ends for the sandbox: (stdout, stderr, report)."""
        return self.stdout_w, self.stderr_w, self.report_w

    def close_child_ends(self) -> None:
        """Close our copies of the write ends, once the sandbox holds its own."""
        for fd in self.child_ends:
            os.close(fd)

    def pump(self, deadline: float, disk: DiskMeter | None = None) -> str | None:
        """Read until the report pipe closes; "timeout", "output-limit" or "disk-limit" when the run must stop.

        A run that ended with more on disk than the bound is "disk-limit" too, however fast it wrote.
        """
        stopped = self._pump(deadline, disk)
        if stopped is None and disk is not None and disk.over(now=True):
            return "disk-limit"
        return stopped

    def _pump(self, deadline: float, disk: DiskMeter | None) -> str | None:
        """The reading loop of `pump`, checking the disk bound whenever the meter is due."""
        closed_at = None
        while self._sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if disk is not None and closed_at is None and disk.over():
                return "disk-limit"
            if closed_at is not None and now - closed_at > _DRAIN_GRACE_S:
                return None
            wait = deadline - now if closed_at is None else min(deadline - now, _DRAIN_GRACE_S)
            if disk is not None and closed_at is None:  # once draining the meter is not read: no 0 s waits
                wait = min(wait, disk.wait_s())
            for key, _ in self._sel.select(timeout=wait):
                if self._read(key) and self.out.total + self.err.total > self.max_output_bytes:
                    return "output-limit"
            if not self._report_open and closed_at is None:
                closed_at = time.monotonic()
        return None

    def report(self, timeout: float) -> dict:
        """The launcher's JSON report, waiting up to `timeout` for it; {} when none came."""
        deadline = time.monotonic() + timeout
        while self._report_open and time.monotonic() < deadline:
            for key, _ in self._sel.select(timeout=max(0.0, deadline - time.monotonic())):
                self._read(key)
        try:
            return json.loads(self._report) if self._report else {}
        except json.JSONDecodeError:
            return {}

    def close(self) -> None:
        """Close every read end (write ends are closed by `close_child_ends`)."""
        self._sel.close()
        for fd in (self.stdout_r, self.stderr_r, self.report_r):
            os.close(fd)

    def _read(self, key: selectors.SelectorKey) -> bool:
        """Read one chunk from `key`'s pipe; True when it was output (stdout/stderr) data."""
        try:
            chunk = os.read(key.fd, 1 << 16)
        except BlockingIOError:
            return False
        if not chunk:
            self._sel.unregister(key.fd)
            if key.fd == self.report_r:
                self._report_open = False
            return False
        if key.data is None:
            self._report += chunk
            return False
        key.data.write(chunk)
        return True
