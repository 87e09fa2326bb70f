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

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wmrl_envs.competition import Competition
from wmrl_envs.grading.leaderboard import Leaderboard
from wmrl_envs.rewards.base import Rollout, Score, code_rollouts
from wmrl_envs.world_models.base import (
    PredictedStatus,
    Prediction,
    Predictor,
    predict_each,
)

__all__ = ["WorldModel"]

logger = logging.getLogger(__name__)


# Failures of the predictor's infrastructure (OSError covers ConnectionError and TimeoutError).
class WorldModel:
    """Scores rollouts with a `Predictor`: the predicted position, clipped to [0, 1]; None when it has no answer.

    >>> source = WorldModel(my_predictor)  # doctest: +SKIP
    >>> [s.value if s else None for s in source.score([Rollout(competition, code)])]  # doctest: +SKIP
    [0.62]
    """

    name = "world_model"

    def __init__(self, predictor: Predictor, workers: int = 1) -> None:
        if not callable(getattr(predictor, "predict", None)):
            raise TypeError(
                f"WorldModel needs a Predictor (an object with predict(competition, code)), "
                f"got {type(predictor).__name__}"
            )
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.predictor = predictor
        self.workers = workers
        self._boards: dict[Path, Leaderboard] = {}

    def score(self, batch: Sequence[Rollout]) -> list[Score | None]:
        """Predict every rollout (through `predict_batch` when the predictor has it); None where it could not."""
        batch = code_rollouts(batch, type(self).__name__)
        if not batch:
            return []
        predictions = predict_each(self.predictor, [(r.competition, r.code) for r in batch], self.workers)
        return [self._to_score(rollout, p) for rollout, p in zip(batch, predictions, strict=True)]

    def _to_score(self, rollout: Rollout, prediction: Prediction | None | BaseException) -> Score | None:
        cid = rollout.competition.id
        if isinstance(prediction, BaseException):
            reason = f"{type(prediction).__name__}: {prediction}"
            logger.warning("world model could not score a rollout of %s: %s", cid, reason)
            return None
        if prediction is None:
            logger.info("world model could not score a rollout of %s: the predictor returned no prediction", cid)
            return None
        if not isinstance(prediction, Prediction):
            raise TypeError(
                f"{type(self.predictor).__name__}.predict must return a Prediction or None, "
                f"got {type(prediction).__name__}"
            )
        value, reason = self._value(rollout.competition, prediction)
        if value is None:
            logger.warning("world model could not score a rollout of %s: %s", cid, reason)
            return None
        detail: dict[str, Any] = {
            "status": prediction.status.value,
            "predicted_position": prediction.position,
            "predicted_metric": prediction.metric,
            "uncertainty": prediction.uncertainty,
            "tokens": prediction.tokens,
            "feedback": f"Predicted outcome: {prediction.status.value.replace('_', ' ')}.",
        }
        return Score(value=value, source=self.name, prediction=prediction, cost_s=prediction.cost_s, detail=detail)

    def _value(self, competition: Competition, prediction: Prediction) -> tuple[float | None, str]:
        if prediction.status is not PredictedStatus.VALID:
            return 0.0, ""
        if prediction.position is not None:
            if not _finite(prediction.position):
                return None, f"the predicted position {prediction.position!r} is not a finite number"
            return min(max(float(prediction.position), 0.0), 1.0), ""
        if prediction.metric is None:
            return None, "the prediction is valid but has neither a position nor a metric"
        if not _finite(prediction.metric):
            return None, f"the predicted metric {prediction.metric!r} is not a finite number"
        return self._place(competition, float(prediction.metric))

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


def _finite(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
