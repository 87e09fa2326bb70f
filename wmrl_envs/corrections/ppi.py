"""Prediction-powered gradient (PPI++-style): an option beyond the paper's inverse-variance fusion.

The fusion weighs anchor groups against world-model groups, but a world-model group's
gradient stays biased by whatever error the map leaves. Anchor groups carry BOTH scores,
so, as in prediction-powered inference (Angelopoulos et al., 2023, "PPI++: Efficient
Prediction-Powered Inference"), the world model's error can be measured on them and
subtracted:

    g_PP = lambda * mean_{all groups} g_WM  +  mean_{anchor groups} (g_real - lambda * g_WM)

Anchors are a random subset of the step's groups, so the second term removes the first
term's bias in expectation for any lambda: the estimator is unbiased for the real-reward
GRPO gradient. lambda only sets its variance; the power-tuned value (PPI++) is

    lambda = Cov(A_real, A_WM) / ((1 + n_anchor / n_all) * Var(A_WM))

over the anchor rollouts' GRPO advantages under both scores, clipped to [0, 1]: 1 trusts
the world model fully (every group's world-model gradient counts and the anchors only
correct it), 0 ignores it (the anchors alone: plain GRPO on the real runs).

Per rollout, with G groups of which G_a are anchors, the advantage that realises g_PP in
GRPO's mean over rollouts is ``lambda * A_WM`` in a world-model group and
``lambda * A_WM + (G / G_a) * (A_real - lambda * A_WM)`` in an anchor group; each group is
then scaled by ``N / (G * n_g)`` so that it counts as one group whatever its size.

Example:
    >>> round(power_tuned_lambda([0.5, -0.5], [0.5, -0.5], n_anchor_groups=1, n_groups=2), 4)
    0.6667
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["power_tuned_lambda", "prediction_powered_coefficients"]


def power_tuned_lambda(
    real_advantages: Sequence[float], world_model_advantages: Sequence[float], n_anchor_groups: int, n_groups: int
) -> float:
    """PPI++'s variance-minimising lambda over paired anchor advantages, clipped to [0, 1] (0 without spread)."""
    if len(real_advantages) != len(world_model_advantages):
        raise ValueError(
            f"power_tuned_lambda needs one world-model advantage per real one, got {len(world_model_advantages)} "
            f"and {len(real_advantages)}"
        )
    if not 0 < n_anchor_groups <= n_groups:
        raise ValueError(f"need 0 < n_anchor_groups <= n_groups, got {n_anchor_groups} and {n_groups}")
    real, predicted = (
        np.asarray(real_advantages, dtype=np.float64),
        np.asarray(world_model_advantages, dtype=np.float64),
    )
    if predicted.size < 2 or np.var(predicted) == 0.0:
        return 0.0
    covariance = float(np.mean((real - real.mean()) * (predicted - predicted.mean())))
    value = covariance / ((1.0 + n_anchor_groups / n_groups) * float(np.var(predicted)))
    return float(np.clip(value, 0.0, 1.0))


def prediction_powered_coefficients(n_groups: int, n_anchor_groups: int, lam: float) -> tuple[float, float, float]:
    """(world-model coefficient, anchor real coefficient, anchor world-model coefficient) of the per-rollout sum.

    A world-model group's advantage is ``c_wm * A_WM``; an anchor group's ``c_real * A_real + c_anchor_wm * A_WM``.
    """
    if not 0 < n_anchor_groups <= n_groups or not 0.0 <= lam <= 1.0:
        raise ValueError(
            f"need 0 < n_anchor_groups <= n_groups and lambda in [0, 1], got {n_anchor_groups}, {n_groups}, {lam}"
        )
    scale = n_groups / n_anchor_groups
    return lam, scale, lam - scale * lam
