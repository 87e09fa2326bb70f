"""WMRL-LIBERO-v0 across processes: async vector envs with their defaults, pickling, and forks after rendering."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from wmrl_tasks.libero import TerminalSuccess

import wmrl_envs  # noqa: F401  (registers the environments)
from wmrl_envs.wrappers import WithRewardSource

pytestmark = pytest.mark.slow

HOLD = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])


def _kwargs(libero_assets: Path) -> dict[str, Any]:
    return {
        "suite": "libero_spatial",
        "task_id": 0,
        "image_size": 64,
        "cameras": ("image",),
        "horizon": 5,
        "assets_dir": str(libero_assets),
    }


def test_async_observations_equal_sync_observations_with_the_default_start_method(libero_assets: Path, tmp_path: Path):
    # A fresh interpreter: async forks its workers after making one env in the parent, which must not have rendered.
    code = f"""
        import gymnasium as gym, numpy as np, wmrl_envs
        envs = gym.make_vec("WMRL-LIBERO-v0", num_envs=2, vectorization_mode="async", **{_kwargs(libero_assets)!r})
        first, infos = envs.reset(seed=[5, 6])
        after, rewards, *_ = envs.step(np.stack([np.{HOLD!r}] * 2))
        envs.close()
        np.savez({str(tmp_path / "async.npz")!r}, image=first["image"], state=first["state"],
                 instruction=np.array(first["instruction"]), starts=infos["init_state"],
                 after_image=after["image"], after_state=after["state"], rewards=rewards)
    """
    _run(code, tmp_path)
    got = np.load(tmp_path / "async.npz")

    envs = gym.make_vec("WMRL-LIBERO-v0", num_envs=2, vectorization_mode="sync", **_kwargs(libero_assets))
    try:
        first, infos = envs.reset(seed=[5, 6])
        after, rewards, *_ = envs.step(np.stack([HOLD, HOLD]))
    finally:
        envs.close()
    assert got["instruction"].tolist() == list(first["instruction"])
    assert "black bowl" in first["instruction"][0]
    assert got["starts"].tolist() == infos["init_state"].tolist() and got["rewards"].tolist() == rewards.tolist()
    np.testing.assert_array_equal(got["image"], first["image"])
    np.testing.assert_array_equal(got["state"], first["state"])
    np.testing.assert_array_equal(got["after_image"], after["image"])
    np.testing.assert_array_equal(got["after_state"], after["state"])
    assert got["image"].std() > 5  # rendered scenes, not blank buffers


def test_a_pickled_environment_comes_back_as_the_same_configuration(libero_assets: Path):
    env = WithRewardSource(gym.make("WMRL-LIBERO-v0", **_kwargs(libero_assets)), TerminalSuccess())
    try:
        expected, _ = env.reset(seed=2)
        copy = pickle.loads(pickle.dumps(env))
        try:
            observation, info = copy.reset(seed=2)
            assert isinstance(copy.reward_source, TerminalSuccess), "the wrapper's source travels too"
        finally:
            copy.close()
    finally:
        env.close()
    np.testing.assert_array_equal(observation["image"], expected["image"])
    np.testing.assert_array_equal(observation["state"], expected["state"])
    assert info["task"] == "libero_spatial/0"


def test_a_process_forked_after_rendering_is_told_to_use_forkserver_instead_of_hanging(
    libero_assets: Path, tmp_path: Path
):
    code = f"""
        import os
        import gymnasium as gym, wmrl_envs
        kwargs = {_kwargs(libero_assets)!r}
        parent = gym.make("WMRL-LIBERO-v0", **kwargs)
        parent.reset(seed=0)
        pid = os.fork()
        if pid == 0:
            try:
                gym.make("WMRL-LIBERO-v0", **kwargs).reset(seed=0)
                print("CHILD RENDERED", flush=True)
            except Exception as err:
                print("CHILD REFUSED:", type(err).__name__, err, flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
    """
    result = _run(code, tmp_path)
    assert "CHILD REFUSED: RenderingUnavailable" in result.stdout, result.stdout + result.stderr[-2000:]
    assert "forkserver" in result.stdout


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter; fail with its output when it does not exit cleanly."""
    env = dict(os.environ, WMRL_CACHE_DIR=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result
