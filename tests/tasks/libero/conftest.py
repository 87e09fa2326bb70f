"""LIBERO test fixtures: the reduced asset tree beside the repository, and a gate on the optional extra."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import wmrl_envs  # noqa: F401  (registers the environments)

# Off-screen rendering on CPU; set before anything imports robosuite (it fixes its backend at import).
os.environ.setdefault("MUJOCO_GL", "osmesa")
os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])

ASSETS_LITE = Path(__file__).resolve().parents[3] / ".." / "shared" / "libero-assets-lite"
EXTRA = ("libero", "robosuite", "mujoco")


@pytest.fixture(scope="session")
def libero_assets() -> Path:
    """The LIBERO asset tree for tests (read-only, never copied); skips when the libero extra is not installed."""
    missing = [name for name in EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f'the libero extra is not installed ({", ".join(missing)} missing): pip install "wmrl[libero]"')
    if not (ASSETS_LITE / "assets").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"LIBERO test assets missing at {ASSETS_LITE}; CI must have ../shared beside the clone")
        pytest.skip(f"LIBERO test assets not found at {ASSETS_LITE}")
    return ASSETS_LITE


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
