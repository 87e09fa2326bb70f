"""correct_step: residuals measured out of sample (under the map before the step's pairs), in the method's order."""

from __future__ import annotations

import numpy as np
import pytest

from wmrl_envs.corrections import (
    FallbackConfig,
    FallbackRule,
    InverseVarianceWeighter,
    OnlineDebiaser,
    correct_step,
)


def _parts(min_pairs: int = 4, refit_every: int = 2):
    return OnlineDebiaser(min_pairs=min_pairs, refit_every=refit_every), InverseVarianceWeighter(), FallbackRule()


def test_residuals_are_measured_under_the_map_before_the_steps_pairs_refit_it() -> None:
    debiaser, weighter, rule = _parts()
    p1, r1 = [0.1, 0.2, 0.3, 0.4], [0.0, 0.5, 0.6, 1.0]
    first = correct_step(debiaser, weighter, rule, [p1], [r1], [0])
    # Before any map the world-model groups train on raw predictions: those are the residuals measured.
    assert first.residual_groups == 1 and debiaser.is_fitted and not rule.decision.failing
    # By hand: p1 - r1 = [0.1, -0.3, -0.3, -0.6], n Var = 0.2475; n Var(r1) = 0.5075.
    assert weighter.residual_variance == pytest.approx(0.2475 / 0.5075)

    # Group 2 under the map fitted on group 1 (it interpolates r1): 0.15 -> 0.25, 0.35 -> 0.8,
    # residuals [0.05, -0.1], n Var = 0.01125; real [0.2, 0.9], n Var = 0.245. Adding its pairs refits the map
    # (6 pairs), which then interpolates all six points: in sample the residual would be 0.
    second = correct_step(debiaser, weighter, rule, [[0.15, 0.35]], [[0.2, 0.9]], [0])
    assert debiaser.diagnostics()["last_fit_at"] == 6
    assert float(debiaser.transform(0.15)) == pytest.approx(0.2)  # in-sample fit: no residual left
    assert weighter.residual_variance == pytest.approx((0.2475 + 0.01125) / (0.5075 + 0.245))
    assert second.calibrated == [[pytest.approx(0.2), pytest.approx(0.9)]]  # rewards go through the new map


def test_world_model_groups_are_calibrated_and_non_anchors_give_no_pairs() -> None:
    debiaser, weighter, rule = _parts()
    correct_step(debiaser, weighter, rule, [[0.1, 0.2, 0.3, 0.4]], [[0.0, 0.5, 0.6, 1.0]], [0])
    step = correct_step(debiaser, weighter, rule, [[0.1, None, 0.4], [0.2, 0.3]], [[None, None, None], [0.5, 0.6]], [1])
    assert step.calibrated[0] == [pytest.approx(0.0), None, pytest.approx(1.0)]
    assert step.anchor_pairs == 2 and debiaser.n_pairs == 6
    assert step.calibrated_by_map


def test_a_step_without_anchor_pairs_leaves_every_correction_as_it_was() -> None:
    debiaser, weighter, rule = _parts()
    correct_step(debiaser, weighter, rule, [[0.1, 0.2, 0.3, 0.4]], [[0.0, 0.5, 0.6, 1.0]], [0])
    states = (debiaser.state_dict(), weighter.state_dict(), rule.state_dict())
    step = correct_step(debiaser, weighter, rule, [[0.3, 0.1]], [[None, None]], [])
    assert (debiaser.state_dict(), weighter.state_dict(), rule.state_dict()) == states
    assert step.anchor_pairs == 0 and step.anchor_weight == weighter.anchor_weight


def test_denoising_off_replaces_only_the_weighters_weight_and_keeps_the_fallback_floor() -> None:
    config = FallbackConfig(rank_window=1, min_rank_observations=1, confidence=0.5)  # judge point estimates
    debiaser, weighter = OnlineDebiaser(min_pairs=100), InverseVarianceWeighter()
    rule = FallbackRule(config)
    step = correct_step(debiaser, weighter, rule, [[0.9, 0.1, 0.5]], [[0.0, 1.0, 0.5]], [0], denoise=False)
    assert step.decision.state.value == "fallen_back"  # ranks backwards
    assert step.anchor_weight == config.fallen_back_weight_floor and weighter.residual_variance > 0


def test_out_of_sample_residuals_match_held_out_ones_where_in_sample_ones_understate() -> None:
    # p = r + N(0, 0.1^2); groups of 4 around a task level. Reference: the final map's s^2 on fresh groups.
    rng = np.random.default_rng(0)

    def group() -> tuple[np.ndarray, np.ndarray]:
        real = np.clip(rng.uniform(0.3, 0.7) + rng.normal(0, 0.2, 4), 0, 1)
        return real + rng.normal(0, 0.1, 4), real

    out_of_sample, in_sample = InverseVarianceWeighter(window=40), InverseVarianceWeighter(window=40)
    debiaser, rule = OnlineDebiaser(min_pairs=16, refit_every=4), FallbackRule()
    for _ in range(60):
        predicted, real = group()
        correct_step(debiaser, out_of_sample, rule, [list(predicted)], [list(real)], [0])
        in_sample.observe(debiaser.transform(predicted), real)  # the map was just refit on these very pairs
    held_out = InverseVarianceWeighter(window=2000)
    for _ in range(2000):
        predicted, real = group()
        held_out.observe(debiaser.transform(predicted), real)
    # Measured under earlier (cruder) maps, out-of-sample s^2 sits near the final map's held-out value
    # (0.71-1.47x over seeds 0-5); refit on the pairs it is measured on, the map hides about a third of it.
    assert 0.6 < out_of_sample.residual_variance / held_out.residual_variance < 1.6
    assert in_sample.residual_variance < 0.85 * out_of_sample.residual_variance
