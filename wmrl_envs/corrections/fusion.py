"""Inverse-variance fusion: the step's gradient is a weighted AVERAGE of its groups' gradients.

Anchor groups and world-model groups give two estimates of one policy gradient; the
minimum-variance combination is ``sum_g w_g * grad_g / sum_g w_g``. The division by
the total weight is what makes the weights mean "how much each group counts" and
nothing else: without it, raising the anchor weight to 4 also multiplies the whole
policy-gradient term by up to 4 against the KL and entropy terms, and a step where
every group is an anchor at weight 4 is not plain GRPO but GRPO with a 4x learning
rate. Normalised, a common factor on every weight cancels exactly.

GRPO's loss averages over trajectories, so the total weight is counted per scored
trajectory: a group's normalised weight is ``w_g * N / sum_h (w_h * n_h)``, where
``n_g`` is its number of scored rollouts and ``N`` their sum. The normalised weights
then average exactly 1 over the step's scored trajectories, and multiplying each
trajectory's advantage by its group's normalised weight turns the loss's mean over
trajectories into the weighted average above. Groups whose rewards are all equal
count in the total like any other: their gradient estimate is 0, as in plain GRPO.
A step whose total weight is 0 (nothing scored, or only groups of weight 0) moves
nothing.

Example:
    >>> normalised_weights([4.0, 1.0], [2, 2])      # N = 4, total weight 4*2 + 1*2 = 10
    [1.6, 0.4]
    >>> normalised_weights([4.0, 4.0], [3, 5])      # a common factor cancels: plain GRPO
    [1.0, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["normalised_weights"]


def normalised_weights(weights: Sequence[float], sizes: Sequence[int]) -> list[float]:
    """Group weights rescaled to average 1 over the step's `sizes` scored rollouts (all 0 if the total is 0)."""
    if len(weights) != len(sizes):
        raise ValueError(
            f"normalised_weights needs one size per weight, got {len(weights)} weights, {len(sizes)} sizes"
        )
    for w in weights:
        if isinstance(w, bool) or not math.isfinite(w) or w < 0:
            raise ValueError(f"group weights must be finite numbers >= 0, got {w!r}")
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"group sizes must be ints >= 0 (scored rollouts per group), got {n!r}")
    total = math.fsum(w * n for w, n in zip(weights, sizes))
    if total == 0.0:
        return [0.0] * len(weights)
    count = sum(sizes)
    return [w * count / total for w in weights]
