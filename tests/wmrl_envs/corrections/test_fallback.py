"""FallbackRule: healthy on a good world model, fallen back (plain GRPO) on an anti-correlated one, logged."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import (
    FallbackConfig,
    FallbackRule,
    FallbackState,
    InverseVarianceWeighter,
    OnlineDebiaser,
    mean_rank_correlation,
    rank_correlation,
)

GOOD = {"error_reduction": 0.4, "rank_correlation": 0.8, "residual_variance": 0.1}


def _run_pipeline(stream, steps: int, anchor_groups_per_step: int = 2) -> list:
    """Anchors through debiaser, weighter and rule as a trainer would wire them; returns every decision."""
    debiaser, weighter, rule = OnlineDebiaser(), InverseVarianceWeighter(), FallbackRule()
    decisions = []
    for _ in range(steps):
        anchors = [next(stream) for _ in range(anchor_groups_per_step)]
        for predicted, real in anchors:
            debiaser.add(predicted, real)
        calibrated = [(debiaser.transform(predicted), real) for predicted, real in anchors]
        for predicted, real in calibrated if debiaser.is_fitted else ():
            weighter.observe(predicted, real)
        decisions.append(
            rule.update(
                error_reduction=debiaser.error_reduction(),
                rank_correlation=mean_rank_correlation(calibrated),
                residual_variance=weighter.residual_variance,
            )
        )
    return decisions


def test_stays_healthy_on_a_good_world_model(groups):
    decisions = _run_pipeline(groups(lambda r: np.expm1(2 * r), noise=0.05), steps=60)
    assert {d.state for d in decisions} == {FallbackState.HEALTHY}
    assert decisions[-1].world_model_weight == 1.0


def test_reaches_fallen_back_when_predictions_are_anti_correlated(groups):
    decisions = _run_pipeline(groups(lambda r: 1.0 - r, noise=0.05), steps=30)
    last = decisions[-1]
    assert last.state is FallbackState.FALLEN_BACK
    assert "ranking" in last.failing
    assert last.world_model_weight == 0.0
    assert last.anchor_fraction == 1.0


def test_one_failing_signal_degrades_with_more_anchors_and_a_weight_floor():
    rule = FallbackRule()
    decision = rule.update(**{**GOOD, "residual_variance": 2.0})
    assert decision.state is FallbackState.DEGRADED
    assert decision.failing == ("residuals",)
    assert decision.anchor_fraction == 0.25
    assert decision.anchor_weight(1.2) == 2.0
    assert decision.anchor_weight(3.0) == 3.0
    assert decision.world_model_weight == 1.0


def test_two_failing_signals_fall_back():
    decision = FallbackRule().update(**{**GOOD, "residual_variance": 2.0, "error_reduction": -0.5})
    assert decision.state is FallbackState.FALLEN_BACK
    assert decision.failing == ("calibration", "residuals")


def test_recovery_climbs_one_level_after_patience():
    rule = FallbackRule(FallbackConfig(recovery_patience=3))
    rule.update(**{**GOOD, "residual_variance": 2.0, "error_reduction": -0.5})
    states = [rule.update(**GOOD).state for _ in range(6)]
    assert states == [FallbackState.FALLEN_BACK] * 2 + [FallbackState.DEGRADED] * 3 + [FallbackState.HEALTHY]


def test_a_worse_signal_interrupts_recovery():
    rule = FallbackRule(FallbackConfig(recovery_patience=3))
    rule.update(**{**GOOD, "residual_variance": 2.0})
    rule.update(**GOOD)
    rule.update(**GOOD)
    rule.update(**{**GOOD, "residual_variance": 2.0})
    assert [rule.update(**GOOD).state for _ in range(3)] == [FallbackState.DEGRADED] * 2 + [FallbackState.HEALTHY]


def test_ranking_is_judged_only_on_a_smoothed_window():
    rule = FallbackRule(FallbackConfig(rank_window=4, min_rank_observations=3))
    assert rule.update(**{**GOOD, "rank_correlation": -1.0}).state is FallbackState.HEALTHY
    assert rule.update(**{**GOOD, "rank_correlation": -1.0}).state is FallbackState.HEALTHY
    assert rule.update(**{**GOOD, "rank_correlation": None}).state is FallbackState.HEALTHY
    assert rule.update(**{**GOOD, "rank_correlation": 0.9}).state is FallbackState.FALLEN_BACK  # mean -0.37


def test_unavailable_signals_never_fail():
    rule = FallbackRule(FallbackConfig(min_rank_observations=1))
    for _ in range(10):
        decision = rule.update(error_reduction=None, rank_correlation=None, residual_variance=None)
        assert decision.state is FallbackState.HEALTHY and decision.failing == ()


@settings(max_examples=50, deadline=None)
@given(
    signals=st.lists(
        st.tuples(st.none() | st.floats(-2, 2), st.none() | st.floats(-1, 1), st.none() | st.floats(0, 5)),
        max_size=40,
    )
)
def test_decisions_are_deterministic(signals):
    runs = []
    for _ in range(2):
        rule = FallbackRule()
        runs.append(
            [rule.update(error_reduction=e, rank_correlation=r, residual_variance=v).as_dict() for e, r, v in signals]
        )
    assert runs[0] == runs[1]


def test_state_changes_are_logged_with_their_reasons(caplog):
    rule = FallbackRule()
    with caplog.at_level(logging.WARNING, logger="wmrl_envs.corrections.fallback"):
        rule.update(**{**GOOD, "residual_variance": 2.0})
    assert "healthy -> degraded" in caplog.text
    assert "residuals" in caplog.text
    diagnostics = rule.diagnostics()
    assert diagnostics["state"] == "degraded" and diagnostics["last_residual_variance"] == 2.0


def test_non_finite_or_out_of_range_signals_are_rejected():
    rule = FallbackRule()
    with pytest.raises(ValueError, match="rank_correlation must be a finite number or None"):
        rule.update(error_reduction=0.1, rank_correlation=float("nan"), residual_variance=0.1)
    with pytest.raises(ValueError, match="residual_variance must be a finite number or None"):
        rule.update(error_reduction=0.1, rank_correlation=0.5, residual_variance=float("inf"))
    with pytest.raises(ValueError, match=r"must lie in \[-1, 1\]"):
        rule.update(error_reduction=0.1, rank_correlation=1.5, residual_variance=0.1)
    assert rule.diagnostics()["n_updates"] == 0


def test_rank_correlation_is_spearman_within_a_group():
    assert rank_correlation([1, 2, 3, 4], [10, 20, 30, 400]) == pytest.approx(1.0)
    assert rank_correlation([4, 3, 2, 1], [0.1, 0.2, 0.3, 0.4]) == pytest.approx(-1.0)
    assert rank_correlation([1, 1, 1], [0.1, 0.2, 0.3]) is None
    assert rank_correlation([1.0], [0.1]) is None
    assert mean_rank_correlation([([1, 1], [0, 1]), ([1, 2], [0, 1]), ([2, 1], [0, 1])]) == pytest.approx(0.0)
    assert mean_rank_correlation([]) is None
    with pytest.raises(ValueError, match="NaN or infinite"):
        rank_correlation([1.0, float("nan")], [0.1, 0.2])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"degraded_anchor_fraction": 0.05},
        {"fallen_back_anchor_fraction": 1.5},
        {"degraded_weight_floor": 0.5},
        {"rank_window": 0},
        {"min_rank_observations": 9},
        {"max_residual_variance": 0.0},
        {"min_error_reduction": float("nan")},
        {"healthy_anchor_fraction": "0.1"},
        {"recovery_patience": 2.0},
    ],
)
def test_invalid_configuration_is_rejected(kwargs):
    with pytest.raises(ValueError, match="FallbackConfig"):
        FallbackConfig(**kwargs)


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=12),
)
def test_rank_correlation_agrees_with_scipy_spearman_including_ties(pairs):
    spearmanr = pytest.importorskip("scipy.stats").spearmanr
    predicted, real = (np.array(column, dtype=float) for column in zip(*pairs, strict=True))
    rho = rank_correlation(predicted, real)
    if np.ptp(predicted) == 0 or np.ptp(real) == 0:
        assert rho is None
    else:
        assert rho == pytest.approx(spearmanr(predicted, real).statistic, abs=1e-12)
