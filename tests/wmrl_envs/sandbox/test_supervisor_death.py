"""A run's whole process tree dies with the process supervising it, however that process dies.

The solution here starts a grandchild in a session of its own and then becomes a long
sleep; both carry a unique token in their command line, which is how the test finds them
from the host (under bubblewrap the pids a solution sees are not the host's). Killing the
supervisor, the supervisor together with its direct children (what Ray does to a dead
worker) or a Ray slot mid-run must leave neither behind.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from wmrl_envs.sandbox import BwrapExecutor, Limits, Status
from wmrl_envs.sandbox.proctree import alive, children

pytestmark = pytest.mark.slow

BACKENDS = ["local", "bwrap"]
LIMITS = Limits(wall_time_s=60, memory_mb=1024)
GONE_WITHIN_S = 5.0


def _solution(token: str) -> str:
    return f"""
import os, subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "{token}-grandchild"], start_new_session=True)
os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "{token}-solution"])
"""


def _processes_with(token: str) -> set[int]:
    """Live processes whose command line ends with an argument starting with `token`."""
    found = set()
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                last = f.read().rstrip(b"\0").rsplit(b"\0", 1)[-1]
        except OSError:
            continue
        if last.startswith(token.encode()) and alive(int(name)):
            found.add(int(name))
    return found


def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.fixture
def token() -> Iterator[str]:
    """A token unique to the test; whatever still carries it at the end is killed so no test leaks."""
    value = f"wmrl-orphan-{secrets.token_hex(6)}"
    yield value
    for pid in _processes_with(value):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each process-based backend whose tree the supervisor owns; bwrap is skipped where it cannot run."""
    if request.param == "bwrap":
        problem = BwrapExecutor().probe()
        if problem is not None:
            pytest.skip(f"bwrap backend unavailable: {problem}")
    return request.param


def _assert_tree_dies(token: str) -> None:
    assert _wait_for(lambda: not _processes_with(token), GONE_WITHIN_S), (
        f"solution processes {sorted(_processes_with(token))} outlived their supervisor by {GONE_WITHIN_S:g} s"
    )


@pytest.mark.parametrize("with_children", [False, True], ids=["supervisor", "supervisor-and-its-children"])
def test_the_solution_tree_dies_with_its_supervising_process(backend, competition, token, with_children) -> None:
    driver = f"""
from pathlib import Path
from wmrl_envs.sandbox import Limits, make_executor
make_executor({backend!r}).run({_solution(token)!r}, Path({str(competition.workdir)!r}),
                               Path({str(competition.public)!r}), Limits(wall_time_s=60, memory_mb=1024))
"""
    supervisor = subprocess.Popen([sys.executable, "-c", driver])
    try:
        assert _wait_for(lambda: len(_processes_with(token)) == 2, 60), "the solution and its grandchild never started"
        doomed = children(supervisor.pid) if with_children else set()
        supervisor.kill()
        for pid in doomed:
            os.kill(pid, signal.SIGKILL)
    finally:
        supervisor.kill()
        supervisor.wait()
    _assert_tree_dies(token)


@pytest.fixture(scope="module")
def ray_cluster(isolated_cache) -> Iterator[object]:
    """A local Ray with 2 CPUs for the module."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()


def _slot_names(ray) -> set[tuple[str, str]]:
    return {
        (actor["name"], actor["namespace"])
        for actor in ray.util.list_named_actors(all_namespaces=True)
        if actor["name"].startswith("wmrl-sandbox-")
    }


def test_killing_a_ray_slot_mid_run_kills_its_solution_tree(ray_cluster, backend, competition, token) -> None:
    from wmrl_envs.sandbox.ray_executor import RayExecutor

    ray = ray_cluster
    before = _slot_names(ray)
    with RayExecutor(workers=1, backend=backend, retries=0) as executor, ThreadPoolExecutor(1) as pool:
        future = pool.submit(executor.run, _solution(token), competition.workdir, competition.public, LIMITS)
        assert _wait_for(lambda: len(_processes_with(token)) == 2, 60), "the solution and its grandchild never started"
        ((name, namespace),) = _slot_names(ray) - before
        ray.kill(ray.get_actor(name, namespace=namespace))
        result = future.result(timeout=60)
    assert result.status is Status.INFRA_ERROR and "lost the sandbox slot" in result.message
    _assert_tree_dies(token)
