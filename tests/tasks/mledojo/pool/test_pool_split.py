"""The train / held-out split is deterministic, about 2:1 (3:1 while a category has four ids), and holds out every category."""

from __future__ import annotations

from collections import Counter

from wmrl_tasks.mledojo.pool import POOL_IDS, get_spec, pool_split, split_of


def test_split_partitions_the_pool() -> None:
    split = pool_split()
    assert set(split) == {"train", "held-out"}
    assert sorted(split["train"] + split["held-out"]) == sorted(POOL_IDS)
    assert not set(split["train"]) & set(split["held-out"])


def test_split_holds_out_about_a_third() -> None:
    split = pool_split()
    assert 1.5 <= len(split["train"]) / len(split["held-out"]) <= 3.0


def test_every_category_is_held_out_equally() -> None:
    held_out = Counter(get_spec(i).category for i in pool_split()["held-out"])
    categories = {get_spec(i).category for i in POOL_IDS}
    assert set(held_out) == categories
    assert len(set(held_out.values())) == 1


def test_split_is_deterministic_and_agrees_with_split_of() -> None:
    assert pool_split() == pool_split()
    for competition_id in POOL_IDS:
        assert competition_id in pool_split()[split_of(competition_id).value]
