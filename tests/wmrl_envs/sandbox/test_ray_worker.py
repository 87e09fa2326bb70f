"""A sandbox slot runs with its node's backend and brings the run's output folder back, within a budget."""

from __future__ import annotations

import os
from pathlib import Path

from wmrl_envs.sandbox import Limits, Status
from wmrl_envs.sandbox.ray_worker import SandboxWorker, read_outputs


def test_outputs_come_back_submission_first_without_links_and_within_the_budget(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights.bin").write_bytes(b"w" * 100)
    (tmp_path / "a.txt").write_bytes(b"a" * 10)
    (tmp_path / "submission.csv").write_bytes(b"s" * 50)
    (tmp_path / "answers").symlink_to("/etc/passwd")
    outputs = read_outputs(tmp_path, max_bytes=70)
    assert [name for name, _ in outputs.files] == ["submission.csv", "a.txt"]
    assert outputs.left_out == ["model/weights.bin (100 bytes)"]


def test_a_slot_reports_a_missing_backend_instead_of_failing_later(tmp_path: Path) -> None:
    worker = SandboxWorker("bwrap", {"bwrap": "/nonexistent/bwrap"}, str(tmp_path))
    info = worker.ready()
    assert info["backend"] is None and "bubblewrap not found at /nonexistent/bwrap" in info["problem"]
    result, outputs = worker.run("print(1)", str(tmp_path), Limits(wall_time_s=10), 1 << 20)
    assert result.status is Status.INFRA_ERROR and "cannot run its sandbox" in result.message
    assert outputs.files == []


def test_a_slot_runs_against_shared_data_and_returns_its_files(competition) -> None:
    worker = SandboxWorker("auto", {}, None)
    code = (
        "import os\nopen(os.environ['SUBMISSION_PATH'], 'w').write(open(os.environ['DATA_DIR'] + '/test.csv').read())"
    )
    result, outputs = worker.run(code, str(competition.public), Limits(wall_time_s=30, memory_mb=1024), 1 << 20)
    assert result.status is Status.OK, result.message
    assert result.submission_path is None and result.extra["data_fetched"] is False
    assert outputs.files == [("submission.csv", (competition.public / "test.csv").read_bytes())]


def test_a_new_slot_removes_the_output_folders_of_slots_killed_mid_run(tmp_path: Path, monkeypatch) -> None:
    import subprocess
    import sys
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    orphan = tmp_path / f"wmrl-ray-out-{gone.stdout.strip()}-abc"
    (orphan / "model").mkdir(parents=True)
    (orphan / "model" / "weights.bin").write_bytes(b"w")
    running = tmp_path / f"wmrl-ray-out-{os.getpid()}-def"
    running.mkdir()
    unrelated = tmp_path / "wmrl-ray-out-notapid"
    unrelated.mkdir()
    SandboxWorker("bwrap", {"bwrap": "/nonexistent/bwrap"}, str(tmp_path / "cache"))
    assert not orphan.exists()
    assert running.exists() and unrelated.exists()
