"""LIBERO's two reward sources: terminal success (the anchor) and predicted progress (the world model).

They plug into `Corrected` exactly as real execution and an LLM world model do for
code: ``Corrected(TerminalSuccess(), ProgressWorldModel(model))``. On anchor groups
both score; the debiaser learns the monotone map from predicted progress to the
success rate, the weighter how noisy that map still is, and the other groups get
calibrated progress. Terminal success costs nothing extra (the simulator judged it
during the rollout); what makes it scarce on a real robot, or expensive here, is
that it is sparse: a group of failures carries no signal, which predicted progress
does.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from wmrl_envs.rewards import Score
from wmrl_envs.world_models.base import PredictedStatus, Prediction, predict_each

from .frames import sample_frames
from .progress import ProgressPredictor
from .rollout import EpisodeRollout

__all__ = ["ProgressWorldModel", "TerminalSuccess"]

logger = logging.getLogger(__name__)


class TerminalSuccess:
    """Scores an episode 1.0 if the simulator judged it a success, 0.0 if not; None if unknown.

    >>> TerminalSuccess().score([episode])[0].value  # doctest: +SKIP
    1.0
    """

    name = "real"

    def score(self, batch: Sequence[EpisodeRollout]) -> list[Score | None]:
        """The simulator's verdict on every episode of `batch`."""
        return [self._score_one(_episode(rollout, i)) for i, rollout in enumerate(batch)]

    def _score_one(self, episode: EpisodeRollout) -> Score | None:
        if episode.success is None:
            logger.warning("no success verdict for an episode of %s; not scored", episode.task)
            return None
        detail = {"success": episode.success, "steps": episode.steps, "task": episode.task}
        return Score(value=float(episode.success), source=self.name, detail=detail)


class ProgressWorldModel:
    """Scores episodes with a progress predictor over `n_frames` frames sampled evenly from each.

    >>> source = ProgressWorldModel(TinyProgressModel.load("progress.pt"))  # doctest: +SKIP
    >>> source.score([episode])[0].value  # doctest: +SKIP
    0.37
    """

    name = "world_model"

    def __init__(self, predictor: ProgressPredictor, workers: int = 1) -> None:
        n_frames = getattr(predictor, "n_frames", None)
        if not callable(getattr(predictor, "predict", None)) or not isinstance(n_frames, int) or n_frames < 1:
            raise TypeError(
                f"ProgressWorldModel needs a ProgressPredictor (predict(instruction, frames) and an int n_frames >= 1), "
                f"got {type(predictor).__name__}"
            )
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.predictor = predictor
        self.workers = workers

    def score(self, batch: Sequence[EpisodeRollout]) -> list[Score | None]:
        """Predicted progress of every episode, clipped to [0, 1]; None where the predictor had no usable answer."""
        episodes = [_episode(rollout, i) for i, rollout in enumerate(batch)]
        if not episodes:
            return []
        items = [(e.instruction, sample_frames(e.frames, self.predictor.n_frames)) for e in episodes]
        predictions = predict_each(self.predictor, items, self.workers)
        return [self._to_score(e, p) for e, p in zip(episodes, predictions, strict=True)]

    def _to_score(self, episode: EpisodeRollout, prediction: Prediction | None | BaseException) -> Score | None:
        if isinstance(prediction, BaseException):
            logger.warning(
                "progress model could not score an episode of %s: %s: %s",
                episode.task,
                type(prediction).__name__,
                prediction,
            )
            return None
        if prediction is None:
            logger.info("progress model had no answer for an episode of %s", episode.task)
            return None
        if not isinstance(prediction, Prediction):
            raise TypeError(
                f"{type(self.predictor).__name__}.predict must return a Prediction or None, "
                f"got {type(prediction).__name__}"
            )
        if prediction.status is not PredictedStatus.VALID:
            value: float | None = 0.0
        else:
            value = _finite_or_none(prediction.position)
        if value is None:
            logger.warning(
                "progress model gave no finite progress for an episode of %s: %r", episode.task, prediction.position
            )
            return None
        detail: dict[str, Any] = {
            "predicted_progress": prediction.position,
            "uncertainty": prediction.uncertainty,
            "task": episode.task,
            "steps": episode.steps,
        }
        return Score(
            value=min(max(value, 0.0), 1.0),
            source=self.name,
            prediction=prediction,
            cost_s=prediction.cost_s,
            detail=detail,
        )


def _episode(rollout: object, index: int) -> EpisodeRollout:
    if not isinstance(rollout, EpisodeRollout):
        raise TypeError(
            f"batch item {index} is a {type(rollout).__name__}; LIBERO's reward sources score EpisodeRollouts "
            f"(see wmrl_tasks.libero.record_episode)"
        )
    return rollout


def _finite_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)
