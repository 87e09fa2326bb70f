"""Running one episode and keeping what the reward side needs: frames, instruction, success.

The progress world model scores frames, and the terminal success anchors it; both
come from the same episode, so one function records them together.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from .rollout import EpisodeRollout

__all__ = ["record_episode"]


def record_episode(
    env: gym.Env,
    act: Callable[[dict[str, Any]], np.ndarray],
    *,
    seed: int | None = None,
    init_state: int | None = None,
    max_steps: int | None = None,
    camera: str = "image",
) -> EpisodeRollout:
    """Run `act` (observation -> action) for one episode of a WMRL-LIBERO-v0 `env` and record it.

    Stops when the episode ends or after `max_steps` actions (then success is what the simulator says at that
    point: a cut episode that has not succeeded is a failure). `camera` is the observation key whose frames are kept.
    """
    if max_steps is not None and max_steps < 0:
        raise ValueError(f"max_steps must be >= 0, got {max_steps}")
    options = None if init_state is None else {"init_state": init_state}
    observation, info = env.reset(seed=seed, options=options)
    if camera not in observation:
        raise ValueError(f"the environment does not render {camera!r}: build it with that key in cameras=")
    frames = [observation[camera]]
    success = False
    steps = 0
    done = False
    while not done and (max_steps is None or steps < max_steps):
        observation, _, terminated, truncated, info = env.step(act(observation))
        frames.append(observation[camera])
        success = bool(info["success"])
        steps += 1
        done = terminated or truncated
    return EpisodeRollout(
        task=str(info["task"]),
        instruction=str(observation["instruction"]),
        frames=np.stack(frames),
        success=success,
        init_state=info.get("init_state"),
    )
