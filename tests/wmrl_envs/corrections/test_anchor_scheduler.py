"""AnchorScheduler: at least one anchor per step, the target fraction over steps, reproducible from the seed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import AnchorScheduler

fractions = st.floats(min_value=0.01, max_value=1.0)


@settings(max_examples=100, deadline=None)
@given(fraction=fractions, sizes=st.lists(st.integers(min_value=0, max_value=64), max_size=30), seed=st.integers(0, 99))
def test_every_step_with_groups_gets_between_one_and_all_distinct_anchors(fraction, sizes, seed):
    scheduler = AnchorScheduler(fraction=fraction, seed=seed)
    for step, n_groups in enumerate(sizes):
        anchors = scheduler.choose(n_groups, step)
        assert anchors == sorted(set(anchors))
        assert all(0 <= i < n_groups for i in anchors)
        assert (1 <= len(anchors) <= n_groups) if n_groups else anchors == []


@settings(max_examples=100, deadline=None)
@given(fraction=fractions, n_groups=st.integers(min_value=1, max_value=64), n_steps=st.integers(1, 200))
def test_realized_fraction_tracks_the_target_when_the_floor_of_one_does_not_bind(fraction, n_groups, n_steps):
    scheduler = AnchorScheduler(fraction=fraction)
    total = sum(len(scheduler.choose(n_groups, step)) for step in range(n_steps))
    if fraction * n_groups >= 1.0:
        # Carry-over rounding: never more than one anchor away from the exact target in total.
        assert abs(total - fraction * n_groups * n_steps) <= 1.0 + 1e-6
    else:
        assert total == n_steps


def test_one_anchor_in_ten_groups_by_default():
    scheduler = AnchorScheduler(seed=3)
    for step in range(100):
        scheduler.choose(32, step)
    assert scheduler.realized_fraction == pytest.approx(0.1, abs=1 / 3200)


def test_the_same_seed_picks_the_same_anchors():
    first, second = AnchorScheduler(seed=7), AnchorScheduler(seed=7)
    picks = [first.choose(40, step) for step in range(50)]
    assert picks == [second.choose(40, step) for step in range(50)]
    other = AnchorScheduler(seed=8)
    assert picks != [other.choose(40, step) for step in range(50)]


def test_raising_the_fraction_to_one_makes_every_group_an_anchor():
    scheduler = AnchorScheduler(fraction=0.1)
    assert len(scheduler.choose(20, 0)) == 2
    scheduler.fraction = 0.5
    assert len(scheduler.choose(20, 1)) == 10
    scheduler.fraction = 1.0
    assert scheduler.choose(20, 2) == list(range(20))


def test_steps_must_strictly_increase():
    scheduler = AnchorScheduler()
    scheduler.choose(10, 5)
    with pytest.raises(ValueError, match="strictly increase"):
        scheduler.choose(10, 5)


def test_a_step_without_groups_has_no_anchors():
    scheduler = AnchorScheduler()
    assert scheduler.choose(0, 0) == []
    assert scheduler.realized_fraction is None


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5, float("nan"), True])
def test_invalid_fraction_is_rejected(fraction):
    with pytest.raises(ValueError, match="anchor fraction"):
        AnchorScheduler(fraction=fraction)
    with pytest.raises(ValueError, match="anchor fraction"):
        AnchorScheduler().fraction = fraction


@pytest.mark.parametrize("n_groups, step", [(-1, 0), (3, -1), (2.5, 0), (3, 1.0)])
def test_invalid_group_counts_and_steps_are_rejected(n_groups, step):
    with pytest.raises(ValueError, match="must be an int"):
        AnchorScheduler().choose(n_groups, step)
