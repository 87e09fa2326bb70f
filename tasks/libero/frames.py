"""Choosing the few frames a progress model sees: N frames spread evenly over an episode.

A progress model reads a handful of frames, not the whole video (the paper's
Robometer setup uses 8). Spreading them evenly from the first frame to the last
keeps both the start (what the scene looked like) and the end (what the policy
achieved), whatever the episode's length; a short episode repeats frames rather
than padding with blanks, so the model always sees real images.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFAULT_N_FRAMES", "sample_frame_indices", "sample_frames"]

DEFAULT_N_FRAMES = 8


def sample_frame_indices(n_available: int, n_frames: int = DEFAULT_N_FRAMES) -> np.ndarray:
    """`n_frames` indices in [0, n_available), evenly spaced, first and last included, non-decreasing."""
    if n_available < 1:
        raise ValueError(f"an episode needs at least one frame to sample from, got {n_available}")
    if n_frames < 1:
        raise ValueError(f"n_frames must be at least 1, got {n_frames}")
    if n_frames == 1:
        return np.array([n_available - 1])
    return np.rint(np.linspace(0, n_available - 1, n_frames)).astype(np.int64)


def sample_frames(frames: np.ndarray, n_frames: int = DEFAULT_N_FRAMES) -> np.ndarray:
    """The `n_frames` evenly spaced frames of `frames` (T, H, W, 3), as a new (n_frames, H, W, 3) array."""
    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3:
        raise ValueError(f"frames must be an array of shape (T, H, W, 3), got shape {frames.shape}")
    return frames[sample_frame_indices(len(frames), n_frames)]
