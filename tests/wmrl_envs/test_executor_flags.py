"""``--executor`` and ``--ray-*`` parse into the options a Ray run gets, and refuse what cannot mean anything."""

from __future__ import annotations

import argparse
import re
import socket
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.executor_flags import add_executor_flags, executor_from_flags, ray_flag_args, ray_options
from wmrl_envs.sandbox import Limits, LocalExecutor
from wmrl_envs.sandbox.ray_cluster import RayUnavailable, RunShape
from wmrl_envs.sandbox.ray_options import RayOptions


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wmrl-test", exit_on_error=False)
    add_executor_flags(parser)
    return parser


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


options = st.builds(
    RayOptions,
    address=st.none() | st.from_regex(r"(ray://)?[a-z][a-z0-9.-]{0,20}:[1-9][0-9]{0,4}", fullmatch=True),
    cpus=st.none() | st.integers(1, 512),
    gpus=st.floats(0, 64, allow_nan=False, allow_infinity=False),
    memory_mb=st.none() | st.integers(0, 1 << 22),
)


@given(options)
def test_the_flags_of_any_options_parse_back_into_the_same_options(ray: RayOptions) -> None:
    args = _parser().parse_args(["--executor", "ray", *ray.flags()])
    assert ray_options(args, args.executor) == ray
    assert ray_flag_args(args) == ray.flags()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--ray-cpus", "0"], "argument --ray-cpus: must be at least 1, got '0'"),
        (["--ray-cpus", "2.5"], "argument --ray-cpus: expected a whole number, got '2.5'"),
        (["--ray-gpus", "-1"], "argument --ray-gpus: must be at least 0, got '-1'"),
        (["--ray-gpus", "nan"], "argument --ray-gpus: must be at least 0, got 'nan'"),
        (["--ray-memory-mb", "-1"], "argument --ray-memory-mb: must be at least 0, got '-1'"),
        (["--executor", "k8s"], "argument --executor: invalid choice: 'k8s'"),
    ],
)
def test_impossible_values_are_refused_by_the_parser_naming_the_flag(flags: list[str], message: str) -> None:
    with pytest.raises(argparse.ArgumentError, match=re.escape(message)):
        _parser().parse_args(["--executor", "ray", *flags])


@pytest.mark.parametrize("executor", ["auto", "bwrap", "local", "docker"])
def test_ray_flags_with_another_backend_are_an_error_not_silently_dropped(executor: str) -> None:
    args = _parser().parse_args(["--executor", executor, "--ray-gpus", "1", "--ray-address", "head:6379"])
    with pytest.raises(ValueError, match=f"--ray-address, --ray-gpus only apply to --executor ray .*{executor}"):
        ray_options(args, args.executor)
    assert ray_options(_parser().parse_args(["--executor", executor]), executor) is None


def test_another_backend_keeps_the_limits_it_was_given() -> None:
    limits = Limits(wall_time_s=30, memory_mb=1024)
    executor, applied = executor_from_flags(_parser().parse_args(["--executor", "local"]), limits)
    assert isinstance(executor, LocalExecutor) and applied == limits


def test_an_unreachable_ray_address_fails_within_seconds_naming_it() -> None:
    address = f"127.0.0.1:{_closed_port()}"
    args = _parser().parse_args(["--executor", "ray", "--ray-address", address])
    started = time.monotonic()
    with pytest.raises(RayUnavailable, match=f"no Ray cluster answers at {address}"):
        executor_from_flags(args, Limits())
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_the_flags_reach_the_ray_executor_and_the_run_s_reservation(isolated_cache) -> None:
    ray = pytest.importorskip("ray")
    args = _parser().parse_args(["--executor", "ray", "--ray-cpus", "2", "--ray-gpus", "0.5", "--ray-memory-mb", "0"])
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        executor, limits = executor_from_flags(args, Limits(memory_mb=1024))
        with executor:
            assert (executor.num_gpus, executor.request_memory) == (0.5, False)
            assert limits.cpus == 2 and limits.memory_mb == 1024
            assert executor.shape(limits) == RunShape(cpus=2.0, gpus=0.5, memory_mb=None)
    finally:
        ray.shutdown()
