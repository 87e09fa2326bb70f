"""group_advantages: per-group standardisation, None excluded (not 0), weights normalised over the step, never NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from wmrl_envs.corrections import normalised_weights
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


@given(rewards, rewards, weight, weight)
def test_a_group_weight_scales_its_advantages_by_its_share_of_the_steps_total_weight(a, b, wa, wb) -> None:
    unit = group_advantages([_group(a), _group(b)])
    weighted = group_advantages([_group(a, wa), _group(b, wb, WORLD_MODEL)])
    n = [sum(r is not None for r in g) for g in (a, b)]
    total = wa * n[0] + wb * n[1]
    for w, plain, scaled in ((wa, unit[0], weighted[0]), (wb, unit[1], weighted[1])):
        factor = w * sum(n) / total if total > 0 else 0.0
        for x, y in zip(plain, scaled):
            assert (x is None and y is None) or y == pytest.approx(factor * x, rel=1e-9, abs=1e-9)


@given(st.lists(st.tuples(rewards, weight), min_size=1, max_size=5), st.floats(0.01, 100))
def test_a_factor_common_to_every_weight_cancels(groups, factor) -> None:
    base = group_advantages([_group(v, w) for v, w in groups])
    scaled = group_advantages([_group(v, w * factor) for v, w in groups])
    for x_group, y_group in zip(base, scaled):
        for x, y in zip(x_group, y_group):
            assert (x is None and y is None) or y == pytest.approx(x, rel=1e-9, abs=1e-9)


@given(st.lists(st.tuples(rewards, st.floats(0.1, 4.0)), min_size=1, max_size=5))
def test_normalised_weights_average_one_over_the_scored_rollouts(groups) -> None:
    sizes = [sum(r is not None for r in v) for v, _ in groups]
    assume(sum(sizes) > 0)
    weights = normalised_weights([w for _, w in groups], sizes)
    assert sum(w * n for w, n in zip(weights, sizes)) == pytest.approx(sum(sizes))


def test_normalised_weights_by_hand() -> None:
    # 2 + 2 scored rollouts, total weight 4 * 2 + 1 * 2 = 10: 4 * 4 / 10 and 1 * 4 / 10.
    assert normalised_weights([4.0, 1.0], [2, 2]) == pytest.approx([1.6, 0.4])
    # 3 + 1: total 2 * 3 + 1 * 1 = 7, N = 4.
    assert normalised_weights([2.0, 1.0], [3, 1]) == pytest.approx([8 / 7, 4 / 7])
    assert normalised_weights([0.0, 0.0], [2, 2]) == [0.0, 0.0]
    assert normalised_weights([3.0, 1.0], [0, 2]) == [3.0, 1.0]  # the unscored group does not count in the total
    with pytest.raises(ValueError, match="one size per weight"):
        normalised_weights([1.0], [1, 2])


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
