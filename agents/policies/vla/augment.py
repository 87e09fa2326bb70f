"""Random-shift image augmentation for supervised warm starts (``wmrl sft --shift-pixels N``).

Behaviour cloning from a few dozen demonstrations overfits the exact pixels of the
scenes it saw; shifting each camera image by a few pixels (edge-padded, then cropped
back to its size, as DrQ does for pixel RL) makes the policy tolerate the small
offsets that its own, imperfect rollouts produce. Only the images of a step's inputs
change; the state, the instruction and the targets do not.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = ["image_fields", "shift_images"]


def image_fields(inputs: Any) -> list[str]:
    """Names of the fields of a step's inputs (a dataclass) that hold uint8 (H, W, C) images."""
    if not dataclasses.is_dataclass(inputs) or isinstance(inputs, type):
        return []
    return [
        f.name
        for f in dataclasses.fields(inputs)
        if isinstance(value := getattr(inputs, f.name), np.ndarray) and value.dtype == np.uint8 and value.ndim == 3
    ]


def shift_images(inputs: Any, pixels: int, rng: np.random.Generator) -> Any:
    """A copy of `inputs` with every image moved by up to `pixels` in each direction (edges repeated)."""
    if isinstance(pixels, bool) or not isinstance(pixels, int) or pixels < 0:
        raise ValueError(f"pixels must be an int >= 0, got {pixels!r}")
    names = image_fields(inputs)
    if not names:
        raise TypeError(
            f"{type(inputs).__name__} carries no uint8 (H, W, C) images to shift; --shift-pixels works for policies "
            f"that keep the camera images in their inputs (tiny-vla)"
        )
    if pixels == 0:
        return inputs
    return dataclasses.replace(inputs, **{name: _shift(getattr(inputs, name), pixels, rng) for name in names})


def _shift(image: np.ndarray, pixels: int, rng: np.random.Generator) -> np.ndarray:
    height, width = image.shape[:2]
    padded = np.pad(image, ((pixels, pixels), (pixels, pixels), (0, 0)), mode="edge")
    top, left = (int(v) for v in rng.integers(0, 2 * pixels + 1, size=2))
    return padded[top : top + height, left : left + width]
