"""examples/sb3_libero_ppo.py: stable-baselines3 trains on WMRL-LIBERO-v0 with WMRL's corrected reward."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType

import gymnasium as gym
import numpy as np
import pytest

import wmrl_envs  # noqa: F401  (registers the environments)

pytestmark = pytest.mark.slow
pytest.importorskip("stable_baselines3", reason='stable-baselines3 is not installed: pip install "wmrl[sb3]"')

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sb3_libero_ppo.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sb3_libero_ppo", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # SB3's workers unpickle the env builder by its module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def progress_model(tmp_path: Path) -> Path:
    from wmrl_tasks.libero import ProgressModelConfig, TinyProgressModel

    return TinyProgressModel(ProgressModelConfig(frame_size=16)).save(tmp_path / "progress.pt")


def test_the_sb3_ready_env_passes_sb3s_checker(libero_assets: Path) -> None:
    from stable_baselines3.common.env_checker import check_env

    env = gym.make(
        "WMRL-LIBERO-v0",
        image_size=64,
        cameras=("image",),
        horizon=4,
        instruction_encoding="hashed",
        assets_dir=libero_assets,
    )
    try:
        with warnings.catch_warnings(record=True) as caught:  # SB3 warns about spaces it handles badly: none here
            warnings.simplefilter("always")
            check_env(env.unwrapped)
        assert [str(w.message) for w in caught] == []
        observation, _ = env.reset(seed=0)
        assert all(isinstance(value, np.ndarray) for value in observation.values())
        assert observation["instruction"].shape == (64,) and observation["instruction"].sum() > 3
    finally:
        env.close()


def test_ppo_trains_a_few_hundred_steps_on_the_corrected_reward(
    example: ModuleType, libero_assets: Path, progress_model: Path
) -> None:
    model = example.main(
        [
            "--reward",
            "corrected",
            "--progress-model",
            str(progress_model),
            "--assets",
            str(libero_assets),
            "--image-size",
            "64",
            "--horizon",
            "12",
            "--steps",
            "192",
            "--n-steps",
            "96",
        ]
    )
    assert model.num_timesteps >= 192
    episodes = list(model.ep_info_buffer)
    assert len(episodes) >= 192 // 12 - 1
    assert all(e["l"] <= 12 and 0.0 <= e["r"] <= 1.0 for e in episodes)
    # Every finished episode was scored by Corrected: terminal success on anchors, calibrated progress elsewhere.
    assert {e["reward_source"] for e in episodes} <= {"real", "world_model"}


def test_a_world_model_reward_without_a_progress_model_says_how_to_get_one(example: ModuleType) -> None:
    with pytest.raises(SystemExit, match="wmrl libero-progress"):
        example.reward_source("corrected", None, seed=0)
