"""The progress model's ranking quality: AUC of success and Spearman, defined only where they mean something."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wmrl_agents.libero.progress_quality import progress_ranking

_scores = st.integers(0, 100).map(lambda i: i / 100)  # a grid: progress models tie, and 1 - x stays exact
_episodes = st.lists(st.tuples(_scores, st.booleans()), min_size=2, max_size=40)


@settings(deadline=None)  # the first example imports scipy
@given(_episodes)
def test_auc_is_a_probability_and_flips_when_the_scores_are_reversed(pairs) -> None:
    scores, successes = zip(*pairs, strict=True)
    ranking = progress_ranking(scores, successes)
    assert ranking["episodes"] == len(pairs) and ranking["successes"] == sum(successes)
    if ranking["auc"] is None:
        assert sum(successes) in (0, len(pairs))
        return
    assert 0.0 <= ranking["auc"] <= 1.0
    flipped = progress_ranking([1.0 - s for s in scores], successes)
    assert flipped["auc"] == pytest.approx(1.0 - ranking["auc"])


@settings(deadline=None)  # the first example imports scipy
@given(_episodes)
def test_a_monotone_rescaling_of_the_scores_changes_neither_measure(pairs) -> None:
    scores, successes = zip(*pairs, strict=True)
    before, after = progress_ranking(scores, successes), progress_ranking(np.sqrt(scores) * 3 + 1, successes)
    assert before.keys() == after.keys()
    for key, value in before.items():
        assert after[key] == (None if value is None else pytest.approx(value))


def test_scores_that_separate_success_perfectly_rank_it_perfectly() -> None:
    ranking = progress_ranking([0.1, 0.2, 0.8, 0.9], [False, False, True, True])
    assert ranking["auc"] == 1.0 and ranking["spearman"] == pytest.approx(2 / np.sqrt(5))  # ranks vs two ties


def test_mismatched_or_non_finite_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="one score per episode"):
        progress_ranking([0.5], [True, False])
    with pytest.raises(ValueError, match="finite"):
        progress_ranking([float("nan"), 0.5], [True, False])
