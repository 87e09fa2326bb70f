"""The prediction-powered gradient: unbiased over the anchors' draw, power-tuned lambda, hand-computed advantages."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import power_tuned_lambda, prediction_powered_coefficients
from wmrl_envs.rewards import ANCHOR, WORLD_MODEL, GroupScore, group_advantages, prediction_powered_advantages


@settings(max_examples=100, deadline=None)
@given(
    real=st.lists(st.floats(-2, 2), min_size=2, max_size=5),
    noise=st.lists(st.floats(-2, 2), min_size=5, max_size=5),
    n_anchor=st.integers(1, 5),
    lam=st.floats(0, 1),
)
def test_averaged_over_every_draw_of_anchors_the_estimate_is_the_real_gradient(real, noise, n_anchor, lam) -> None:
    # One number per group stands for its gradient: real g_r and world-model g_wm = g_r + error.
    n = len(real)
    n_anchor = min(n_anchor, n)
    predicted = [r + e for r, e in zip(real, noise)]
    c_wm, c_real, c_anchor_wm = prediction_powered_coefficients(n, n_anchor, lam)
    estimates = []
    for anchors in itertools.combinations(range(n), n_anchor):
        total = sum(
            c_real * real[g] + c_anchor_wm * predicted[g] if g in anchors else c_wm * predicted[g] for g in range(n)
        )
        estimates.append(total / n)
    assert np.mean(estimates) == pytest.approx(np.mean(real), abs=1e-9)


def test_power_tuned_lambda_by_hand() -> None:
    # Cov = 0.25, Var = 0.25, one anchor group of two: 0.25 / (1.5 * 0.25) = 2/3.
    assert power_tuned_lambda([0.5, -0.5], [0.5, -0.5], 1, 2) == pytest.approx(2 / 3)
    assert power_tuned_lambda([0.5, -0.5], [-0.5, 0.5], 1, 2) == 0.0  # a backwards world model is not used
    assert power_tuned_lambda([0.5, -0.5], [0.0, 0.0], 1, 2) == 0.0
    assert power_tuned_lambda([1.0, -1.0], [0.1, -0.1], 1, 8) == 1.0  # clipped


def _step(world_model_weight: float = 1.0) -> list[GroupScore]:
    anchor = GroupScore([1.0, 0.0], ANCHOR, 4.0, diagnostics={"world_model_rewards": [1.0, 0.0]})
    return [anchor, GroupScore([0.6, 0.4], WORLD_MODEL, world_model_weight)]


def test_prediction_powered_advantages_by_hand() -> None:
    advantages, lam = prediction_powered_advantages(_step(), std="none")
    # Centred advantages: anchor +-0.5 under both scores, world-model group +-0.1; lambda 2/3.
    # Anchor rollouts: 2/3 * 0.5 + (2 / 1) * (0.5 - 2/3 * 0.5) = 2/3; world-model rollouts: 2/3 * 0.1 = 1/15.
    assert lam == pytest.approx(2 / 3)
    assert advantages[0] == pytest.approx([2 / 3, -2 / 3])
    assert advantages[1] == pytest.approx([1 / 15, -1 / 15])


def test_fallen_back_world_model_groups_set_lambda_to_zero_and_the_anchors_carry_the_step() -> None:
    advantages, lam = prediction_powered_advantages(_step(world_model_weight=0.0), std="none")
    assert lam == 0.0
    assert advantages == [pytest.approx([1.0, -1.0]), [0.0, 0.0]]


def test_a_step_without_anchors_is_the_fusion_and_anchors_must_carry_predictions() -> None:
    groups = [GroupScore([0.6, 0.4], WORLD_MODEL), GroupScore([0.1, 0.9, None], WORLD_MODEL)]
    assert prediction_powered_advantages(groups) == (group_advantages(groups), None)
    with pytest.raises(ValueError, match="world-model rewards"):
        prediction_powered_advantages([GroupScore([1.0, 0.0], ANCHOR)])
