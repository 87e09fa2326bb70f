"""What a run asks of a Ray cluster turns into the executor's arguments and the run's limits, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.sandbox import Limits
from wmrl_envs.sandbox.ray_options import RayOptions

options = st.builds(
    RayOptions,
    address=st.none() | st.sampled_from(["auto", "127.0.0.1:6379", "ray://head:10001"]),
    cpus=st.none() | st.integers(1, 256),
    gpus=st.floats(0, 64, allow_nan=False) | st.integers(0, 8),
    memory_mb=st.none() | st.integers(0, 1 << 20),
)
limits = st.builds(Limits, wall_time_s=st.floats(1, 1e4), memory_mb=st.integers(1, 1 << 16), cpus=st.integers(1, 64))


@given(options, limits)
def test_a_run_may_use_what_it_reserves_and_keeps_every_other_limit(ray: RayOptions, base: Limits) -> None:
    applied = ray.limits(base)
    assert applied.cpus == (base.cpus if ray.cpus is None else ray.cpus)
    assert applied.memory_mb == (ray.memory_mb if ray.memory_mb else base.memory_mb)
    assert (applied.wall_time_s, applied.max_processes, applied.max_file_mb) == (
        base.wall_time_s,
        base.max_processes,
        base.max_file_mb,
    )


@given(options)
def test_the_executor_gets_the_address_the_gpus_and_whether_memory_is_reserved(ray: RayOptions) -> None:
    kwargs = ray.executor_kwargs()
    assert kwargs == {"address": ray.address, "num_gpus": float(ray.gpus), "request_memory": ray.memory_mb != 0}


def test_the_defaults_ask_for_nothing_beyond_the_run_s_own_limits() -> None:
    base = Limits(memory_mb=2048, cpus=1)
    assert RayOptions().limits(base) == base
    assert RayOptions().executor_kwargs() == {"address": None, "num_gpus": 0.0, "request_memory": True}
    assert RayOptions().flags() == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cpus": 0}, r"cpus \(CPUs each run reserves on a Ray node\) must be a whole number >= 1, got 0"),
        ({"cpus": 1.5}, "cpus .* must be a whole number"),
        ({"gpus": -1}, "gpus .* must be a number >= 0, got -1"),
        ({"gpus": float("nan")}, "gpus .* must be a number >= 0"),
        ({"memory_mb": -5}, r"memory_mb .* whole number of MB >= 0 \(0: reserve none\), got -5"),
        ({"address": " "}, "address .* must be 'host:port', 'ray://host:port' or 'auto'"),
    ],
)
def test_impossible_requests_are_refused_naming_the_field(fields: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RayOptions(**fields)
