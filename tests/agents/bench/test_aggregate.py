"""The benchmark's numbers: avg@K, valid rate, best-of-K, medal rate, and means over tasks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_agents.bench.aggregate import (
    Scores,
    avg_at_k,
    best_of_k,
    category_means,
    mean_scores,
    medal_rate,
    task_scores,
    valid_rate,
)

positions = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=16)
CATEGORIES = ("binary", "multiclass", "regression", "other")


def test_a_hand_computed_task() -> None:
    # Four attempts: two valid runs (0.5, 1.0), one crash and one valid run at the bottom of the board.
    scores = task_scores([0.5, 0.0, 1.0, 0.25], [True, False, True, True], [False, False, True, False])
    assert scores == Scores(avg_at_k=0.4375, valid_rate=0.75, best_of_k=1.0, medal_rate=0.25, tasks=1)


def test_tasks_weigh_equally_not_categories() -> None:
    per_task = [
        ("binary", task_scores([0.8, 0.8], [True, True], [True, False])),
        ("binary", task_scores([0.4, 0.0], [True, False], [False, False])),
        ("regression", task_scores([0.3, 0.3], [True, True], [False, False])),
    ]
    by_category = category_means(per_task)
    overall = mean_scores([s for _, s in per_task])
    assert by_category["binary"].avg_at_k == pytest.approx(0.5)  # (0.8 + 0.2) / 2
    assert by_category["regression"].avg_at_k == pytest.approx(0.3)
    assert overall.avg_at_k == pytest.approx((0.8 + 0.2 + 0.3) / 3)  # not the mean of categories, 0.4
    assert overall.valid_rate == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert overall.best_of_k == pytest.approx((0.8 + 0.4 + 0.3) / 3)
    assert overall.medal_rate == pytest.approx(0.5 / 3)
    assert (overall.tasks, by_category["binary"].tasks, by_category["regression"].tasks) == (3, 2, 1)


def test_a_category_without_tasks_is_absent_not_zero() -> None:
    by_category = category_means([("regression", task_scores([0.2], [True], [False]))])
    assert list(by_category) == ["regression"]


def test_categories_come_in_the_documented_order() -> None:
    one = task_scores([0.5], [True], [False])
    by_category = category_means([("other", one), ("custom", one), ("binary", one), ("regression", one)])
    assert list(by_category) == ["binary", "regression", "other", "custom"]


@given(positions)
def test_avg_at_k_is_the_mean_and_best_of_k_bounds_it(values: list[float]) -> None:
    assert avg_at_k(values) == pytest.approx(math.fsum(values) / len(values))
    assert min(values) <= avg_at_k(values) <= best_of_k(values) == max(values)


@given(positions, st.randoms())
def test_attempt_order_does_not_matter(values: list[float], rng) -> None:
    shuffled = list(values)
    rng.shuffle(shuffled)
    assert avg_at_k(shuffled) == pytest.approx(avg_at_k(values))
    assert best_of_k(shuffled) == best_of_k(values)


@given(st.lists(st.booleans(), min_size=1, max_size=16))
def test_rates_count_the_true_flags(flags: list[bool]) -> None:
    assert valid_rate(flags) == medal_rate(flags) == sum(flags) / len(flags)


@given(st.lists(st.tuples(st.sampled_from(CATEGORIES), positions), min_size=1, max_size=12))
def test_overall_is_the_task_count_weighted_mean_of_categories(tasks: list[tuple[str, list[float]]]) -> None:
    per_task = [(c, task_scores(p, [True] * len(p), [False] * len(p))) for c, p in tasks]
    overall = mean_scores([s for _, s in per_task])
    by_category = category_means(per_task)
    assert set(by_category) == {c for c, _ in tasks}
    assert sum(s.tasks for s in by_category.values()) == overall.tasks == len(tasks)
    weighted = sum(s.tasks * s.avg_at_k for s in by_category.values()) / overall.tasks
    assert weighted == pytest.approx(overall.avg_at_k)


@pytest.mark.parametrize("bad", [[], [1.5], [-0.1], [float("nan")]])
def test_positions_outside_zero_one_or_missing_are_rejected(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="K must be at least 1|lie in"):
        avg_at_k(bad)


def test_one_flag_per_attempt_is_required() -> None:
    with pytest.raises(ValueError, match="one position, valid flag and medal flag per attempt"):
        task_scores([0.5, 0.5], [True], [False, False])


def test_means_are_over_per_task_scores_only() -> None:
    with pytest.raises(ValueError, match="no tasks"):
        mean_scores([])
    two = mean_scores([task_scores([0.5], [True], [False]), task_scores([0.1], [True], [False])])
    with pytest.raises(ValueError, match="one Scores per task"):
        mean_scores([two])
