"""LIBERO test fixtures: one rendered environment shared by the live tests (assets: `libero_assets`, tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import wmrl_envs  # noqa: F401  (registers the environments)


@pytest.fixture(scope="session")
def libero_env(libero_assets: Path) -> Iterator[gym.Env]:
    """libero_spatial task 0 rendered (both cameras, 64 px, 6-step episodes), built once for every live test."""
    made = gym.make(
        "WMRL-LIBERO-v0",
        suite="libero_spatial",
        task_id=0,
        image_size=64,
        horizon=6,
        assets_dir=libero_assets,
        render_mode="rgb_array",
    )
    yield made
    made.close()
