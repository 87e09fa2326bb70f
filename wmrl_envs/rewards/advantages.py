"""GRPO advantages from scored groups: standardise within each group, then apply the group's weight.

GRPO compares a rollout only with its own group: ``A_i = (r_i - mean(r)) / (std(r) + eps)``.
Two WMRL details live here rather than in each trainer:

- Rollouts that could not be scored (``None``) are left out of the group's mean
  and std, and their advantage is ``None``: a missing score is not evidence that
  the rollout was bad, and counting it as 0 would both penalise it and shift every
  other rollout's baseline.
- Each group's advantages are multiplied by its weight normalised over the step
  (`normalised_weights`): the inverse-variance weight of an anchor group, 1 for a
  world-model group, 0 for a world-model group once the fallback rule has given up
  on the world model, rescaled so the step's scored trajectories average weight 1.
  The loss's mean over trajectories then IS the weighted average of the groups'
  gradients, ``sum_g w_g grad_g / sum_g w_g``: a weight says how much a group
  counts against the others, never how large the step is, so a step where every
  group has the same weight (4 or 1) is plain GRPO. The weights are normalised over
  the groups passed in one call: pass all of a step's groups together.

The std convention is selectable. ``"sample"`` (Bessel-corrected, ddof = 1, the
default) is what TRL's GRPOTrainer (`nanstd`) and verl's GRPO compute, so the
advantages match theirs; ``"population"`` (ddof = 0) is the textbook
standardisation that gives the group's advantages exactly unit variance; ``"none"``
only centres the rewards, ``A_i = r_i - mean(r)``, as Dr. GRPO does (Liu et al.,
2025: dividing by the std up-weights groups that are nearly all right or all wrong,
a difficulty bias). A group whose scored rewards are all equal (including a group
with a single scored rollout) carries no ranking signal and gets advantages of
exactly 0, rather than rounding noise divided by `eps`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from wmrl_envs.corrections.fusion import normalised_weights
from wmrl_envs.rewards.base import GroupScore

__all__ = ["group_advantages"]

_DDOF: dict[str, int | None] = {"population": 0, "sample": 1, "none": None}


def group_advantages(
    group_scores: Sequence[GroupScore],
    eps: float = 1e-6,
    std: Literal["population", "sample", "none"] = "sample",
) -> list[list[float | None]]:
    """Per-group standardised advantages times normalised group weights; None where the reward is None."""
    if std not in _DDOF:
        raise ValueError(f"std must be 'population' or 'sample' (or 'none': centre only), got {std!r}")
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    sizes = [sum(r is not None for r in group.rewards) for group in group_scores]
    weights = normalised_weights([group.weight for group in group_scores], sizes)
    return [_one_group(group.rewards, w, eps, _DDOF[std]) for group, w in zip(group_scores, weights, strict=True)]


def _one_group(rewards: Sequence[float | None], weight: float, eps: float, ddof: int | None) -> list[float | None]:
    scored = np.array([r for r in rewards if r is not None], dtype=np.float64)
    if scored.size == 0 or np.ptp(scored) == 0.0:
        return [None if r is None else 0.0 for r in rewards]
    mean = scored.mean()
    scale = weight if ddof is None else weight / (scored.std(ddof=ddof) + eps)
    return [None if r is None else float((r - mean) * scale) for r in rewards]
