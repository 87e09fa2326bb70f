"""Subcommands of ``wmrl`` that drive agents (train, bench, compare).

Each module here defines ``add_command(subparsers)``, which adds one subcommand and sets
its ``func``; `wmrl_envs.cli` discovers them, so the library's own modules never import an
agent. Keep these modules light: import torch and the policies inside the command function.
"""
