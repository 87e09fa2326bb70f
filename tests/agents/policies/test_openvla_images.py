"""OpenVLA's evaluation image path: JPEG round trip, then Lanczos resize to the model's square size."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image
from wmrl_agents.policies.vla.openvla_images import openvla_image


@settings(max_examples=30, deadline=None)
@given(
    height=st.integers(8, 96),
    width=st.integers(8, 96),
    colour=st.tuples(*[st.integers(0, 255)] * 3),
    size=st.integers(4, 64),
)
def test_any_frame_comes_back_square_and_a_flat_colour_survives(height, width, colour, size) -> None:
    frame = np.broadcast_to(np.array(colour, dtype=np.uint8), (height, width, 3)).copy()
    out = openvla_image(frame, size=size)
    assert out.shape == (size, size, 3) and out.dtype == np.uint8
    assert np.abs(out.astype(int) - np.array(colour)).max() <= 3  # JPEG's colour conversion rounds a little


def test_the_frame_goes_through_jpeg_before_the_resize() -> None:
    frame = np.random.default_rng(0).integers(0, 256, size=(256, 256, 3), dtype=np.uint8)
    out = openvla_image(frame)
    resized_only = np.asarray(Image.fromarray(frame).resize((224, 224), Image.LANCZOS))
    error = np.abs(out.astype(int) - resized_only.astype(int))
    assert error.mean() > 1.0  # compression artefacts on noise are large
    smooth = np.tile(np.linspace(0, 255, 256, dtype=np.uint8)[None, :, None], (256, 1, 3))
    smooth_error = np.abs(openvla_image(smooth).astype(int) - np.asarray(Image.fromarray(smooth).resize((224, 224))))
    assert smooth_error.mean() < 2.0  # but a smooth scene keeps its content


@pytest.mark.parametrize(
    "frame",
    [np.zeros((8, 8), dtype=np.uint8), np.zeros((8, 8, 4), dtype=np.uint8), np.zeros((8, 8, 3), dtype=np.float32)],
)
def test_frames_that_are_not_rgb_uint8_are_refused(frame) -> None:
    with pytest.raises(ValueError, match=r"uint8 \(H, W, 3\) image"):
        openvla_image(frame)
