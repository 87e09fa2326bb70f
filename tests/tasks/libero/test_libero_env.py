"""WMRL-LIBERO-v0 on the real simulator: spaces, seeded official starts, sparse success, bad actions, vectors."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

pytestmark = pytest.mark.slow

HOLD = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


@pytest.fixture
def env(libero_env: gym.Env) -> gym.Env:
    """The session's LIBERO environment (libero_spatial task 0, 64 px, 6-step episodes)."""
    return libero_env


def _size(env: gym.Env) -> int:
    return env.unwrapped.image_size


def test_observation_has_both_upright_cameras_state_and_the_suites_instruction(env: gym.Env):
    observation, info = env.reset(seed=0)
    assert set(observation) == {"image", "wrist_image", "state", "instruction"}
    assert observation["image"].shape == observation["wrist_image"].shape == (_size(env), _size(env), 3)
    assert observation["image"].dtype == np.uint8 and observation["image"].std() > 5  # a rendered scene, not blank
    assert observation["state"].shape == (8,) and np.isfinite(observation["state"]).all()
    assert observation["instruction"] == env.unwrapped.task.instruction
    assert "black bowl" in observation["instruction"] and "plate" in observation["instruction"]
    assert env.observation_space.contains(observation)
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, (7,), np.float32)
    assert info["task"] == "libero_spatial/0" and info["success"] is False
    np.testing.assert_array_equal(env.render(), observation["image"])


def test_the_environment_passes_gymnasiums_checker(env: gym.Env):
    check_env(env.unwrapped, skip_render_check=True, skip_close_check=True)  # closing is checked with the vector


def test_same_seed_gives_the_same_start_and_the_same_trajectory(env: gym.Env):
    def rollout(seed: int) -> list[dict]:
        observations = [env.reset(seed=seed)[0]]
        for action in np.random.default_rng(7).uniform(-1, 1, (3, 7)):
            observations.append(env.step(action)[0])
        return observations

    first, again = rollout(3), rollout(3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a["image"], b["image"])
        np.testing.assert_array_equal(a["state"], b["state"])


def test_resets_draw_only_the_16_training_starts_unless_a_start_is_chosen(env: gym.Env):
    drawn = {env.reset(seed=seed)[1]["init_state"] for seed in range(6)}
    assert drawn <= set(range(16)) and len(drawn) > 1
    _, info = env.reset(options={"init_state": 42})
    assert info["init_state"] == 42
    with pytest.raises(ValueError, match=r"\[0, 49\]"):
        env.reset(options={"init_state": 50})
    with pytest.raises(ValueError, match="init_state"):
        env.reset(options={"start": 1})


def test_different_official_starts_place_the_objects_differently(env: gym.Env):
    a, _ = env.reset(options={"init_state": 0})
    b, _ = env.reset(options={"init_state": 1})
    assert np.abs(a["image"].astype(int) - b["image"].astype(int)).max() > 30


def test_a_malformed_action_is_refused_without_touching_the_simulation(env: gym.Env):
    env.reset(seed=1)
    before = env.unwrapped.sim_state()
    with pytest.raises(ValueError, match=r"shape \(7,\)"):
        env.step(np.zeros(6))
    with pytest.raises(ValueError, match=r"NaN or infinite values at positions \[2\]"):
        env.step(np.array([0, 0, np.nan, 0, 0, 0, 0.0]))
    np.testing.assert_array_equal(env.unwrapped.sim_state(), before)
    observation, *_, info = env.step(np.full(7, 5.0))  # clipped, not refused
    assert env.observation_space.contains(observation) and info["steps"] == 1


def test_an_episode_without_success_pays_nothing_and_is_cut_at_the_horizon(env: gym.Env):
    horizon = env.unwrapped.horizon
    env.reset(seed=2)
    outcomes = [env.step(HOLD)[1:4] for _ in range(horizon)]
    assert outcomes[:-1] == [(0.0, False, False)] * (horizon - 1)
    assert outcomes[-1] == (0.0, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(HOLD)


def test_placing_the_bowl_on_the_plate_pays_one_and_ends_the_episode(env: gym.Env):
    env.reset(seed=4)
    sim = env.unwrapped.simulator
    plate = sim.sim.data.body_xpos[sim.sim.model.body_name2id(sim.objects_dict["plate_1"].root_body)]
    bowl_joint = sim.objects_dict["akita_black_bowl_1"].joints[-1]
    sim.sim.data.set_joint_qpos(bowl_joint, np.concatenate([plate + [0.0, 0.0, 0.03], [1.0, 0.0, 0.0, 0.0]]))
    sim.sim.forward()
    for _ in range(env.unwrapped.horizon):  # the bowl settles on the plate within a few steps
        _, reward, terminated, truncated, info = env.step(HOLD)
        if reward:
            break
        assert (terminated, truncated, info["success"]) == (False, False, False)
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(HOLD)


def test_environments_in_one_vector_each_render_their_own_scene(env: gym.Env, libero_assets: Path):
    def make() -> gym.Env:
        return gym.make(
            "WMRL-LIBERO-v0", suite="libero_spatial", task_id=0, image_size=_size(env), assets_dir=libero_assets
        )

    vector = gym.vector.SyncVectorEnv([make, make])
    try:
        observations, infos = vector.reset(seed=[5, 6])
        assert infos["init_state"].tolist() == [env.reset(seed=s)[1]["init_state"] for s in (5, 6)]
        for i, seed in enumerate((5, 6)):  # the same frames as a single environment with that seed
            alone, _ = env.reset(seed=seed)
            np.testing.assert_array_equal(observations["image"][i], alone["image"])
            np.testing.assert_array_equal(observations["wrist_image"][i], alone["wrist_image"])
        assert observations["instruction"] == (env.unwrapped.task.instruction,) * 2
        observations, rewards, terminated, truncated, infos = vector.step(np.stack([HOLD, HOLD]))
        assert rewards.tolist() == [0.0, 0.0] and not terminated.any() and not truncated.any()
        assert vector.observation_space.contains(observations)
    finally:
        vector.close()
    vector.envs[0].close()  # closing twice is allowed


def test_an_unknown_suite_or_task_is_refused_with_the_valid_range(libero_assets: Path):
    with pytest.raises(ValueError, match="unknown LIBERO suite 'libero_100'"):
        gym.make("WMRL-LIBERO-v0", suite="libero_100", assets_dir=libero_assets)
    with pytest.raises(ValueError, match=r"task_id must be an int in \[0, 9\] for libero_goal"):
        gym.make("WMRL-LIBERO-v0", suite="libero_goal", task_id=10, assets_dir=libero_assets)
