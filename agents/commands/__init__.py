"""Subcommands of ``wmrl``: one module each (tasks, run, demo, world-model, train, bench, compare, sft, libero-*).

Each module here defines ``add_command(subparsers)``, which adds one subcommand and sets
its ``func``; `wmrl_agents.cli` discovers them by name, so a new command is a new module.
Keep these modules light: import torch, the policies and the task families inside the command function.
"""
