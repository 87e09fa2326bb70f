"""WMRL-LIBERO-v0 scored by a reward source: the finished episode's frames go to the source, its score is the reward."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from wmrl_tasks.libero import ProgressWorldModel, sample_frames

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.wrappers import WithRewardSource

pytestmark = pytest.mark.slow

HOLD = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
HORIZON = 3


class _Unscorable:
    """A source that can never score (a world model whose server is down)."""

    name = "world_model"

    def score(self, batch: list[Any]) -> list[None]:
        return [None] * len(batch)


def _make(libero_assets: Path, cameras: tuple[str, ...] = ("image",)) -> gym.Env:
    return gym.make(
        "WMRL-LIBERO-v0", image_size=64, cameras=cameras, horizon=HORIZON, settle_steps=2, assets_dir=libero_assets
    )


def _run_episode(env: gym.Env) -> tuple[list[np.ndarray], list[float], dict[str, Any]]:
    observation, _ = env.reset(seed=0)
    frames, rewards, done = [observation["image"]], [], False
    while not done:
        observation, reward, terminated, truncated, info = env.step(HOLD)
        frames.append(observation["image"])
        rewards.append(reward)
        done = terminated or truncated
    return frames, rewards, info


def test_a_progress_world_model_pays_its_prediction_on_the_last_step(libero_assets: Path) -> None:
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    model = TinyProgressModel(ProgressModelConfig(frame_size=16))
    env = WithRewardSource(_make(libero_assets), ProgressWorldModel(model))
    frames, rewards, info = _run_episode(env)
    instruction = env.unwrapped.task.instruction
    expected = model.predict(instruction, sample_frames(np.stack(frames), model.n_frames)).position
    assert len(rewards) == HORIZON and rewards[:-1] == [0.0] * (HORIZON - 1)
    assert rewards[-1] == pytest.approx(expected) and 0.0 < rewards[-1] < 1.0
    assert info["scored"] is True and info["reward_source"] == "world_model"
    env.close()
    assert env.unwrapped.reward_source is None, "closing the wrapper gives the env its own sparse reward back"


def test_an_episode_the_source_cannot_score_pays_zero_and_says_so(libero_assets: Path) -> None:
    env = _make(libero_assets)
    env.unwrapped.reward_source = _Unscorable()
    try:
        _, rewards, info = _run_episode(env)
    finally:
        env.close()
    assert rewards == [0.0] * HORIZON
    assert info["scored"] is False and info["reward_source"] is None


def test_a_source_is_refused_on_an_env_without_the_third_person_camera(libero_assets: Path) -> None:
    env = _make(libero_assets, cameras=())
    try:
        with pytest.raises(ValueError, match="'image' in cameras"):
            WithRewardSource(env, _Unscorable())
        with pytest.raises(TypeError, match="RewardSource"):
            env.unwrapped.reward_source = object()
    finally:
        env.close()
