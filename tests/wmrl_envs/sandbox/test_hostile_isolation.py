"""Hostile solutions that attack other runs, the supervisor's cleanup or the machine's shared resources.

Each test states what a hostile solution tries, asserts how the run ends, that the caller survives, and that
nothing of it is left behind; they run on every backend the machine has (see conftest's `executor`).
"""

from __future__ import annotations

import os
import stat

import pytest

from wmrl_envs.sandbox import Limits, Status

SHORT = Limits(wall_time_s=20, memory_mb=512, max_processes=32, max_output_bytes=1 << 20)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs get their own uid only on a root host")
def test_a_run_cannot_swap_its_output_folder_for_another_runs(executor, competition, tmp_path):
    """Renaming OUTPUT_DIR away and leaving a symlink to another run's folder would get that run's file graded."""
    other = tmp_path / "other-run"
    other.mkdir()
    (other / "submission.csv").write_text("id,target\n3,1\n4,0\n")
    code = f"""
import os
out = os.environ["OUTPUT_DIR"]
try:
    os.rename(out, out + "-moved")
    os.symlink({str(other)!r}, out)
    print("SWAPPED")
except OSError as exc:
    print("REFUSED", type(exc).__name__)
"""
    result = executor.run(code, competition.workdir, competition.public, SHORT)
    assert result.status is Status.OK, result
    assert "SWAPPED" not in result.stdout
    assert competition.workdir.is_dir() and not competition.workdir.is_symlink()
    assert result.submission_path is None
    mode = os.stat(competition.workdir)
    assert mode.st_uid == os.geteuid() and not mode.st_mode & stat.S_IRWXO


def test_no_process_a_run_can_see_carries_its_launcher_config_on_a_command_line(executor, competition):
    """The launcher's config (paths, environment) reaches it through a private file descriptor."""
    code = """
import os
leaks = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            line = f.read()
        leaks += b"SUBMISSION_PATH" in line and os.environ["OUTPUT_DIR"].encode() in line
    except OSError:
        pass
print("LEAKS", leaks)
"""
    result = executor.run(code, competition.workdir, competition.public, SHORT)
    assert result.status is Status.OK, result
    assert "LEAKS 0" in result.stdout


@pytest.mark.slow
def test_memory_is_bounded_for_the_whole_run_not_per_process(executor, competition, assert_nothing_left):
    """Four children holding 400 MB each pass a per-process 1 GB limit; the run as a whole must not."""
    code = """
import os, time
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(400 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(3)
        os._exit(0)
    children.append(pid)
held = all(os.waitpid(pid, 0)[1] == 0 for pid in children)
print("ALL HELD" if held else "SOME KILLED")
raise SystemExit(0 if held else 1)
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=30, memory_mb=1024))
    if executor.name == "local" and not result.extra.get("cgroup"):
        pytest.skip("no writable cgroup hierarchy here: the local backend bounds memory per process only")
    assert result.status is Status.OUT_OF_MEMORY, result
    assert "ALL HELD" not in result.stdout
    assert_nothing_left(result)


@pytest.mark.slow
def test_a_busy_multithreaded_run_gets_no_more_than_its_cpu_share(executor, competition):
    """Limits.cpus is a bound on CPU time, not only a hint to thread pools: two spinning processes get one core."""
    code = """
import os, time
end = time.monotonic() + 4
if os.fork() == 0:
    while time.monotonic() < end:
        pass
    os._exit(0)
while time.monotonic() < end:
    pass
os.wait()
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=20, cpus=1))
    assert result.status is Status.OK, result
    if not result.extra.get("cpu_bound"):
        pytest.skip(f"{executor.name}: no writable cpu controller here; the CPU share is not enforced")
    assert result.cpu_s < 1.3 * result.wall_s


@pytest.mark.slow
def test_many_files_within_the_per_file_limit_stop_at_the_disk_bound(executor, competition, assert_nothing_left):
    """Twelve 100 MB files pass a 150 MB per-file limit; the run is stopped soon after 300 MB of them.

    Four times the bound: a poll every few tens of milliseconds stops it long before it is all written.
    """
    code = """
import os
block = b"x" * (1 << 20)
for i in range(12):
    with open(os.path.join(os.environ["OUTPUT_DIR"], f"fill-{i}.bin"), "wb") as f:
        for _ in range(100):
            f.write(block)
    print("wrote", i, flush=True)
print("ALL WRITTEN")
"""
    limits = Limits(wall_time_s=60, memory_mb=512, max_file_mb=150, max_disk_mb=300)
    result = executor.run(code, competition.workdir, competition.public, limits)
    assert result.status is Status.OUTPUT_LIMIT, result
    assert "300 MB" in result.message and "ALL WRITTEN" not in result.stdout
    assert_nothing_left(result)


@pytest.mark.slow
def test_a_tree_too_deep_for_shutil_is_removed_and_the_caller_survives(executor, competition, tmp_path):
    """A 3,000-level tree in the output and temp folders makes shutil.rmtree raise RecursionError."""
    from wmrl_envs.sandbox.rundir import scratch_dir

    code = """
import os
for base in (os.environ["OUTPUT_DIR"], os.environ["TMPDIR"]):
    os.chdir(base)
    for _ in range(3000):
        os.mkdir("d")
        os.chdir("d")
print("DEEP", os.environ["TMPDIR"])
"""
    with scratch_dir("wmrl-deep-", tmp_path) as workdir:
        result = executor.run(code, workdir, competition.public, Limits(wall_time_s=60))
    assert result.status is Status.OK, result
    assert not workdir.exists()
    if executor.name == "local":
        assert not os.path.exists(result.stdout.split()[-1])


@pytest.mark.skipif(os.geteuid() != 0, reason="private scratch needs a root host (mount and IPC namespaces)")
def test_shared_scratch_and_shared_memory_are_private_to_each_run(executor, competition, tmp_path):
    """Files in /tmp, /var/tmp and /dev/shm and SysV segments must neither reach the host nor a later run."""
    plant = """
import ctypes, os
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        with open(os.path.join(folder, "wmrl-planted"), "w") as f:
            f.write("secret")
        print("PLANTED", folder)
    except OSError as exc:
        print("REFUSED", folder, type(exc).__name__)
libc = ctypes.CDLL(None, use_errno=True)
print("SHMID", libc.shmget(0x5EC12E7, 4096, 0o1666))
"""
    first = executor.run(plant, competition.workdir, competition.public, SHORT)
    assert first.status is Status.OK, first
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        assert not os.path.exists(os.path.join(folder, "wmrl-planted")), f"{folder} of the host got a run's file"
    look = """
import ctypes, os
print("FOUND", [f for f in ("/tmp", "/var/tmp", "/dev/shm") if os.path.exists(os.path.join(f, "wmrl-planted"))])
libc = ctypes.CDLL(None, use_errno=True)
print("SEGMENT", libc.shmget(0x5EC12E7, 0, 0))
"""
    second = executor.run(look, tmp_path / "work2", competition.public, SHORT)
    assert second.status is Status.OK, second
    assert "FOUND []" in second.stdout
    assert "SEGMENT -1" in second.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="runs drop privileges only on a root host")
def test_setuid_programs_cannot_raise_a_runs_privileges(executor, competition):
    code = """
import os, subprocess
print("EUID", os.geteuid())
print("NNP", [l.split()[1] for l in open("/proc/self/status") if l.startswith("NoNewPrivs")][0])
"""
    result = executor.run(code, competition.workdir, competition.public, SHORT)
    assert result.status is Status.OK, result
    assert "EUID 0" not in result.stdout
    assert "NNP 1" in result.stdout
