"""On a world model that distorts real scores monotonically (non-affinely) plus noise, the corrections work:
the map removes most of the error and the anchor weight relaxes as it does."""

from __future__ import annotations

import numpy as np

from wmrl_envs.corrections import FallbackRule, InverseVarianceWeighter, OnlineDebiaser, correct_step


def _distort(real: np.ndarray) -> np.ndarray:
    return np.expm1(2.0 * real)  # convex: squashes the bottom of the leaderboard, stretches the top


def test_calibrated_mse_is_well_below_raw_mse_after_a_few_hundred_pairs(groups):
    debiaser = OnlineDebiaser()
    stream = groups(_distort, seed=1)
    while debiaser.n_pairs < 400:
        debiaser.add(*next(stream))
    held_out = [next(stream) for _ in range(50)]
    predicted = np.concatenate([p for p, _ in held_out])
    real = np.concatenate([r for _, r in held_out])
    raw_mse = np.mean((predicted - real) ** 2)
    calibrated_mse = np.mean((debiaser.transform(predicted) - real) ** 2)
    assert calibrated_mse < 0.05 * raw_mse
    assert calibrated_mse < 0.01


def test_anchor_weight_falls_as_the_map_improves(groups):
    debiaser, weighter, rule = OnlineDebiaser(), InverseVarianceWeighter(window=8), FallbackRule()
    stream = groups(_distort, seed=2)
    weights = {}
    for n_group in range(1, 121):
        predicted, real = next(stream)
        correct_step(debiaser, weighter, rule, [list(predicted)], [list(real)], [0])
        weights[n_group] = weighter.anchor_weight
    # 24 groups = 192 pairs: no map yet, the world-model groups train on the raw (convex) predictions, whose
    # residuals keep the anchors at the maximum weight. The first fit comes at pair 200.
    assert weights[24] == 4.0
    # Eight groups after the fit the window holds only residuals under the map, measured out of sample.
    assert weights[40] < 1.1
    assert max(weights[n] for n in range(40, 121)) < 1.1
