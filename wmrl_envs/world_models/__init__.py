"""World models: predictors of a solution's outcome without running it (see `base` for the contract)."""

from wmrl_envs.world_models.base import (
    BatchPredictor,
    PredictedStatus,
    Prediction,
    Predictor,
    PredictorError,
)
from wmrl_envs.world_models.proxy import CheapExecutionProxy, proxy_record
from wmrl_envs.world_models.proxy_split import (
    ProxyCompetition,
    ProxySplit,
    ProxyUnsupported,
    build_proxy_competition,
)

__all__ = [
    "BatchPredictor",
    "CheapExecutionProxy",
    "PredictedStatus",
    "Prediction",
    "Predictor",
    "PredictorError",
    "ProxyCompetition",
    "ProxySplit",
    "ProxyUnsupported",
    "build_proxy_competition",
    "proxy_record",
]
