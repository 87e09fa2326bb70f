"""WorldModel: a reward source that asks a predictor instead of running the code.

This is the cheap source the corrections exist for, so its one duty is to never
pass a broken number on. A prediction becomes a `Score` whose value is the
predicted position score clipped to [0, 1] (or, when the predictor gives only a
raw metric, that metric placed on the competition's leaderboards by the same rule
real grading uses). Everything that is not a usable number is "could not score"
(``None``), logged with its reason: a predictor with no answer, a `PredictorError`
or connection failure, a NaN or infinite value, a metric with no leaderboard to
place it on. A predicted crash or missing submission is an answer and scores 0,
exactly as a real one would.

Errors that are not about the prediction (a predictor returning the wrong type,
or the wrong number of items from `predict_batch`) are bugs and raise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wmrl_envs.competition import Competition
from wmrl_envs.grading.leaderboard import Leaderboard
from wmrl_envs.rewards.base import Rollout, code_rollouts
from wmrl_envs.rewards.predicted import PredictedSource, finite
from wmrl_envs.world_models.base import Prediction, Predictor

__all__ = ["WorldModel"]


class WorldModel(PredictedSource[Rollout]):
    """Scores rollouts with a `Predictor`: the predicted position, clipped to [0, 1]; None when it has no answer.

    >>> source = WorldModel(my_predictor)  # doctest: +SKIP
    >>> [s.value if s else None for s in source.score([Rollout(competition, code)])]  # doctest: +SKIP
    [0.62]
    """

    def __init__(self, predictor: Predictor, workers: int = 1) -> None:
        if not callable(getattr(predictor, "predict", None)):
            raise TypeError(
                f"WorldModel needs a Predictor (an object with predict(competition, code)), "
                f"got {type(predictor).__name__}"
            )
        super().__init__(predictor, workers)
        self._boards: dict[Path, Leaderboard] = {}

    def items(self, batch: Sequence[Any]) -> list[Rollout]:
        """`batch` checked to be code rollouts."""
        return code_rollouts(batch, type(self).__name__)

    def question(self, item: Rollout) -> tuple[Any, ...]:
        """The predictor is asked about the competition and the code."""
        return (item.competition, item.code)

    def label(self, item: Rollout) -> str:
        """The rollout's competition."""
        return item.competition.id

    def valid_value(self, item: Rollout, prediction: Prediction) -> tuple[float | None, str]:
        """The predicted position; failing that, the predicted metric placed on the leaderboards."""
        if prediction.position is not None:
            return super().valid_value(item, prediction)
        if prediction.metric is None:
            return None, "the prediction is valid but has neither a position nor a metric"
        if not finite(prediction.metric):
            return None, f"the predicted metric {prediction.metric!r} is not a finite number"
        return self._place(item.competition, float(prediction.metric))

    def detail(self, item: Rollout, prediction: Prediction) -> dict[str, Any]:
        """The predicted outcome, position, metric and cost, and the feedback text an agent reads."""
        return {
            "status": prediction.status.value,
            "predicted_position": prediction.position,
            "predicted_metric": prediction.metric,
            "uncertainty": prediction.uncertainty,
            "tokens": prediction.tokens,
            "feedback": f"Predicted outcome: {prediction.status.value.replace('_', ' ')}.",
        }

    def _place(self, competition: Competition, metric: float) -> tuple[float | None, str]:
        """The predicted metric's average position over the competition's leaderboards, as grading does."""
        paths = [p for p in (competition.public_leaderboard_path, competition.private_leaderboard_path) if p]
        paths = [Path(p) for p in paths if Path(p).is_file()]
        if not paths:
            return None, f"competition {competition.id!r} has no leaderboard to place the predicted metric on"
        positions = []
        for path in paths:
            if path not in self._boards:
                self._boards[path] = Leaderboard.from_csv(path)
            positions.append(self._boards[path].position_score(metric, competition.higher_is_better))
        return sum(positions) / len(positions), ""
