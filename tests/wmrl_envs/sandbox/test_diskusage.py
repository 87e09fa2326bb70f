"""The disk meter that stops a run writing past ``Limits.max_disk_mb``."""

from __future__ import annotations

import os
from pathlib import Path

from wmrl_envs.sandbox import diskusage
from wmrl_envs.sandbox.base import Limits
from wmrl_envs.sandbox.diskusage import disk_meter, measure


class _StoppedClock:
    """A clock that moves only when told, so "between polls" does not depend on the machine's speed."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _write(path: Path, mb: int) -> None:
    path.write_bytes(os.urandom(mb << 20))


def test_hard_links_count_once_and_symlinks_are_not_followed(tmp_path):
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir(), outside.mkdir()
    _write(run / "a.bin", 2)
    os.link(run / "a.bin", run / "a-again.bin")
    _write(outside / "big.bin", 8)
    (run / "link").symlink_to(outside)
    used, entries = measure([run])
    assert 2 << 20 <= used < 3 << 20
    assert entries == 3


def test_files_written_between_polls_are_caught_by_the_final_check(tmp_path, monkeypatch):
    """A run that writes past the bound and ends before the next poll is still found over it."""
    clock = _StoppedClock()
    monkeypatch.setattr(diskusage, "time", clock)
    meter = disk_meter(Limits(max_disk_mb=1), tmp_path, None)
    assert not meter.over()
    assert meter.wait_s() > 0
    _write(tmp_path / "fast.bin", 2)
    assert not meter.over(), "between polls the meter does not walk the folders"
    assert meter.over(now=True)
    assert meter.used_bytes >= 2 << 20
    clock.now += meter.wait_s() + 1.0
    assert meter.wait_s() == 0 and meter.over(), "once due, a poll walks the folders again"


def test_a_bound_not_passed_is_not_reported(tmp_path):
    meter = disk_meter(Limits(max_disk_mb=4), tmp_path)
    _write(tmp_path / "small.bin", 1)
    assert not meter.over(now=True)
