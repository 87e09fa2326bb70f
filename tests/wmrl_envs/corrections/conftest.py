"""Synthetic anchor groups: real scores and a world model's predictions of them, seeded."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

GroupStream = Callable[..., Iterator[tuple[np.ndarray, np.ndarray]]]


def synthetic_groups(
    distort: Callable[[np.ndarray], np.ndarray],
    noise: float = 0.02,
    group_size: int = 8,
    seed: int = 0,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Endless (predicted, real) groups: real scores in [0, 1] near a task level, predicted = distort(real) + noise."""
    rng = np.random.default_rng(seed)
    while True:
        real = np.clip(rng.uniform(0.1, 0.9) + rng.normal(0.0, 0.15, group_size), 0.0, 1.0)
        yield distort(real) + rng.normal(0.0, noise, group_size), real


@pytest.fixture
def groups() -> GroupStream:
    """Factory of synthetic anchor-group streams (see `synthetic_groups`)."""
    return synthetic_groups
