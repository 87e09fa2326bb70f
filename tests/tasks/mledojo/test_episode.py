"""The MLE-Dojo episode engine: the rules the env, GroupVectorEnv, the trainer and the benchmark all play by."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from wmrl_tasks.mledojo.catalog import load_competitions
from wmrl_tasks.mledojo.episode import NO_PROGRAM, EpisodeState, Submission, best_turn_return, score_turn

from wmrl_envs.competition import Competition
from wmrl_envs.corrections import AnchorScheduler
from wmrl_envs.rewards import Corrected, Score, WorldModel
from wmrl_envs.sandbox.base import Limits
from wmrl_envs.world_models import Prediction


@pytest.fixture(scope="module")
def toy_competition(pool_root) -> Competition:
    return load_competitions("all", pool_root)[0]


values = st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=1, max_size=6)


@given(values)
def test_the_return_is_the_best_turn_unless_a_turn_was_not_scored(turn_values) -> None:
    result = best_turn_return(turn_values)
    if None in turn_values:
        assert result is None
    else:
        assert result == max(turn_values)


def test_an_empty_episode_has_no_return() -> None:
    assert best_turn_return([]) is None


def _value(code: str) -> float:
    return float(re.search(r"# score=([0-9.]+)", code).group(1))


class Written:
    """A source stand-in: the score written in the code; remembers every batch it was asked to score."""

    name = "real"

    def __init__(self) -> None:
        self.batches: list[list] = []

    def score(self, batch):
        self.batches.append(list(batch))
        return [None if "unscorable" in r.code else Score(_value(r.code), "real") for r in batch]


class Halving:
    def predict(self, competition, code):
        return Prediction(position=_value(code) / 2)


def _state(competition: Competition, max_turns: int = 3) -> EpisodeState:
    return EpisodeState(competition, max_turns, Limits(wall_time_s=60))


def _program(score: float) -> Submission:
    return Submission.parse(f"```python\n# score={score}\nprint(1)\n```")


def test_a_reply_without_a_program_is_a_failed_turn_that_reaches_no_source(toy_competition) -> None:
    source, episode = Written(), _state(toy_competition)
    failed = Submission.parse("I would rather not write code today.\n```python\ndef broken(:\n```")
    assert not failed.runnable and failed.problem, "the problem says why it was not run"
    scored = score_turn(source, [[episode]], [[failed]])
    (result,) = scored.results[0]
    assert result.value == 0.0 and result.score is None and source.batches == [], "no call for nothing to score"
    assert "Not run:" in result.feedback and result.not_run_grade is not None
    assert Submission.of_program(None).problem == NO_PROGRAM


def test_best_position_feedback_and_termination_follow_the_turns(toy_competition) -> None:
    source, episode = Written(), _state(toy_competition, max_turns=3)
    first = score_turn(source, [[episode]], [[_program(0.4)]]).results[0][0]
    second = score_turn(source, [[episode]], [[_program(0.2)]], turn=1).results[0][0]
    third = score_turn(source, [[episode]], [[_program("unscorable 0.9")]], turn=2).results[0][0]
    assert (first.value, first.best_before, first.best) == (0.4, 0.0, 0.4)
    assert (second.value, second.best) == (0.2, 0.4), "a worse resubmission keeps the best"
    assert third.value is None and third.best == 0.4 and third.terminated
    assert episode.return_value is None, "the unscored turn might have been the best: the return is unknown"
    assert "Best position score so far: 0.400" in second.feedback
    with pytest.raises(RuntimeError, match="episode is over"):
        episode.record(_program(0.5), None)


def test_one_call_scores_every_group_and_anchors_stay_anchors_for_the_step(toy_competition) -> None:
    real = Written()
    source = Corrected(real, WorldModel(Halving()), scheduler=AnchorScheduler(fraction=0.5, seed=0))
    episodes = [[_state(toy_competition, 2) for _ in range(3)] for _ in range(2)]
    chosen = []
    for turn in range(2):
        submissions = [[_program(0.1 * (g + 1) + 0.01 * i) for i in range(3)] for g in range(2)]
        scored = score_turn(source, episodes, submissions, step=0, turn=turn)
        chosen.append(scored.scoring.sources)
        assert len(real.batches) == turn + 1, "one scoring call per turn for all groups"
    assert chosen[0] == chosen[1] and sorted(chosen[0]) == ["anchor", "world_model"]
    anchor = chosen[0].index("anchor")
    assert [e.return_value for e in episodes[anchor]] == pytest.approx(
        [0.1 * (anchor + 1) + 0.01 * i for i in range(3)]
    )
    world_model = 1 - anchor
    assert all(r is not None for r in (e.return_value for e in episodes[world_model]))


def test_submissions_must_match_episodes_group_by_group(toy_competition) -> None:
    with pytest.raises(ValueError, match="one submission per episode"):
        score_turn(Written(), [[_state(toy_competition)]], [[_program(0.1), _program(0.2)]])
