"""InverseVarianceWeighter: weight 1 + c s^2 within bounds, s^2 as defined, every group with a spread counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import InverseVarianceWeighter

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
group = st.integers(min_value=0, max_value=10).flatmap(
    lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n), st.lists(finite, min_size=n, max_size=n))
)


@settings(max_examples=150, deadline=None)
@given(
    groups=st.lists(group, max_size=20),
    min_weight=st.floats(min_value=0.1, max_value=3.0),
    extra=st.floats(min_value=0.0, max_value=5.0),
    c=st.floats(min_value=0.0, max_value=100.0),
)
def test_anchor_weight_always_within_min_and_max(groups, min_weight, extra, c):
    weighter = InverseVarianceWeighter(min_weight=min_weight, max_weight=min_weight + extra, c=c, window=5)
    for predicted, real in groups:
        weighter.observe(predicted, real)
        assert min_weight <= weighter.anchor_weight <= min_weight + extra
        s2 = weighter.residual_variance
        assert s2 is None or (np.isfinite(s2) and s2 >= 0.0)


def test_residual_variance_is_the_pooled_within_group_ratio():
    weighter = InverseVarianceWeighter(c=2.0)
    groups = [([0.1, 0.5, 0.9], [0.0, 0.5, 1.0]), ([0.3, 0.2, 0.9, 0.4], [0.2, 0.4, 0.6, 0.8])]
    for predicted, real in groups:
        assert weighter.observe(predicted, real)
    numerator = sum(len(r) * np.var(np.subtract(p, r)) for p, r in groups)
    denominator = sum(len(r) * np.var(r) for _, r in groups)
    assert weighter.residual_variance == pytest.approx(numerator / denominator)
    assert weighter.anchor_weight == pytest.approx(1.0 + 2.0 * numerator / denominator)


def test_a_residual_shared_by_the_whole_group_does_not_count():
    # GRPO's per-group centring cancels it, so it is not noise the policy sees.
    weighter = InverseVarianceWeighter()
    weighter.observe(np.array([0.1, 0.4, 0.8]) + 0.5, [0.1, 0.4, 0.8])
    assert weighter.residual_variance == pytest.approx(0.0, abs=1e-12)
    assert weighter.anchor_weight == pytest.approx(1.0)


def test_residual_variance_is_free_of_the_reward_units():
    small, large = InverseVarianceWeighter(), InverseVarianceWeighter()
    small.observe([0.1, 0.5, 0.7], [0.0, 0.5, 1.0])
    large.observe([10.0, 50.0, 70.0], [0.0, 50.0, 100.0])
    assert small.residual_variance == pytest.approx(large.residual_variance)


def test_a_group_whose_real_scores_are_all_equal_counts_its_world_model_spread_as_noise():
    weighter = InverseVarianceWeighter()
    weighter.observe([0.1, 0.5, 0.9], [0.0, 0.5, 1.0])
    # A group of three failed runs (real 0) that the world model tells apart: its spread is pure noise.
    assert weighter.observe([0.0, 0.3, 0.6], [0.0, 0.0, 0.0]) is True
    residual_ss = 3 * np.var([0.1, 0.0, -0.1]) + 3 * np.var([0.0, 0.3, 0.6])  # 0.02 + 0.18
    real_ss = 3 * np.var([0.0, 0.5, 1.0]) + 0.0  # 0.5
    assert weighter.residual_variance == pytest.approx(residual_ss / real_ss)  # 0.4
    assert weighter.anchor_weight == pytest.approx(1.4)
    # A constant group the world model also scores flat adds nothing to either side.
    assert weighter.observe([0.3, 0.3, 0.3], [0.7, 0.7, 0.7]) is True
    assert weighter.residual_variance == pytest.approx(0.4)


def test_s2_is_undefined_until_the_real_scores_have_varied_in_some_group():
    weighter = InverseVarianceWeighter(max_weight=3.0)
    weighter.observe([0.1, 0.4], [0.0, 0.0])
    assert weighter.residual_variance is None and weighter.anchor_weight == 3.0
    assert weighter.diagnostics()["groups_observed"] == 1


@pytest.mark.parametrize("predicted, real", [([0.4], [0.9]), ([], []), (0.4, 0.9)])
def test_groups_of_size_one_and_empty_groups_are_ignored(predicted, real):
    weighter = InverseVarianceWeighter()
    assert weighter.observe(predicted, real) is False
    assert weighter.residual_variance is None


def test_weight_is_max_until_a_group_has_been_measured():
    weighter = InverseVarianceWeighter(max_weight=3.0)
    assert weighter.residual_variance is None
    assert weighter.anchor_weight == 3.0


def test_window_forgets_groups_measured_under_an_older_map():
    weighter = InverseVarianceWeighter(window=3)
    weighter.observe([1.0, 0.0, 0.5], [0.0, 1.0, 0.5])
    assert weighter.anchor_weight == 4.0
    for _ in range(3):
        weighter.observe([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
    assert weighter.residual_variance == 0.0
    assert weighter.anchor_weight == 1.0


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_scores_are_rejected(bad):
    weighter = InverseVarianceWeighter()
    with pytest.raises(ValueError, match="NaN or infinite"):
        weighter.observe([0.1, bad], [0.2, 0.3])
    with pytest.raises(ValueError, match="NaN or infinite"):
        weighter.observe([0.1, 0.2], [bad, 0.3])
    assert weighter.diagnostics()["groups_observed"] == 0


def test_mismatched_lengths_are_rejected():
    with pytest.raises(ValueError, match="one calibrated prediction per real score"):
        InverseVarianceWeighter().observe([0.1, 0.2], [0.1, 0.2, 0.3])


@pytest.mark.parametrize("kwargs", [{"min_weight": 0.0}, {"min_weight": 5.0}, {"c": -1.0}, {"window": 0}])
def test_invalid_configuration_is_rejected(kwargs):
    with pytest.raises(ValueError, match="InverseVarianceWeighter"):
        InverseVarianceWeighter(**kwargs)
