"""WorldModel: predictions become position scores in [0, 1], and anything unusable is None, never NaN."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wmrl_envs.competition import Category, Competition
from wmrl_envs.rewards import RewardSource, Rollout, WorldModel
from wmrl_envs.world_models import (
    PredictedStatus,
    Prediction,
    Predictor,
    PredictorError,
)


def _competition(root: Path, higher_is_better: bool = True) -> Competition:
    root.mkdir(parents=True, exist_ok=True)
    board = root / "leaderboard.csv"
    board.write_text("rank,score\n1,0.9\n2,0.8\n3,0.7\n4,0.6\n", encoding="utf-8")
    return Competition(
        id="toy",
        description="",
        metric="roc_auc",
        higher_is_better=higher_is_better,
        category=Category.BINARY,
        id_column="id",
        target_columns=("y",),
        public_dir=root,
        private_dir=root,
        answers_path=root / "answers.csv",
        sample_submission_path=root / "sample.csv",
        public_leaderboard_path=board,
        private_leaderboard_path=board,
    )


class Scripted:
    """A predictor that answers from a table keyed by the code (or raises what the table holds)."""

    def __init__(self, table: dict[str, object]) -> None:
        self.table = table

    def predict(self, competition: Competition, code: str) -> Prediction | None:
        answer = self.table[code]
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[return-value]


@pytest.fixture
def competition(tmp_path: Path) -> Competition:
    return _competition(tmp_path / "toy")


def test_predictions_are_clipped_position_scores_and_predicted_failures_score_zero(competition) -> None:
    source = WorldModel(
        Scripted(
            {
                "good": Prediction(position=0.7, raw="0.7", cost_s=0.5, tokens=12),
                "over": Prediction(position=1.4),
                "under": Prediction(position=-0.2),
                "crash": Prediction(status="crashes"),
                "silent": Prediction(status=PredictedStatus.NO_SUBMISSION, position=0.9),
            }
        )
    )
    batch = [Rollout(competition, c) for c in ("good", "over", "under", "crash", "silent")]
    good, over, under, crash, silent = source.score(batch)
    assert isinstance(source, RewardSource) and isinstance(source.predictor, Predictor)
    assert good.value == 0.7 and good.source == "world_model" and good.cost_s == 0.5 and good.prediction.raw == "0.7"
    assert (over.value, under.value) == (1.0, 0.0)
    assert crash.value == 0.0 and crash.detail["status"] == "crashes"
    assert silent.value == 0.0


def test_a_raw_metric_is_placed_on_the_leaderboards_in_the_metric_direction(tmp_path: Path) -> None:
    higher = _competition(tmp_path / "higher", higher_is_better=True)
    lower = _competition(tmp_path / "lower", higher_is_better=False)
    source = WorldModel(Scripted({"m": Prediction(metric=0.85)}))
    (placed_higher,) = source.score([Rollout(higher, "m")])
    (placed_lower,) = source.score([Rollout(lower, "m")])
    assert placed_higher.value == pytest.approx(0.75)  # (N - #strictly better) / N: only 0.9 beats it
    assert placed_lower.value == pytest.approx(0.25)  # lower is better: 0.8, 0.7 and 0.6 beat it


@pytest.mark.parametrize(
    "answer, reason",
    [
        (None, "no prediction"),
        (PredictorError("server returned 503"), "server returned 503"),
        (ConnectionError("refused"), "refused"),
        (Prediction(position=float("nan")), "not a finite number"),
        (Prediction(position=float("inf")), "not a finite number"),
        (Prediction(metric=float("-inf")), "not a finite number"),
        (Prediction(), "neither a position nor a metric"),
    ],
)
def test_unusable_predictions_are_could_not_score_with_a_logged_reason(competition, caplog, answer, reason) -> None:
    source = WorldModel(Scripted({"code": answer}))
    with caplog.at_level(logging.INFO, logger="wmrl_envs.rewards.predicted"):
        assert source.score([Rollout(competition, "code")]) == [None]
    assert reason in caplog.text


def test_a_predictor_bug_is_not_hidden_as_could_not_score(competition) -> None:
    with pytest.raises(KeyError):
        WorldModel(Scripted({})).score([Rollout(competition, "unknown")])
    with pytest.raises(TypeError, match="must return a Prediction or None"):
        WorldModel(Scripted({"x": 0.5})).score([Rollout(competition, "x")])


def test_predict_batch_is_used_when_offered_and_must_return_one_per_item(competition) -> None:
    class Batched(Scripted):
        calls = 0

        def predict_batch(self, items):
            Batched.calls += 1
            return [self.predict(c, code) for c, code in items][: self.keep]

    batched = Batched({"a": Prediction(position=0.2), "b": Prediction(position=0.4)})
    batched.keep = 2
    batch = [Rollout(competition, "a"), Rollout(competition, "b")]
    assert [s.value for s in WorldModel(batched).score(batch)] == [0.2, 0.4]
    assert Batched.calls == 1
    batched.keep = 1
    with pytest.raises(ValueError, match="returned 1 predictions for 2 items"):
        WorldModel(batched).score(batch)


def test_a_failing_batch_call_leaves_the_whole_batch_unscored(competition) -> None:
    class Down:
        def predict(self, competition, code):
            raise AssertionError("not used")

        def predict_batch(self, items):
            raise PredictorError("vLLM server unreachable")

    assert WorldModel(Down()).score([Rollout(competition, "a"), Rollout(competition, "b")]) == [None, None]


def test_an_object_without_predict_is_rejected() -> None:
    with pytest.raises(TypeError, match="needs a Predictor"):
        WorldModel(object())  # type: ignore[arg-type]


@given(position=st.floats(allow_nan=True, allow_infinity=True), metric=st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_prediction_scores_in_the_unit_interval_or_none(tmp_path_factory, position, metric) -> None:
    competition = _competition(tmp_path_factory.getbasetemp() / "prop")
    for prediction in (Prediction(position=position), Prediction(metric=metric)):
        (score,) = WorldModel(Scripted({"c": prediction})).score([Rollout(competition, "c")])
        assert score is None or 0.0 <= score.value <= 1.0


def test_something_other_than_a_code_rollout_is_refused_by_name(competition) -> None:
    source = WorldModel(Scripted({}))
    with pytest.raises(TypeError, match="batch item 1 is a dict.*LIBERO"):
        source.score([Rollout(competition, "code"), {"frames": []}])
