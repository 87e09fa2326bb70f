"""The ``wmrl`` command: one subcommand per module of `wmrl_agents.commands`, found by name.

The command line sits in the top layer because its commands reach every layer (the library's
sandbox and grader, the task families' pools, the agents' trainers); each command imports
what it runs inside its function, so ``wmrl --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from wmrl_agents import commands

from wmrl_envs import __version__, console
from wmrl_envs.errors import WmrlError

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wmrl`` console command; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (WmrlError, FileNotFoundError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        console.error(f"{type(exc).__name__}: {message}")
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wmrl", description="World Model RL: environments, grading and benchmarks.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}", help="print the version")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{module.name}").add_command(sub)
    return parser


if __name__ == "__main__":
    sys.exit(main())
