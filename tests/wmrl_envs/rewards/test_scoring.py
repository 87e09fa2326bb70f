"""`score_step`: one dispatch for every caller, groups to a group source, a flat batch to any other."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.rewards import ANCHOR, WORLD_MODEL, GroupScore, Score, score_step


class Flat:
    """A plain source: real scores for even items, predictions for odd ones, nothing for negatives."""

    name = "flat"

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def score(self, batch):
        self.calls.append(list(batch))
        return [None if x < 0 else Score(0.5, "real" if x % 2 == 0 else "world_model") for x in batch]


class Grouped:
    """A group source that weighs group g by g + 1 and remembers the step and turn it was called with."""

    name = "grouped"

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def score(self, batch):
        raise AssertionError("a group source is scored through score_groups")

    def score_groups(self, groups, step=None, turn=0):
        self.calls.append((len(groups), step, turn))
        return [
            GroupScore([0.25] * len(group), ANCHOR if g == 0 else WORLD_MODEL, float(g + 1), diagnostics={"step": step})
            for g, group in enumerate(groups)
        ]


groups_of_items = st.lists(st.lists(st.integers(-2, 9), max_size=5), max_size=5)


@given(groups_of_items)
def test_a_plain_source_scores_the_flat_batch_in_one_call_and_groups_keep_their_shape(groups) -> None:
    source = Flat()
    scored = score_step(source, groups)
    n_items = sum(map(len, groups))
    assert source.calls == ([[x for g in groups for x in g]] if n_items else [])
    assert [len(s) for s in scored.scores] == [len(g) for g in groups]
    assert scored.weights == [1.0] * len(groups) and scored.labels == ["flat"] * len(groups)
    for group, scores, kind in zip(groups, scored.scores, scored.sources):
        real_only = all(x < 0 or x % 2 == 0 for x in group)
        assert kind == (ANCHOR if real_only else WORLD_MODEL)
        assert [s is None for s in scores] == [x < 0 for x in group]


def test_a_group_source_gets_groups_with_step_and_turn_and_gives_weights() -> None:
    source = Grouped()
    scored = score_step(source, [[1, 2], [3]], step=7, turn=2)
    assert source.calls == [(2, 7, 2)]
    assert scored.weights == [1.0, 2.0] and scored.sources == scored.labels == [ANCHOR, WORLD_MODEL]
    assert [[s.value for s in group] for group in scored.scores] == [[0.25, 0.25], [0.25]]
    assert scored.diagnostics == {"step": 7}


def test_a_group_source_that_loses_a_group_is_an_error() -> None:
    class Short(Grouped):
        def score_groups(self, groups, step=None, turn=0):
            return super().score_groups(groups[:-1], step, turn)

    with pytest.raises(ValueError, match="returned 1 groups for 2"):
        score_step(Short(), [[1], [2]])
