"""A training config's ``ray`` section reaches the runs' executor and limits, and only with ``executor: ray``."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from wmrl_agents.grpo.config import ConfigError, GRPOConfig, load_config
from wmrl_agents.grpo.sources import build_reward_source, executor_of, limits_of

from wmrl_envs.sandbox import LocalExecutor
from wmrl_envs.sandbox.ray_cluster import RayUnavailable
from wmrl_envs.sandbox.ray_options import RayOptions


def test_the_ray_section_round_trips_and_a_file_naming_some_keys_keeps_the_others(tmp_path: Path) -> None:
    config = GRPOConfig(executor="ray", ray={"address": "ray://head:10001", "gpus": 1})
    assert config.ray == RayOptions(address="ray://head:10001", gpus=1.0)
    assert GRPOConfig.from_dict(config.to_dict()) == config
    path = tmp_path / "more.yaml"
    path.write_text("ray:\n  cpus: 4\n", encoding="utf-8")
    assert load_config(path, base=config).ray == RayOptions(address="ray://head:10001", cpus=4, gpus=1.0)


@pytest.mark.parametrize(
    ("ray", "message"),
    [
        ({"cpus": 0}, "ray.cpus (CPUs each run reserves on a Ray node) must be a whole number >= 1"),
        ({"gpu": 1}, "unknown config key(s) 'ray.gpu'; known keys: ray.address, ray.cpus, ray.gpus, ray.memory_mb"),
        ("head:6379", "ray must be a mapping of address, cpus, gpus and memory_mb"),
    ],
)
def test_bad_ray_sections_are_refused_naming_the_key(ray: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        GRPOConfig(ray=ray)
    assert message in str(caught.value)


def test_runs_reserve_and_may_use_the_ray_section_s_cpus_and_memory_only_on_ray() -> None:
    ray = {"cpus": 4, "memory_mb": 16384}
    on_ray = limits_of(GRPOConfig(executor="ray", memory_mb=4096, ray=ray))
    assert (on_ray.cpus, on_ray.memory_mb) == (4, 16384)
    local = limits_of(GRPOConfig(executor="local", memory_mb=4096, ray=ray))
    assert (local.cpus, local.memory_mb) == (1, 4096)
    assert executor_of(GRPOConfig(executor="local", ray=ray)) == "local"


def test_an_unreachable_ray_address_in_the_config_is_a_clear_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(RayUnavailable, match=f"no Ray cluster answers at {address}"):
        executor_of(GRPOConfig(executor="ray", ray={"address": address}))


def test_the_corrected_source_runs_anchors_and_the_proxy_through_one_executor() -> None:
    executor = LocalExecutor()
    corrected = build_reward_source(GRPOConfig(reward="corrected", workers=1), executor=executor)
    assert corrected.real.executor is executor and corrected.world_model.predictor.executor is executor
