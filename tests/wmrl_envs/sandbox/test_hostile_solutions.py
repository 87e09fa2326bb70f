"""Hostile solutions are contained, reported with a clear status, and leave nothing running."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from wmrl_envs.sandbox import Limits, Status

SHORT = Limits(wall_time_s=3, memory_mb=512, max_processes=32, max_output_bytes=1 << 20)


def test_infinite_loop_times_out_on_the_wall_clock(executor, competition, assert_nothing_left):
    result = executor.run("while True:\n    pass", competition.workdir, competition.public, SHORT)
    assert result.status is Status.TIMEOUT and result.timed_out and result.killed
    assert "3 s wall-clock budget" in result.message
    assert 2.9 < result.wall_s < 3 + 4
    assert_nothing_left(result)


@pytest.mark.parametrize("alloc", ["bytearray(30 * 2**30)", "import numpy; numpy.ones(30 * 2**30 // 8)"])
def test_allocating_30_gb_fails_fast_without_hurting_the_machine(executor, competition, alloc):
    result = executor.run(alloc, competition.workdir, competition.public, SHORT)
    assert result.status is Status.OUT_OF_MEMORY, result
    assert "512 MB" in result.message
    assert result.wall_s < 15


def test_growing_memory_hits_the_limit(executor, competition):
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(32 * 2**20))"
    limits = Limits(wall_time_s=20, memory_mb=256)
    result = executor.run(code, competition.workdir, competition.public, limits)
    assert result.status is Status.OUT_OF_MEMORY, result
    assert 100 < result.peak_mb < 300


@pytest.mark.slow
def test_fork_bomb_is_bounded_by_the_process_limit_then_killed(executor, competition, assert_nothing_left):
    code = """
import os, sys, time
forks = 0
while True:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        forks += 1
    except OSError:
        break
print("forks", forks, flush=True)
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    result = executor.run(code, competition.workdir, competition.public, SHORT)
    assert result.status is Status.TIMEOUT, result
    forks = int(result.stdout.split()[1])
    assert 0 < forks < SHORT.max_processes
    assert_nothing_left(result)
    after = executor.run("print('still fine')", competition.workdir, competition.public, SHORT)
    assert after.status is Status.OK and "still fine" in after.stdout


def test_stdout_flood_stops_at_the_output_limit_with_bounded_logs(executor, competition, assert_nothing_left):
    result = executor.run("while True:\n    print('x' * 1000)", competition.workdir, competition.public, SHORT)
    assert result.status is Status.OUTPUT_LIMIT and result.killed
    assert result.extra["stdout_bytes"] > SHORT.max_output_bytes
    assert len(result.stdout) <= SHORT.log_tail_bytes + 100
    assert "bytes cut" in result.stdout
    assert result.wall_s < 3
    assert_nothing_left(result)


@pytest.fixture
def host_listener():
    """A TCP listener on the host's 127.0.0.1 that records whether anyone connected."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    connected = threading.Event()
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            connected.set()
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], connected
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("target", ["outside", "host-loopback"])
def test_network_is_unreachable(executor, competition, host_listener, target):
    port, connected = host_listener
    address = ("1.1.1.1", 80) if target == "outside" else ("127.0.0.1", port)
    code = f"""
import socket
try:
    socket.create_connection({address!r}, timeout=2).close()
    print("CONNECTED")
except OSError as exc:
    print("BLOCKED", exc)
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=20))
    assert result.status is Status.OK, result
    assert "BLOCKED" in result.stdout
    time.sleep(0.1)
    assert not connected.is_set()


def test_writes_outside_the_output_dir_fail(executor, competition):
    targets = [competition.victim, competition.public / "train.csv", competition.public / "new.csv", "/etc/wmrl-pwned"]
    code = f"""
for path in {[str(t) for t in targets]!r}:
    try:
        with open(path, "a") as f:
            f.write("pwned")
        print("WROTE", path)
    except OSError as exc:
        print("DENIED", path, type(exc).__name__)
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=20))
    assert result.status is Status.OK, result
    assert "WROTE" not in result.stdout
    assert competition.victim.read_text() == "untouched\n"
    assert "pwned" not in (competition.public / "train.csv").read_text()
    assert not (competition.public / "new.csv").exists()


def test_private_answers_are_not_readable_from_the_sandbox(executor, competition):
    code = f"""
import os
for path in ({str(competition.answers)!r}, {str(competition.private)!r}):
    try:
        print("READ", open(path).read() if os.path.isfile(path) else os.listdir(path))
    except OSError as exc:
        print("DENIED", type(exc).__name__)
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=20))
    assert result.status is Status.OK, result
    assert "READ" not in result.stdout
    assert "0.123456789" not in result.stdout + result.stderr


def test_setsid_double_forked_grandchild_dies_with_the_run(executor, competition, assert_nothing_left):
    code = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        path = os.path.join(os.environ["OUTPUT_DIR"], "heartbeat")
        for beat in range(10_000):
            with open(path, "w") as f:
                f.write(str(beat))
            time.sleep(0.05)
    os._exit(0)
time.sleep(0.5)
print("parent exits")
"""
    result = executor.run(code, competition.workdir, competition.public, Limits(wall_time_s=20))
    assert result.status is Status.OK, result
    heartbeat = competition.workdir / "heartbeat"
    first = heartbeat.read_text()
    time.sleep(0.4)
    assert heartbeat.read_text() == first, "the grandchild kept running after run() returned"
    assert_nothing_left(result)


def test_a_run_finds_nothing_left_by_an_earlier_run(executor, competition):
    # An unprivileged local run shares the host's /dev/shm (it is not a boundary); every other run has its own.
    shared = executor.name == "local" and os.geteuid() != 0
    folders = '[os.environ["TMPDIR"], os.environ["OUTPUT_DIR"]]' + (' + ["/dev/shm"]' if not shared else "")
    plant = f"""
import os, numpy
numpy.planted = "secret-A"
for folder in {folders}:
    with open(os.path.join(folder, "planted.txt"), "w") as f:
        f.write("secret-A")
"""
    first = executor.run(plant, competition.workdir, competition.public, Limits(wall_time_s=30))
    assert first.status is Status.OK, first
    look = f"""
import os, numpy
print("GLOBAL", getattr(numpy, "planted", None))
for folder in {folders} + [{str(competition.workdir)!r}]:
    try:
        print("FOUND", folder, open(os.path.join(folder, "planted.txt")).read())
    except OSError as exc:
        print("NOTHING", folder, type(exc).__name__)
"""
    second = executor.run(look, competition.root / "work2", competition.public, Limits(wall_time_s=30))
    assert second.status is Status.OK, second
    assert "GLOBAL None" in second.stdout
    assert "secret-A" not in second.stdout, second.stdout
