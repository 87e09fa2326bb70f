"""The progress-predictor contract: what a robot reward model says about an episode it only watched.

In VLA post-training the world model does not simulate anything: it looks at a few
frames of an episode and the instruction and says how far the task got, in [0, 1]
(the paper uses Robometer, a 4B model served over HTTP; `TinyProgressModel` is the
CPU one that ships). That is the analogue of a code world model predicting a
leaderboard position, so the same `Prediction` carries the answer (``position`` is
the predicted progress) and the same rules hold: ``None`` when the model has no
answer, `PredictorError` when it failed, and both mean "could not score", never 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from wmrl_envs.world_models.base import Prediction

__all__ = ["BatchProgressPredictor", "ProgressPredictor"]


@runtime_checkable
class ProgressPredictor(Protocol):
    """Predicts task progress from an instruction and `n_frames` frames sampled evenly from an episode."""

    n_frames: int
    """How many frames the model reads (the reward source samples that many)."""

    def predict(self, instruction: str, frames: np.ndarray) -> Prediction | None:
        """Progress of the episode shown by `frames` ((n_frames, H, W, 3) uint8) as ``Prediction.position``."""
        ...


@runtime_checkable
class BatchProgressPredictor(ProgressPredictor, Protocol):
    """A progress predictor that is faster on a whole batch (one forward pass, one server round trip)."""

    def predict_batch(self, items: Sequence[tuple[str, np.ndarray]]) -> list[Prediction | None]:
        """Predict every (instruction, frames) item, in order."""
        ...
