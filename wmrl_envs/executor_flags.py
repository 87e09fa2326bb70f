"""The sandbox flags every command that runs solutions shares: ``--executor`` and ``--ray-*``.

``wmrl run``, ``demo``, ``world-model collect``, ``bench``, ``train`` and ``compare`` run solutions,
and any of them may send the runs to a Ray cluster, so they take the same flags, added
here once, and turn them into an executor the same way. The Ray flags mean nothing to the
other backends; given with one of them they are an error, not silently dropped.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_executor_flags(parser)
    >>> args = parser.parse_args(["--executor", "ray", "--ray-address", "head:6379", "--ray-gpus", "1"])
    >>> ray_options(args, args.executor)
    RayOptions(address='head:6379', cpus=None, gpus=1.0, memory_mb=None)
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from wmrl_envs.sandbox.base import Executor, Limits
from wmrl_envs.sandbox.factory import BACKENDS, make_executor
from wmrl_envs.sandbox.ray_options import RayOptions

__all__ = [
    "EXECUTOR_HELP",
    "RAY_FLAGS",
    "add_executor_flags",
    "executor_from_flags",
    "ray_flag_args",
    "ray_flags_given",
    "ray_options",
]

EXECUTOR_HELP = (
    "sandbox backend (default: {default}); ray runs on a Ray cluster (--ray-address, else $RAY_ADDRESS, else a "
    'local Ray started on demand; pip install "wmrl[ray]")'
)
RAY_FLAGS = {"ray_address": "address", "ray_cpus": "cpus", "ray_gpus": "gpus", "ray_memory_mb": "memory_mb"}
"""argparse destination of each Ray flag -> the `RayOptions` field it sets."""


def _at_least(minimum: float, kind: type) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            whole = "whole " if kind is int else ""
            raise argparse.ArgumentTypeError(f"expected a {whole}number, got {text!r}") from None
        if not value >= minimum or value == math.inf:
            raise argparse.ArgumentTypeError(f"must be at least {minimum:g}, got {text!r}")
        return value

    return parse


def add_executor_flags(parser: argparse.ArgumentParser, default: str | None = "auto", shown: str = "auto") -> None:
    """Add ``--executor`` (default `default`, described as `shown`) and the ``--ray-*`` flags to `parser`."""
    parser.add_argument("--executor", default=default, choices=BACKENDS, help=EXECUTOR_HELP.format(default=shown))
    ray = parser.add_argument_group("Ray cluster (with --executor ray)")
    ray.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="'host:port', 'ray://host:port' or 'auto' (default: $RAY_ADDRESS, else a local Ray)",
    )
    ray.add_argument(
        "--ray-cpus",
        type=_at_least(1, int),
        default=None,
        metavar="N",
        help="CPUs each run reserves on its node and may use (default: 1)",
    )
    ray.add_argument(
        "--ray-gpus",
        type=_at_least(0, float),
        default=None,
        metavar="N",
        help="GPUs each run reserves on its node (default: 0)",
    )
    ray.add_argument(
        "--ray-memory-mb",
        type=_at_least(0, int),
        default=None,
        metavar="MB",
        help="memory each run reserves on its node and may use, over any --memory-mb "
        "(default: the run's memory limit; 0: reserve none)",
    )


def ray_flags_given(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--ray-*`` flags given on the command line, as `RayOptions` fields."""
    return {field: getattr(args, dest) for dest, field in RAY_FLAGS.items() if getattr(args, dest, None) is not None}


def ray_flag_args(args: argparse.Namespace) -> list[str]:
    """The ``--ray-*`` flags given, spelled out again (for a command line that reproduces a run)."""
    return RayOptions(**ray_flags_given(args)).flags()


def ray_options(args: argparse.Namespace, executor: str | None) -> RayOptions | None:
    """The Ray options of a run whose backend is `executor`: None for other backends, which refuse ``--ray-*``."""
    given = ray_flags_given(args)
    if executor != "ray":
        if given:
            flags = ", ".join(f"--{dest.replace('_', '-')}" for dest, field in RAY_FLAGS.items() if field in given)
            raise ValueError(f"{flags} only apply to --executor ray (the backend is {executor or 'auto'}); "
                             "add --executor ray or drop them")  # fmt: skip
        return None
    return RayOptions(**given)


def executor_from_flags(args: argparse.Namespace, limits: Limits) -> tuple[Executor, Limits]:
    """The executor ``--executor`` and ``--ray-*`` name, and `limits` with what a Ray run reserves applied.

    An unreachable ``--ray-address`` fails here within seconds (`RayUnavailable`), never a wait.
    """
    options = ray_options(args, args.executor)
    if options is None:
        return make_executor(args.executor), limits
    return make_executor("ray", **options.executor_kwargs()), options.limits(limits)
