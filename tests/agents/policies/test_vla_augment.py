"""Random image shifts for warm starts: a translated copy of each image, edges repeated, nothing else touched."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.policies.vla.augment import shift_images
from wmrl_agents.policies.vla.tiny import TinyInputs


def _inputs(rng: np.random.Generator, size: int) -> TinyInputs:
    image = rng.integers(0, 256, size=(size, size, 3), dtype=np.uint8)
    return TinyInputs(image=image, wrist_image=image[::-1].copy(), state=rng.normal(size=8), words=np.arange(4))


@given(st.integers(0, 2**31 - 1), st.integers(4, 12), st.integers(0, 3))
def test_each_image_is_the_original_moved_by_at_most_the_given_pixels(seed: int, size: int, pixels: int) -> None:
    rng = np.random.default_rng(seed)
    before = _inputs(rng, size)
    after = shift_images(before, pixels, rng)
    assert after.state is before.state and after.words is before.words
    for name in ("image", "wrist_image"):
        original, moved = getattr(before, name), getattr(after, name)
        assert moved.shape == original.shape and moved.dtype == np.uint8
        rows = cols = np.arange(size)
        matches = [
            (dy, dx)
            for dy in range(-pixels, pixels + 1)
            for dx in range(-pixels, pixels + 1)
            if np.array_equal(moved, original[np.clip(rows + dy, 0, size - 1)][:, np.clip(cols + dx, 0, size - 1)])
        ]
        assert matches, f"{name} is not a shifted copy"


def test_inputs_without_images_are_refused_with_the_policies_that_work() -> None:
    @dataclass(frozen=True)
    class TokenInputs:
        ids: np.ndarray

    with pytest.raises(TypeError, match="tiny-vla"):
        shift_images(TokenInputs(np.arange(3)), 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=">= 0"):
        shift_images(_inputs(np.random.default_rng(0), 8), -1, np.random.default_rng(0))
