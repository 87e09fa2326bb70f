"""Frames for the progress model: evenly spread over the episode, first and last always included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_tasks.libero.frames import sample_frame_indices, sample_frames


@given(n_available=st.integers(1, 2000), n_frames=st.integers(2, 64))
def test_indices_span_the_episode_evenly_from_first_to_last_frame(n_available: int, n_frames: int):
    indices = sample_frame_indices(n_available, n_frames)
    assert len(indices) == n_frames
    assert indices[0] == 0 and indices[-1] == n_available - 1
    gaps = np.diff(indices)
    assert (gaps >= 0).all()
    assert gaps.max() - gaps.min() <= 1  # as even as integer positions allow
    if n_available >= n_frames:
        assert len(set(indices.tolist())) == n_frames  # no frame repeated when there are enough


def test_one_frame_is_the_last_one_what_the_episode_ended_on():
    assert sample_frame_indices(10, 1).tolist() == [9]


def test_sampled_frames_are_the_frames_at_those_indices():
    frames = np.arange(20)[:, None, None, None] * np.ones((1, 2, 2, 3), dtype=np.uint8)
    chosen = sample_frames(frames, 5)
    assert chosen[:, 0, 0, 0].tolist() == [0, 5, 10, 14, 19]


@pytest.mark.parametrize(("shape", "message"), [((0, 4, 4, 3), "at least one frame"), ((5, 4, 4), r"\(T, H, W, 3\)")])
def test_malformed_frames_are_refused(shape: tuple[int, ...], message: str):
    with pytest.raises(ValueError, match=message):
        sample_frames(np.zeros(shape, dtype=np.uint8))


def test_a_frame_count_below_one_is_refused():
    with pytest.raises(ValueError, match="n_frames"):
        sample_frame_indices(10, 0)
