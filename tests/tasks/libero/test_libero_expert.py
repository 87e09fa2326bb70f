"""The scripted expert solves a real libero_object task from an official initial state, without cameras."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytestmark = pytest.mark.slow


def test_expert_puts_the_alphabet_soup_in_the_basket_from_initial_state_0(libero_assets: Path) -> None:
    from wmrl_tasks.libero.expert import run_expert

    env = gym.make("WMRL-LIBERO-v0", suite="libero_object", task_id=0, cameras=(), assets_dir=libero_assets)
    actions: list[np.ndarray] = []
    try:
        episode = run_expert(env.unwrapped, init_state=0, seed=0, on_step=lambda obs, action: actions.append(action))
        horizon = env.unwrapped.horizon
    finally:
        env.close()
    assert episode.success and episode.init_state == 0
    assert 0 < episode.steps < horizon and len(actions) == episode.steps
    stacked = np.stack(actions)
    assert stacked.shape == (episode.steps, 7) and np.all(np.abs(stacked) <= 1.0)
    assert set(np.unique(stacked[:, 6])) == {-1.0, 1.0}  # it grasped and released


def test_expert_refuses_a_goal_it_cannot_script(libero_assets: Path) -> None:
    from wmrl_tasks.libero.expert import ScriptedExpert, UnsupportedTask

    env = gym.make("WMRL-LIBERO-v0", suite="libero_goal", task_id=0, cameras=(), assets_dir=libero_assets)
    try:
        env.reset(seed=0, options={"init_state": 0})
        goal = env.unwrapped.simulator.parsed_problem["goal_state"]
        with pytest.raises(UnsupportedTask, match="libero_goal/0"):
            ScriptedExpert(env.unwrapped).act()
    finally:
        env.close()
    assert str(goal[0][0]).lower() not in ("on", "in")
