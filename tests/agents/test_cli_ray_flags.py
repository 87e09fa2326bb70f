"""Every ``wmrl`` command that runs solutions takes ``--executor ray`` with the ``--ray-*`` flags, the same way."""

from __future__ import annotations

import argparse
import shlex
import socket
from pathlib import Path

import pytest
from wmrl_agents.cli import main
from wmrl_agents.commands import bench

from wmrl_envs.executor_flags import ray_options

TASK = "telco-customer-churn"
TRAIN_TASK = "store-item-demand"
COMMANDS = ["run", "demo", "world-model collect", "bench", "train", "compare"]


def _closed_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def _argv(command: str, pool_root: Path, tmp_path: Path) -> list[str]:
    """A call of `command` that would run real solutions on the pool, up to the sandbox flags."""
    if command == "run":
        solution = tmp_path / "solution.py"
        solution.write_text("print(1)\n")
        return ["run", "--task", TASK, "--data-root", str(pool_root), str(solution)]
    if command == "demo":
        return ["demo", "--split", "held-out"]
    if command == "world-model collect":
        return ["world-model", "collect", "--out", str(tmp_path / "log.jsonl"), "--ids", TRAIN_TASK,
                "--variants", "baseline", "--data-root", str(pool_root)]  # fmt: skip
    if command == "bench":
        (tmp_path / "solutions").mkdir()
        return ["bench", "--policy", f"dir:{tmp_path / 'solutions'}", "--ids", TASK, "--data-root", str(pool_root),
                "--out-dir", str(tmp_path / "leaderboards")]  # fmt: skip
    if command == "compare":
        return ["compare", "--preset", "smoke", "--data-root", str(pool_root), "--run-dir", str(tmp_path / "runs"),
                "--out-dir", str(tmp_path / "leaderboards")]  # fmt: skip
    return ["train", "--policy", "program", "--preset", "smoke", "--out", str(tmp_path / "run")]


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_sends_its_runs_to_the_ray_address_given(command, pool_root, tmp_path, capsys) -> None:
    address = _closed_address()
    argv = [*_argv(command, pool_root, tmp_path), "--executor", "ray", "--ray-address", address, "--ray-gpus", "1"]
    assert main(argv) == 2
    assert f"no Ray cluster answers at {address}" in _err(capsys)
    assert not (tmp_path / "leaderboards").exists() and not (tmp_path / "log.jsonl").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_refuses_ray_flags_for_another_backend(command, pool_root, tmp_path, capsys) -> None:
    argv = [*_argv(command, pool_root, tmp_path), "--executor", "local", "--ray-cpus", "2", "--ray-memory-mb", "0"]
    assert main(argv) == 2
    assert "--ray-cpus, --ray-memory-mb only apply to --executor ray (the backend is local)" in _err(capsys)


def test_train_reads_the_ray_options_from_its_config_and_the_flags_win(pool_root, tmp_path, capsys) -> None:
    in_config, on_command_line = _closed_address(), _closed_address()
    config = tmp_path / "run.yaml"
    config.write_text(f"executor: ray\nray:\n  address: '{in_config}'\n  gpus: 1\n", encoding="utf-8")
    train = ["train", "--policy", "program", "--preset", "smoke", "--config", str(config)]
    assert main([*train, "--out", str(tmp_path / "a")]) == 2
    assert f"no Ray cluster answers at {in_config}" in _err(capsys)
    assert main([*train, "--out", str(tmp_path / "b"), "--ray-address", on_command_line]) == 2
    assert f"no Ray cluster answers at {on_command_line}" in _err(capsys)
    assert main([*train, "--out", str(tmp_path / "c"), "--executor", "local", "--ray-gpus", "1"]) == 2
    assert "--ray-gpus only apply to --executor ray (the backend is local)" in _err(capsys)


def test_the_bench_command_line_reproduces_the_ray_options() -> None:
    parser = argparse.ArgumentParser(prog="wmrl")
    bench.add_command(parser.add_subparsers())
    argv = ["bench", "--policy", "program", "--executor", "ray", "--ray-address", "ray://head:10001",
            "--ray-cpus", "4", "--ray-gpus", "1", "--ray-memory-mb", "16384"]  # fmt: skip
    args = parser.parse_args(argv)
    line = bench.command_line(args)
    assert "--ray-address ray://head:10001 --ray-cpus 4 --ray-gpus 1.0 --ray-memory-mb 16384" in line
    again = parser.parse_args(shlex.split(line)[1:])
    assert ray_options(again, again.executor) == ray_options(args, args.executor)
