"""Runs are sized against every node before Ray could leave them pending, and bad addresses fail fast."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from wmrl_envs.sandbox.ray_cluster import RayUnavailable, ResourceRequestTooLarge, RunShape, connect, slots_per_node

GIB = float(1 << 30)


def _node(address: str, cpu: float, gpu: float = 0.0, memory_gib: float = 64.0, alive: bool = True, **extra) -> dict:
    resources = {"CPU": cpu, "GPU": gpu, "memory": memory_gib * GIB, **extra}
    return {"NodeManagerAddress": address, "Alive": alive, "Resources": resources}


def test_slots_per_node_is_limited_by_the_scarcest_resource() -> None:
    nodes = [_node("gpu", 64, gpu=8), _node("cpu", 96), _node("dead", 64, gpu=8, alive=False)]
    assert slots_per_node(nodes, RunShape(cpus=4, gpus=1, memory_mb=16 * 1024)) == {"gpu": 4, "cpu": 0}
    assert slots_per_node(nodes, RunShape(cpus=4, gpus=1)) == {"gpu": 8, "cpu": 0}
    assert slots_per_node(nodes, RunShape(cpus=4)) == {"gpu": 16, "cpu": 24}


def test_a_custom_node_resource_keeps_runs_on_sandbox_nodes() -> None:
    nodes = [_node("head", 16), _node("sandbox", 16, sandbox=64.0)]
    assert slots_per_node(nodes, RunShape(cpus=2, node_resource="sandbox")) == {"head": 0, "sandbox": 8}


def test_a_run_larger_than_every_node_names_the_request_and_the_nodes() -> None:
    nodes = [_node("10.0.0.1", 8, gpu=1), _node("10.0.0.2", 8, gpu=1)]
    with pytest.raises(ResourceRequestTooLarge, match=r"2 GPU.*10\.0\.0\.1: 8 CPU, 1 GPU"):
        slots_per_node(nodes, RunShape(cpus=1, gpus=2))
    with pytest.raises(ResourceRequestTooLarge, match="no live node"):
        slots_per_node([_node("gone", 8, alive=False)], RunShape(cpus=1))


def test_run_shapes_speak_rays_resource_names() -> None:
    assert RunShape(cpus=2, gpus=0, memory_mb=1024).request() == {"CPU": 2.0, "memory": 1024.0 * (1 << 20)}


@pytest.mark.parametrize("address", ["no-port", "ray://host:", "host:http"])
def test_an_address_that_cannot_be_read_says_what_is_expected(address: str) -> None:
    with pytest.raises(RayUnavailable, match="expected 'host:port'"):
        connect(address)


def test_a_local_ray_listens_on_loopback_only(tmp_path) -> None:
    pytest.importorskip("ray", reason='Ray is not installed: pip install "wmrl[ray]"')
    code = """
        import psutil, ray
        from wmrl_envs.sandbox.ray_cluster import connect
        assert connect("local")
        print("NODE", ray.util.get_node_ip_address())
        ray_pids = [p.pid for p in psutil.Process().children(recursive=True)]
        for pid in ray_pids:
            for conn in psutil.Process(pid).net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    print("LISTEN", conn.laddr.ip)
        ray.shutdown()
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert "NODE 127.0.0.1" in lines
    listening = {line.split()[1] for line in lines if line.startswith("LISTEN")}
    assert listening, "no listening socket found: the check saw nothing"
    assert listening <= {"127.0.0.1", "::ffff:127.0.0.1"}, listening
