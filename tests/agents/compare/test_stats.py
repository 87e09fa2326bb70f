"""Intervals over seeds: what a reader of the tables relies on (the mean inside, noise not called a win)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.compare.stats import Interval, bootstrap_interval, mean_interval, paired_difference

scores = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=2, max_size=12)


@given(scores)
def test_the_interval_holds_the_mean_and_the_bootstrap_stays_within_the_data(values: list[float]) -> None:
    t, boot = mean_interval(values), bootstrap_interval(values)
    assert t.low is not None and t.high is not None and boot.low is not None and boot.high is not None
    assert t.low <= t.mean <= t.high and boot.low <= boot.mean <= boot.high
    assert min(values) - 1e-12 <= boot.low and boot.high <= max(values) + 1e-12
    assert math.isclose(t.mean, sum(values) / len(values), abs_tol=1e-12)


@given(scores, st.floats(min_value=-0.5, max_value=0.5))
def test_shifting_every_seed_shifts_the_interval(values: list[float], shift: float) -> None:
    a, b = mean_interval(values), mean_interval([v + shift for v in values])
    assert math.isclose(b.mean, a.mean + shift, abs_tol=1e-9)
    assert math.isclose(b.high - b.low, a.high - a.low, abs_tol=1e-9)  # type: ignore[operator]


@given(scores)
def test_a_paired_difference_cancels_what_the_seeds_share(base: list[float]) -> None:
    a = {seed: v + 0.1 for seed, v in enumerate(base)}
    b = dict(enumerate(base))
    difference = paired_difference(a, b)
    assert math.isclose(difference.mean, 0.1, abs_tol=1e-9)
    assert math.isclose(difference.low, 0.1, abs_tol=1e-9) and difference.excludes_zero  # type: ignore[arg-type]


def test_the_t_interval_matches_a_hand_computed_one() -> None:
    # mean 0.41, sd 0.0360555, t(0.975, 2) = 4.302653: half-width 0.089566
    interval = mean_interval([0.40, 0.45, 0.38])
    assert math.isclose(interval.low, 0.41 - 0.089566, abs_tol=1e-5)  # type: ignore[arg-type]
    assert interval.text() == "0.410 [0.320, 0.500]" and interval.pm() == "0.410±0.090"


def test_a_difference_within_noise_does_not_exclude_zero() -> None:
    difference = paired_difference({0: 0.5, 1: 0.3, 2: 0.45}, {0: 0.4, 1: 0.4, 2: 0.4})
    assert not difference.excludes_zero and difference.text(signed=True).startswith("+0.017")


def test_one_seed_has_a_mean_and_no_interval() -> None:
    assert mean_interval([0.3]) == Interval(0.3, None, None, 1)
    assert mean_interval([0.3]).pm() == "0.300" and not mean_interval([0.3]).excludes_zero


def test_bad_input_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="at least one seed"):
        mean_interval([])
    with pytest.raises(ValueError, match="finite"):
        mean_interval([0.1, float("nan")])
    with pytest.raises(ValueError, match="no seed in common"):
        paired_difference({0: 0.1}, {1: 0.2})
