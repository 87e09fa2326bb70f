"""Reward functions for other RL code: TRL's ``reward_funcs`` and verl's ``compute_score``.

Import the submodule you need (`wmrl_envs.integrations.trl`, `wmrl_envs.integrations.verl`);
neither imports its library, so both work without TRL or verl installed.
"""
