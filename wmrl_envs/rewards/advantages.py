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
from wmrl_envs.corrections.ppi import power_tuned_lambda, prediction_powered_coefficients
from wmrl_envs.rewards.base import ANCHOR, WORLD_MODEL, GroupScore

__all__ = ["group_advantages", "prediction_powered_advantages"]

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


def prediction_powered_advantages(
    group_scores: Sequence[GroupScore],
    eps: float = 1e-6,
    std: Literal["population", "sample", "none"] = "sample",
) -> tuple[list[list[float | None]], float | None]:
    """Per-rollout advantages of the prediction-powered gradient (`wmrl_envs.corrections.ppi`) and its lambda.

    Anchor groups must carry their world-model rewards in ``diagnostics["world_model_rewards"]`` (as `Corrected`'s
    do). The group weights are not used, except that world-model groups of weight 0 (fallen back) set lambda to 0.
    A step without anchor pairs has nothing to correct with: it falls back to `group_advantages` (lambda None).
    """
    if std not in _DDOF:
        raise ValueError(f"std must be 'population' or 'sample' (or 'none': centre only), got {std!r}")
    ddof = _DDOF[std]
    world_model_rewards = [_world_model_rewards(group, g) for g, group in enumerate(group_scores)]
    main = [_one_group(group.rewards, 1.0, eps, ddof) for group in group_scores]
    predicted = [_one_group(rewards, 1.0, eps, ddof) for rewards in world_model_rewards]
    sizes = [sum(a is not None for a in advantages) for advantages in main]
    present = [g for g, n in enumerate(sizes) if n > 0]
    anchors = [g for g in present if group_scores[g].source == ANCHOR]
    paired = [
        (r, p) for g in anchors for r, p in zip(main[g], predicted[g], strict=True) if r is not None and p is not None
    ]
    if not paired:
        return group_advantages(group_scores, eps=eps, std=std), None
    fallen_back = any(group.source == WORLD_MODEL and group.weight == 0.0 for group in group_scores)
    lam = 0.0 if fallen_back else power_tuned_lambda(*zip(*paired, strict=True), len(anchors), len(present))
    c_wm, c_real, c_anchor_wm = prediction_powered_coefficients(len(present), len(anchors), lam)
    total = sum(sizes)
    out: list[list[float | None]] = []
    for g, group in enumerate(group_scores):
        scale = total / (len(present) * sizes[g]) if sizes[g] else 0.0
        if group.source == ANCHOR:
            values = [
                None if r is None else scale * (c_real * r + c_anchor_wm * (p or 0.0))
                for r, p in zip(main[g], predicted[g], strict=True)
            ]
        else:
            values = [None if a is None else scale * c_wm * a for a in main[g]]
        out.append(values)
    return out, lam


def _world_model_rewards(group: GroupScore, index: int) -> list[float | None]:
    if group.source != ANCHOR:
        return list(group.rewards)
    rewards = group.diagnostics.get("world_model_rewards")
    if not isinstance(rewards, list) or len(rewards) != len(group.rewards):
        raise ValueError(
            f"anchor group {index} has no world-model rewards (diagnostics['world_model_rewards'], one per rollout); "
            "the prediction-powered estimator needs anchors scored by both sources, as Corrected scores them"
        )
    return rewards
