"""The small convolutional image encoder shared by LIBERO's CPU models (progress model and tiny VLA).

Three strided convolutions and a 2x2 average pool: cheap enough to run on every frame
of every episode on a laptop, and size-agnostic (any input of at least 8 px).
"""

from __future__ import annotations

from torch import nn

__all__ = ["small_image_encoder"]


def small_image_encoder(channels: tuple[int, int, int]) -> nn.Sequential:
    """(N, 3, H, W) images in [0, 1] -> (N, 4 * channels[2]) features."""
    c1, c2, c3 = channels
    return nn.Sequential(
        nn.Conv2d(3, c1, kernel_size=5, stride=2, padding=2),
        nn.ReLU(),
        nn.Conv2d(c1, c2, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(c2, c3, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(2),
        nn.Flatten(),
    )
