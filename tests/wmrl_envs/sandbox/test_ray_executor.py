"""The Ray executor runs real sandboxed solutions on a local 2-CPU Ray and never hangs on faults."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gymnasium as gym
import pytest

from wmrl_envs.sandbox import Limits, SandboxUnavailable, Status, make_executor
from wmrl_envs.sandbox.ray_cluster import RayUnavailable, ResourceRequestTooLarge
from wmrl_envs.sandbox.ray_executor import RayExecutor

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow

FAST_TASK = "telco-customer-churn"
LIMITS = Limits(wall_time_s=60, memory_mb=1024)
WRITE_SUBMISSION = """
import os
print(sorted(os.listdir(os.environ["DATA_DIR"])))
open(os.path.join(os.environ["OUTPUT_DIR"], "notes.txt"), "w").write("kept")
open(os.environ["SUBMISSION_PATH"], "w").write("id,target\\n3,1\\n4,0\\n")
"""
SLEEP_THEN_SUBMIT = """
import os, time
time.sleep(4)
open(os.environ["SUBMISSION_PATH"], "w").write("id,target\\n3,1\\n4,0\\n")
"""


@pytest.fixture(scope="module")
def ray_cluster(isolated_cache: Path):
    """One local Ray with 2 CPUs for the module; its workers inherit the isolated cache dir."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def _slot_names() -> set[tuple[str, str]]:
    return {
        (actor["name"], actor["namespace"])
        for actor in ray.util.list_named_actors(all_namespaces=True)
        if actor["name"].startswith("wmrl-sandbox-")
    }


def test_the_env_runs_and_grades_a_real_solution_on_ray(ray_cluster, pool_root) -> None:
    from wmrl_tasks.mledojo.pool.baselines import baseline_code

    env = gym.make("WMRL-MLEDojo-v0", task=FAST_TASK, data_root=pool_root, executor="ray", time_limit_s=120)
    try:
        env.reset(seed=0)
        _, reward, _, _, info = env.step(baseline_code(FAST_TASK))
    finally:
        env.unwrapped.reward_source.executor.close()
        env.close()
    assert info["exec"]["status"] == "ok", info["exec"]["message"]
    assert info["exec"]["backend"].startswith("ray/")
    assert info["valid"] is True and reward > 0


def test_public_data_is_unpacked_once_per_node_and_outputs_come_back(ray_cluster, competition, tmp_path) -> None:
    cache = tmp_path / "node-cache"
    with RayExecutor(workers=2, node_cache_dir=str(cache)) as executor:
        workdirs = [competition.root / f"out{i}" for i in range(3)]
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda w: executor.run(WRITE_SUBMISSION, w, competition.public, LIMITS), workdirs))
    assert [r.status for r in results] == [Status.OK] * 3, [r.message for r in results]
    assert sum(bool(r.extra["data_fetched"]) for r in results) == 1
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == [results[0].extra["data_digest"]]
    for result, workdir in zip(results, workdirs, strict=True):
        assert result.stdout.strip() == "['test.csv', 'train.csv']"
        assert result.submission_path == workdir / "submission.csv"
        assert (workdir / "notes.txt").read_text() == "kept"


def test_timeouts_and_crashes_get_the_local_backends_statuses(ray_cluster, competition) -> None:
    with RayExecutor(workers=1) as executor:
        slow = executor.run(
            "import time\nprint('started', flush=True)\ntime.sleep(60)",
            competition.workdir,
            competition.public,
            Limits(wall_time_s=2, memory_mb=1024),
        )
        crash = executor.run("raise ValueError('boom')", competition.workdir, competition.public, LIMITS)
    assert slow.status is Status.TIMEOUT and slow.timed_out and "started" in slow.stdout
    assert slow.wall_s < 45, "stopped at its limit, not after the program's 60 s"
    assert crash.status is Status.ERROR and "ValueError: boom" in crash.stderr
    assert crash.submission_path is None


def test_a_run_without_an_answer_by_its_budget_is_an_infra_error_and_its_slot_is_replaced(
    ray_cluster, competition
) -> None:
    with RayExecutor(workers=1, margin_s=0.001) as executor:
        started = time.monotonic()
        stuck = executor.run("import time\ntime.sleep(60)", competition.workdir, competition.public,
                             Limits(wall_time_s=1, memory_mb=1024))  # fmt: skip
        elapsed = time.monotonic() - started
        after = executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, LIMITS)
    assert stuck.status is Status.INFRA_ERROR and "no answer from the sandbox" in stuck.message
    assert elapsed < 45, "given up at its budget, not after the program's 60 s"
    assert after.status is Status.OK, after.message


@pytest.mark.parametrize("retries", [1, 0])
def test_a_slot_killed_mid_run_is_retried_or_reported(ray_cluster, competition, retries) -> None:
    with RayExecutor(workers=1, retries=retries) as executor:
        before = _slot_names()
        assert executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, LIMITS).ok
        (slot,) = _slot_names() - before
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(executor.run, SLEEP_THEN_SUBMIT, competition.workdir, competition.public, LIMITS)
            time.sleep(1.5)
            ray.kill(ray.get_actor(slot[0], namespace=slot[1]))
            result = future.result(timeout=60)
        after = executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, LIMITS)
    if retries:
        assert result.status is Status.OK and result.extra["attempts"] == 2, result.message
        assert "ActorDiedError" in result.extra["lost"][0]
    else:
        assert result.status is Status.INFRA_ERROR
        assert "lost the sandbox slot 1 times" in result.message
    assert after.status is Status.OK, after.message


def test_a_run_larger_than_every_node_is_refused_at_submission(ray_cluster, competition) -> None:
    with RayExecutor(num_gpus=1) as executor, pytest.raises(ResourceRequestTooLarge, match="1 GPU.*no node"):
        executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, LIMITS)
    with RayExecutor() as executor, pytest.raises(ResourceRequestTooLarge, match="8 CPU"):
        executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, Limits(cpus=8, memory_mb=1024))


def test_a_node_without_the_backend_is_named_when_the_slots_start(ray_cluster, competition) -> None:
    executor = RayExecutor(workers=1, backend="bwrap", backend_kwargs={"bwrap": "/nonexistent/bwrap"})
    with executor, pytest.raises(SandboxUnavailable, match=r"node \S+ cannot run the 'bwrap' sandbox backend: .*"
                                 r"bubblewrap not found at /nonexistent/bwrap"):  # fmt: skip
        executor.run(WRITE_SUBMISSION, competition.workdir, competition.public, LIMITS)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_unreachable_address_fails_fast_with_a_clear_error(scheme) -> None:
    address = f"{scheme}127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    with pytest.raises(RayUnavailable, match=f"no Ray cluster answers at {address}"):
        make_executor("ray", address=address, connect_timeout_s=2)
    assert time.monotonic() - started < 5


def test_wmrl_run_with_executor_ray_reports_an_unreachable_ray_address(pool_root, tmp_path, monkeypatch, capsys):
    from wmrl_agents.cli import main

    solution = tmp_path / "solution.py"
    solution.write_text("print(1)\n")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{_closed_port()}")
    code = main(["run", "--executor", "ray", "--task", FAST_TASK, "--data-root", str(pool_root), str(solution)])
    assert code == 2
    assert "no Ray cluster answers at 127.0.0.1:" in capsys.readouterr().err
