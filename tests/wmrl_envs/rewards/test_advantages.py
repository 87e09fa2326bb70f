"""group_advantages: per-group standardisation, None excluded (not 0), weights applied, never NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from wmrl_envs.rewards import ANCHOR, WORLD_MODEL, GroupScore, group_advantages

reward = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)
rewards = st.lists(st.one_of(st.none(), reward), max_size=12)
weight = st.floats(min_value=0.0, max_value=4.0)


def _group(values, w: float = 1.0, source: str = ANCHOR) -> GroupScore:
    return GroupScore(list(values), source, w)


@given(rewards, weight, st.sampled_from(["population", "sample"]))
def test_unscored_rollouts_get_none_and_every_other_advantage_is_finite(values, w, std) -> None:
    (advantages,) = group_advantages([_group(values, w)], std=std)
    assert len(advantages) == len(values)
    for r, a in zip(values, advantages):
        assert (a is None) == (r is None)
        assert a is None or math.isfinite(a)


@given(rewards, st.sampled_from(["population", "sample"]))
def test_advantages_of_the_scored_rollouts_sum_to_zero(values, std) -> None:
    (advantages,) = group_advantages([_group(values)], std=std)
    scored = [a for a in advantages if a is not None]
    assert abs(sum(scored)) <= 1e-6 * max(1, len(scored))


@given(rewards, weight)
def test_a_group_weight_scales_its_advantages(values, w) -> None:
    (unit,) = group_advantages([_group(values, 1.0)])
    (weighted,) = group_advantages([_group(values, w, WORLD_MODEL)])
    for a, b in zip(unit, weighted):
        assert (a is None and b is None) or b == pytest.approx(w * a, abs=1e-9)


@given(rewards)
def test_a_none_is_excluded_not_counted_as_zero(values) -> None:
    (with_none,) = group_advantages([_group(values + [None])])
    (without,) = group_advantages([_group(values)])
    assert with_none[:-1] == without and with_none[-1] is None


@given(st.integers(min_value=0, max_value=10), reward, weight)
def test_a_group_whose_rewards_are_all_equal_gets_zeros(n, value, w) -> None:
    (advantages,) = group_advantages([_group([value] * n + [None], w)])
    assert advantages == [0.0] * n + [None]


@given(st.lists(reward, min_size=2, max_size=12), st.floats(0.1, 10), st.floats(-100, 100))
def test_advantages_ignore_an_affine_map_of_the_rewards(values, a, b) -> None:
    assume(np.std(values) > 1e-2)
    (plain,) = group_advantages([_group(values)], eps=0.0)
    (mapped,) = group_advantages([_group([a * v + b for v in values])], eps=0.0)
    assert mapped == pytest.approx(plain, rel=1e-6, abs=1e-6)


@given(st.lists(reward, min_size=2, max_size=12))
def test_the_std_conventions_give_unit_population_or_unit_sample_spread(values) -> None:
    assume(np.std(values) > 1e-3)
    (population,) = group_advantages([_group(values)], eps=0.0, std="population")
    (sample,) = group_advantages([_group(values)], eps=0.0, std="sample")
    assert np.std(population) == pytest.approx(1.0)
    assert np.std(sample, ddof=1) == pytest.approx(1.0)


def test_a_fallen_back_world_model_group_moves_nothing() -> None:
    (advantages,) = group_advantages([_group([0.1, 0.9, None], 0.0, WORLD_MODEL)])
    assert advantages == [0.0, 0.0, None]


def test_bad_arguments_are_rejected_with_the_accepted_values() -> None:
    with pytest.raises(ValueError, match="'population' or 'sample'"):
        group_advantages([], std="unbiased")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eps"):
        group_advantages([], eps=float("nan"))
    with pytest.raises(ValueError, match="use None"):
        GroupScore([float("nan")], ANCHOR)
    with pytest.raises(ValueError, match="weight"):
        GroupScore([0.5], ANCHOR, weight=-1.0)
