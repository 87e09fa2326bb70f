"""The fallback rule acts on statistical confidence: a few anchor pairs that look bad by chance do not fall back."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wmrl_envs.corrections import (
    FallbackConfig,
    FallbackRule,
    InverseVarianceWeighter,
    OnlineDebiaser,
    rank_evidence,
)

Z95 = 1.6448536269514722


def test_calibration_fails_only_when_its_upper_bound_is_below_the_threshold() -> None:
    # -0.2 + 1.645 * 0.15 = 0.047 > -0.05: could be chance. -0.2 + 1.645 * 0.05 = -0.118 < -0.05: the map hurts.
    uncertain = FallbackRule().update(
        error_reduction=-0.2, rank_correlation=None, residual_variance=None, error_reduction_se=0.15
    )
    assert uncertain.failing == ()
    sure = FallbackRule().update(
        error_reduction=-0.2, rank_correlation=None, residual_variance=None, error_reduction_se=0.05
    )
    assert sure.failing == ("calibration",)
    point = FallbackRule(FallbackConfig(confidence=0.5)).update(
        error_reduction=-0.2, rank_correlation=None, residual_variance=None, error_reduction_se=0.15
    )
    assert point.failing == ("calibration",)


def test_four_small_groups_that_rank_backwards_by_chance_do_not_fall_back() -> None:
    # Four groups of 4: Spearman's null variance 1/3 each; the mean of four has variance 4/3/16 = 1/12.
    groups = [([0.1, 0.2, 0.3, 0.4], [0.2, 0.1, 0.4, 0.3])] * 3 + [([0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1])]
    mean, variance = rank_evidence(groups)
    assert mean == pytest.approx((0.6 * 3 - 1.0) / 4) and variance == pytest.approx(1 / 12)
    rule = FallbackRule()  # rank_window 8, min_rank_observations 4
    for rho in (-0.3, -0.3, -0.3, -0.3):
        decision = rule.update(error_reduction=None, rank_correlation=rho, residual_variance=None, rank_variance=1 / 12)
    # Upper bound: -0.3 + 1.645 * sqrt(4 / 12) / 4 = -0.063 <= 0: four updates of -0.3 are enough evidence.
    assert decision.state.value == "fallen_back"
    rule = FallbackRule()
    for rho in (-0.1, -0.1, -0.1, -0.1):
        decision = rule.update(error_reduction=None, rank_correlation=rho, residual_variance=None, rank_variance=1 / 12)
    assert -0.1 + Z95 * math.sqrt(4 / 12) / 4 > 0 and decision.state.value == "healthy"


def test_residuals_fail_above_the_threshold_times_the_f_quantile_of_their_degrees_of_freedom() -> None:
    few = FallbackRule().update(error_reduction=None, rank_correlation=None, residual_variance=1.5, residual_dof=12)
    assert few.failing == ()  # limit exp(1.645 * sqrt(4 / 12)) = 2.59
    many = FallbackRule().update(error_reduction=None, rank_correlation=None, residual_variance=1.5, residual_dof=400)
    assert many.failing == ("residuals",)  # limit exp(1.645 * 0.1) = 1.18


def test_the_debiaser_reports_the_standard_error_of_its_error_reduction() -> None:
    rng = np.random.default_rng(0)
    small, large = OnlineDebiaser(min_pairs=16), OnlineDebiaser(min_pairs=1600)
    for debiaser, n in ((small, 16), (large, 1600)):
        real = rng.uniform(0, 1, n)
        debiaser.add(real**3 + rng.normal(0, 0.05, n), real)
    assert small.error_reduction_se() > 3 * large.error_reduction_se() > 0
    restored = OnlineDebiaser.from_state_dict(small.state_dict())
    assert restored.error_reduction_se() == small.error_reduction_se()
    old = {k: v for k, v in small.state_dict().items() if k != "gain_se"}
    assert OnlineDebiaser.from_state_dict(old).error_reduction_se() is None


def test_weighter_and_rule_states_saved_before_the_evidence_was_kept_still_load() -> None:
    weighter = InverseVarianceWeighter()
    weighter.observe([0.1, 0.5, 0.9], [0.0, 0.5, 1.0])
    assert weighter.residual_dof == 2
    old = {k: v for k, v in weighter.state_dict().items() if k != "dof"}
    assert InverseVarianceWeighter.from_state_dict(old).residual_dof == 1
    rule = FallbackRule()
    rule.update(error_reduction=None, rank_correlation=0.5, residual_variance=None, rank_variance=0.2)
    old_rule = {k: v for k, v in rule.state_dict().items() if k != "rank_variances"}
    old_rule["config"] = {k: v for k, v in old_rule["config"].items() if k != "confidence"}
    assert FallbackRule.from_state_dict(old_rule).diagnostics()["smoothed_rank_correlation"] is None
    assert FallbackRule.from_state_dict(rule.state_dict()).state_dict() == rule.state_dict()
