"""World models: predictors of a solution's outcome without running it (see `base` for the contract)."""

from wmrl_envs.world_models.base import (
    BatchPredictor,
    PredictedStatus,
    Prediction,
    Predictor,
    PredictorError,
)

__all__ = ["BatchPredictor", "PredictedStatus", "Prediction", "Predictor", "PredictorError"]
