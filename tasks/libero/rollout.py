"""A finished LIBERO episode as something reward sources can score.

The reward contract is generic over what it scores. For code tasks a rollout is a
competition and a program (`wmrl_envs.rewards.Rollout`); for LIBERO it is an
episode: the instruction, the camera frames the policy produced, and whether the
simulator judged it a success (the trusted, sparse anchor). `Corrected` passes
either through untouched to its two sources, here `TerminalSuccess` and
`ProgressWorldModel`, which accept only episodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EpisodeRollout"]


@dataclass(frozen=True, eq=False, kw_only=True)
class EpisodeRollout:
    """One episode: its task, instruction, third-person frames (T, H, W, 3) uint8 and terminal success.

    `success` is None when the simulator's verdict is unknown (the episode broke off); `init_state` is the index of
    the official initial state it started from.
    """

    task: str
    instruction: str
    frames: np.ndarray
    success: bool | None
    init_state: int | None = None

    def __post_init__(self) -> None:
        frames = np.asarray(self.frames)
        if frames.ndim != 4 or frames.shape[-1] != 3 or len(frames) == 0:
            raise ValueError(f"frames must be a non-empty array of shape (T, H, W, 3), got shape {frames.shape}")
        object.__setattr__(self, "frames", frames)

    @property
    def steps(self) -> int:
        """Actions taken: one fewer than the frames (the first frame is the reset's)."""
        return len(self.frames) - 1
