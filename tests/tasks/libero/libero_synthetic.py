"""Synthetic episodes with a known progress, for testing progress models without the simulator.

A red block slides from a random start toward a green mark; `reach` is the fraction of the way it gets
(1.0: it arrives, a success). The frames are real images of that motion, so a model that learns progress
from them has to read positions off pixels, as it would on LIBERO's frames.
"""

from __future__ import annotations

import numpy as np
from wmrl_tasks.libero.rollout import EpisodeRollout

INSTRUCTION = "put the red block on the green mark"


def synthetic_episode(rng: np.random.Generator, reach: float, size: int = 32) -> EpisodeRollout:
    """One episode of 12-29 frames whose block covers `reach` of the way to the mark."""
    steps = int(rng.integers(12, 30))
    start, goal = rng.uniform(4, 12, 2), rng.uniform(20, size - 4, 2)
    frames = np.zeros((steps, size, size, 3), np.uint8)
    frames[..., 2] = 60
    gy, gx = goal.astype(int)
    for t in range(steps):
        frames[t, gy - 2 : gy + 2, gx - 2 : gx + 2, 1] = 255
        y, x = (start + (goal - start) * reach * t / (steps - 1)).astype(int)
        frames[t, y - 2 : y + 2, x - 2 : x + 2, 0] = 255
    return EpisodeRollout(task="synthetic/0", instruction=INSTRUCTION, frames=frames, success=reach >= 1.0)


def synthetic_batch(seed: int, n: int) -> tuple[list[EpisodeRollout], list[float]]:
    """`n` episodes, every other one a success, the rest reaching a random part of the way; and their reaches."""
    rng = np.random.default_rng(seed)
    reaches = [1.0 if i % 2 else float(rng.uniform(0.0, 0.8)) for i in range(n)]
    return [synthetic_episode(rng, r) for r in reaches], reaches
