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
from collections.abc import Sequence
from typing import Any

from wmrl_envs.rewards import PredictedSource, Score
from wmrl_envs.world_models.base import Prediction

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


class ProgressWorldModel(PredictedSource[EpisodeRollout]):
    """Scores episodes with a progress predictor over `n_frames` frames sampled evenly from each.

    >>> source = ProgressWorldModel(TinyProgressModel.load("progress.pt"))  # doctest: +SKIP
    >>> source.score([episode])[0].value  # doctest: +SKIP
    0.37
    """

    what = "progress model"

    def __init__(self, predictor: ProgressPredictor, workers: int = 1) -> None:
        n_frames = getattr(predictor, "n_frames", None)
        if not callable(getattr(predictor, "predict", None)) or not isinstance(n_frames, int) or n_frames < 1:
            raise TypeError(
                f"ProgressWorldModel needs a ProgressPredictor (predict(instruction, frames) and an int n_frames >= 1), "
                f"got {type(predictor).__name__}"
            )
        super().__init__(predictor, workers)

    def items(self, batch: Sequence[Any]) -> list[EpisodeRollout]:
        """`batch` checked to be LIBERO episodes."""
        return [_episode(rollout, i) for i, rollout in enumerate(batch)]

    def question(self, item: EpisodeRollout) -> tuple[Any, ...]:
        """The predictor is asked about the instruction and `n_frames` frames sampled evenly from the episode."""
        return (item.instruction, sample_frames(item.frames, self.predictor.n_frames))

    def label(self, item: EpisodeRollout) -> str:
        """The episode's task."""
        return item.task

    def detail(self, item: EpisodeRollout, prediction: Prediction) -> dict[str, Any]:
        """The predicted progress and its uncertainty, and the episode's task and length."""
        return {
            "predicted_progress": prediction.position,
            "uncertainty": prediction.uncertainty,
            "task": item.task,
            "steps": item.steps,
        }


def _episode(rollout: object, index: int) -> EpisodeRollout:
    if not isinstance(rollout, EpisodeRollout):
        raise TypeError(
            f"batch item {index} is a {type(rollout).__name__}; LIBERO's reward sources score EpisodeRollouts "
            f"(see wmrl_tasks.libero.record_episode)"
        )
    return rollout
