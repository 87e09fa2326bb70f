"""AnchorScheduler: the target fraction over the run whatever the batch per call, reproducible from the seed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wmrl_envs.corrections import AnchorScheduler

fractions = st.floats(min_value=0.01, max_value=1.0)


@settings(max_examples=100, deadline=None)
@given(fraction=fractions, sizes=st.lists(st.integers(min_value=0, max_value=64), max_size=30), seed=st.integers(0, 99))
def test_anchors_are_distinct_groups_of_the_call(fraction, sizes, seed):
    scheduler = AnchorScheduler(fraction=fraction, seed=seed)
    for step, n_groups in enumerate(sizes):
        anchors = scheduler.choose(n_groups, step)
        assert anchors == sorted(set(anchors))
        assert all(0 <= i < n_groups for i in anchors)


@settings(max_examples=200, deadline=None)
@given(fraction=fractions, sizes=st.lists(st.integers(min_value=0, max_value=64), min_size=1, max_size=200))
def test_whatever_the_batch_per_call_the_anchors_so_far_are_the_target_rounded_up(fraction, sizes):
    scheduler = AnchorScheduler(fraction=fraction)
    anchors = groups = 0
    for step, n_groups in enumerate(sizes):
        anchors += len(scheduler.choose(n_groups, step))
        groups += n_groups
        # Never behind the target, never a whole group ahead of it: the realised fraction converges.
        assert fraction * groups - 1e-6 <= anchors < fraction * groups + 1.0 + 1e-6
        assert anchors == math.ceil(fraction * groups - 1e-9)


def test_twenty_single_group_calls_anchor_two_groups_at_ten_percent():
    scheduler = AnchorScheduler(fraction=0.1, seed=0)
    picks = [scheduler.choose(1, step) for step in range(20)]
    assert [step for step, anchors in enumerate(picks) if anchors] == [0, 10]
    assert scheduler.realized_fraction == pytest.approx(0.1)


def test_a_resumed_scheduler_continues_the_credit_and_old_states_with_a_carry_load():
    scheduler = AnchorScheduler(fraction=0.3, seed=1)
    for step in range(5):
        scheduler.choose(3, step)
    copy = AnchorScheduler.from_state_dict(scheduler.state_dict())
    assert [copy.choose(3, s) for s in range(5, 20)] == [scheduler.choose(3, s) for s in range(5, 20)]
    old = {k: v for k, v in AnchorScheduler(fraction=0.1).state_dict().items() if k != "credit"}
    restored = AnchorScheduler.from_state_dict({**old, "carry": 0.6})
    assert len(restored.choose(4, 0)) == 1  # 0.6 + 0.4 begins exactly one group


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
