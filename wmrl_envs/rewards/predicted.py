"""`PredictedSource`: what every world-model reward source shares, whatever it predicts from.

A world-model source asks a predictor instead of running (code) or simulating (a robot
episode), and its one duty is to never pass a broken number on. The rules for that are
the same for every task family, so they live here once: predictions are fetched through
`predict_each` (batched when the predictor can, else `workers` threads); a predictor
failure or no answer is "could not score" (None) and logged; a predictor returning
something other than a `Prediction` is a bug and raises; a predicted failure (a crash,
no submission) is an answer and scores 0; a usable value is clipped to [0, 1]. A task
family says only what the predictor is asked about an item and how a valid prediction
becomes a value.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from wmrl_envs.rewards.base import Score
from wmrl_envs.world_models.base import PredictedStatus, Prediction, predict_each

__all__ = ["PredictedSource", "finite"]

logger = logging.getLogger(__name__)

Item = TypeVar("Item")


def finite(value: Any) -> bool:
    """Whether `value` is a real, finite number (not a bool, NaN or infinity)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


class PredictedSource(Generic[Item]):
    """A reward source scoring items by a predictor's answers; subclasses say what is asked and what is valued."""

    name = "world_model"
    what: ClassVar[str] = "world model"
    """How logs name this source's predictor."""

    def __init__(self, predictor: Any, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.predictor = predictor
        self.workers = workers

    def score(self, batch: Sequence[Item]) -> list[Score | None]:
        """Predict every item (through `predict_batch` when the predictor has it); None where it could not."""
        items = self.items(batch)
        if not items:
            return []
        predictions = predict_each(self.predictor, [self.question(item) for item in items], self.workers)
        return [self._to_score(item, p) for item, p in zip(items, predictions, strict=True)]

    def items(self, batch: Sequence[Any]) -> list[Item]:
        """`batch` checked to hold this source's items (a wrong type is the caller's bug and raises)."""
        return list(batch)

    def question(self, item: Item) -> tuple[Any, ...]:
        """The arguments of ``predictor.predict`` for `item`."""
        raise NotImplementedError

    def label(self, item: Item) -> str:
        """What logs call `item` (its task)."""
        raise NotImplementedError

    def valid_value(self, item: Item, prediction: Prediction) -> tuple[float | None, str]:
        """The value of a prediction of a valid outcome, or None and why it is unusable."""
        if not finite(prediction.position):
            return None, f"the predicted position {prediction.position!r} is not a finite number"
        return float(prediction.position), ""  # type: ignore[arg-type]

    def detail(self, item: Item, prediction: Prediction) -> dict[str, Any]:
        """What the score's ``detail`` reports of the prediction."""
        return {"predicted_position": prediction.position, "uncertainty": prediction.uncertainty}

    def _to_score(self, item: Item, prediction: Prediction | None | BaseException) -> Score | None:
        if isinstance(prediction, BaseException):
            reason = f"{type(prediction).__name__}: {prediction}"
            logger.warning("%s could not score an item of %s: %s", self.what, self.label(item), reason)
            return None
        if prediction is None:
            logger.info(
                "%s could not score an item of %s: the predictor returned no prediction", self.what, self.label(item)
            )
            return None
        if not isinstance(prediction, Prediction):
            raise TypeError(
                f"{type(self.predictor).__name__}.predict must return a Prediction or None, "
                f"got {type(prediction).__name__}"
            )
        if prediction.status is PredictedStatus.VALID:
            value, reason = self.valid_value(item, prediction)
        else:
            value, reason = 0.0, ""
        if value is None:
            logger.warning("%s could not score an item of %s: %s", self.what, self.label(item), reason)
            return None
        return Score(
            value=min(max(value, 0.0), 1.0),
            source=self.name,
            prediction=prediction,
            cost_s=prediction.cost_s,
            detail=self.detail(item, prediction),
        )
